package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
)

// An outcome is what the run says about one proof of a claim.
type outcome string

const (
	passed       outcome = "pass"
	refutedHere  outcome = "fail, refuted on the claim"
	refutedOther outcome = "fail, refuted on another claim"
	noVerdict    outcome = "fail without a verdict"
	notShownHere outcome = "fail, not-shown on the claim"
	unfinished   outcome = "did not end"
	skipped      outcome = "skip"
	missing      outcome = "no result"
)

var outcomes = []outcome{passed, refutedHere, refutedOther, noVerdict, notShownHere, unfinished, skipped, missing}

// Each outcome's proof says something of its own, for the verdict cell to
// quote.
const (
	refutedReason  = "C9 refuted: got 2 holders; want 1"
	otherReason    = "C8 refuted: got mark 7; want 9"
	noVerdictLine  = "create /zk19-x: zk: connection closed"
	notShownReason = "not shown: timeout after 20s waiting for B to wait on A"
	skipWords      = "skipped: the external backend cannot inject faults"
)

// proofResult is a result of the proof named name with outcome o; nil for
// a proof that has no result.
func proofResult(name string, o outcome) *result {
	res := &result{Name: name, Action: "fail"}
	verdict := func(id, word, reason string) {
		res.Attrs = append(res.Attrs, attr{Key: claims.VerdictKey(id), Value: word, Reason: reason, at: -1})
	}
	switch o {
	case passed:
		res.Action = "pass"
		res.Attrs = []attr{{Key: claims.AttrEvidence, Value: name + " saw one holder", at: -1}}
	case refutedHere:
		verdict("C9", claims.VerdictRefuted, refutedReason)
	case refutedOther:
		verdict("C8", claims.VerdictRefuted, otherReason)
	case noVerdict:
		res.Lines = []string{"    x_test.go:12: " + noVerdictLine, "--- FAIL: " + name + " (0.10s)"}
	case notShownHere:
		verdict("C9", claims.VerdictNotShown, notShownReason)
	case unfinished:
		res.Action = ""
		res.Lines = []string{"    x_test.go:40: A holds the lock"}
	case skipped:
		res.Action = "skip"
		res.Lines = []string{"    x_test.go:3: " + skipWords, "--- SKIP: " + name + " (0.00s)"}
	case missing:
		return nil
	}
	return res
}

// mixed is a run of claim C9 whose proofs end as os, in order.
func mixed(os []outcome) (claims.Claim, *Run) {
	c := claims.Claim{ID: "C9"}
	run := &Run{Results: map[string]*result{}, PkgEnded: true}
	for i, o := range os {
		name := fmt.Sprintf("TestC9_Proof%d", i+1)
		c.Proof = append(c.Proof, name)
		if res := proofResult(name, o); res != nil {
			run.Results[name] = res
			run.Order = append(run.Order, name)
		}
	}
	return c, run
}

// mix is the claim verdict README.md's "The evidence table" and the legend
// give each mix of two outcomes, whichever proof comes first:
//   - a failed proof refutes a claim only with "refuted" on that claim;
//   - any other failure (without a verdict, with "not-shown", or one
//     refuting another claim) or a proof without a result is "not shown";
//   - "holds" only when every proof ran and passed; "holds, partly not run"
//     when the others were skipped; "not run" when none ran.
var mix = map[[2]outcome]string{
	{passed, passed}:       Holds,
	{passed, refutedHere}:  Refuted,
	{passed, refutedOther}: NotShown,
	{passed, noVerdict}:    NotShown,
	{passed, notShownHere}: NotShown,
	{passed, unfinished}:   NotShown,
	{passed, skipped}:      Partly,
	{passed, missing}:      NotShown,

	{refutedHere, refutedHere}:  Refuted,
	{refutedHere, refutedOther}: Refuted,
	{refutedHere, noVerdict}:    Refuted,
	{refutedHere, notShownHere}: Refuted,
	{refutedHere, unfinished}:   Refuted,
	{refutedHere, skipped}:      Refuted,
	{refutedHere, missing}:      Refuted,

	{refutedOther, refutedOther}: NotShown,
	{refutedOther, noVerdict}:    NotShown,
	{refutedOther, notShownHere}: NotShown,
	{refutedOther, unfinished}:   NotShown,
	{refutedOther, skipped}:      NotShown,
	{refutedOther, missing}:      NotShown,

	{noVerdict, noVerdict}:    NotShown,
	{noVerdict, notShownHere}: NotShown,
	{noVerdict, unfinished}:   NotShown,
	{noVerdict, skipped}:      NotShown,
	{noVerdict, missing}:      NotShown,

	{notShownHere, notShownHere}: NotShown,
	{notShownHere, unfinished}:   NotShown,
	{notShownHere, skipped}:      NotShown,
	{notShownHere, missing}:      NotShown,

	{unfinished, unfinished}: NotShown,
	{unfinished, skipped}:    NotShown,
	{unfinished, missing}:    NotShown,

	{skipped, skipped}: NotRun,
	{skipped, missing}: NotShown,

	{missing, missing}: NotShown,
}

// single is the verdict of a claim with one proof.
var single = map[outcome]string{
	passed: Holds, refutedHere: Refuted, refutedOther: NotShown, noVerdict: NotShown,
	notShownHere: NotShown, unfinished: NotShown, skipped: NotRun, missing: NotShown,
}

func mixVerdict(a, b outcome) (string, bool) {
	if k, ok := mix[[2]outcome{a, b}]; ok {
		return k, true
	}
	k, ok := mix[[2]outcome{b, a}]
	return k, ok
}

// cellSays is what the verdict cell of a claim whose proofs end as os must
// say besides its kind: the observation or the proof it rests on.
func cellSays(kind string, os []outcome) string {
	first := func(o outcome) int {
		for i, x := range os {
			if x == o {
				return i + 1
			}
		}
		return 0
	}
	switch kind {
	case Refuted:
		return fmt.Sprintf("refuted on 3.8.0: %q", refutedReason)
	case NotRun:
		return "not run: " + skipWords
	case Partly: // every skipped proof, with its reason
		var not []string
		for i, o := range os {
			if o == skipped {
				not = append(not, fmt.Sprintf("TestC9_Proof%d: %s", i+1, skipWords))
			}
		}
		return "holds, partly not run: " + strings.Join(not, "; ")
	case Holds:
		return Holds
	}
	for i, o := range os { // not shown: the first failed proof, else the first missing one
		switch o {
		case refutedOther:
			return fmt.Sprintf("not shown: TestC9_Proof%d: %s", i+1, otherReason)
		case noVerdict:
			return fmt.Sprintf("not shown: TestC9_Proof%d: %s", i+1, noVerdictLine)
		case notShownHere:
			return fmt.Sprintf("not shown: TestC9_Proof%d: %s", i+1, notShownReason)
		case unfinished:
			return fmt.Sprintf("not shown: TestC9_Proof%d: A holds the lock", i+1)
		}
	}
	return fmt.Sprintf("not shown: TestC9_Proof%d: it has no result in the run", first(missing))
}

func checkMix(t *testing.T, os []outcome, want string) {
	t.Helper()
	c, run := mixed(os)
	v := verdictFor(c, run, Header{Version: "3.8.0"})
	if v.Kind != want {
		t.Errorf("proofs %q: claim C9 %s (%s); want %s", os, v.Kind, v.Text, want)
		return
	}
	if text := cellSays(want, os); v.Text != text {
		t.Errorf("proofs %q: claim C9's cell %q; want %q", os, v.Text, text)
	}
}

// TestMixedProofsAggregateAsTheReadmeSays: every claim with one proof, and
// with two in either order, each proof passing, refuting the claim or
// another, failing without a verdict or not-shown, not ending, skipped or
// without a result, gets the verdict README.md states for the mix. A
// claim with one failing proof never holds.
func TestMixedProofsAggregateAsTheReadmeSays(t *testing.T) {
	for _, o := range outcomes {
		checkMix(t, []outcome{o}, single[o])
	}
	for _, a := range outcomes {
		for _, b := range outcomes {
			want, ok := mixVerdict(a, b)
			if !ok {
				t.Fatalf("the table has no verdict for proofs %q and %q", a, b)
			}
			checkMix(t, []outcome{a, b}, want)
		}
	}
	// Three proofs: the worst of the pairs decides, whatever the order.
	rank := map[string]int{Holds: 0, Partly: 1, NotRun: 1, NotShown: 2, Refuted: 3}
	for _, a := range outcomes {
		for _, b := range outcomes {
			for _, c := range outcomes {
				want := worst(rank, a, b, c)
				checkMix(t, []outcome{a, b, c}, want)
			}
		}
	}
}

// worst is the verdict of three proofs from the table of pairs: refuted
// over not shown over the rest; of three that neither fail nor lack a
// result, "not run" when none passed, "holds, partly not run" when some
// were skipped.
func worst(rank map[string]int, os ...outcome) string {
	best := Holds
	for i := range os {
		for j := i + 1; j < len(os); j++ {
			k, _ := mixVerdict(os[i], os[j])
			if rank[k] > rank[best] {
				best = k
			}
		}
	}
	if rank[best] == 1 {
		all := true
		for _, o := range os {
			all = all && o == skipped
		}
		if all {
			return NotRun
		}
		return Partly
	}
	return best
}

// TestPackageVerdictCountsAsAProof: a verdict set outside any test
// (TestMain's E3 checks) counts like one of the claim's proofs.
func TestPackageVerdictCountsAsAProof(t *testing.T) {
	cases := []struct {
		word string
		os   []outcome
		want string
	}{
		{claims.VerdictRefuted, []outcome{passed}, Refuted},
		{claims.VerdictRefuted, []outcome{notShownHere}, Refuted},
		{claims.VerdictNotShown, []outcome{passed}, NotShown},
		{claims.VerdictNotShown, []outcome{skipped}, NotShown},
		{claims.VerdictNotShown, []outcome{refutedHere}, Refuted},
	}
	for _, tc := range cases {
		c, run := mixed(tc.os)
		run.PkgAttrs = []attr{{Key: claims.VerdictKey("C9"), Value: tc.word, Reason: "E3 check: node left behind", at: -1}}
		v := verdictFor(c, run, Header{Version: "3.8.0"})
		if v.Kind != tc.want {
			t.Errorf("package verdict %s with proofs %q: claim C9 %s (%s); want %s", tc.word, tc.os, v.Kind, v.Text, tc.want)
		}
		if d := strings.Join(v.Decisive, "\n"); !strings.Contains(d, "node left behind") {
			t.Errorf("package verdict %s with proofs %q: decisive lines %q; want the package's reason among them", tc.word, tc.os, d)
		}
	}
}

// TestSuiteObservationsAreE3s: what TestMain's Scope states as evidence
// after the last test (on the external backend: the user's server holds no
// parent of the run) is among E3's decisive observations, and no other
// claim's.
func TestSuiteObservationsAreE3s(t *testing.T) {
	run := &Run{Results: map[string]*result{}, PkgEnded: true}
	run.PkgAttrs = []attr{{Key: claims.AttrEvidence, Value: "on the user's server the run left no node of its own", at: -1}}
	for _, id := range []string{"E3", "C9"} {
		c := claims.Claim{ID: id, Proof: []string{"TestX"}}
		run.Results["TestX"] = proofResult("TestX", skipped)
		v := verdictFor(c, run, Header{Version: "3.8.0"})
		has := slices.Contains(v.Decisive, "on the user's server the run left no node of its own")
		if has != (id == "E3") {
			t.Errorf("claim %s: decisive %q; want TestMain's observation there only for E3", id, v.Decisive)
		}
	}
}

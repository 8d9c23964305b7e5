package chaos

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/history"
)

// load reads testdata/<name>.json.
func load(t *testing.T, name string) History {
	t.Helper()
	h, err := LoadHistory(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// rules lists the rules of v's findings, in order.
func rules(v Verdict) []Rule {
	var out []Rule
	for _, f := range v.Findings {
		out = append(out, f.Rule)
	}
	return out
}

// TestCheckerJudgesSavedHistories: C1's checker, on histories saved in
// testdata/, finds what each shows and nothing else, in the order the run
// saw it: the first finding is the setup's verdict. clean.json is a live
// run's, saved with ZK19_CHAOS_HISTORY (seed 20261205, process backend,
// one server); the others are small histories of the same shape written
// for their case, each with registers porcupine can linearize.
func TestCheckerJudgesSavedHistories(t *testing.T) {
	for _, c := range []struct {
		file  string
		word  string
		rules []Rule
	}{
		// A live run (seed 20261205, one server): every hold read back
		// the lowest, stale-late writes refused by both fenced resources
		// and taken by the control, both registers linearizable.
		{"clean", "holds", nil},
		{"stale-late-refused", "holds", nil},
		// The memory resource took the stale-late write, and so went below
		// its mark.
		{"stale-late-taken", claims.VerdictRefuted, []Rule{RuleStaleLateTaken, RuleBelowMark}},
		{"two-holders", claims.VerdictRefuted, []Rule{RuleTwoHolders}},
		// The partition healed before the frozen holder's session expired:
		// its write was a holder's, and no stale-late write reached the
		// control.
		{"healed-before-expiry", claims.VerdictNotShown, []Rule{RuleEarlyWrite, RuleNothingReachedTheControl}},
		// The gate opened before the successor's token reached the durable
		// resource; a stale-late write later, refused, does not change the
		// verdict the early one gave.
		{"early-gate", claims.VerdictNotShown, []Rule{RuleEarlyWrite}},
	} {
		v := Checker{}.Check(load(t, c.file))
		if got := rules(v); v.Word() != c.word || !slices.Equal(got, c.rules) {
			t.Errorf("%s.json: got verdict %s with findings %q; want %s with %q", c.file, v.Word(), got, c.word, c.rules)
		}
	}
}

// TestCheckerReadsEveryRule: each rule, broken into a clean live history
// by one change, is what the checker finds first, with the verdict the
// rule gives: refuted for what contradicts C1, not shown for a run that did
// not get to the observation, each written here so that a rule moved to
// the other side fails it.
func TestCheckerReadsEveryRule(t *testing.T) {
	fenced := func(h *History) *ResourceHistory { return &h.Resources[0] }
	firstReadBack := func(h *History) *HoldReadBack {
		for _, e := range h.Events {
			if e.ReadBack != nil {
				return e.ReadBack
			}
		}
		t.Fatal("clean.json has no read-back")
		return nil
	}
	for _, c := range []struct {
		rule   Rule
		word   string // the verdict the rule gives, written out: not read from Refutes
		change func(h *History)
	}{
		{RuleNotLowest, claims.VerdictRefuted, func(h *History) {
			rb := firstReadBack(h)
			rb.Seen.Lowest, rb.Seen.Ahead = false, []string{"x-lock-0000000001"}
		}},
		{RuleStaleLateTaken, claims.VerdictRefuted, func(h *History) {
			for _, e := range h.Events {
				if fw := e.FrozenWrite; fw != nil && fw.Moment.Stale() {
					fw.Writes[1].Accepted = true
					return
				}
			}
		}},
		{RuleNodesLeft, claims.VerdictRefuted, func(h *History) { h.NodesLeft = "no lock node under /r: [n-lock-0000000003 <nil>]" }},
		{RuleSessionsLeft, claims.VerdictRefuted, func(h *History) { h.SessionsLeft = "no session but O's: [0x102 <nil>]" }},
		{RuleBelowMark, claims.VerdictRefuted, func(h *History) {
			r := fenced(h)
			last := r.Accepted[len(r.Accepted)-1]
			r.Accepted = append(r.Accepted, Accepted{Commit: last.Commit + 1, Who: "W9", Token: r.Accepted[0].Token})
		}},
		{RuleNotARegister, claims.VerdictRefuted, func(h *History) {
			r := fenced(h)
			end := r.Ops[len(r.Ops)-1].Return
			r.Ops = append(r.Ops, RegisterOp{Client: 9, Input: history.Input{Op: history.Read}, Output: history.Output{Value: "never written"}, Call: end + 1, Return: end + 2})
		}},
		{RuleNoPorcupineVerdict, claims.VerdictNotShown, func(h *History) { r := fenced(h); r.Ops[0].Return = r.Ops[0].Call - 1 }},
		{RuleNotStopped, claims.VerdictNotShown, func(h *History) { h.NotStopped = true }},
		{RuleSessionNotClosed, claims.VerdictNotShown, func(h *History) { h.Unclosed = []Unclosed{{Worker: "W3", Err: "zk: could not close"}} }},
		{RuleNothingReachedTheControl, claims.VerdictNotShown, func(h *History) {
			var kept []Event
			for _, e := range h.Events {
				if e.FrozenWrite == nil {
					kept = append(kept, e)
				}
			}
			h.Events = kept
		}},
		{RuleAnomaly, claims.VerdictNotShown, func(h *History) { h.Anomalies = []string{"W2: write to durable: disk I/O error"} }},
	} {
		h := load(t, "clean")
		c.change(&h)
		v := Checker{}.Check(h)
		if got := rules(v); len(got) == 0 || got[0] != c.rule || v.Word() != c.word {
			t.Errorf("rule %q broken into clean.json: got verdict %s with findings %q; want %s, first found by rule %q", c.rule, v.Word(), got, c.word, c.rule)
		}
	}
}

// TestCheckerJudgesOnlyTheEventsOfARunStoppedShort: a run that stopped
// before its end (Ended false) is judged on its events alone: what was
// left, the resources and the control were never looked at.
func TestCheckerJudgesOnlyTheEventsOfARunStoppedShort(t *testing.T) {
	h := load(t, "two-holders")
	h.Ended, h.Resources, h.NodesLeft = false, nil, "left"
	v := Checker{}.Check(h)
	if got := rules(v); !slices.Equal(got, []Rule{RuleTwoHolders}) || len(v.Registers) != 0 {
		t.Errorf("a run stopped short: got findings %q and %d registers checked; want only the two holders, no register", got, len(v.Registers))
	}
}

// TestHistoryRoundTripsThroughJSON: a history is plain data; what JSON
// keeps of it is judged the same.
func TestHistoryRoundTripsThroughJSON(t *testing.T) {
	h := load(t, "two-holders")
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back History
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, h) {
		t.Errorf("got a history that JSON changed:\n%+v\nwant\n%+v", back, h)
	}
	if a, b := rules(Checker{}.Check(h)), rules(Checker{}.Check(back)); !slices.Equal(a, b) {
		t.Errorf("got findings %q after JSON, %q before; want the same", b, a)
	}
}

// TestTheFirstFindingIsTheVerdict: the verdict is the first finding's,
// as the first verdict a proof states on a claim is its verdict: an early
// write before lock nodes were left is not shown; two holders before an
// anomaly refute.
func TestTheFirstFindingIsTheVerdict(t *testing.T) {
	early := load(t, "early-gate")
	early.NodesLeft = "no lock node under /r: [n-lock-0000000003 <nil>]"
	two := load(t, "two-holders")
	two.Anomalies = []string{"W2: write to durable: disk I/O error"}
	for _, c := range []struct {
		h     History
		word  string
		rules []Rule
	}{
		{early, claims.VerdictNotShown, []Rule{RuleEarlyWrite, RuleNodesLeft}},
		{two, claims.VerdictRefuted, []Rule{RuleTwoHolders, RuleAnomaly}},
	} {
		v := Checker{}.Check(c.h)
		if got := rules(v); v.Word() != c.word || !slices.Equal(got, c.rules) {
			t.Errorf("got verdict %s with findings %q; want %s with %q", v.Word(), got, c.word, c.rules)
		}
	}
}

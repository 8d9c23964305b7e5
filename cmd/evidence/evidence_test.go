package main

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/claims"
)

func fixture(t *testing.T) (*claims.Index, *Run) {
	t.Helper()
	ix, err := claims.Load("testdata/claims.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rn, err := parseRun(f)
	if err != nil {
		t.Fatal(err)
	}
	return ix, rn
}

func TestHeaderFromTheRecord(t *testing.T) {
	_, rn := fixture(t)
	h := rn.header()
	if h.Version != "3.8.0" || h.BackendKind != "process" || !strings.HasPrefix(h.Server, "ZooKeeper 3.8.0 (srvr:") {
		t.Errorf("header %+v; want version 3.8.0, backend process, the whole server line", h)
	}
	if !rn.PkgFail || !rn.PkgEnded || rn.Elapsed != 12.345 {
		t.Errorf("package: fail=%v ended=%v elapsed=%v; want a failed, ended run of 12.345s", rn.PkgFail, rn.PkgEnded, rn.Elapsed)
	}
	if got := rn.Start.Format("2006-01-02 15:04:05"); got != "2026-09-20 08:00:01" {
		t.Errorf("start %s; want the first event's time", got)
	}
}

func TestSubtestsFoldIntoTheirTest(t *testing.T) {
	_, rn := fixture(t)
	r := rn.Results["TestR3toR6_RecoverByGUIDAndOwner"]
	if r == nil || r.Action != "fail" || len(rn.Results) != 10 {
		t.Fatalf("results %v; want 10 top-level ones, TestR3toR6 failed", rn.Order)
	}
	joined := strings.Join(r.Lines, "\n")
	if !strings.Contains(joined, "timed out after 10s") || !strings.Contains(joined, "recovered guid-lock") {
		t.Errorf("TestR3toR6 lines lack its subtests' output:\n%s", joined)
	}
}

func TestVerdicts(t *testing.T) {
	ix, rn := fixture(t)
	vs := verdicts(ix, rn, rn.header())
	want := map[string]struct{ kind, text string }{
		"S1": {Holds, "holds"},
		"S2": {Refuted, `refuted on 3.8.0: "S2 violated: porcupine says the stale history is linearizable; want not"`},
		"Y2": {NotRun, "not run: skipped: the external backend cannot inject faults (the claim needs the harness to own servers and links) (needs ensemble-5, faults)"},
		"L2": {Failed, `failed: Example_sequenceOrderIsNotNameOrder: output differs: got "sequence order: C(0) A(1) B(2)", want "sequence order: C(0) B(1) A(2)"`},
		"L3": {Failed, "failed: TestL3_EachWaiterWatchesOnlyItsPredecessor: it has no result in the run"},
		"R1": {Holds, "holds; not run: TestY2_SyncInTheZK1675WindowReadsStale: skipped: the external backend cannot inject faults (the claim needs the harness to own servers and links)"},
		"R6": {Failed, "failed: TestR3toR6_RecoverByGUIDAndOwner: timed out after 10s waiting for D's node; last seen: []"},
		"E2": {Holds, "holds"},
		"E3": {Refuted, `refuted on 3.8.0: "E3 violated: goroutines leaked: found unexpected goroutines: [Goroutine 7 in state IO wait]"`},
		"X1": {Failed, "failed: no Test or Example in the index proves it"},
	}
	for _, v := range vs {
		w := want[v.Claim.ID]
		if v.Kind != w.kind || v.Text != w.text {
			t.Errorf("claim %s: %s / %s\nwant       %s / %s", v.Claim.ID, v.Kind, v.Text, w.kind, w.text)
		}
	}
	if len(vs) != len(want) {
		t.Errorf("%d verdicts; want %d", len(vs), len(want))
	}
}

func TestTellingLinesByRule(t *testing.T) {
	ix, rn := fixture(t)
	vs := verdicts(ix, rn, rn.header())
	got := map[string][]string{}
	for _, v := range vs {
		got[v.Claim.ID] = v.Lines
	}
	// Observations, the test's own statements, one fault; no operations
	// when those make two or more. file:line prefixes, the claim line,
	// server logs, session chatter and proxy bookkeeping are gone; in
	// logged order.
	if want := []string{"roles: leader zk2, A's follower zk1, B's follower zk3", "nemesis hold zk2->zk3", "the proxy still holds 99 bytes from the leader to zk3"}; !reflect.DeepEqual(got["S1"], want) {
		t.Errorf("S1 lines %q; want %q", got["S1"], want)
	}
	if want := []string{"evidence: dropped reply xid=3 err=0 and closed the connection", "A fail connection loss"}; !reflect.DeepEqual(got["R1"], want) {
		t.Errorf("R1 lines %q; want %q", got["R1"], want)
	}
	// A failing Example's got/want blocks are printed output, not log lines.
	if len(got["L2"]) != 0 {
		t.Errorf("L2 lines %q; want none (the verdict quotes the difference)", got["L2"])
	}
	// A test with subtests named after claims: only the claim's own
	// subtest counts (R3's "A ok recovered" is not R6's).
	if want := []string{"timed out after 10s waiting for D's node; last seen: []"}; !reflect.DeepEqual(got["R6"], want) {
		t.Errorf("R6 lines %q; want %q", got["R6"], want)
	}
	// Fewer than two telling lines: operations make up two.
	if want := []string{"A invoke set /x 1", "S2 violated: porcupine says the stale history is linearizable; want not"}; !reflect.DeepEqual(got["S2"], want) {
		t.Errorf("S2 lines %q; want %q", got["S2"], want)
	}
	// A skip message is in the verdict, not among the lines.
	if len(got["Y2"]) != 0 {
		t.Errorf("Y2 lines %q; want none", got["Y2"])
	}
}

func TestCleanStripsPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"    consistency_test.go:229: B ok \"0\"":                `B ok "0"`,
		"    Example_staleReadFromLaggingFollower: B invoke get": "B invoke get",
		"    TestMain: shared1| 03:33:50 WARN x":                 "",
		"    server.go:276: l3-1| 03:33:21 WARN y":               "",
		"=== RUN   TestX":      "",
		"--- PASS: TestX (1s)": "",
		"    zk3| 2026 WARN x": "",
		"        second line":  "second line",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestSyncFillsProofsTestsFirst(t *testing.T) {
	ix := &claims.Index{Claims: []claims.Claim{{ID: "R3"}, {ID: "R4"}, {ID: "E3"}}}
	warn := syncProofs(ix, []claims.Proof{
		{Name: "Example_x", Example: true, Cites: []string{"R3"}},
		{Name: "TestR3toR6_x", Cites: []string{"R3", "R4", "R5", "R6"}},
		{Name: "TestR3_x", Cites: []string{"R3"}},
	})
	if want := []string{"TestR3_x", "TestR3toR6_x", "Example_x"}; !reflect.DeepEqual(ix.Claims[0].Proof, want) {
		t.Errorf("R3 proof %v; want %v", ix.Claims[0].Proof, want)
	}
	if len(ix.Claims[2].Proof) != 0 || len(warn) != 3 { // R5, R6 unknown; E3 without proof
		t.Errorf("warnings %q; want R5 and R6 unknown, E3 without proof", warn)
	}
}

func TestRenderDocIsGofmtClean(t *testing.T) {
	ix, _ := fixture(t)
	b, err := renderDoc(ix)
	if err != nil {
		t.Fatal(err)
	}
	again, err := format.Source(b)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("renderDoc output is not gofmt-stable: %v", err)
	}
	s := string(b)
	for _, want := range []string{"// # §1 one\n", "// # evidence proof\n", "//   - S1 (beyond): both proofs pass. Proof:", "//   - X1: no proof at all. Proof: none yet\n", "\npackage zk19\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("doc.go lacks %q:\n%s", want, s)
		}
	}
}

func TestRunWritesEvidenceAndFailsOnFailedClaims(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	out := filepath.Join(dir, "EVIDENCE.md")
	code := run([]string{"-index", mustAbs(t, "testdata/claims.json"), "-json", "testdata/run.json", "-o", out}, &stderr)
	if code != 1 {
		t.Errorf("exit %d; want 1 (L2, L3, R6 and X1 failed)\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"- date: 2026-09-20 08:00:01 UTC\n",
		"- server: ZooKeeper 3.8.0",
		"- backend: process (java",
		"- verdicts: 3 holds, 2 refuted, 1 not run, 4 failed (of 10 claims)",
		"| S1 (beyond) | holds | `TestS1_PlainReadOnLaggingFollowerIsStale` (pass, 2.5s)<br>`Example_staleReadFromLaggingFollower` (pass, 3.1s) | process | 3.8.0 |",
		"### S2: refuted on 3.8.0:",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("EVIDENCE.md lacks %q:\n%s", want, md)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

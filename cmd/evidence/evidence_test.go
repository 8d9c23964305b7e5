package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
)

const fixtureModule = "github.com/zk19/zk19"

// fixture is a known run (testdata/run.json) of a small index
// (testdata/claims.json): one claim per kind of verdict, a peer test that
// fails, and a proof in another package.
func fixture(t *testing.T) (*claims.Index, *Run) {
	t.Helper()
	return loadIndex(t, "testdata/claims.json"), loadRun(t, "testdata/run.json")
}

// loadIndex reads the claim index at path, or stops t.
func loadIndex(t *testing.T, path string) *claims.Index {
	t.Helper()
	ix, err := claims.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// loadRun reads the saved "go test -json" stream at path, or stops t.
func loadRun(t *testing.T, path string) *Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rn, err := parseRun(bytes.NewReader(b), fixtureModule)
	if err != nil {
		t.Fatal(err)
	}
	return rn
}

func byID(vs []Verdict) map[string]Verdict {
	m := map[string]Verdict{}
	for _, v := range vs {
		m[v.Claim.ID] = v
	}
	return m
}

func TestHeaderFromTheRecord(t *testing.T) {
	_, rn := fixture(t)
	h := rn.header()
	if h.Version != "3.8.0" || h.BackendKind != "process" || !strings.HasPrefix(h.Server, "ZooKeeper 3.8.0 (srvr:") || !strings.HasPrefix(h.Ensembles, "standalone") {
		t.Errorf("header %+v; want version 3.8.0, backend process, the whole server and ensembles lines", h)
	}
	// The other package's "ok" and pass come last; they must not stand for
	// the root package's result.
	if !rn.PkgFail || !rn.PkgEnded || rn.Elapsed != 12.345 {
		t.Errorf("package: fail=%v ended=%v elapsed=%v; want the root package's failed, ended run of 12.345s", rn.PkgFail, rn.PkgEnded, rn.Elapsed)
	}
	if got := rn.Start.Format("2006-01-02 15:04:05"); got != "2026-09-20 08:00:01" {
		t.Errorf("start %s; want the first event's time", got)
	}
	if n := len(headerBlock(rn.Preamble)); n != 6 {
		t.Errorf("the preamble holds a header of %d lines; want the 6 printed before the first test", n)
	}
}

func TestSubtestsFoldIntoTheirTestAndPackagesKeepTheirNames(t *testing.T) {
	_, rn := fixture(t)
	r := rn.Results["TestR3toR6_RecoverByGUIDAndOwner"]
	if r == nil || r.Action != "fail" || len(rn.Results) != 16 {
		t.Fatalf("results %v; want 16 top-level ones, TestR3toR6 failed", rn.Order)
	}
	joined := strings.Join(r.Lines, "\n")
	if !strings.Contains(joined, "timed out after 10s") || !strings.Contains(joined, "recovered guid-lock") {
		t.Errorf("TestR3toR6 lines lack its subtests' output:\n%s", joined)
	}
	if r := rn.Results["internal/server/faultproxy.TestZKNeverDecodesCreateReplyBody"]; r == nil || r.Action != "pass" {
		t.Errorf("the other package's test: %+v; want it named by its directory, passed", r)
	}
}

func TestVerdicts(t *testing.T) {
	ix, rn := fixture(t)
	skip := "skipped: the external backend cannot inject faults (the claim needs the harness to own servers and links)"
	want := map[string]struct{ kind, text string }{
		"S1": {Holds, "holds"},
		"S2": {Refuted, `refuted on 3.8.0: "S2 refuted: porcupine says the stale history is linearizable; want not"`},
		"Y2": {NotRun, "not run: " + skip + " (needs ensemble-5, faults)"},
		"Y4": {Differs, "observed, differs from the article's wording (on 3.8.0)"},
		"L2": {NotShown, `not shown: Example_sequenceOrderIsNotNameOrder: output differs: got "sequence order: C(0) A(1) B(2)", want "sequence order: C(0) B(1) A(2)"`},
		"L3": {NotShown, "not shown: TestL3_EachWaiterWatchesOnlyItsPredecessor: it has no result in the run"},
		"R1": {Partly, "holds, partly not run: TestY2_SyncInTheZK1675WindowReadsStale: " + skip},
		"R6": {NotShown, "not shown: TestR3toR6_RecoverByGUIDAndOwner: timed out after 10s waiting for D's node; last seen: []"},
		"R7": {Holds, "holds"},
		"E2": {Holds, "holds"},
		"E3": {Refuted, `refuted on 3.8.0: "E3 refuted: goroutines leaked: found unexpected goroutines: [Goroutine 7 in state IO wait]"`},
		"E4": {Holds, "holds"},
		"X1": {NotShown, "not shown: no Test or Example in the index proves it"},
	}
	vs := verdicts(ix, rn, rn.header())
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

func TestDecisiveLinesAreTheStatedObservations(t *testing.T) {
	ix, rn := fixture(t)
	got := byID(verdicts(ix, rn, rn.header()))
	want := map[string][]string{
		// Only the evidence attribute, not "roles:" or "the proxy still holds".
		"S1": {`B read "0" on zk3 while the proxy held 99 bytes from the leader`},
		"Y4": {`after exists and 2 heartbeats B still read "1"`,
			"differs: the failed conditional set took zxid 0x100000007 and waited for the held stream, as a barrier does"},
		// A failed proof: what it failed with. A failing Example's got/want
		// blocks are printed output, not log lines.
		"S2": {"TestS2_StaleHistoryIsNotLinearizable failed: S2 refuted: porcupine says the stale history is linearizable; want not"},
		"L2": {`Example_sequenceOrderIsNotNameOrder failed: output differs: got "sequence order: C(0) A(1) B(2)", want "sequence order: C(0) B(1) A(2)"`},
		// Of a test with subtests named after claims, only the claim's own.
		"R6": {"TestR3toR6_RecoverByGUIDAndOwner failed: timed out after 10s waiting for D's node; last seen: []"},
		"R7": {"dropped op=1 xid=3; the drop result carries no path",
			"the create reply's body was forwarded unread (27 bytes)"},
		"E3": {"E3 refuted: goroutines leaked: found unexpected goroutines: [Goroutine 7 in state IO wait]"},
		"E4": {"the record opens, before any test, with backend process, server ZooKeeper 3.8.0, " +
			"ensembles standalone (L, R, F, T, E, X); 3 servers (S, Y1, Y3-Y6, L9); 5 servers (Y2)"},
		"Y2": nil,
		"E2": {"1 sleeps in 7 root test files; each one waits for a named constant, none guesses a window"},
	}
	for id, w := range want {
		if !reflect.DeepEqual(got[id].Decisive, w) {
			t.Errorf("%s decisive %q; want %q", id, got[id].Decisive, w)
		}
	}
	if w := []string{"nemesis hold zk2->zk3", "A invoke set /x 1", "A ok", "B invoke get /x", `B ok "0"`, "nemesis release zk2->zk3"}; !reflect.DeepEqual(got["S1"].Context, w) {
		t.Errorf("S1 context %q; want its operations and faults without bookkeeping: %q", got["S1"].Context, w)
	}
}

// recordRun is a run whose root package prints preamble, then runs TestE4,
// then prints late.
func recordRun(t *testing.T, preamble, late []string) *Run {
	t.Helper()
	var b strings.Builder
	out := func(test, s string) {
		b.WriteString(`{"Action":"output","Package":"` + fixtureModule + `","Test":"` + test + `","Output":"` + s + `\n"}` + "\n")
	}
	for _, l := range preamble {
		out("", l)
	}
	b.WriteString(`{"Action":"run","Package":"` + fixtureModule + `","Test":"TestE4_X"}` + "\n")
	b.WriteString(`{"Action":"pass","Package":"` + fixtureModule + `","Test":"TestE4_X"}` + "\n")
	for _, l := range late {
		out("", l)
	}
	rn, err := parseRun(strings.NewReader(b.String()), fixtureModule)
	if err != nil {
		t.Fatal(err)
	}
	return rn
}

func TestRecordClaimIsJudgedOnThePrintedRecord(t *testing.T) {
	ix := &claims.Index{Claims: []claims.Claim{
		{ID: "E4", Proof: []string{"TestE4_X"}},
		{ID: "Y2", Needs: []string{"ensemble-5"}},
	}}
	header := []string{"# zk19 verification record", "# backend:   process (java)", "# server:    ZooKeeper 3.9.3 (srvr: x)",
		"# ensembles: standalone (L); 5 servers (Y2)", "# started:   now"}
	cases := []struct {
		name            string
		preamble, late  []string
		kind, decisive0 string
	}{
		{"header before the first test", header, nil, Holds, "the record opens, before any test, with backend process"},
		{"header after the first test", nil, header, Refuted, "record check: the record header was printed after the first test started"},
		{"no header", []string{"# something else"}, nil, Refuted, `record check: the record has no header (no "# zk19 verification record" line)`},
		{"a size the claims need is missing", []string{header[0], header[1], header[2], "# ensembles: standalone (L); 3 servers (S)"}, nil,
			Refuted, `record check: the record header lacks "5 servers" among the ensembles`},
	}
	for _, tc := range cases {
		rn := recordRun(t, tc.preamble, tc.late)
		v := byID(verdicts(ix, rn, rn.header()))["E4"]
		if v.Kind != tc.kind || len(v.Decisive) == 0 || !strings.HasPrefix(v.Decisive[0], tc.decisive0) {
			t.Errorf("%s: E4 %s %q; want %s, first line %q", tc.name, v.Kind, v.Decisive, tc.kind, tc.decisive0)
		}
	}
}

func TestPeersAreReportedApartAndChangeNoVerdict(t *testing.T) {
	ix, rn := fixture(t)
	got := peers(rn)
	want := []Peer{
		{Name: "TestPeerGoZookeeperLock_FailsOnAStrangerAndLeavesItsNode", Action: "fail", Elapsed: 0.1, Evidence: []string{
			"zk.Lock failed on the stranger and left its node guid-lock-0000000001",
			"failed: peer observation changed: zk.Lock returned <nil>; recorded behaviour was an error"}, EvidenceZh: []string{
			"zk.Lock 遇到外来的孩子时失败，留下了它的节点 guid-lock-0000000001",
			"失败：`peer observation changed: zk.Lock returned <nil>; recorded behaviour was an error`"}},
		{Name: "TestL6_PeerGoZookeeperLockAcquiresWithoutItsNode", Action: "pass", Elapsed: 0.1, Evidence: []string{
			"zk.Lock returned nil although its node was deleted"}, EvidenceZh: []string{
			"zk.Lock 返回 nil，尽管它的节点已被删除"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("peers %+v;\nwant %+v", got, want)
	}
	// The failing peer is in no proof list, so no verdict is failed for it.
	for _, v := range verdicts(ix, rn, rn.header()) {
		if strings.Contains(v.Text, "Peer") {
			t.Errorf("claim %s's verdict names a peer: %s", v.Claim.ID, v.Text)
		}
	}
}

// TestCleanDropsServerLogs: clean is a record line's text
// (claims.TestRecordLines), except that a server's own log line is none.
func TestCleanDropsServerLogs(t *testing.T) {
	for in, want := range map[string]string{
		"    Example_x: B ok \"0\"":                  `B ok "0"`,
		"=== ATTR  Example_x zk19.evidence B read 0": "",
		"    TestMain: shared1| 03:33:50 WARN x":     "",
		"    server.go:276: l3-1| 03:33:21 WARN y":   "",
		"    zk3| 2026 WARN x":                       "",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestSyncFillsProofsTestsFirstAndKeepsOtherPackages(t *testing.T) {
	ix := &claims.Index{Claims: []claims.Claim{
		{ID: "R3"}, {ID: "R4"}, {ID: "E3"},
		{ID: "R7", Proof: []string{"TestR7_gone", "internal/server/faultproxy.TestZK"}},
	}}
	warn := syncProofs(ix, []claims.Proof{
		{Name: "Example_x", Example: true, Cites: []string{"R3"}},
		{Name: "TestR3toR6_x", Cites: []string{"R3", "R4", "R5", "R6"}},
		{Name: "TestR3_x", Cites: []string{"R3"}},
		{Name: "TestR7_x", Cites: []string{"R7"}},
		{Name: "TestPeerX", Peer: true},
	})
	if want := []string{"TestR3_x", "TestR3toR6_x", "Example_x"}; !reflect.DeepEqual(ix.Claims[0].Proof, want) {
		t.Errorf("R3 proof %v; want %v", ix.Claims[0].Proof, want)
	}
	if want := []string{"TestR7_x", "internal/server/faultproxy.TestZK"}; !reflect.DeepEqual(ix.Claims[3].Proof, want) {
		t.Errorf("R7 proof %v; want the root test, then the other package's kept", ix.Claims[3].Proof)
	}
	if len(ix.Claims[2].Proof) != 0 || len(warn) != 3 { // R5, R6 unknown; E3 without proof
		t.Errorf("warnings %q; want R5 and R6 unknown, E3 without proof", warn)
	}
}

func TestOtherPackagesRunExactlyTheirTests(t *testing.T) {
	ix := &claims.Index{Claims: []claims.Claim{
		{ID: "R7", Proof: []string{"TestR7_x", "internal/server/faultproxy.TestZKB", "internal/server/faultproxy.TestZKA"}},
		{ID: "E5", Proof: []string{"internal/server/jute.TestJ", "internal/server/faultproxy.TestZKA"}},
	}}
	got := otherPackages(ix)
	want := []pkgTests{{"internal/server/faultproxy", []string{"TestZKA", "TestZKB"}}, {"internal/server/jute", []string{"TestJ"}}}
	if !reflect.DeepEqual(got, want) || got[0].pattern() != "^(TestZKA|TestZKB)$" {
		t.Errorf("otherPackages = %+v (pattern %q); want %+v", got, got[0].pattern(), want)
	}
}

func TestRunWritesEvidenceAndFailsOnFailedClaims(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	out := filepath.Join(dir, "EVIDENCE.md")
	code := run([]string{"-C", "../..", "-index", mustAbs(t, "testdata/claims.json"), "-json", mustAbs(t, "testdata/run.json"), "-o", out}, &stderr)
	if code != 1 {
		t.Errorf("exit %d; want 1 (L2, L3, R6 and X1 not shown, S2 and E3 refuted)\n%s", code, stderr.String())
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
		"- verdicts (13 claims, on 3.8.0): 4 holds; 1 holds, partly not run; 1 observed, differs from the article's wording; 2 refuted; 1 not run; 4 not shown\n" +
			"- not verified here: 1 statements, documentary\n- peer tests: 2 (1 fail, 1 pass)\n",
		"| S1 (beyond) | §1 ¶2 | holds | B read \"0\" on zk3 while the proxy held 99 bytes from the leader | `TestS1_PlainReadOnLaggingFollowerIsStale` (pass, 2.5s)<br>`Example_staleReadFromLaggingFollower` (pass, 3.1s) |",
		"| R7 | §3 ¶4 | holds |",
		"`internal/server/faultproxy.TestZKNeverDecodesCreateReplyBody` (pass, 0.0s) |",
		"## How other recipes fare\n",
		"| `TestPeerGoZookeeperLock_FailsOnAStrangerAndLeavesItsNode` | fail (0.1s) | zk.Lock failed",
		"## Not verified here\n",
		"| D1 | §1 ¶3 | documentary | a fact of a tracker | no server can show it |",
		"## Source dependencies\n",
		"| `Leader.processSync`<br>`zookeeper-server/src/main/java/org/apache/zookeeper/server/quorum/Leader.java` | sync answered at once or queued | " +
			"3.8.0 (`release-3.8.0-1`): `processSync`, line 1289<br>3.9.3 (`release-3.9.3`): `processSync`, line 1336 | Y2 | `TestY2_SyncInTheZK1675WindowReadsStale` (skip) |",
		"## Verdict words\n",
		"### S2 (§1 ¶2): refuted on 3.8.0:",
		"### Y4 (§1 ¶4): observed, differs from the article's wording (on 3.8.0)\n\nits proof passes and logs a differs line.\n\nThe article's wording: the fixture article says it cannot",
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

// TestZhFromTheSameRun: -zh writes the Chinese attachments from the run
// that wrote -o, so the two files cannot disagree: every claim of the
// English table has a row in the Chinese one, and the Chinese file links
// the English file's pictures instead of drawing its own.
func TestZhFromTheSameRun(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	out, zh := filepath.Join(dir, "EVIDENCE.md"), filepath.Join(dir, "EVIDENCE.zh.md")
	run([]string{"-C", "../..", "-index", mustAbs(t, "testdata/claims.json"), "-json", mustAbs(t, "testdata/run.json"), "-o", out, "-zh", zh}, &stderr)
	en, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(zh)
	if err != nil {
		t.Fatalf("-zh wrote no file: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"论断证据表", "验证记录", `| <a id="s2"></a>S2（超出原文） |`, `| <a id="x1"></a>X1 |`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("EVIDENCE.zh.md lacks %q", want)
		}
	}
	if !strings.Contains(string(en), "| S2 (beyond) |") {
		t.Errorf("EVIDENCE.md lacks S2's row")
	}
	if _, err := os.Stat(filepath.Join(dir, "docs", "diagrams", "EVIDENCE.zh")); err == nil {
		t.Errorf("-zh drew pictures of its own under docs/diagrams/EVIDENCE.zh; want the English file's linked")
	}
	var bad bytes.Buffer
	if code := run([]string{"-lang", "zh", "-zh", zh, "-o", out}, &bad); code != 2 {
		t.Errorf("-lang zh with -zh: exit %d; want 2 (usage)", code)
	}
}

package diagram

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/golden"

	"github.com/zk19/zk19/internal/proof/claims"
)

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// A known trace gives a known diagram: every kind of line, drawn in both
// formats exactly as the golden files say.
func TestKnownTraceGivesKnownDiagrams(t *testing.T) {
	mermaid, d2 := FromLog("K1: a known trace", readLines(t, "known.log"))
	for name, got := range map[string]string{"known.mmd": mermaid, "known.d2": d2} {
		path := filepath.Join("testdata", name)
		if golden.FlagUpdate() {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: the known trace drew\n%s\nwant (go test -update rewrites it)\n%s", name, got, want)
		}
	}
}

// inOrder fails unless each of wants occurs in s, each after the one
// before.
func inOrder(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	rest := s
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s: got no %q after the steps before it; want it\n%s", what, w, s)
			return
		}
		rest = rest[i+len(w):]
	}
}

var sessionID = regexp.MustCompile(`session (0x[0-9a-f]+)\)`)

// realRuns are the captured logs and, for each, what its diagrams must
// show, in order.
var realRuns = []struct {
	log     string
	mermaid []string // in order
	d2      []string // in order
}{
	{"run-s1.log", []string{
		"Note over A: session 0x1000011ad700000 HasSession on zk1",
		"Note over B: session 0x2000011aebe0000 HasSession on zk2",
		"Note over nemesis: hold 3-#62;2 (bytes kept)",
		`A->>zk1: set /x "1"`, "zk1-->>A: ok", "A-)B: tell B",
		`B->>zk2: get /x`, `zk2-->>B: ok "0"`,
		"Note over A,nemesis: evidence: B read \"0\" on zk2",
		"Note over nemesis: release 3-#62;2", `zk2-->>B: ok "1"`,
	}, []string{
		`"nemesis".note`, `"hold 3->2 (bytes kept)"`,
		`"zk2" -> "B": "ok \"0\""`, `"evidence: B read \"0\" on zk2`, `"zk2" -> "B": "ok \"1\""`,
	}},
	{"run-y2.log", []string{
		"Note over nemesis: partition old=[5 1] | new=[2 3 4]",
		"new leader zk4 elected 798ms after the cut",
		`C->>zk4: set /x "1"`, "zk4-->>C: ok",
		`856ms<br/>after the cut: the window is open`,
		"B->>zk1: sync /x", "zk1-->>B: ok sync", "B->>zk1: get /x", `zk1-->>B: ok "0"`,
		"evidence: B's sync on zk1 succeeded",
		"the old leader stepped down 5.098s after the cut",
		"evidence: porcupine: the history of the window<br/>is linearizable: false",
	}, []string{
		`"C" -> "zk4": "set /x \"1\""`, `"zk1" -> "B": "ok \"0\""`, "5.098s after the cut",
	}},
	{"run-r1.log", []string{
		"Note over A: session 0x100001185c20005 HasSession via A-proxy",
		"Note over A_proxy: DropReply armed",
		"A->>A_proxy: create ~/039545b0...-lock- EPHEMERAL_SEQUENTIAL",
		"A_proxy->>ZooKeeper: xid=2 op=create",
		"ZooKeeper-->>A_proxy: reply xid=2 zxid=0x14 err=0",
		"Note over A_proxy: reply dropped, xid=2",
		"A_proxy--xA: info connection lost",
		"Note over A: session 0x100001185c20005 HasSession via A-proxy",
		"O sees 1 node(s) with the GUID",
	}, []string{
		`"ZooKeeper" -> "A_proxy": "reply xid=2 zxid=0x14 err=0"`,
		`"A_proxy".note4: "reply dropped, xid=2; client and upstream\nconnections closed"`,
		`"A_proxy" -> "A": "info connection lost`, `target-arrowhead.shape: cross`,
	}},
	{"run-l4.log", []string{
		"A->>ZooKeeper: delete ~/f54592f7...-lock-0000000000",
		"ZooKeeper-)B: event ~/f54592f7...-lock-0000000000",
		"Note over B: acquired ~/fcb8865d...-lock-0000000001",
		"Note over C: settled: events=0 waiting=true",
		"ZooKeeper-)C: event ~/fcb8865d...-lock-0000000001",
	}, nil},
}

// The diagrams of real runs carry what the runs observed, in the order
// they observed it: the session ids, the dropped reply's xid and zxid, the
// stale value between the fault and its repair, the measured times.
func TestRealRunsDiagramsCarryTheirObservations(t *testing.T) {
	for _, tc := range realRuns {
		t.Run(tc.log, func(t *testing.T) {
			lines := readLines(t, tc.log)
			mermaid, d2 := FromLog("", lines)
			inOrder(t, "mermaid", mermaid, tc.mermaid...)
			inOrder(t, "d2", d2, tc.d2...)
			for _, m := range sessionID.FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
				if !strings.Contains(mermaid, m[1]) || !strings.Contains(d2, m[1]) {
					t.Errorf("session %s of the log: got it missing from a diagram; want it in both", m[1])
				}
			}
		})
	}
}

// TestHarnessNotesAreNotSteps: the pool's bookkeeping (a claims.HarnessNote
// line) stays in the record but not in the diagram; a scenario's "# " step
// is drawn across it.
func TestHarnessNotesAreNotSteps(t *testing.T) {
	lines := []string{
		"    x_test.go:1: " + claims.HarnessNote + "trio1 lent again (lease 2): zk1 follower 0x10000006e",
		"    x_test.go:2: # the stream to B's follower is held",
	}
	mermaid, d2 := FromLog("K2: a harness note", lines)
	for name, got := range map[string]string{"mermaid": mermaid, "d2": d2} {
		if strings.Contains(got, "lent again") {
			t.Errorf("%s: got the pool's note %q in the diagram; want it left out\n%s", name, "trio1 lent again", got)
		}
		if !strings.Contains(got, "the stream to B's follower is held") {
			t.Errorf("%s: got no step %q in the diagram; want it drawn\n%s", name, "the stream to B's follower is held", got)
		}
	}
}

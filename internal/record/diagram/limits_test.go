package diagram

import (
	"fmt"
	"strings"
	"testing"
)

// A long run is cut to forty messages, keeps its fault and its evidence,
// and says how many steps it left out.
func TestLongTraceIsCutAndSaysHowMuch(t *testing.T) {
	lines := []string{"A info session HasSession (server 127.0.0.1:1111, session 0x1)"}
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("A invoke get /x%d", i), fmt.Sprintf("A ok %q", fmt.Sprint(i)))
		if i == 30 {
			lines = append(lines, "nemesis kill zk1")
		}
	}
	lines = append(lines, "=== ATTR  TestX zk19.evidence A read 49 last")
	mermaid, _ := FromLog("long", lines)
	// "->>" counts the requests and, inside "-->>", their results.
	if got := strings.Count(mermaid, "->>"); got > maxMessages {
		t.Errorf("messages drawn: got %d; want at most %d", got, maxMessages)
	}
	for _, want := range []string{"Note over nemesis: kill zk1", "evidence: A read 49 last", "(60 more steps of the log are not drawn from"} {
		if !strings.Contains(mermaid, want) {
			t.Errorf("got no %q in the cut diagram; want it\n%s", want, mermaid)
		}
	}
}

// Servers whose own log is not in the input are named by their port when
// there are several, "ZooKeeper" when there is one; Example output's
// prefixes are read like a test's.
func TestServersWithoutLogsAreNamedByPort(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  []string
	}{
		{[]string{
			"Example_x: A info session HasSession (server 127.0.0.1:1111, session 0x1)",
			"Example_x: B info session HasSession (server 127.0.0.1:2222, session 0x2)",
			"Example_x: A invoke get /x", "Example_x: B invoke get /x",
		}, []string{"participant ZooKeeper_port_1111 as ZooKeeper port 1111", "participant ZooKeeper_port_2222 as ZooKeeper port 2222", "A->>ZooKeeper_port_1111: get /x"}},
		{[]string{
			"x_test.go:1: A info session HasSession (server 127.0.0.1:1111, session 0x1)",
			"x_test.go:2: A invoke get /x",
		}, []string{"participant ZooKeeper\n", "A->>ZooKeeper: get /x"}},
	} {
		mermaid, _ := FromLog("", tc.lines)
		inOrder(t, "mermaid", mermaid, tc.want...)
	}
}

func TestWrapAndClipKeepTheWordsAndTheTail(t *testing.T) {
	long := strings.Repeat("word ", 60) + "(reply dropped, xid=2)"
	got := clip(long, maxLabel)
	if len([]rune(got)) > maxLabel || !strings.HasSuffix(got, "(reply dropped, xid=2)") || !strings.Contains(got, "word ... word") {
		t.Errorf("clip: got %q; want at most %d characters, whole words, the tail kept", got, maxLabel)
	}
	for _, l := range wrap(long, lineWidth) {
		if len(l) > lineWidth {
			t.Errorf("wrap: got line %q of %d characters; want at most %d", l, len(l), lineWidth)
		}
	}
}

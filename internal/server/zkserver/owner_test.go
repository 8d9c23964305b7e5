package zkserver

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/reaper"
)

// A test that runs beside others counts only its own goroutines: those
// started under Own, at any depth, and no goroutine started outside it,
// even one that runs the same code.
func TestOwnGoroutinesCountsOnlyTheOwners(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	park := func() { <-stop }
	ended := make(chan struct{})
	go park() // not A's
	Own("A", func() {
		go func() { go park(); park() }()
		go func() { defer close(ended) }()
	})
	Own("B", func() { go park() })
	<-ended
	left := OwnGoroutines("A", 100*time.Millisecond)
	if n := strings.Count(left, "# labels: "); n != 2 {
		t.Fatalf("A's goroutines: got %d groups:\n%s\nwant 2 (its parked goroutine and the one it started)", n, left)
	}
	if !strings.Contains(left, "TestOwnGoroutinesCountsOnlyTheOwners") {
		t.Fatalf("A's goroutines: got stacks without the test's function:\n%s", left)
	}
	if got := strings.Count(OwnGoroutines("B", 100*time.Millisecond), "# labels: "); got != 1 {
		t.Fatalf("B's goroutines: got %d groups; want 1", got)
	}
	if left := OwnGoroutines("nobody", time.Second); left != "" {
		t.Fatalf("nobody's goroutines: got\n%s\nwant none", left)
	}
}

// OwnGoroutines waits for an owner's goroutines that are ending.
func TestOwnGoroutinesWaitsForThoseEnding(t *testing.T) {
	release := make(chan struct{})
	Own("C", func() { go func() { <-release }() })
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	if left := OwnGoroutines("C", 5*time.Second); left != "" {
		t.Fatalf("C's goroutines after it let them end: got\n%s\nwant none", left)
	}
}

// A server is counted as its test's (LiveOf, reaper.LeftoversOf) while it
// runs and not once its test's Scope has closed; another test's name
// finds none of it.
func TestLiveOfAndLeftoversOfNameTheTestsServers(t *testing.T) {
	b, err := Resolve()
	if err != nil {
		t.Skipf("no backend: %v", err)
	}
	if b.Kind == External {
		t.Skip("skipped: the external backend's servers are the user's")
	}
	sc := NewScope(t.Name())
	t.Cleanup(sc.Close)
	Start(sc, WithTickTime(200*time.Millisecond))
	mark := SafeName(t.Name())
	own, err := reaper.LeftoversOf(os.Getpid(), mark)
	if err != nil {
		t.Fatalf("leftovers: %v", err)
	}
	if l := LiveOf(t.Name()); len(l) != 1 || len(own) == 0 {
		t.Fatalf("while its server runs: got LiveOf %v and LeftoversOf %v; want its one server in both", l, own)
	}
	for _, l := range own {
		if !strings.Contains(l, mark) {
			t.Fatalf("LeftoversOf(%q) listed %q, which is not the test's", mark, l)
		}
	}
	if l := LiveOf(t.Name() + "Other"); len(l) != 0 {
		t.Fatalf("another test's name: got LiveOf %v; want none", l)
	}
	if l, _ := reaper.LeftoversOf(os.Getpid(), mark+"Other"); len(l) != 0 {
		t.Fatalf("another test's name: got LeftoversOf %v; want none", l)
	}
	sc.Close()
	if l, _ := reaper.LeftoversOf(os.Getpid(), mark); len(LiveOf(t.Name())) != 0 || len(l) != 0 {
		t.Fatalf("after its Scope closed: got LiveOf %v and LeftoversOf %v; want none", LiveOf(t.Name()), l)
	}
}

// The keep-alive goroutines of the Docker client are the ones goleak
// ignores (LeakOptions), and no other: OwnGoroutines skips the same.
func TestKeptAliveIsWhatLeakOptionsIgnore(t *testing.T) {
	for stack, want := range map[string]bool{
		"#\t0x1\tnet/http.(*persistConn).readLoop+0x2a\t/go/src/net/http/transport.go:1\n":  true,
		"#\t0x1\tnet/http.(*persistConn).writeLoop+0x2a\t/go/src/net/http/transport.go:1\n": true,
		"#\t0x1\tnet/http.(*persistConn).roundTrip+0x2a\t/go/src/net/http/transport.go:1\n": false,
		"#\t0x1\tgithub.com/go-zookeeper/zk.(*Conn).loop+0x2a\t/zk/conn.go:1\n":             false,
	} {
		if got := keptAlive(stack); got != want {
			t.Errorf("keptAlive(%q): got %v; want %v", stack, got, want)
		}
	}
	if len(LeakOptions()) != len(keepAlive) {
		t.Fatalf("LeakOptions: got %d options; want one per keep-alive function (%d)", len(LeakOptions()), len(keepAlive))
	}
}

package harness

import (
	"flag"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// TestAheadGivesItsStartToItsScopeOnly: what was started ahead in a Scope
// is what Get returns in that Scope, once, with no second start; a Get in
// any other TB starts its own; a start that failed fails the Scope that
// asks for it, naming the claim and the failure.
func TestAheadGivesItsStartToItsScopeOnly(t *testing.T) {
	var starts atomic.Int32
	a := &Ahead[int32]{claim: "Y0", start: func(t zkserver.TB) int32 { return starts.Add(1) }}
	sc := zkserver.NewScope("Example_y0").Hold()
	defer sc.Close()
	a.begin(sc)
	if got := a.Get(sc); got != 1 || starts.Load() != 1 {
		t.Fatalf("Get in the Scope started ahead: got start %d of %d; want the one start made ahead", got, starts.Load())
	}
	if got := a.Get(t); got != 2 {
		t.Fatalf("Get in another TB: got start %d; want a start of its own (2)", got)
	}

	failing := &Ahead[int]{claim: "Y0", start: func(t zkserver.TB) int { t.Fatalf("no leader within 5s"); return 0 }}
	other := zkserver.NewScope("Example_y0").Hold()
	defer other.Close()
	failing.begin(other)
	defer func() {
		r := recover()
		f, ok := r.(tb.ScopeFailure)
		if !ok || !strings.Contains(f.Msg, "the start ahead of Y0 failed") || !strings.Contains(f.Msg, "no leader within 5s") {
			t.Fatalf("Get after a failed start: got %v; want the Scope failed with the claim and the start's failure", r)
		}
	}()
	failing.Get(other)
	t.Fatalf("Get after a failed start returned; want the Scope failed")
}

// TestWillRunFollowsRunAndSkip: an Example runs unless -run's first element
// does not match it or -skip's does.
func TestWillRunFollowsRunAndSkip(t *testing.T) {
	run, skip := flag.Lookup("test.run"), flag.Lookup("test.skip")
	oldRun, oldSkip := run.Value.String(), skip.Value.String()
	t.Cleanup(func() { _ = run.Value.Set(oldRun); _ = skip.Value.Set(oldSkip) })
	for _, c := range []struct {
		run, skip string
		want      bool
	}{
		{"", "", true},
		{"Example", "", true},
		{"Example_s2/sub", "", true},
		{"TestL3", "", false},
		{"", "Example_s2", false},
		{"Example", "TestL3", true},
	} {
		_ = run.Value.Set(c.run)
		_ = skip.Value.Set(c.skip)
		if got := willRun("Example_s2SyncInZK1675Window"); got != c.want {
			t.Errorf("-run %q -skip %q: willRun = %v; want %v", c.run, c.skip, got, c.want)
		}
	}
}

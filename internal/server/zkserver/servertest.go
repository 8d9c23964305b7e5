// This file is the TestMain, and the timing of server starts, of a
// package whose tests or Examples run against real ZooKeeper servers
// (RunTests, RunExamples, BenchReady), as net/http/httptest is for HTTP servers.

package zkserver

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// RunExamples is the TestMain of a package whose Examples and tests run
// against a real ZooKeeper server (lock, fence/fencehttp). It parses the
// flags, starts nothing when go test only lists, opens the package's
// Scope (handed to use before any test runs), stops everything on Ctrl-C
// and at the end, and, with -short and no server, skips the Examples
// instead of failing. It returns the exit code.
func RunExamples(m *testing.M, name string, use func(*Scope)) int {
	flag.Parse()
	SetShort(testing.Short())
	if Listing() { // go test -list: nothing of the harness runs
		return m.Run()
	}
	scope := NewScope(name)
	use(scope)
	stop := HandleInterrupts(scope.Close)
	defer stop()
	defer scope.Close()
	if _, err := Resolve(); err != nil {
		if !testing.Short() {
			fmt.Fprintf(os.Stderr, "%s: the Examples need a ZooKeeper server: %v (run scripts/setup)\n", name, err)
			return 1
		}
		fmt.Printf("# %s: no ZooKeeper server (-short): the Examples are skipped\n", name)
		_ = flag.Set("test.skip", "^Example")
	}
	return m.Run()
}

// RunTests is the TestMain of a package whose tests start servers and have
// no Examples to skip: it parses the flags, starts nothing when go test only
// lists, stops every server on Ctrl-C, and fails the run when a server is
// left running or, after a passing run, a goroutine is left (goleak, with
// LeakOptions). It returns the exit code.
func RunTests(m *testing.M) int {
	flag.Parse()
	SetShort(testing.Short())
	if Listing() { // go test -list: nothing of the harness runs
		return m.Run()
	}
	// Before anything is created: an interrupt stops the servers and
	// containers these tests started, or they would outlive the binary.
	stopInterrupts := HandleInterrupts(func() {})
	code := m.Run()
	stopInterrupts()
	if n := Live(); n > 0 {
		fmt.Fprintf(os.Stderr, "servers left running: %v\n", KillAll())
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(LeakOptions()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	return code
}

// BenchReady starts and stops b.N servers or ensembles and reports the
// median time until every server answered srvr with a Mode (and, for an
// ensemble, one leader).
func BenchReady(b *testing.B, start func(TB)) {
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		sc := NewScope("bench").Quiet()
		t0 := time.Now()
		start(sc)
		took = append(took, time.Since(t0))
		sc.Close()
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "ms-median-ready")
}

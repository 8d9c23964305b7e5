package zkserver

import (
	"flag"
	"fmt"
	"os"
	"testing"
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

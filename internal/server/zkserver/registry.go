package zkserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/zk19/zk19/internal/server/reaper"
)

// Everything a test binary makes is registered here before it exists, so
// that KillAll, run from the interrupt handler while a test goroutine is
// still creating a server, finds it: Ryuk cannot run here, so the harness
// does its job itself.
var (
	liveMu   sync.Mutex
	live     = map[runner]string{} // registered at construction, dropped at close
	stopping bool                  // set by KillAll: nothing new is made after it
	usedCtr  bool                  // a container was asked for: KillAll sweeps by label
)

// started is every ensemble this binary started (a standalone server is
// one of size 1), in the order they became ready, kept after they stop: the
// claims about the run itself check what ran, not what was meant to run
// (E1: every server's ports; E4: the record's header).
var (
	startedMu sync.Mutex
	started   []*Ensemble
)

func recordStarted(e *Ensemble) { startedMu.Lock(); started = append(started, e); startedMu.Unlock() }

// Started returns the ensembles this binary has started so far that became
// ready, running or stopped, in order. External servers are not started.
func Started() []*Ensemble {
	startedMu.Lock()
	defer startedMu.Unlock()
	return slices.Clone(started)
}

// errStopping refuses work once KillAll has begun: a server made after the
// sweep would outlive the binary.
var errStopping = errors.New("the harness is stopping (KillAll ran): no new server")

// register records r before it makes anything, and fails once KillAll ran.
func register(r runner, what string) error {
	liveMu.Lock()
	defer liveMu.Unlock()
	if stopping {
		return errStopping
	}
	live[r] = what
	if _, ok := r.(*containerRunner); ok {
		usedCtr = true
	}
	return nil
}

func unregister(r runner) { liveMu.Lock(); delete(live, r); liveMu.Unlock() }

// isStopping is checked by a runner, under its own lock, before it creates a
// process, a container or a directory.
func isStopping() bool { liveMu.Lock(); defer liveMu.Unlock(); return stopping }

// killMu is held by KillAll for its whole sweep.
var killMu sync.Mutex

// Live reports how many servers this binary registered and has not removed.
// It waits for a KillAll in progress: a test that fails because the
// interrupt handler is killing its server ends, and TestMain reaches its
// end-of-run check (this call) before its exit; the exit then waits for the
// sweep instead of cutting it short.
func Live() int {
	killMu.Lock()
	defer killMu.Unlock()
	liveMu.Lock()
	defer liveMu.Unlock()
	return len(live)
}

// LiveOf lists the servers registered for the test named owner, or for
// its subtests, and not removed: those whose container name or server dir
// carries the test's safe name. A test that runs beside others counts its
// own servers this way.
func LiveOf(owner string) []string {
	mark := SafeName(owner)
	liveMu.Lock()
	defer liveMu.Unlock()
	var out []string
	for _, what := range live {
		if strings.Contains(what, mark) {
			out = append(out, what)
		}
	}
	slices.Sort(out)
	return out
}

// KillAll is the interrupt path: it refuses every later server, kills and
// removes every registered one (waiting for creations in flight, which hold
// their runner's lock), removes any container still labelled with this
// process as owner, and removes the run directory with every server dir. It
// returns what it stopped. A second call waits for the first.
func KillAll() []string {
	killMu.Lock()
	defer killMu.Unlock()
	liveMu.Lock()
	stopping = true
	rs := make(map[runner]string, len(live))
	for r, w := range live {
		rs[r] = w
	}
	sweep := usedCtr
	liveMu.Unlock()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		killed []string
	)
	for r, w := range rs {
		wg.Go(func() {
			_ = r.stop(true)
			_ = r.close()
			mu.Lock()
			killed = append(killed, w)
			mu.Unlock()
		})
	}
	wg.Wait()
	if sweep {
		if n, err := reaper.RemoveContainers(func(o reaper.Owner) bool { return o == reaper.Self() }); err != nil {
			killed = append(killed, fmt.Sprintf("label sweep: %v", err))
		} else if n > 0 {
			killed = append(killed, fmt.Sprintf("%d unregistered containers", n))
		}
	}
	if err := os.RemoveAll(runDir()); err != nil {
		killed = append(killed, fmt.Sprintf("run dir: %v", err))
	}
	return killed
}

// runDir is this process's directory for server dirs and Scope temp dirs,
// named after its owner so the reaper of a later run can tell whether the
// owner is gone: os.TempDir()/zk19-run-<pid>-<start ticks>.
func runDir() string {
	return filepath.Join(os.TempDir(), reaper.RunDirPrefix+reaper.Self().String())
}

// newDir makes a fresh directory under the run dir. It refuses once KillAll
// ran, so nothing is made after the interrupt path removed the run dir.
func newDir(name string) (string, error) {
	liveMu.Lock()
	defer liveMu.Unlock()
	if stopping {
		return "", errStopping
	}
	if err := os.MkdirAll(runDir(), 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(runDir(), SafeName(name)+"-")
}

// removeDir removes dir, and the run dir with it once it is empty, so that a
// run that ends normally leaves no run dir either.
func removeDir(dir string) error {
	err := os.RemoveAll(dir)
	liveMu.Lock()
	defer liveMu.Unlock()
	_ = os.Remove(runDir()) // fails while another test still has a dir there
	return err
}

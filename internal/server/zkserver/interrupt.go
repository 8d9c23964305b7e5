package zkserver

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// EnvInterruptAt makes the harness send SIGINT to its own process when it
// reaches a named point, so that a test of the interrupt path lands the
// signal exactly where a server is being made, with no sleep:
//
//	process-start     a server process was just started (not yet ready)
//	container-create  docker has just created a container, which is not
//	                  started yet (testcontainers has not handed it back)
//	ensemble-start    every server of an ensemble was started, none is ready
//	test-root         a test's parent node was just made (on the external
//	                  backend: on the user's server); see InterruptPoint
//
// "<point>:<n>" fires the n-th time the point is reached (the shared server
// of the root TestMain is the first), "<point>" the first time. It fires at
// most once per process.
const EnvInterruptAt = "ZK19_INTERRUPT_AT"

// Interrupt points.
const (
	atProcessStart    = "process-start"
	atContainerCreate = "container-create"
	atEnsembleStart   = "ensemble-start"
	// AtTestRoot is reached by a package that makes a test's parent node
	// (internal/proof/harness's TestRoot), through InterruptPoint.
	AtTestRoot = "test-root"
)

var interrupts struct {
	sync.Mutex
	seen  map[string]int
	fired bool
}

// InterruptPoint is interruptAt for a point reached outside this package
// (AtTestRoot). It reports whether it signalled this process: the caller
// then stops where it is until the handler (HandleInterrupts) ends the
// process, so that what it made is the handler's to remove.
func InterruptPoint(point string) bool { return interruptAt(point) }

// interruptAt signals this process if EnvInterruptAt names point and this
// is the requested occurrence, and reports whether it did.
func interruptAt(point string) bool {
	want, nth, _ := strings.Cut(os.Getenv(EnvInterruptAt), ":")
	if want != point {
		return false
	}
	n, err := strconv.Atoi(nth)
	if err != nil || n < 1 {
		n = 1
	}
	interrupts.Lock()
	defer interrupts.Unlock()
	if interrupts.seen == nil {
		interrupts.seen = map[string]int{}
	}
	interrupts.seen[point]++
	if interrupts.fired || interrupts.seen[point] != n {
		return false
	}
	interrupts.fired = true
	return syscall.Kill(os.Getpid(), syscall.SIGINT) == nil
}

// HandleInterrupts makes SIGINT and SIGTERM stop everything this process
// registered (KillAll), then run closeScope (a TestMain's scope) and exit
// with status 130. Call it before anything is created; stop ends the
// handling.
func HandleInterrupts(closeScope func()) (stop func()) {
	handlers.Add(1)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			// Said before the work: a test that fails because its server
			// was stopped may end the binary before this goroutine prints.
			fmt.Fprintf(os.Stderr, "zk19: %v: stopping every server, container and server dir of this run\n", s)
			fmt.Fprintf(os.Stderr, "zk19: stopped %v\n", KillAll())
			closeScope()
			os.Exit(130)
		case <-done:
		}
	}()
	return func() { signal.Stop(sigs); close(done); handlers.Add(-1) }
}

// handlers counts the HandleInterrupts in force.
var handlers atomic.Int32

// HandlingInterrupts reports whether a HandleInterrupts is in force: a
// fixture that starts servers outside a TestMain of the harness (zktest)
// installs its own only where none is.
func HandlingInterrupts() bool { return handlers.Load() > 0 }

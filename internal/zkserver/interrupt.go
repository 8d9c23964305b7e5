package zkserver

import (
	"os"
	"strconv"
	"strings"
	"sync"
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
)

var interrupts struct {
	sync.Mutex
	seen  map[string]int
	fired bool
}

// interruptAt signals this process if EnvInterruptAt names point and this
// is the requested occurrence.
func interruptAt(point string) {
	want, nth, _ := strings.Cut(os.Getenv(EnvInterruptAt), ":")
	if want != point {
		return
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
		return
	}
	interrupts.fired = true
	_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
}

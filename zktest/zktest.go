package zktest

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/zk19/zk19/internal/server/reaper"
	"github.com/zk19/zk19/internal/server/zklinks"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Ensemble is one ZooKeeper server, or an ensemble of them, started for a
// test. Its methods are called from the test's goroutine: where a verb
// cannot do its work it fails the test that started the ensemble.
type Ensemble struct {
	// Servers are the ensemble's servers, Servers[i].ID == i+1.
	Servers []*Server

	t     TB
	e     *zkserver.Ensemble
	links *zklinks.Links // nil for a standalone server and on the external backend
	tick  time.Duration
}

// Server is one server of an Ensemble.
type Server struct {
	ID   int    // its myid, 1 to n
	Addr string // its real client address, host:port, with no proxy in front

	e *Ensemble
	s *zkserver.Server
}

// String names the server as its log lines do, such as "zk2".
func (s *Server) String() string { return s.s.Label }

// Option configures Start and StartEnsemble.
type Option func(*config)

type config struct {
	tick time.Duration
}

// WithTickTime sets the servers' tickTime (default 200 ms on the servers
// zktest owns). A session's timeout is clamped by the server to 2 to 20
// ticks, so a short tick makes sessions that expire within a second or two.
func WithTickTime(d time.Duration) Option { return func(c *config) { c.tick = d } }

// defaultTick is short, so that a frozen session expires in seconds.
// syncTicks is initLimit and syncLimit: a follower that hears nothing from
// its leader for syncTicks ticks (5 s by default) drops it, and so does a
// leader that hears nothing from a quorum.
const (
	defaultTick = 200 * time.Millisecond
	syncTicks   = 25
)

// Start starts one ZooKeeper server for t (see the package doc for where
// it comes from) and returns it as an Ensemble of one. It skips t when no
// server can be had, or fails t under CI=true. Everything it makes is
// removed when t ends.
func Start(t TB, opts ...Option) *Ensemble {
	t.Helper()
	return StartEnsemble(t, 1, opts...)
}

// StartEnsemble starts n servers that form one ensemble, each reaching the
// others through a fault proxy on every server-to-server link, and waits
// until every server has a mode and, for n > 1, one leads. It skips t when
// the backend cannot start servers, or fails t under CI=true.
func StartEnsemble(t TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	c := config{tick: defaultTick}
	for _, o := range opts {
		o(&c)
	}
	b := backend(t)
	e := &Ensemble{t: t, tick: c.tick}
	sopts := []zkserver.Option{zkserver.WithTickTime(c.tick), zkserver.WithLimits(syncTicks, syncTicks), zkserver.WithLabel("zktest")}
	switch {
	case b.Kind == zkserver.External && n > 1:
		unavailable(t, "zktest: an ensemble of %d needs servers of its own; ZK19_BACKEND=external only shares %v", n, b.Servers)
	case b.Kind == zkserver.External:
		e.e = zkserver.StartEnsemble(t, 1, zkserver.AllowExternal())
	case n > 1:
		e.e, e.links = zklinks.StartLinkedEnsemble(t, n, sopts...)
	default:
		e.e = zkserver.StartEnsemble(t, 1, sopts...)
	}
	for _, s := range e.e.Servers {
		e.Servers = append(e.Servers, &Server{ID: s.ID, Addr: s.Client, e: e, s: s})
	}
	return e
}

// Addrs returns every server's real client address, for a client that
// needs no fault.
func (e *Ensemble) Addrs() []string {
	var a []string
	for _, s := range e.Servers {
		a = append(a, s.Addr)
	}
	return a
}

// owned reports whether zktest started the servers (and so can restart,
// hold or partition them), and fails t with why not otherwise.
func (e *Ensemble) owned(t TB, verb string) {
	t.Helper()
	if e.e.Backend.Kind == zkserver.External {
		unavailable(t, "zktest: %s needs servers of its own; ZK19_BACKEND=external only shares the user's", verb)
	}
}

// backend resolves where servers come from, once per process, and makes
// sure an interrupt removes them.
func backend(t TB) zkserver.Backend {
	t.Helper()
	b, err := zkserver.Resolve()
	if err != nil {
		unavailable(t, "zktest: no ZooKeeper server: %v", err)
	}
	once.Do(func() { setUp(t) })
	// Registered before anything is made, so it runs last.
	t.Cleanup(awaitInterrupt)
	return b
}

var (
	once        sync.Once
	interrupted = make(chan struct{}) // closed when zktest's handler got a signal
)

// exitWithin bounds how long a test that ends during an interrupt waits
// for zktest's handler to end the process.
const exitWithin = 2 * time.Minute

// awaitInterrupt, the last cleanup of a test that starts servers, holds
// the test while zktest's interrupt handler removes every server and ends
// the process: a test that failed because its server was stopped must not
// end the binary before the removal is done.
func awaitInterrupt() {
	select {
	case <-interrupted:
		<-time.After(exitWithin)
	default:
	}
}

// setUp, outside a TestMain that already handles interrupts, removes what
// earlier test processes left when they died, and makes SIGINT and SIGTERM
// stop every server this process started before it exits with status 130.
func setUp(t TB) {
	if zkserver.HandlingInterrupts() {
		return
	}
	if os.Getenv(zkserver.EnvInterruptAt) == "" {
		if line, err := reaper.Reap(); line != "" || err != nil {
			t.Logf("zktest: reaped what earlier runs left: %s %v", line, err)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		close(interrupted)
		fmt.Fprintf(os.Stderr, "zktest: %v: stopping every server of this process\n", s)
		fmt.Fprintf(os.Stderr, "zktest: stopped %v\n", zkserver.KillAll())
		os.Exit(130)
	}()
}

// unavailable stops t because what it asks for cannot be had here: a
// failure under CI=true, where a missing server is a broken setup, and a
// skip otherwise.
func unavailable(t TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: an error, not a skip)", msg)
	}
	t.Skipf("%s", msg)
}

// TB is the part of testing.TB that zktest calls: *testing.T and
// *testing.B satisfy it, and so does any value with these methods (an
// Example has no *testing.T; its TB fails by panicking).
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Attr(key, value string)
	Name() string
	TempDir() string
}

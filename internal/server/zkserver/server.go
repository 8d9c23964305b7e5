package zkserver

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zk19/zk19/internal/server/tb"
)

// Server is one running ZooKeeper server.
type Server struct {
	ID       int    // myid (1 for a standalone server)
	Client   string // client address, 127.0.0.1:port
	Quorum   string // real quorum address (ensembles)
	Election string // real election address (ensembles)
	Label    string // log prefix, e.g. "zk2"

	run runner // nil for external servers
	log *LogWriter
}

// runner is what a backend does to one server. A runner is registered (see
// register) when it is made, before it creates anything.
type runner interface {
	start() error
	stop(kill bool) error
	pause() error
	resume() error
	alive() bool
	pid() (int, error)
	close() error // final teardown: stop, remove what the backend created, unregister
	wipe() error  // remove a stopped server's data; the next start begins empty
}

// readyWithin bounds the wait until a started server reports a Mode: a JVM
// on a loaded 2-core machine, or a container, takes seconds to start.
const readyWithin = 60 * time.Second

// errNoControl is returned for lifecycle verbs on an external server.
var errNoControl = errors.New("the external backend does not control server lifecycles")

// Start starts a standalone server on the resolved backend and waits until
// srvr reports a Mode. It skips under -short when no backend is usable, and
// fails with howToGetAServer otherwise.
func Start(t TB, opts ...Option) *Server {
	t.Helper()
	return StartEnsemble(t, 1, opts...).Servers[0]
}

// TryStart is Start for a goroutine other than the test's: it returns the
// error instead of failing or skipping t. Cleanups are still registered on
// t (Cleanup is safe from any goroutine).
func TryStart(t TB, opts ...Option) (*Server, error) {
	e, err := tryStartEnsemble(t, 1, buildOptions(opts))
	if err != nil {
		return nil, err
	}
	return e.Servers[0], nil
}

// RequireFaults skips t when the backend cannot inject the server-side
// faults the claim needs (NoFaultInjection): on the external backend the
// harness puts client proxies in front of the user's servers, but owns no
// server and no server-to-server link. harness.RequireFaults is the same
// for a proof that says what it does that needs them, in both languages.
func RequireFaults(t TB) Backend {
	t.Helper()
	b := MustResolve(t)
	if !b.CanInjectFaults() {
		SkipFor(t, &Unavailable{Reason: NoFaultInjection, Kind: b.Kind})
	}
	return b
}

// shortMode is set by the root TestMain (testing.Short); zkserver does not
// import testing.
var shortMode bool

// SetShort tells the harness that -short is in effect: a missing server then
// skips a test instead of failing it.
func SetShort(short bool) { shortMode = short }

// Listing reports whether the test binary only lists its tests (go test
// -list): a TestMain then runs nothing of the harness, so listing starts
// no server, probes no network and checks no record. Call it after
// flag.Parse.
func Listing() bool {
	f := flag.Lookup("test.list")
	return f != nil && f.Value.String() != ""
}

// MustResolve resolves the backend or stops t: a skip under -short, a failure
// that says how to get a server otherwise.
func MustResolve(t TB) Backend {
	t.Helper()
	b, err := Resolve()
	if err != nil {
		if shortMode {
			SkipFor(t, &Unavailable{Reason: NoServerShort})
		}
		t.Fatalf("%v", err)
	}
	return b
}

// Srvr asks the server for srvr and parses the answer.
func (s *Server) Srvr() (Srvr, error) {
	a, err := FourLetter(s.Client, "srvr", 2*time.Second)
	if err != nil {
		return Srvr{}, err
	}
	return parseSrvr(a)
}

// Word sends a four-letter word and fails t on error. A word the server's
// 4lw.commands.whitelist leaves out (only an external server's can) skips
// t and names the setting. Call it from the test's goroutine; a wait that
// sends words calls RequireWords first.
func (s *Server) Word(t TB, word string) string {
	t.Helper()
	a, err := FourLetter(s.Client, word, 5*time.Second)
	var na *NotAllowedError
	if errors.As(err, &na) {
		SkipFor(t, &Unavailable{Reason: WordNotAllowed, Word: word, Err: na})
	}
	if err != nil {
		t.Fatalf("%s: %s: %v", s.Label, word, err)
	}
	return a
}

// RequireWords skips t unless the server runs every word (see Word).
func (s *Server) RequireWords(t TB, words ...string) {
	t.Helper()
	for _, w := range words {
		s.Word(t, w)
	}
}

// External reports whether the server is one the external backend points
// at: shared with others, its config not the harness's.
func (s *Server) External() bool { return s.run == nil }

// SessionExpiry returns the longest a session that asked for timeout lives
// on s after its client falls silent, read from the server's conf: the
// timeout the server grants (within minSessionTimeout and
// maxSessionTimeout) plus one tickTime, since the server expires sessions
// in buckets one tick wide. A server that does not run conf gives a
// *NotAllowedError.
func (s *Server) SessionExpiry(timeout time.Duration) (time.Duration, error) {
	a, err := FourLetter(s.Client, "conf", 5*time.Second)
	if err != nil {
		return 0, err
	}
	conf := Fields(a)
	var ms [3]time.Duration
	for i, k := range []string{"tickTime", "minSessionTimeout", "maxSessionTimeout"} {
		n, err := strconv.Atoi(conf[k])
		if err != nil {
			return 0, fmt.Errorf("%s: conf: %s=%q: %v", s.Label, k, conf[k], err)
		}
		ms[i] = time.Duration(n) * time.Millisecond
	}
	tick, lo, hi := ms[0], ms[1], ms[2]
	return min(max(timeout, lo), hi) + tick, nil
}

// PID returns the process id of the running server (for containers, the
// host's pid of the container's main process).
func (s *Server) PID() (int, error) {
	if s.run == nil {
		return 0, errNoControl
	}
	return s.run.pid()
}

// Mode returns the server's current mode, or "" with the error seen.
func (s *Server) Mode() (string, error) {
	st, err := s.Srvr()
	return st.Mode, err
}

// WaitMode waits until the server reports one of modes, and gives up early
// when the server's process or container has exited.
func (s *Server) WaitMode(within time.Duration, modes ...string) error {
	// Written from the wait's goroutine, which may outlive a timed-out wait.
	var exited atomic.Pointer[string]
	err := tb.WaitUntil(within, fmt.Sprintf("%s in mode %v", s.Label, modes), func() (bool, string) {
		st, err := s.Srvr()
		switch {
		case err == nil && slices.Contains(modes, st.Mode):
			return true, ""
		case err == nil:
			return false, "Mode: " + st.Mode
		case s.run != nil && !s.run.alive():
			last := err.Error()
			exited.Store(&last)
			return true, last // nothing left to wait for
		default:
			return false, err.Error()
		}
	})
	if last := exited.Load(); last != nil {
		return fmt.Errorf("%s exited while waiting for mode %v; last seen: %s\n%s", s.Label, modes, *last, s.logTail())
	}
	if err != nil {
		return fmt.Errorf("%w\n%s", err, s.logTail())
	}
	return nil
}

func (s *Server) logTail() string {
	if s.log == nil {
		return ""
	}
	tail := s.log.Tail()
	if len(tail) == 0 {
		return "(no server output)"
	}
	return "last server output:\n  " + strings.Join(tail, "\n  ")
}

func (s *Server) control(t TB, verb string, f func(runner) error) {
	t.Helper()
	if s.run == nil {
		t.Fatalf("%s %s: %v", verb, s.Label, errNoControl)
	}
	if err := f(s.run); err != nil {
		t.Fatalf("%s %s: %v", verb, s.Label, err)
	}
}

// Pause freezes the server (SIGSTOP, or docker pause); Resume thaws it.
func (s *Server) Pause(t TB) { t.Helper(); s.control(t, "pause", runner.pause) }

// Resume undoes Pause.
func (s *Server) Resume(t TB) { t.Helper(); s.control(t, "resume", runner.resume) }

// Restart stops the server if it runs, starts it with the same config and
// data, and waits until srvr reports a Mode.
func (s *Server) Restart(t TB) {
	t.Helper()
	if err := s.TryRestart(); err != nil {
		t.Fatalf("restart %s: %v", s.Label, err)
	}
}

// TryRestart is Restart for a goroutine other than the test's: it returns
// the error instead of failing a test.
func (s *Server) TryRestart() error {
	if s.run == nil {
		return errNoControl
	}
	if s.run.alive() {
		if err := s.run.stop(false); err != nil {
			return err
		}
	}
	if err := s.run.start(); err != nil {
		return err
	}
	return s.WaitMode(readyWithin, "standalone", "leader", "follower")
}

// RestartWiped stops the server, removes its data (snapshots and
// transaction logs) and starts it again with the same config and ports, as
// a replaced server would start: its zxids and sequence numbers count from
// the start again (claim T5). Sessions of the old data are unknown to it.
func (s *Server) RestartWiped(t TB) {
	t.Helper()
	s.control(t, "restart wiped", func(r runner) error {
		if err := r.stop(false); err != nil {
			return err
		}
		if err := r.wipe(); err != nil {
			return err
		}
		if err := r.start(); err != nil {
			return err
		}
		return s.WaitMode(readyWithin, "standalone", "leader", "follower")
	})
}

// Ensemble is N servers (N == 1: a standalone server).
type Ensemble struct {
	Servers []*Server
	Backend Backend
}

// StartEnsemble starts n servers, each with its own zoo.cfg, and waits until
// every server reports a Mode and (n > 1) exactly one reports leader.
func StartEnsemble(t TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	MustResolve(t)
	e, err := tryStartEnsemble(t, n, buildOptions(opts))
	var skip *Unavailable
	if errors.As(err, &skip) {
		SkipFor(t, skip)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	return e
}

// tryStartEnsemble is StartEnsemble without failing t; every cleanup it
// needs is registered on t before the thing it cleans up exists.
func tryStartEnsemble(t TB, n int, o options) (*Ensemble, error) {
	b, err := Resolve()
	if err != nil {
		return nil, err
	}
	if b.Kind == External {
		return externalEnsemble(b, n, o)
	}
	all, err := allocatePorts(n)
	if err != nil {
		return nil, err
	}
	var dir string
	if b.Kind == Process {
		if dir, err = newDir(t.Name()); err != nil {
			return nil, fmt.Errorf("server dir: %w", err)
		}
		// Registered first, so it runs after every server is gone.
		t.Cleanup(func() { _ = removeDir(dir) })
	}
	e := &Ensemble{Backend: b}
	for i := 1; i <= n; i++ {
		s, err := newServer(t, b, i, all, dir, o)
		if err != nil {
			return nil, fmt.Errorf("prepare %s%d: %w", o.label, i, err)
		}
		e.Servers = append(e.Servers, s)
	}
	// Registered last, so it runs first: every server's log closes before
	// any server stops, and one server's shutdown is not logged as the
	// others' lost leader.
	t.Cleanup(func() {
		for _, s := range e.Servers {
			s.log.Close()
		}
	})
	start := time.Now()
	if err := e.startAll(); err != nil {
		return nil, err
	}
	if err := e.waitReady(readyWithin); err != nil {
		return nil, err
	}
	t.Logf("# %d-server %s ready in %v (%s)", n, b.Kind, time.Since(start).Round(time.Millisecond), e.describeModes())
	recordStarted(e)
	return e, nil
}

// externalEnsemble names n of the servers the external backend points at.
func externalEnsemble(b Backend, n int, o options) (*Ensemble, error) {
	if !o.external {
		return nil, &Unavailable{Reason: NoServerOfItsOwn, Servers: b.Servers}
	}
	if n > len(b.Servers) {
		return nil, &Unavailable{Reason: TooFewServers, Need: n, Named: len(b.Servers)}
	}
	e := &Ensemble{Backend: b}
	for i := 0; i < n; i++ {
		e.Servers = append(e.Servers, &Server{ID: i + 1, Client: b.Servers[i], Label: fmt.Sprintf("%s%d", o.label, i+1)})
	}
	return e, nil
}

func allocatePorts(n int) ([]ports, error) {
	all := make([]ports, n)
	for i := range all {
		for _, p := range []*int{&all[i].client, &all[i].quorum, &all[i].election} {
			port, err := FreePort()
			if err != nil {
				return nil, fmt.Errorf("allocate port: %w", err)
			}
			*p = port
		}
	}
	return all, nil
}

// newServer makes (registers, creates nothing yet) server id of an
// ensemble whose members bind all; dir is the ensemble's dir (process
// backend). Its teardown is registered on t at once.
func newServer(t TB, b Backend, id int, all []ports, dir string, o options) (*Server, error) {
	p := all[id-1]
	s := &Server{ID: id, Client: addr(p.client), Quorum: addr(p.quorum), Election: addr(p.election), Label: fmt.Sprintf("%s%d", o.label, id)}
	s.log = NewLogWriter(s.Label+"| ", func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		// Stack frames stay in the tail kept for failure messages.
		if strings.Contains(line, "|\tat ") || strings.Contains(line, "| \tat ") {
			return
		}
		t.Logf("%s", line)
	})
	level := os.Getenv(envLog)
	if level == "" {
		level = "warn"
	}
	flags := jvmFlags(level, o.loggers)
	var err error
	if b.Kind == Process {
		sdir := filepath.Join(dir, s.Label)
		s.run, err = newProcess(b, sdir, id, len(all), renderConfig(id, all, filepath.Join(sdir, "data"), o), flags, s.log)
	} else {
		s.run, err = newContainer(b, t.Name(), id, len(all), renderConfig(id, all, "/data", o), flags, s.log)
	}
	if err != nil {
		return nil, err
	}
	run, log := s.run, s.log
	t.Cleanup(func() {
		log.Close() // shutdown chatter is not evidence
		if err := run.close(); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	return s, nil
}

// startAll starts every server at once (an ensemble elects only when a
// quorum runs) and returns the first error.
func (e *Ensemble) startAll() error {
	errs := make(chan error, len(e.Servers))
	for _, s := range e.Servers {
		go func() { errs <- s.run.start() }()
	}
	var first error
	for range e.Servers {
		if err := <-errs; err != nil && first == nil {
			first = fmt.Errorf("start: %w", err)
		}
	}
	if first == nil {
		interruptAt(atEnsembleStart)
	}
	return first
}

func (e *Ensemble) describeModes() string {
	var parts []string
	for _, s := range e.Servers {
		m, err := s.Mode()
		if err != nil {
			m = "?"
		}
		parts = append(parts, fmt.Sprintf("%s=%s", s.Label, m))
	}
	return strings.Join(parts, " ")
}

// waitReady waits until every server reports a Mode and, for an ensemble,
// exactly one is leader and the others follow.
func (e *Ensemble) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, s := range e.Servers {
		if err := s.WaitMode(time.Until(deadline), "standalone", "leader", "follower"); err != nil {
			return err
		}
	}
	if len(e.Servers) == 1 {
		return nil
	}
	what := fmt.Sprintf("one leader and %d followers", len(e.Servers)-1)
	return tb.WaitUntil(time.Until(deadline), what, func() (bool, string) {
		leaders, followers := 0, 0
		for _, s := range e.Servers {
			switch m, _ := s.Mode(); m {
			case "leader":
				leaders++
			case "follower":
				followers++
			}
		}
		if leaders == 1 && followers == len(e.Servers)-1 {
			return true, ""
		}
		return false, e.describeModes()
	})
}

// Leader returns the server that reports leader, waiting up to within.
func (e *Ensemble) Leader(within time.Duration) (*Server, error) {
	// Written from the wait's goroutine, which may outlive a timed-out wait.
	var leader atomic.Pointer[Server]
	err := tb.WaitUntil(within, "a leader", func() (bool, string) {
		for _, s := range e.Servers {
			if m, _ := s.Mode(); m == "leader" {
				leader.Store(s)
				return true, ""
			}
		}
		return false, e.describeModes()
	})
	if err != nil {
		return nil, err
	}
	return leader.Load(), nil
}

// Followers returns the servers that report follower now.
func (e *Ensemble) Followers() []*Server {
	var out []*Server
	for _, s := range e.Servers {
		if m, _ := s.Mode(); m == "follower" {
			out = append(out, s)
		}
	}
	return out
}

// WatchLog starts looking for text in the server's log, from now on; a
// claim whose evidence is a line of the server's own log sets it before
// the step that makes the line, then waits with WaitLog.
func (s *Server) WatchLog(text string) { s.log.Watch(text) }

// WaitLog waits until a line containing text (watched with WatchLog) has
// appeared in the server's log, and returns that line.
func (s *Server) WaitLog(within time.Duration, text string) (string, error) {
	var line string
	err := tb.WaitUntil(within, fmt.Sprintf("%s to log %q", s.Label, text), func() (bool, string) {
		line = s.log.First(text)
		return line != "", "not yet; last lines: " + strings.Join(s.log.Tail()[max(0, len(s.log.Tail())-3):], " / ")
	})
	return line, err
}

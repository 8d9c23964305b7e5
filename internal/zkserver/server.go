package zkserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Server is one running ZooKeeper server.
type Server struct {
	ID       int    // myid (1 for a standalone server)
	Client   string // client address, 127.0.0.1:port
	Quorum   string // real quorum address (ensembles)
	Election string // real election address (ensembles)
	Label    string // log prefix, e.g. "zk2"

	t       TB
	backend Backend
	run     runner // nil for external servers
	log     *prefixWriter
	within  time.Duration
}

// runner is what a backend does to one server.
type runner interface {
	start() error
	stop(kill bool) error
	pause() error
	resume() error
	alive() bool
	pid() (int, error)
	close() error // final teardown: stop, and remove what the backend created
}

// pollInterval is how often a bounded wait asks the server again.
const pollInterval = 50 * time.Millisecond

// ErrNoControl is returned for lifecycle verbs on an external server.
var errNoControl = fmt.Errorf("the external backend does not control server lifecycles")

// Start starts a standalone server on the resolved backend and waits until
// srvr reports a Mode. It skips under -short when no backend is usable, and
// fails with HowToGetAServer otherwise.
func Start(t TB, opts ...Option) *Server {
	t.Helper()
	return StartEnsemble(t, 1, opts...).Servers[0]
}

// RequireFaults skips t when the backend cannot inject faults.
func RequireFaults(t TB) Backend {
	t.Helper()
	b := MustResolve(t)
	if !b.CanInjectFaults() {
		t.Skipf("skipped: the %s backend cannot inject faults (the claim needs the harness to own servers and links)", b.Kind)
	}
	return b
}

// shortMode is set by the root TestMain (testing.Short); zkserver does not
// import testing.
var shortMode bool

// SetShort tells the harness that -short is in effect: a missing server then
// skips a test instead of failing it.
func SetShort(short bool) { shortMode = short }

// MustResolve resolves the backend or stops t: a skip under -short, a failure
// that says how to get a server otherwise.
func MustResolve(t TB) Backend {
	t.Helper()
	b, err := Resolve()
	if err != nil {
		if shortMode {
			t.Skipf("skipped: no ZooKeeper server (-short); run scripts/setup to get one")
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
	return ParseSrvr(a)
}

// Word sends a four-letter word and fails t on error.
func (s *Server) Word(t TB, word string) string {
	t.Helper()
	a, err := FourLetter(s.Client, word, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %s: %v", s.Label, word, err)
	}
	return a
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

// WaitMode waits until the server reports one of modes.
func (s *Server) WaitMode(within time.Duration, modes ...string) error {
	deadline := time.Now().Add(within)
	var last string
	for {
		st, err := s.Srvr()
		if err == nil {
			last = "Mode: " + st.Mode
			for _, m := range modes {
				if st.Mode == m {
					return nil
				}
			}
		} else {
			last = err.Error()
		}
		if s.run != nil && !s.run.alive() {
			return fmt.Errorf("%s exited while waiting for mode %v; last seen: %s\n%s", s.Label, modes, last, s.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not in mode %v after %v; last seen: %s\n%s", s.Label, modes, within, last, s.logTail())
		}
		time.Sleep(pollInterval)
	}
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

func (s *Server) control(t TB, verb string, f func() error) {
	t.Helper()
	if s.run == nil {
		t.Fatalf("%s %s: %v", verb, s.Label, errNoControl)
	}
	if err := f(); err != nil {
		t.Fatalf("%s %s: %v", verb, s.Label, err)
	}
}

// Stop stops the server gracefully (SIGTERM, or docker stop).
func (s *Server) Stop(t TB) {
	t.Helper()
	s.control(t, "stop", func() error { return s.run.stop(false) })
}

// Kill stops the server at once (SIGKILL).
func (s *Server) Kill(t TB) {
	t.Helper()
	s.control(t, "kill", func() error { return s.run.stop(true) })
}

// Pause freezes the server (SIGSTOP, or docker pause); Resume thaws it.
func (s *Server) Pause(t TB) { t.Helper(); s.control(t, "pause", s.run.pause) }

// Resume undoes Pause.
func (s *Server) Resume(t TB) { t.Helper(); s.control(t, "resume", s.run.resume) }

// Restart stops the server if it runs, starts it with the same config and
// data, and waits until srvr reports a Mode.
func (s *Server) Restart(t TB) {
	t.Helper()
	s.control(t, "restart", func() error {
		if s.run.alive() {
			if err := s.run.stop(false); err != nil {
				return err
			}
		}
		if err := s.run.start(); err != nil {
			return err
		}
		return s.WaitMode(s.within, "standalone", "leader", "follower")
	})
}

// Ensemble is N servers (N == 1: a standalone server).
type Ensemble struct {
	Servers []*Server
	Backend Backend
	t       TB
	within  time.Duration
}

// ConnectString lists every client address.
func (e *Ensemble) ConnectString() []string {
	var out []string
	for _, s := range e.Servers {
		out = append(out, s.Client)
	}
	return out
}

var (
	liveMu sync.Mutex
	live   = map[runner]string{}
)

func track(r runner, what string) { liveMu.Lock(); live[r] = what; liveMu.Unlock() }
func untrack(r runner)            { liveMu.Lock(); delete(live, r); liveMu.Unlock() }

// KillAll kills every server this binary started and has not stopped yet. It is
// the best effort made on SIGINT; normal runs stop servers in Cleanup.
func KillAll() []string {
	liveMu.Lock()
	rs := make(map[runner]string, len(live))
	for r, w := range live {
		rs[r] = w
	}
	liveMu.Unlock()
	var killed []string
	for r, w := range rs {
		_ = r.stop(true)
		_ = r.close()
		killed = append(killed, w)
	}
	return killed
}

// Live reports how many servers this binary started and has not stopped.
func Live() int { liveMu.Lock(); defer liveMu.Unlock(); return len(live) }

// StartEnsemble starts n servers, each with its own zoo.cfg, and waits until
// every server reports a Mode and (n > 1) exactly one reports leader.
func StartEnsemble(t TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	b := MustResolve(t)
	o := buildOptions(opts)
	e := &Ensemble{Backend: b, t: t, within: o.readyWithin}
	if b.Kind == External {
		if !o.external {
			t.Skipf("skipped: the claim needs a server of its own; the external backend only shares %v", b.Servers)
		}
		if n > len(b.Servers) {
			t.Skipf("skipped: the claim needs %d servers; ZK19_SERVERS names %d", n, len(b.Servers))
		}
		for i := 0; i < n; i++ {
			e.Servers = append(e.Servers, &Server{ID: i + 1, Client: b.Servers[i], Label: fmt.Sprintf("%s%d", o.label, i+1), t: t, backend: b, within: o.readyWithin})
		}
		return e
	}
	all := make([]ports, n)
	for i := range all {
		for _, p := range []*int{&all[i].client, &all[i].quorum, &all[i].election} {
			port, err := freePort()
			if err != nil {
				t.Fatalf("allocate port: %v", err)
			}
			*p = port
		}
	}
	level := os.Getenv(EnvLog)
	if level == "" {
		level = "warn"
	}
	root := t.TempDir()
	for i := 1; i <= n; i++ {
		s := &Server{
			ID: i, Client: addr(all[i-1].client), Quorum: addr(all[i-1].quorum), Election: addr(all[i-1].election),
			Label: fmt.Sprintf("%s%d", o.label, i), t: t, backend: b, within: o.readyWithin,
		}
		s.log = newPrefixWriter(s.Label+"| ", func(format string, args ...any) {
			line := fmt.Sprintf(format, args...)
			// Stack frames stay in the tail kept for failure messages.
			if strings.Contains(line, "|\tat ") || strings.Contains(line, "| \tat ") {
				return
			}
			t.Logf("%s", line)
		})
		var err error
		switch b.Kind {
		case Process:
			dir := filepath.Join(root, s.Label)
			s.run, err = newProcess(b, dir, i, n, renderConfig(i, all, filepath.Join(dir, "data"), o), level, s.log)
		case Container:
			s.run, err = newContainer(b, t.Name(), i, n, renderConfig(i, all, "/data", o), level, s.log)
		}
		if err != nil {
			t.Fatalf("prepare %s: %v", s.Label, err)
		}
		run, log := s.run, s.log
		t.Cleanup(func() {
			log.close() // shutdown chatter is not evidence
			if err := run.close(); err != nil {
				t.Logf("cleanup: %v", err)
			}
		})
		e.Servers = append(e.Servers, s)
	}
	// Registered last, so it runs first: every server's log closes before
	// any server stops, and one server's shutdown is not logged as the
	// others' lost leader.
	t.Cleanup(func() {
		for _, s := range e.Servers {
			s.log.close()
		}
	})
	start := time.Now()
	errs := make(chan error, n)
	for _, s := range e.Servers {
		go func(s *Server) { errs <- s.run.start() }(s)
	}
	for range e.Servers {
		if err := <-errs; err != nil {
			t.Fatalf("start: %v", err)
		}
	}
	if err := e.WaitReady(o.readyWithin); err != nil {
		t.Fatalf("%v", err)
	}
	t.Logf("# %d-server %s ready in %v (%s)", n, b.Kind, time.Since(start).Round(time.Millisecond), e.describeModes())
	return e
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

// WaitReady waits until every server reports a Mode and, for an ensemble,
// exactly one is leader and the others follow.
func (e *Ensemble) WaitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, s := range e.Servers {
		if err := s.WaitMode(time.Until(deadline), "standalone", "leader", "follower"); err != nil {
			return err
		}
	}
	if len(e.Servers) == 1 {
		return nil
	}
	var last string
	for {
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
			return nil
		}
		last = e.describeModes()
		if time.Now().After(deadline) {
			return fmt.Errorf("ensemble not ready after %v; last seen: %s", within, last)
		}
		time.Sleep(pollInterval)
	}
}

// Leader returns the server that reports leader, waiting up to within.
func (e *Ensemble) Leader(within time.Duration) (*Server, error) {
	deadline := time.Now().Add(within)
	for {
		for _, s := range e.Servers {
			if m, _ := s.Mode(); m == "leader" {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no leader after %v; last seen: %s", within, e.describeModes())
		}
		time.Sleep(pollInterval)
	}
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

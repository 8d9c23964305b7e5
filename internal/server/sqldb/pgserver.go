// Package sqldb holds the databases the durable resource of package fence
// is tested on: SQLite files with modernc's pure-Go driver (OpenSQLite), and
// a real PostgreSQL server run as a process for the zk19 tests (Start), as internal/server/zkserver runs ZooKeeper: Debian's binaries
// (/usr/lib/postgresql/<version>/bin, package postgresql), initdb in a run
// dir of its own, its own free port on 127.0.0.1 and its Unix socket in the
// run dir, fsync off. Start waits, bounded, for the server's "ready to
// accept connections" line; the server is stopped and its run dir removed
// at the test's (or the Scope's) cleanup, on Ctrl-C (Main, or a TestMain
// that closes its Scope on interrupt), and, when the test binary dies
// without cleaning up, by the kernel (the postmaster gets SIGKILL with its
// parent) and the next Start of any test binary, which removes the run dirs
// whose owner is gone.
//
// initdb and postgres refuse to run as root: run as root (as in CI), the
// package runs them as the postgres user, which owns the run dir.
//
// Open gives a test a fresh database on the one server of its test binary
// (Shared); Main is the TestMain part that stops that server at the end and
// on Ctrl-C. The driver is pgx's database/sql driver ("pgx"), which the
// tests use; package fence itself imports no driver.
package sqldb

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/reaper"
	"github.com/zk19/zk19/internal/server/tb"
)

// TB is what Start needs of a test: *testing.T, *testing.B, or a Scope of
// internal/server/tb (a TestMain's, an Example's).
type TB = tb.TB

// EnvBin names the directory of PostgreSQL's binaries (initdb, postgres)
// in place of the newest /usr/lib/postgresql/<version>/bin.
const EnvBin = "ZK19_PG_BIN"

// DirPrefix begins the name of every run dir, followed by the owner (pid
// and start time of the test binary, internal/server/reaper's Owner).
const DirPrefix = "zk19-pg-"

// ReadyWithin bounds initdb and the wait for the server's readiness, each.
const ReadyWithin = 60 * time.Second

// stopWithin bounds a fast shutdown before the postmaster is killed.
const stopWithin = 20 * time.Second

// readyLine is what the postmaster logs once it accepts connections.
const readyLine = "database system is ready to accept connections"

// Server is one running PostgreSQL server.
type Server struct {
	Dir  string // the run dir: data/, the socket, postgres.log
	Port int    // on 127.0.0.1
	User string // the superuser, postgres

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the postmaster has exited
	stopped atomic.Bool
	stopMu  sync.Mutex
	dbs     atomic.Int64
	dbMu    sync.Mutex
	spare   string         // a database made ahead of its test, "" if none
	bg      sync.WaitGroup // the spare being made, the databases being dropped
}

// Bin returns the directory of PostgreSQL's binaries, or why there is none.
func Bin() (string, error) {
	if dir := os.Getenv(EnvBin); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBin, dir, err)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no initdb in /usr/lib/postgresql/*/bin; install Debian's postgresql package (bash scripts/setup, or apt-get install postgresql)", ErrNoBinaries)
}

func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// ErrNoBinaries is Start's error when PostgreSQL is not installed.
var ErrNoBinaries = errors.New("PostgreSQL is not installed")

// Start initializes and starts a server, stopped and removed at tb's
// cleanup, which is registered before anything is made. Without the
// binaries it skips, but fails under CI (CI=true), where scripts/setup
// installs them.
func Start(tb TB) *Server {
	tb.Helper()
	s := &Server{User: "postgres"}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Logf("pgserver: stop: %v", err)
		}
	})
	failOrSkip(tb, s.start())
	tb.Logf("pgserver: PostgreSQL on 127.0.0.1:%d, run dir %s", s.Port, s.Dir)
	return s
}

// failOrSkip fails tb with err, or skips it when the binaries are missing
// outside CI.
func failOrSkip(tb TB, err error) {
	tb.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoBinaries) && os.Getenv("CI") != "true":
		tb.Skipf("skipped: pgserver: %v", err)
	case errors.Is(err, ErrNoBinaries):
		tb.Fatalf("pgserver: %v; CI=true, where the PostgreSQL proofs must run, not skip", err)
	default:
		tb.Fatalf("pgserver: %v", err)
	}
}

// start makes the run dir, runs initdb and starts the postmaster; on an
// error, what it made is left for Stop.
func (s *Server) start() error {
	bin, err := Bin()
	if err != nil {
		return err
	}
	if msg, err := Reap(); err != nil {
		return fmt.Errorf("remove what gone test binaries left: %w", err)
	} else if msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	cred, err := credential()
	if err != nil {
		return err
	}
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopped.Load() {
		return errors.New("stopped before it started")
	}
	live.add(s)
	dir, err := os.MkdirTemp("", DirPrefix+reaper.Self().String()+"-")
	if err != nil {
		return err
	}
	s.Dir = dir
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("give the run dir to the postgres user: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), ReadyWithin)
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", s.User, "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.Dir, initdb.Env = dir, env()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb in %s: %v (within %v)\n%s", data, err, ReadyWithin, out)
	}
	// A free port is free until someone takes it: the postmaster that
	// finds it taken exits, and the next port is tried.
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return err
		}
		if last = s.run(bin, data, port, cred); last == nil {
			return nil
		}
		if !errors.Is(last, errPortTaken) {
			return last
		}
	}
	return last
}

var errPortTaken = errors.New("the port was taken")

// run starts the postmaster on port and waits for its ready line, bounded.
func (s *Server) run(bin, data string, port int, cred *syscall.Credential) error {
	log, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", s.Dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=100", "-c", "log_min_messages=warning")
	cmd.Dir, cmd.Env = s.Dir, env()
	// The server dies with the test binary, even on SIGKILL of the binary;
	// its backends exit when they find the postmaster gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = log.Close()
		return err
	}
	cmd.Stdout = log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	ready := make(chan struct{})
	var seen lastLines
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			seen.add(line)
			if strings.Contains(line, readyLine) {
				once()
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		_ = log.Close()
		close(exited)
	}()
	s.cmd, s.exited, s.Port = cmd, exited, port
	interruptAt(atStarted)
	select {
	case <-ready:
		return nil
	case <-exited:
		s.cmd = nil
		if seen.contains("Address already in use") {
			return errPortTaken
		}
		return fmt.Errorf("postgres exited before it was ready (%v); its last lines:\n%s", cmd.ProcessState, &seen)
	case <-time.After(ReadyWithin):
		return fmt.Errorf("postgres on port %d not ready within %v; its last lines:\n%s", port, ReadyWithin, &seen)
	}
}

// lastLines keeps the last lines a server printed, for an error.
type lastLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lastLines) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > 20 {
		l.lines = l.lines[1:]
	}
}

func (l *lastLines) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.lines, func(line string) bool { return strings.Contains(line, s) })
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// credential is the postgres user's when this process runs as root (initdb
// and postgres refuse root), nil otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user (Debian's postgresql package makes it): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("the postgres user's ids: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// env is the servers' environment: this one's, with the C locale.
func env() []string {
	return append(os.Environ(), "LC_ALL=C", "LANG=C")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PID is the postmaster's process id, 0 once it has exited.
func (s *Server) PID() int {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// DSN is the data source name of database db on the server, for the "pgx"
// driver.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", s.Port, s.User, db)
}

// Stop stops the server (a fast shutdown, then SIGKILL after stopWithin)
// and removes its run dir. It is idempotent and safe from a signal
// handler's goroutine.
func (s *Server) Stop() error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	s.stopped.Store(true)
	defer live.remove(s)
	var err error
	if s.cmd != nil {
		// SIGINT is PostgreSQL's fast shutdown: it ends the sessions and
		// exits once its backends have.
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(stopWithin):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
			err = fmt.Errorf("postgres %d did not stop within %v of SIGINT; killed", s.cmd.Process.Pid, stopWithin)
		}
		s.cmd = nil
	}
	// The spare being made and the drops fail at once on a stopped server.
	s.bg.Wait()
	if s.Dir != "" {
		err = errors.Join(err, os.RemoveAll(s.Dir))
	}
	return err
}

// NewDatabase returns the name of an empty database on s, dropped at tb's
// cleanup. The database was made ahead, while the test before it ran,
// when one was ready (making one takes 0.1-0.3 s, most of a short test's
// time); it then starts making the next. The drop, too, runs beside the
// next test; Stop waits for both.
func (s *Server) NewDatabase(tb TB) string {
	tb.Helper()
	s.dbMu.Lock()
	name := s.spare
	s.spare = ""
	s.dbMu.Unlock()
	if name == "" {
		var err error
		if name, err = s.createDatabase(); err != nil {
			tb.Fatalf("pgserver: %v", err)
		}
	}
	tb.Cleanup(func() { s.inBackground(func() { _ = s.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") }) })
	s.inBackground(s.makeSpare)
	return name
}

// makeSpare makes the database the next NewDatabase takes, unless one is
// ready.
func (s *Server) makeSpare() {
	s.dbMu.Lock()
	ready := s.spare != ""
	s.dbMu.Unlock()
	if ready {
		return
	}
	name, err := s.createDatabase()
	if err != nil {
		return // the next NewDatabase makes its own, and says why it could not
	}
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.spare != "" || s.stopped.Load() {
		s.inBackground(func() { _ = s.exec("DROP DATABASE IF EXISTS " + name) })
		return
	}
	s.spare = name
}

// createDatabase makes an empty database and returns its name.
func (s *Server) createDatabase() (string, error) {
	name := fmt.Sprintf("t%d", s.dbs.Add(1))
	// FILE_COPY copies the template's files (fsync is off): a third of
	// the default WAL_LOG's time for an empty database.
	if err := s.exec("CREATE DATABASE " + name + " STRATEGY = FILE_COPY"); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, nil
}

// exec runs one statement on s's postgres database, bounded by ReadyWithin;
// it does nothing once s is stopped.
func (s *Server) exec(stmt string) error {
	if s.stopped.Load() {
		return errors.New("the server is stopped")
	}
	admin, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), ReadyWithin)
	defer cancel()
	_, err = admin.ExecContext(ctx, stmt)
	return err
}

// inBackground runs f on a goroutine that Stop waits for.
func (s *Server) inBackground(f func()) {
	s.bg.Add(1)
	go func() { defer s.bg.Done(); f() }()
}

// Open opens a fresh database of s with the "pgx" driver, closed and
// dropped at tb's cleanup.
func (s *Server) Open(tb TB) *sql.DB {
	tb.Helper()
	name := s.NewDatabase(tb)
	db, err := sql.Open("pgx", s.DSN(name))
	if err != nil {
		tb.Fatalf("pgserver: open %s: %v", name, err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// shared is the one server of this test binary, started on first use.
var shared struct {
	sync.Mutex
	srv  *Server
	err  error
	main bool // Main runs: it stops the server
	told bool // a test was told where the server runs
}

// Shared is the one server of this test binary, started on first use and
// stopped by Main: the package's TestMain must run the tests through Main,
// or Shared fails the test rather than leave a server running.
func Shared(tb TB) *Server {
	tb.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		tb.Fatalf("pgserver: Shared needs the package's TestMain to run the tests through sqldb.Main (or Wrap), or to bind the server to its Scope (BindShared), so that it is stopped at the end and on Ctrl-C")
	}
	startSharedLocked()
	if shared.err == nil && !shared.told {
		shared.told = true
		tb.Logf("pgserver: PostgreSQL on 127.0.0.1:%d for this test binary, run dir %s", shared.srv.Port, shared.srv.Dir)
	}
	failOrSkip(tb, shared.err)
	return shared.srv
}

// startSharedLocked starts the shared server unless a start was made; the
// caller holds shared's lock.
func startSharedLocked() {
	if shared.srv == nil {
		// Registered before it is made: Main stops it, and removes
		// what a failed start left.
		shared.srv = &Server{User: "postgres"}
		shared.err = shared.srv.start()
	}
}

// StartSharedAhead starts the shared server on a goroutine of its own, so
// that its start (initdb and the postmaster, about 1.5 s) overlaps what
// the test binary does next; the first Shared waits for it and says where
// it runs, or fails (skips) with its error. The server is registered, and
// the shared lock taken, before StartSharedAhead returns: a stop at the
// end or on Ctrl-C waits for the start and stops what it made. Call it
// after Main has begun or BindShared, in a binary whose tests will use the
// server: a server started ahead and never used is only stopped at the end.
func StartSharedAhead() {
	shared.Lock()
	if !shared.main || shared.srv != nil {
		shared.Unlock()
		return
	}
	shared.srv = &Server{User: "postgres"}
	go func() {
		defer shared.Unlock() // the lock taken above, held for the start
		shared.err = shared.srv.start()
	}()
}

// Open is Shared(tb).Open(tb): a fresh database on this binary's server.
func Open(tb TB) *sql.DB {
	tb.Helper()
	return Shared(tb).Open(tb)
}

// M is what Main runs: *testing.M, or goleak's wrapper of it.
type M interface{ Run() int }

// Main runs m with the shared server's lifetime bound to it: SIGINT and
// SIGTERM stop every server of this process (the shared one and those of
// Start, whose tests' cleanups an exit skips), remove their run dirs and
// exit with 130; the end of the run stops the shared server, and fails the
// run if another is still running. Use it as TestMain's m.Run, before anything is created:
//
//	func TestMain(m *testing.M) { os.Exit(sqldb.Main(m)) }
func Main(m M) int {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			// Said before the work, which waits for a start in flight.
			fmt.Fprintf(os.Stderr, "pgserver: %v: stopping this run's PostgreSQL server\n", sig)
			fmt.Fprintf(os.Stderr, "pgserver: stopped (%v)\n", stopAll())
			os.Exit(130)
		case <-done:
		}
	}()
	code := m.Run()
	signal.Stop(sigs)
	close(done)
	if err := stopShared(); err != nil {
		fmt.Fprintf(os.Stderr, "pgserver: stop: %v\n", err)
		code = 1
	}
	if n := live.count(); n > 0 {
		fmt.Fprintf(os.Stderr, "pgserver: %d PostgreSQL server(s) left running by the tests; stopped now (%v)\n", n, stopAll())
		code = 1
	}
	return code
}

// Wrap is m run through Main, for a TestMain that hands m to another
// runner: goleak.VerifyTestMain(sqldb.Wrap(m)).
func Wrap(m M) M { return wrapped{m} }

type wrapped struct{ m M }

func (w wrapped) Run() int { return Main(w.m) }

// BindShared makes owner (a TestMain's Scope whose Close runs at the end
// and on Ctrl-C, as internal/server/zkserver's RunExamples and the root's
// harness close theirs) the owner of the shared server in place of Main:
// the server is stopped at owner's cleanup. Call it before any test runs.
func BindShared(owner TB) {
	shared.Lock()
	defer shared.Unlock()
	shared.main = true
	owner.Cleanup(func() {
		if err := stopShared(); err != nil {
			owner.Logf("pgserver: stop: %v", err)
		}
	})
}

// OpenDurable is a fence.Durable on a fresh database of this binary's
// server (Shared), closed at tb's cleanup: the PostgreSQL-backed
// fence.Resource of a test.
func OpenDurable(tb TB, opts ...fence.Option) *fence.Durable {
	tb.Helper()
	d, err := fence.NewDurable(context.Background(), Open(tb), opts...)
	if err != nil {
		tb.Fatalf("pgserver: a Durable on PostgreSQL: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	return d
}

// live are the servers of this process that were started and not stopped.
var live = &servers{set: map[*Server]bool{}}

type servers struct {
	mu  sync.Mutex
	set map[*Server]bool
}

func (l *servers) add(s *Server)    { l.mu.Lock(); l.set[s] = true; l.mu.Unlock() }
func (l *servers) remove(s *Server) { l.mu.Lock(); delete(l.set, s); l.mu.Unlock() }
func (l *servers) count() int       { l.mu.Lock(); defer l.mu.Unlock(); return len(l.set) }

// stopAll stops the shared server and every other server of this process
// still running (those of Start, whose tests' cleanups an exit skips).
func stopAll() error {
	err := stopShared()
	live.mu.Lock()
	left := make([]*Server, 0, len(live.set))
	for s := range live.set {
		left = append(left, s)
	}
	live.mu.Unlock()
	for _, s := range left {
		err = errors.Join(err, s.Stop())
	}
	return err
}

// stopShared stops the shared server, waiting for a start in flight.
func stopShared() error {
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil {
		return nil
	}
	return shared.srv.Stop()
}

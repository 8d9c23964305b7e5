package sqldb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/zk19/zk19/internal/server/tb"
)

// envBindScope makes the test binary own its shared server through a
// Scope (BindShared), as a TestMain whose runner is not Main does.
const envBindScope = "ZK19_PG_TEST_BIND_SCOPE"

// envAhead makes that TestMain start the shared server ahead
// (StartSharedAhead), as the root package's harness does.
const envAhead = "ZK19_PG_TEST_AHEAD"

func TestMain(m *testing.M) {
	if os.Getenv(envBindScope) == "" {
		os.Exit(Main(m))
	}
	sc := tb.NewScope("pgserver-test", tb.Dirs{})
	BindShared(sc)
	if os.Getenv(envAhead) != "" {
		StartSharedAhead()
	}
	code := m.Run()
	sc.Close()
	os.Exit(code)
}

// TestBindSharedStopsTheServerWithTheScope: claim E3 (§7 ¶6 sentence 3)
// for a binary whose TestMain binds the shared server to its Scope: once
// the binary has run its tests and exited, no PostgreSQL process and no run
// dir of it remain. So too when the server was started ahead
// (StartSharedAhead): a test that uses it gets it and is told where it
// runs, and a binary whose tests never use it, and which ends while the
// start may still be under way, stops what the start made.
func TestBindSharedStopsTheServerWithTheScope(t *testing.T) {
	if os.Getenv(envBindScope) != "" {
		t.Skip("skipped: this is the child")
	}
	for _, c := range []struct {
		name, test string
		ahead      bool
		told       int // how many times the child says where the server runs
	}{
		{"started on first use", "TestSharedServerGivesEachTestItsDatabase", false, 1},
		{"started ahead, used", "TestSharedServerGivesEachTestItsDatabase", true, 1},
		{"started ahead, never used", "TestMissingBinariesSkipOnlyOutsideCI", true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+c.test+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), envBindScope+"=1")
			if c.ahead {
				cmd.Env = append(cmd.Env, envAhead+"=1")
			}
			out, err := cmd.CombinedOutput()
			if told := strings.Count(string(out), "pgserver: PostgreSQL on"); err != nil || told != c.told {
				t.Fatalf("child with its server bound to a Scope, running %s: got %v, told where the server runs %d time(s); want it passing, told %d time(s)\n%s", c.test, err, told, c.told, out)
			}
			if left := Leftovers(cmd.Process.Pid); len(left) > 0 {
				t.Fatalf("E3 violated: the child %d, its server bound to its Scope (%s), left %q", cmd.Process.Pid, c.name, left)
			}
		})
	}
}

// TestServerAnswersAndStopLeavesNothing: claim E3 (§7 ¶6 sentence 3) for
// the PostgreSQL server: a server of its own answers as PostgreSQL, and
// once stopped its postmaster is gone and its run dir
// removed (what the tests' cleanup and Ctrl-C rely on).
func TestServerAnswersAndStopLeavesNothing(t *testing.T) {
	s := Start(t)
	db := s.Open(t)
	var v string
	if err := db.QueryRowContext(context.Background(), "SELECT version()").Scan(&v); err != nil || !strings.HasPrefix(v, "PostgreSQL ") {
		t.Fatalf("SELECT version() = %q, %v; want PostgreSQL's", v, err)
	}
	t.Logf("%s", v)
	_ = db.Close()
	pid := s.PID()
	if pid == 0 {
		t.Fatalf("got no postmaster pid of a running server")
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postmaster %d after Stop: kill -0 = %v; want ESRCH, the process gone", pid, err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run dir %s after Stop: %v; want it removed", s.Dir, err)
	}
	for p, dir := range postmasters() {
		if dir == s.Dir {
			t.Errorf("process %d of the stopped server's run dir %s still runs", p, dir)
		}
	}
}

// TestSharedServerGivesEachTestItsDatabase: Open gives each caller a fresh
// database on the one server of the binary.
func TestSharedServerGivesEachTestItsDatabase(t *testing.T) {
	ctx := context.Background()
	a, b := Open(t), Open(t)
	if _, err := a.ExecContext(ctx, "CREATE TABLE x (n int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	err := b.QueryRowContext(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("the second database sees %d tables named x (%v); want 0, a database of its own", n, err)
	}
	if first, again := Shared(t), Shared(t); first != again {
		t.Errorf("Shared gave two servers; want one per test binary")
	}
}

// TestDatabasesMadeAheadAreHandedOutOnceAndDropped: NewDatabase hands out
// the database it made ahead at most once, each test gets a name no other
// got, and a test's database is gone once its drop, which runs beside the
// next test, is done.
func TestDatabasesMadeAheadAreHandedOutOnceAndDropped(t *testing.T) {
	srv := Shared(t)
	seen := map[string]bool{}
	var first string
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			name := srv.NewDatabase(t)
			if seen[name] {
				t.Fatalf("got database %s a second time; want a fresh one each call", name)
			}
			seen[name] = true
			if first == "" {
				first = name
			}
		})
	}
	srv.bg.Wait() // the drops, and the next spare
	srv.dbMu.Lock()
	spare := srv.spare
	srv.dbMu.Unlock()
	if spare == "" || seen[spare] {
		t.Errorf("got spare %q once the drops were done (handed out before: %v); want a fresh database made ahead", spare, seen[spare])
	}
	var n int
	if err := Open(t).QueryRowContext(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", first).Scan(&n); err != nil || n != 0 {
		t.Errorf("database %s of an ended test: %d left (%v); want it dropped", first, n, err)
	}
}

// TestInterruptStopsThePostgresServer: SIGINT to a test binary whose
// server was just started and is not ready yet (the shared one, and one of
// Start) leaves no PostgreSQL process and no run dir once the binary has
// exited: claim E3 (§7 ¶6 sentence 3, every scenario cleans up
// whatever happens) for the PostgreSQL server, as zkserver's interrupt test
// shows it for ZooKeeper.
func TestInterruptStopsThePostgresServer(t *testing.T) {
	if os.Getenv(EnvInterruptAt) != "" {
		t.Skip("skipped: this is the interrupted child")
	}
	for _, test := range []string{"TestSharedServerGivesEachTestItsDatabase", "TestServerAnswersAndStopLeavesNothing"} {
		t.Run(test, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), EnvInterruptAt+"="+atStarted)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			// 130 when the handler exits first; 1 when the test, failing
			// because its server was stopped, ends first (Main then waits
			// for the stop in flight). Never death by the signal.
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !exit.Exited() || !strings.Contains(out.String(), "pgserver: interrupt: stopping") {
				t.Fatalf("child interrupted at %q: got %v; want an exit after the handler began to stop the servers\n%s", atStarted, err, out.String())
			}
			if left := Leftovers(cmd.Process.Pid); len(left) > 0 {
				t.Fatalf("E3 violated: the interrupted child %d left %q\n%s", cmd.Process.Pid, left, out.String())
			}
			var said []string
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(line, "pgserver: ") {
					said = append(said, line)
				}
			}
			t.Logf("child %d interrupted at %q: %v, nothing left; it said: %s", cmd.Process.Pid, atStarted, err, strings.Join(said, " / "))
		})
	}
}

// TestMissingBinariesSkipOnlyOutsideCI: without PostgreSQL's binaries a
// test skips with the reason, but under CI (CI=true), where scripts/setup
// installs them, it fails saying how to install them; any other start
// error fails everywhere.
func TestMissingBinariesSkipOnlyOutsideCI(t *testing.T) {
	missing := fmt.Errorf("%w: no initdb in /usr/lib/postgresql/*/bin; install Debian's postgresql package (bash scripts/setup, or apt-get install postgresql)", ErrNoBinaries)
	for _, c := range []struct {
		ci           string
		err          error
		skip, failed bool
	}{
		{"", missing, true, false},
		{"true", missing, false, true},
		{"", errors.New("initdb failed"), false, true},
	} {
		t.Setenv("CI", c.ci)
		rec := &recordingTB{T: t}
		failOrSkip(rec, c.err)
		if (rec.skipped != "") != c.skip || (rec.failed != "") != c.failed {
			t.Errorf("CI=%q, %v: skipped %q, failed %q; want skipped %v, failed %v", c.ci, c.err, rec.skipped, rec.failed, c.skip, c.failed)
		}
		if c.failed && c.err == missing && !strings.Contains(rec.failed, "scripts/setup") {
			t.Errorf("CI=true without the binaries: %q; want it to say how to install them", rec.failed)
		}
	}
}

// recordingTB records Skipf and Fatalf instead of ending the test.
type recordingTB struct {
	*testing.T
	skipped, failed string
}

func (r *recordingTB) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

package peer

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// script is the driver as seen from this package's directory.
const script = "../../../testdata/peers/kazoo_lock.py"

func TestMain(m *testing.M) {
	flag.Parse()
	zkserver.SetShort(testing.Short())
	if zkserver.Listing() { // go test -list: nothing of the harness runs
		os.Exit(m.Run())
	}
	// Before anything is created: an interrupt stops the servers and
	// containers these tests started, or they would outlive the binary.
	stopInterrupts := zkserver.HandleInterrupts(func() {})
	code := m.Run()
	stopInterrupts()
	if code == 0 {
		if err := goleak.Find(zkserver.LeakOptions()...); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	if zkserver.Live() > 0 {
		os.Stderr.WriteString("servers left running; killing them\n")
		zkserver.KillAll()
		code = 1
	}
	os.Exit(code)
}

// driver starts a kazoo driver, logging its start-up time.
func driver(t *testing.T, name string) *Driver {
	t.Helper()
	cfg, err := KazooConfig(script, "", name)
	if errors.Is(err, ErrMissing) {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	k := MustStart(t, cfg)
	t.Logf("%s: driver start-up %v (kazoo %s, %s)", name, k.Hello.Startup.Round(time.Millisecond), k.Hello.Version, k.Hello.Runtime)
	return k
}

// twoClients starts kazoo drivers A and B, then a server (the drivers
// first, so a missing kazoo skips before a server starts), and connects
// each driver to it through a proxy of its own, as every zk19 client
// has. The context it returns bounds the test from then on.
func twoClients(t *testing.T, start func(*testing.T, string) *Driver, prefix string) (ctx context.Context, a, b *Driver, sa, sb State) {
	t.Helper()
	a, b = start(t, prefix+"-A"), start(t, prefix+"-B")
	srv := zkserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	sa = connect(t, ctx, a, zkserver.ClientProxy(t, prefix+"-A", srv))
	sb = connect(t, ctx, b, zkserver.ClientProxy(t, prefix+"-B", srv))
	if sa.Session == sb.Session {
		t.Fatalf("got one session %s for A and B; want two", sa.Session)
	}
	return ctx, a, b, sa, sb
}

// waitWatch waits until k's read with a watch on path (on any node for "")
// has returned, after its first since events: k then waits on that node.
// The read is kazoo's get, or Curator's getData as its tracer names it.
func waitWatch(t *testing.T, ctx context.Context, k *Driver, what string, since int, path string) {
	t.Helper()
	if _, err := k.WaitEvent(ctx, what, since, func(e Event) bool {
		read := e.Op == "get" || (e.Op == "GetDataBuilderImpl-Foreground" && e.Watch)
		return e.Kind == "op" && read && e.Phase == "ok" && (path == "" || e.Path == path)
	}); err != nil {
		t.Fatalf("%v", err)
	}
}

func connect(t *testing.T, ctx context.Context, k *Driver, p *faultproxy.Proxy) State {
	t.Helper()
	began := time.Now()
	st, err := k.Connect(ctx, p.Addr(), ConnectOptions{SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("%s connect: %v", k.name, err)
	}
	if st.State != "CONNECTED" || !st.Connected || st.Session == "" || st.Session == "0x0" {
		t.Fatalf("%s connect: got state %q session %q; want CONNECTED with a session", k.name, st.State, st.Session)
	}
	t.Logf("%s: connected in %v (session %s)", k.name, time.Since(began).Round(time.Millisecond), st.Session)
	return st
}

// TestKazooDriverHandsTheLockOver drives kazoo 2.8.0's Lock from two
// sessions: A acquires, B waits on A's node, A releases, B acquires. The
// lock dir lists each contender's node with its owner session.
func TestKazooDriverHandsTheLockOver(t *testing.T) {
	ctx, a, b, sa, sb := twoClients(t, driver, "kazoo")
	const dir = "/kazoo-driver"

	ga, err := a.Acquire(ctx, dir, "A", 10*time.Second)
	if err != nil || !ga.Acquired || !ga.IsAcquired || !strings.HasPrefix(ga.Node, ga.Prefix) {
		t.Fatalf("A acquire: got %+v, %v; want acquired with a node named after its prefix", ga, err)
	}
	since := len(b.Events())
	call := b.AcquireAsync(dir, "B", 0)
	waitWatch(t, ctx, b, "B's watch on A's node", since, dir+"/"+ga.Node)
	select {
	case <-call.Done():
		r, err := call.Wait(ctx)
		t.Fatalf("B acquire: got %+v, %v while A holds; want B still waiting", r, err)
	default:
	}
	// The driver serves B's other requests while B's acquire blocks.
	quick, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	if li, err := b.IsAcquired(quick, dir); err != nil || li.IsAcquired {
		t.Fatalf("B is_acquired while waiting: got %+v, %v; want false, answered while acquire blocks", li, err)
	}
	ls := listing(t, ctx, a, dir)
	nodeB := ""
	for _, c := range ls {
		if c.Data == "B" {
			nodeB = c.Name
		}
	}
	want := []Child{{Name: ga.Node, Owner: sa.Session, Data: "A"}, {Name: nodeB, Owner: sb.Session, Data: "B"}}
	if !sameChildren(ls, want) || !strings.HasSuffix(nodeB, "__lock__0000000001") {
		t.Fatalf("lock dir while B waits: got %+v; want %+v, B's node numbered after A's", ls, want)
	}

	if r, err := a.Release(ctx, dir); err != nil || !r.Released || r.IsAcquired {
		t.Fatalf("A release: got %+v, %v; want released and not acquired", r, err)
	}
	gb, err := call.Wait(ctx)
	if err != nil || !gb.Acquired || !gb.IsAcquired || gb.Node != nodeB {
		t.Fatalf("B acquire: got %+v, %v; want acquired on its node %s", gb, err, nodeB)
	}
	if _, err := b.WaitEvent(ctx, "the watch on A's node firing", since, func(e Event) bool {
		return e.Kind == "watch" && e.Type == "DELETED" && e.Path == dir+"/"+ga.Node
	}); err != nil {
		t.Fatalf("%v", err)
	}
	if ls := listing(t, ctx, a, dir); len(ls) != 1 || ls[0].Name != gb.Node || ls[0].Owner != sb.Session {
		t.Fatalf("lock dir after the hand-over: got %+v; want only B's node %s owned by %s", ls, gb.Node, sb.Session)
	}
	closeWhileWaiting(t, ctx, a, dir)
}

// closeWhileWaiting leaves A blocked in an acquire and closes it: the
// request ends with the driver's exit and the process is gone.
func closeWhileWaiting(t *testing.T, ctx context.Context, a *Driver, dir string) {
	t.Helper()
	since := len(a.Events())
	call := a.AcquireAsync(dir, "A", 0)
	waitWatch(t, ctx, a, "A's watch on B's node", since, "")
	a.Close()
	gone(t, a.Hello.PID)
	if r, err := call.Wait(ctx); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("A's acquire after Close: got %+v, %v; want an error saying the driver exited", r, err)
	}
}

// gone fails t unless process pid has ended and been reaped.
func gone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("driver pid %d after Close: got kill(0) = %v; want ESRCH (no such process)", pid, err)
	}
}

// sameChildren compares listings as sets (the driver sorts by name, and
// kazoo's GUIDs make that order random).
func sameChildren(got, want []Child) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[Child]bool{}
	for _, c := range got {
		seen[c] = true
	}
	for _, c := range want {
		if !seen[c] {
			return false
		}
	}
	return true
}

func listing(t *testing.T, ctx context.Context, k *Driver, dir string) []Child {
	t.Helper()
	c, err := k.Children(ctx, dir)
	if err != nil {
		t.Fatalf("%s children %s: %v", k.name, dir, err)
	}
	return c.Children
}

// fake writes a stand-in driver program that any python3 runs.
func fake(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "driver.py")
	if err := os.WriteFile(p, []byte("import json, sys\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func anyPython(t *testing.T) string {
	t.Helper()
	p, err := interpreter("")
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	return p
}

func TestStartReportsAMissingRecipeAsTheSentinel(t *testing.T) {
	py := anyPython(t)
	s := fake(t, `print(json.dumps({"event": "hello", "missing": True, "executable": sys.executable,
    "error": {"class": "ModuleNotFoundError", "message": "No module named 'kazoo'"}}))
sys.exit(3)
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k, err := Start(ctx, Config{Command: []string{py, s}, Install: KazooInstall, Name: "fake"})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "No module named 'kazoo'") || !strings.Contains(err.Error(), "python3-kazoo") {
		t.Fatalf("got %v, %v; want ErrMissing naming the import error and how to install kazoo", k, err)
	}
}

func TestARequestToADriverThatDiesFailsWithItsExitAndStderr(t *testing.T) {
	py := anyPython(t)
	s := fake(t, `print(json.dumps({"event": "hello", "kazoo": "fake", "pid": 0}), flush=True)
sys.stdin.readline()
sys.stderr.write("boom\n")
sys.exit(1)
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k, err := Start(ctx, Config{Command: []string{py, s}, Name: "fake", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	_, err = k.State(ctx)
	if err == nil || !strings.Contains(err.Error(), "exited (exit status 1)") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v; want an error saying the driver exited with status 1, quoting its stderr", err)
	}
	if _, err := k.State(ctx); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("second request: got %v; want the same exit", err)
	}
}

func TestARequestWithoutAReplyEndsAtItsDeadline(t *testing.T) {
	py := anyPython(t)
	s := fake(t, `print(json.dumps({"event": "hello", "kazoo": "fake", "pid": 0}), flush=True)
sys.stdin.read()
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k, err := Start(ctx, Config{Command: []string{py, s}, Name: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	defer stop()
	if _, err := k.State(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want context.DeadlineExceeded", err)
	}
}

func TestCloseEndsADriverThatIgnoresItsInput(t *testing.T) {
	py := anyPython(t)
	s := fake(t, `import threading
print(json.dumps({"event": "hello", "kazoo": "fake", "pid": 0}), flush=True)
threading.Event().wait()
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	k, err := Start(ctx, Config{Command: []string{py, s}, Name: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	call := k.AcquireAsync("/x", "", 0)
	k.Close()
	gone(t, k.cmd.Process.Pid)
	if _, err := call.Wait(ctx); err == nil || !strings.Contains(err.Error(), "exited (signal: killed)") {
		t.Fatalf("got %v; want the pending request to end with the kill", err)
	}
}

// TestKazooDriverReportsTimeoutAndCancel has B give up on a lock A holds,
// once by kazoo's timeout and once by cancel: each reply names kazoo's
// exception, and kazoo's cleanup leaves only A's node.
func TestKazooDriverReportsTimeoutAndCancel(t *testing.T) {
	ctx, a, b, sa, _ := twoClients(t, driver, "kazoo")
	const dir = "/kazoo-driver"
	ga, err := a.Acquire(ctx, dir, "A", 10*time.Second)
	if err != nil || !ga.Acquired {
		t.Fatalf("A acquire: got %+v, %v; want acquired", ga, err)
	}
	onlyA := []Child{{Name: ga.Node, Owner: sa.Session, Data: "A"}}

	const timeout = 300 * time.Millisecond
	r, err := b.Acquire(ctx, dir, "B", timeout)
	var kerr *RecipeError
	if !errors.As(err, &kerr) || kerr.Class != "LockTimeout" || r.Elapsed() < timeout {
		t.Fatalf("B acquire with timeout %v: got %+v, %v; want LockTimeout after at least %v", timeout, r, err, timeout)
	}
	if ls := listing(t, ctx, a, dir); !sameChildren(ls, onlyA) {
		t.Fatalf("lock dir after B's timeout: got %+v; want %+v", ls, onlyA)
	}

	li, err := b.Lock(ctx, dir, "B")
	if err != nil || !strings.HasSuffix(li.Prefix, "__lock__") || li.IsAcquired {
		t.Fatalf("B lock: got %+v, %v; want a prefix ending __lock__, not acquired", li, err)
	}
	since := len(b.Events())
	call := b.AcquireAsync(dir, "B", 0)
	waitWatch(t, ctx, b, "B's watch on A's node", since, dir+"/"+ga.Node)
	if err := b.Cancel(ctx, dir); err != nil {
		t.Fatalf("B cancel: %v", err)
	}
	if r, err := call.Wait(ctx); !errors.As(err, &kerr) || kerr.Class != "CancelledError" || !strings.HasPrefix(r.Node, li.Prefix) {
		t.Fatalf("B acquire after cancel: got %+v, %v; want CancelledError on a node named %s…", r, err, li.Prefix)
	}
	if ls := listing(t, ctx, a, dir); !sameChildren(ls, onlyA) {
		t.Fatalf("lock dir after B's cancel: got %+v; want %+v", ls, onlyA)
	}
}

package main

// The README's first Go block is program.go, whole; the tests here compile
// it (package main, with its tests) and run Work on a real server.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

func TestMain(m *testing.M) { os.Exit(zkserver.RunTests(m)) }

// TestTheReadmeShowsThisProgram: the first Go block of README.md, and of
// README.zh.md, is program.go, byte for byte, comments included (they
// carry the advice), from its first line to its last: a reader pastes a
// whole package main.
func TestTheReadmeShowsThisProgram(t *testing.T) {
	prog, err := os.ReadFile("program.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"README.md", "README.zh.md"} {
		md, err := os.ReadFile("../../" + file)
		if err != nil {
			t.Fatal(err)
		}
		_, block, ok := strings.Cut(string(md), "```go\n")
		block, _, closed := strings.Cut(block, "```")
		if !ok || !closed {
			t.Fatalf("%s: no ```go block; want the program of cmd/billing", file)
		}
		got, want := strings.Split(block, "\n"), strings.Split(string(prog), "\n")
		for i := range max(len(got), len(want)) {
			if g, w := lineAt(got, i, "(end of block)"), lineAt(want, i, "(end of file)"); g != w {
				t.Fatalf("%s's first Go block, line %d: got %q; want %q (cmd/billing/program.go): the README shows another program than the one compiled and run", file, i+1, g, w)
			}
		}
	}
}

// lineAt is lines[i], or past at the end of lines.
func lineAt(lines []string, i int, past string) string {
	if i < len(lines) {
		return lines[i]
	}
	return past
}

// server starts a server for one test and returns a session on it and a
// fresh lock parent.
func server(t *testing.T) (*zkclient.Client, string) {
	c, parent, _ := serverAt(t)
	return c, parent
}

func serverAt(t *testing.T) (*zkclient.Client, string, string) {
	s := zkserver.Start(t)
	c := zkclient.Connect(t, "W", []string{s.Client})
	const parent = "/services-billing-lock"
	if _, err := c.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	return c, parent, s.Client
}

// TestWorkWritesWithTheHoldsToken: every value is written with the hold's
// token, and the lock is released.
func TestWorkWritesWithTheHoldsToken(t *testing.T) {
	c, parent := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := fence.NewMemory()
	if err := Work(ctx, c.Conn, parent, res, []string{"a", "b"}); err != nil {
		t.Fatalf("Work: %v; want nil", err)
	}
	v, mark, _, err := res.Read(ctx)
	t.Logf("after Work: value %q, mark %#v", v, mark)
	if want := fence.NewToken(parent, czxid(t, c, parent), 0); err != nil || v != "b" || mark != want {
		t.Errorf("got %q under %#v (%v); want \"b\" under the hold's token %#v", v, mark, err, want)
	}
	if kids, _, err := c.Children(parent); err != nil || len(kids) != 0 {
		t.Errorf("children of %s after Work: %v, %v; want none: the hold released", parent, kids, err)
	}
}

// TestWorkReactsToARefusal: a later holder has written (the resource's mark
// is above the hold's token): Work stops at the first refusal, says so with
// the mark, and releases.
func TestWorkReactsToARefusal(t *testing.T) {
	c, parent := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := fence.NewMemory()
	later := fence.NewToken(parent, czxid(t, c, parent), 5)
	if _, err := res.Write(ctx, later, "later holder"); err != nil {
		t.Fatal(err)
	}
	err := Work(ctx, c.Conn, parent, res, []string{"a", "b"})
	t.Logf("Work: %v", err)
	var stale *fence.StaleError
	if !errors.As(err, &stale) || stale.Mark != later || !strings.Contains(err.Error(), "the lock has passed on") {
		t.Errorf("Work against a mark above its token: %v; want a *fence.StaleError with mark %v, said as the lock passed on", err, later)
	}
	if v, _, _, _ := res.Read(ctx); v != "later holder" {
		t.Errorf("value %q; want the later holder's", v)
	}
	if kids, _, err := c.Children(parent); err != nil || len(kids) != 0 {
		t.Errorf("children of %s after Work: %v, %v; want none: the hold released", parent, kids, err)
	}
}

// TestPublicPackagesDependOnStdGoZookeeperAndUUIDOnly: what the README says
// of lock and fence, with go list.
func TestPublicPackagesDependOnStdGoZookeeperAndUUIDOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}", "./lock/...", "./fence/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{"github.com/zk19/zk19": true, "github.com/go-zookeeper/zk": true, "github.com/google/uuid": true}
	seen := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		seen[m] = true
		if !allowed[m] {
			t.Errorf("go list -deps ./lock/... ./fence/... lists module %s; want only the standard library, go-zookeeper and uuid", m)
		}
	}
	t.Logf("modules: %v", seen)
}

// losingResource is a memory resource whose second write finds the hold
// gone: before it, another session deletes the holder's node; the write
// then waits for Work to stop it (its context to end), at most 20s.
type losingResource struct {
	*fence.Memory
	c      *zkclient.Client
	parent string
	writes int
}

func (r *losingResource) Write(ctx context.Context, tok fence.Token, value string) (fence.Result, error) {
	r.writes++
	if r.writes < 2 {
		return r.Memory.Write(ctx, tok, value)
	}
	kids, _, err := r.c.Children(r.parent)
	if err != nil || len(kids) != 1 {
		return fence.Result{}, fmt.Errorf("children of %s: %v, %v; want the holder's node", r.parent, kids, err)
	}
	if err := r.c.Delete(r.parent+"/"+kids[0], -1); err != nil {
		return fence.Result{}, err
	}
	select {
	case <-ctx.Done():
		return fence.Result{}, ctx.Err()
	case <-time.After(20 * time.Second):
		return fence.Result{}, errors.New("Work did not stop its write within 20s of losing the hold")
	}
}

// TestWorkStopsWhenLost: the holder's node is deleted under it (an
// operator, an expiry): Lost closes, Work stops its write in flight and
// says the lock was lost, and does not start the next one.
func TestWorkStopsWhenLost(t *testing.T) {
	c, parent, addr := serverAt(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	other := zkclient.Connect(t, "other", []string{addr})
	res := &losingResource{Memory: fence.NewMemory(), c: other, parent: parent}
	err := Work(ctx, c.Conn, parent, res, []string{"a", "b", "c"})
	t.Logf("Work: %v after %d writes", err, res.writes)
	if err == nil || !strings.Contains(err.Error(), "lock lost") || !errors.Is(err, context.Canceled) || res.writes != 2 {
		t.Errorf("Work whose hold was lost during its second write: %v after %d writes; want \"lock lost\" (context.Canceled) after 2", err, res.writes)
	}
}

// cuttingResource is a memory resource that notes the state of W's
// connection at each write, and after the first write cuts W's link (and
// heals it at once, once W's client has noticed): the client needs a
// moment to reconnect, and a write that does not wait for it would go out
// while the hold is suspended.
type cuttingResource struct {
	*fence.Memory
	t      *testing.T
	conn   *zk.Conn
	px     *faultproxy.Proxy
	states []zk.State
}

func (r *cuttingResource) Write(ctx context.Context, tok fence.Token, value string) (fence.Result, error) {
	r.states = append(r.states, r.conn.State())
	res, err := r.Memory.Write(ctx, tok, value)
	if len(r.states) == 1 {
		r.t.Logf("fault: W's proxy cuts W's link after the first write")
		r.px.Cut(faultproxy.BothEnds)
		tb.WaitFor(r.t, 20*time.Second, "W's client to notice the cut", func() (bool, string) {
			return r.conn.State() != zk.StateHasSession, r.conn.State().String()
		})
		r.t.Logf("fault undone: W's proxy heals; W's client reconnects by itself")
		r.px.Heal()
	}
	return res, err
}

// TestWorkWaitsOutASuspension: W's link drops between two writes and comes
// back before the session expires: Work starts no write while the
// connection carrying the hold's session is down (Ready waits for it), and
// writes every value once it is back.
func TestWorkWaitsOutASuspension(t *testing.T) {
	s := zkserver.Start(t)
	px, err := faultproxy.New(s.Client, faultproxy.WithName("W"), faultproxy.WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = px.Close() })
	c := zkclient.Connect(t, "W", []string{px.Addr()}, zkclient.WithSessionTimeout(30*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := &cuttingResource{Memory: fence.NewMemory(), t: t, conn: c.Conn, px: px}
	if err := Work(ctx, c.Conn, "/services/billing/lock", res, []string{"a", "b", "c"}); err != nil {
		t.Fatalf("Work across a link drop healed before expiry: %v; want nil", err)
	}
	t.Logf("W's connection at each write: %v", res.states)
	for i, st := range res.states {
		if st != zk.StateHasSession {
			t.Fatalf("Work's write %d of %d: got it started with the connection %v; want none started while the hold is suspended", i+1, len(res.states), st)
		}
	}
	if v, _, _, _ := res.Read(ctx); v != "c" || len(res.states) != 3 {
		t.Fatalf("after Work: value %q after %d writes; want \"c\" after 3", v, len(res.states))
	}
}

// czxid is the parent's czxid: the domain of the tokens lock gives by
// default.
func czxid(t *testing.T, c *zkclient.Client, parent string) int64 {
	t.Helper()
	_, st, err := c.Exists(parent)
	if err != nil || st == nil {
		t.Fatalf("exists %s: %v", parent, err)
	}
	return st.Czxid
}

// TestTheProgramRuns: the README's program, run as a reader runs it (go run,
// pointed at a server), holds the lock, creates the missing parent, writes
// its three values and prints the last one with the hold's token.
func TestTheProgramRuns(t *testing.T) {
	c, _, addr := serverAt(t)
	const parent = "/services/billing/lock" // the program's default, missing
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".", "-zk", addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("go run . -zk %s: stdout:\n%s\nstderr (go-zookeeper's log):\n%s", addr, out, stderr.String())
	if err != nil {
		t.Fatalf("go run the README's program: %v; want it to exit 0", err)
	}
	want := fmt.Sprintf("stored \"c\" under token %v (<nil>)\n", fence.NewToken(parent, czxid(t, c, parent), 0))
	if string(out) != want {
		t.Fatalf("the README's program printed %q; want %q", out, want)
	}
}

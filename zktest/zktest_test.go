package zktest_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/zktest"
)

var acl = zk.WorldACL(zk.PermAll)

// within bounds every wait of these tests.
const within = 30 * time.Second

// TestStartConnect: a client of Connect reaches the server through its own
// proxy, and what it writes is on the server, as a direct client sees it.
func TestStartConnect(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	if _, err := c.Create("/a", []byte("x"), 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	if c.Proxy.Conns() != 1 || c.Proxy.Accepted() != 1 {
		t.Fatalf("proxy connections: got %d open, %d accepted; want 1 and 1 (the client's)", c.Proxy.Conns(), c.Proxy.Accepted())
	}
	if !direct(t, e, "/a") {
		t.Fatalf("/a on the server: got absent; want the node A created")
	}
}

// direct reports whether p exists, asked with no proxy in between.
func direct(t *testing.T, e *zktest.Ensemble, p string) bool {
	t.Helper()
	conn, _, err := zk.Connect(e.Addrs(), 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("direct connect: %v", err)
	}
	defer conn.Close()
	ok, _, err := conn.Exists(p)
	if err != nil {
		t.Fatalf("direct exists %s: %v", p, err)
	}
	return ok
}

// TestLoseReply: the reply to the create is lost: the client sees a
// connection loss, the fault reports the create's successful reply lost,
// and the node exists on the server. A reply of another kind passes.
func TestLoseReply(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseReply(zktest.Match{Op: zktest.Create, Under: "/"})
	if _, _, err := c.Children("/"); err != nil {
		t.Fatalf("children before the create: got %v; want the reply (the fault picks creates)", err)
	}
	_, err := c.Create("/made", nil, 0, acl)
	lost, werr := f.Wait(within)
	if werr != nil || !lost.Took || lost.Op != "create" || lost.Err != 0 || lost.Path != "/made" {
		t.Fatalf("fault: got %+v (%v); want the successful reply to create /made lost", lost, werr)
	}
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("create: got %v; want %v", err, zk.ErrConnectionClosed)
	}
	if !direct(t, e, "/made") {
		t.Fatalf("/made on the server: got absent; want it (the create took effect)")
	}
}

// TestLoseReplyOfAnErrorPasses: a fault armed for a success does not take
// on a reply with another err code, and says so.
func TestLoseReplyOfAnErrorPasses(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseReply(zktest.Match{Op: zktest.GetChildren, Path: "/nope"})
	_, _, err := c.Children("/nope")
	lost, werr := f.Wait(within)
	if !errors.Is(err, zk.ErrNoNode) || werr != nil || lost.Took || lost.Err != zk.ErrCode(-101) {
		t.Fatalf("got %v and fault %+v (%v); want ErrNoNode delivered and the fault spent, not taken, with err -101", err, lost, werr)
	}
}

// TestLoseRequest: the create never reaches the server: the client sees a
// connection loss and the node does not exist.
func TestLoseRequest(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseRequest(zktest.Match{Op: zktest.Create, Path: "/never"})
	_, err := c.Create("/never", nil, 0, acl)
	lost, werr := f.Wait(within)
	if werr != nil || !lost.Took || lost.Op != "create" {
		t.Fatalf("fault: got %+v (%v); want the create lost", lost, werr)
	}
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("create: got %v; want %v", err, zk.ErrConnectionClosed)
	}
	if direct(t, e, "/never") {
		t.Fatalf("/never on the server: got present; want absent (the request was lost)")
	}
}

// TestCancelDisarmsTheFault: a fault canceled before its request is sent
// ends at once (Done is closed), not taken, and the request it would have
// picked is answered as if it had never been armed.
func TestCancelDisarmsTheFault(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseReply(zktest.Match{Op: zktest.Create, Path: "/kept"})
	select {
	case <-f.Done():
		t.Fatalf("Done before Cancel: got closed (%+v); want open, the fault armed", f.Result())
	default:
	}
	f.Cancel()
	select {
	case <-f.Done():
	default:
		t.Fatalf("Done after Cancel: got open (%+v); want closed", f.Result())
	}
	if _, err := c.Create("/kept", nil, 0, acl); err != nil {
		t.Fatalf("create after Cancel: got %v; want nil, its reply delivered", err)
	}
	if l := f.Result(); l.Took || l.Conn != 0 || l.Why != "canceled" {
		t.Fatalf("the canceled fault: got %+v; want not taken, on no connection, Why \"canceled\"", l)
	}
}

// TestCutHeal: Cut ends the client's connection and refuses new ones; Heal
// lets it back in the same session.
func TestCutHeal(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A", zktest.SessionTimeout(4*time.Second))
	id, mark := c.SessionID(), c.Mark()
	c.Proxy.Cut()
	if err := c.WaitStateSince(mark, zk.StateDisconnected, within); err != nil {
		t.Fatalf("after Cut: %v", err)
	}
	if n := c.Proxy.Conns(); n != 0 {
		t.Fatalf("connections after Cut: got %d; want 0", n)
	}
	mark = c.Mark()
	c.Proxy.Heal()
	if err := c.WaitStateSince(mark, zk.StateHasSession, within); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
	if c.SessionID() != id {
		t.Fatalf("session after Heal: got 0x%x; want 0x%x", c.SessionID(), id)
	}
}

// TestHoldRelease: a held client's create waits in the proxy, not on the
// server, and takes effect on the release.
func TestHoldRelease(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A", zktest.SessionTimeout(4*time.Second))
	c.Proxy.Hold()
	done := make(chan error, 1)
	go func() { _, err := c.Create("/late", nil, 0, acl); done <- err }()
	if err := tb.WaitUntil(within, "the create held in the proxy", func() (bool, string) {
		return c.Proxy.Held() > 0, fmt.Sprintf("%d bytes held", c.Proxy.Held())
	}); err != nil {
		t.Fatal(err)
	}
	if direct(t, e, "/late") {
		t.Fatalf("/late while held: got present; want absent")
	}
	c.Proxy.Release()
	if err := tb.Receive(t, within, "the create's return after the release", done); err != nil {
		t.Fatalf("create after the release: got %v; want nil", err)
	}
	if !direct(t, e, "/late") {
		t.Fatalf("/late after the release: got absent; want present")
	}
}

// TestExpire: a frozen client's session expires on the server (its
// ephemeral node goes), and the client hears of it after the heal.
func TestExpire(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := c.Expire(within); err != nil {
		t.Fatalf("Expire: %v", err)
	}
	if direct(t, e, "/eph") {
		t.Fatalf("/eph after Expire: got present; want it gone with the session")
	}
	if err := c.WaitExpired(0); err != nil {
		t.Fatalf("WaitExpired after Expire: %v", err)
	}
}

// TestWaitExpiredNamesTheStates: a session that does not expire makes
// WaitExpired give up within its bound, naming the states seen.
func TestWaitExpiredNamesTheStates(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	err := c.WaitExpired(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "StateHasSession") {
		t.Fatalf("got %v; want an error naming the state seen, StateHasSession", err)
	}
}

// TestNoProofDeps: zktest stands on the server wing alone, nothing of the
// proof's machinery.
func TestNoProofDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zk19/zk19/zktest").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, bad := range []string{"github.com/zk19/zk19/internal/proof/", "github.com/zk19/zk19/internal/record/"} {
			if strings.HasPrefix(p, bad) {
				t.Errorf("zktest depends on %s; want nothing of the proof or the record (no claims, no verdict words)", p)
			}
		}
	}
}

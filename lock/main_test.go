package lock_test

// The Examples run against a real ZooKeeper server that this file starts
// once, on first use, with the zk19 harness (process or container backend,
// as ZK19_BACKEND says), and stops when the tests end, also on Ctrl-C. In a
// service, the *zk.Conn comes from zk.Connect to your ensemble instead.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

var scope *zkserver.Scope

func TestMain(m *testing.M) {
	// The parallel tests and subtests (ExpiresBy's six cuts, a late
	// create's two, ...) spend their seconds waiting for a session to
	// expire on the server or for a held reply, not computing: twelve run at
	// once unless -parallel says otherwise (go test's default is
	// GOMAXPROCS, 2 here). The matrix, which faults every request in
	// turn and counts its cells' time, runs alone before them. Set before
	// the flags are parsed, so a -parallel given wins.
	_ = flag.Set("test.parallel", "12")
	os.Exit(zkserver.RunExamples(m, "lock", func(s *zkserver.Scope) { scope = s }))
}

// server is the Examples' standalone server, started on first use.
var server = sync.OnceValue(func() *zkserver.Server {
	return zkserver.Start(scope, zkserver.WithLabel("lock-examples"))
})

// parentSeq numbers the Examples' lock parents.
var parentSeq struct {
	sync.Mutex
	n int
}

// newParent creates a fresh persistent lock parent for one Example.
func newParent() string {
	parentSeq.Lock()
	parentSeq.n++
	p := fmt.Sprintf("/lock-example-%d", parentSeq.n)
	parentSeq.Unlock()
	c := zkclient.Connect(scope, "setup", []string{server().Client}, zkclient.Quiet())
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		scope.Fatalf("create %s: %v", p, err)
	}
	return p
}

// connect opens a session of its own for a participant of an Example.
func connect(name string) *zk.Conn {
	return zkclient.Connect(scope, name, []string{server().Client}, zkclient.Quiet()).Conn
}

// connectLossy opens a session through a fault proxy and returns, with it,
// a function that makes the proxy lose the reply of the next successful
// create under parent: the server creates the node, the client gets
// zk.ErrConnectionClosed and reconnects in the same session.
func connectLossy(name, parent string) (*zk.Conn, func()) {
	p, err := faultproxy.New(server().Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames())
	if err != nil {
		scope.Fatalf("proxy: %v", err)
	}
	scope.Cleanup(func() { _ = p.Close() })
	c := zkclient.Connect(scope, name, []string{p.Addr()}, zkclient.Quiet())
	return c.Conn, func() {
		p.LoseReply(faultproxy.Match{Ops: []int32{jute.OpCreate, jute.OpCreate2}, Under: parent})
	}
}

// deleteNode deletes path from a session of its own: somebody else's
// hand, as an operator's or a buggy client's.
func deleteNode(path string) {
	if err := zkclient.Connect(scope, "other", []string{server().Client}, zkclient.Quiet()).Delete(path, -1); err != nil {
		scope.Fatalf("delete %s: %v", path, err)
	}
}

// bounded is the context an Example's lock calls run under.
func bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// createCandidate creates a candidate under parent in conn's session with
// a fresh GUID, as a hand-written recipe would, and returns the GUID.
func createCandidate(conn *zk.Conn, parent string) string {
	guid := uuid.NewString()
	if _, err := conn.Create(parent+"/"+guid+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		scope.Fatalf("create a candidate under %s: %v", parent, err)
	}
	return guid
}

// connectCuttable opens a session through a fault proxy with lock.Connect
// and returns, with it, the proxy's cut (the client's connection closes
// and new ones are refused) and heal.
func connectCuttable(name string, timeout time.Duration) (*zk.Conn, func(), func()) {
	p, err := faultproxy.New(server().Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames())
	if err != nil {
		scope.Fatalf("proxy: %v", err)
	}
	scope.Cleanup(func() { _ = p.Close() })
	conn, _, err := lock.Connect([]string{p.Addr()}, timeout, nil, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		scope.Fatalf("lock.Connect %s: %v", name, err)
	}
	scope.Cleanup(conn.Close)
	return conn, func() { p.Cut(faultproxy.BothEnds) }, p.Heal
}

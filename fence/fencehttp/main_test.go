package fencehttp_test

// The Example runs against a real ZooKeeper server that this file starts
// once, on first use, with the zk19 harness (process or container backend,
// as ZK19_BACKEND says), with a short tick so that a session cut off by a
// fault proxy expires within seconds. In a service, the *zk.Conn comes from
// zk.Connect to your ensemble instead.

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

var scope *zkserver.Scope

func TestMain(m *testing.M) {
	os.Exit(zkserver.RunExamples(m, "fencehttp", func(s *zkserver.Scope) { scope = s }))
}

// sessionTimeout is A's session timeout: the server's tick is a tenth of
// it, so the server expires a silent session about this long after its
// last heartbeat.
const sessionTimeout = time.Second

var server = sync.OnceValue(func() *zkserver.Server {
	return zkserver.Start(scope, zkserver.WithLabel("fencehttp-example"), zkserver.WithTickTime(sessionTimeout/10))
})

// newParent creates the Example's persistent lock parent.
func newParent() string {
	const p = "/fencehttp-example"
	c := zkclient.Connect(scope, "setup", []string{server().Client}, zkclient.Quiet())
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		scope.Fatalf("create %s: %v", p, err)
	}
	return p
}

// connect opens a session of its own for a participant.
func connect(name string) *zk.Conn {
	return zkclient.Connect(scope, name, []string{server().Client}, zkclient.Quiet()).Conn
}

// connectCuttable opens a session with the short timeout through a fault
// proxy, and returns with it a function that cuts the session off (a
// blackhole both ways: no close, no forced expiry) and returns once the
// server has deleted the node at path: the session expired on the server's
// clock, and its client was not told.
func connectCuttable(name string) (*zk.Conn, func(path string)) {
	p, err := faultproxy.New(server().Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames())
	if err != nil {
		scope.Fatalf("proxy: %v", err)
	}
	scope.Cleanup(func() { _ = p.Close() })
	c := zkclient.Connect(scope, name, []string{p.Addr()}, zkclient.Quiet(), zkclient.WithSessionTimeout(sessionTimeout))
	return c.Conn, func(path string) {
		watcher := zkclient.Connect(scope, "watcher", []string{server().Client}, zkclient.Quiet())
		_, _, gone, err := watcher.ExistsW(path)
		if err != nil {
			scope.Fatalf("exists %s: %v", path, err)
		}
		p.Blackhole(faultproxy.Both)
		scope.Cleanup(p.Heal)
		select {
		case ev := <-gone:
			if ev.Type != zk.EventNodeDeleted {
				scope.Fatalf("got %v on %s; want its deletion", ev.Type, path)
			}
		case <-time.After(20 * sessionTimeout):
			scope.Fatalf("%s's session did not expire within %v of the blackhole", name, 20*sessionTimeout)
		}
	}
}

// This is the test of a module outside this repository (zktest's
// TestOutsideModule copies it alone into a scratch module that requires
// github.com/zk19/zk19, replaced by the checkout; locktest's copies it
// beside locktest_test.go): it imports zktest as any Go engineer's module
// would, starts a server, loses a create's reply and checks that the loss
// took.
package outside

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zk19/zk19/zktest"
)

func TestLostCreateReply(t *testing.T) {
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseReply(zktest.Match{Op: zktest.Create, Path: "/job"})
	mark := c.Mark()
	_, err := c.Create("/job", nil, 0, zk.WorldACL(zk.PermAll))
	lost, werr := f.Wait(30 * time.Second)
	if werr != nil || !lost.Took || lost.Op != "create" || lost.Err != 0 {
		t.Fatalf("fault: got %+v (%v); want the successful reply to create /job lost", lost, werr)
	}
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("create: got %v; want %v", err, zk.ErrConnectionClosed)
	}
	// A request sent while the client is still reconnecting can fail with
	// zk.ErrNoServer: ask once it has its session again.
	if err := c.WaitStateSince(mark, zk.StateHasSession, 30*time.Second); err != nil {
		t.Fatalf("A after the lost reply: %v", err)
	}
	if ok, _, err := c.Exists("/job"); err != nil || !ok {
		t.Fatalf("exists /job: got %v, %v; want true (the create took effect)", ok, err)
	}
}

package zktest_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/zktest"
)

// In a test, pass its t to zktest.Start; an Example has no t, and
// example gives it a TB that fails by panicking.

func Example() {
	t, done := example("start") // in a test: t *testing.T
	defer done()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	p, err := c.Create("/greeting", []byte("hello"), 0, zk.WorldACL(zk.PermAll))
	fmt.Println(p, err)
	data, _, err := c.Get("/greeting")
	fmt.Println(string(data), err)
	// Output:
	// /greeting <nil>
	// hello <nil>
}

func ExampleProxy_LoseReply() {
	t, done := example("lose-reply")
	defer done()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseReply(zktest.Match{Op: zktest.Create, Path: "/job"})
	mark := c.Mark()
	_, err := c.Create("/job", nil, 0, zk.WorldACL(zk.PermAll))
	lost, _ := f.Wait(10 * time.Second)
	fmt.Println("create:", err)
	fmt.Println("reply lost:", lost.Took, "| its op:", lost.Op, "| its err code:", lost.Err)
	_ = c.WaitStateSince(mark, zk.StateHasSession, 10*time.Second) // reconnected, in the same session
	ok, _, _ := c.Exists("/job")
	fmt.Println("the node exists:", ok)
	// Output:
	// create: zk: connection closed
	// reply lost: true | its op: create | its err code: 0
	// the node exists: true
}

func ExampleProxy_LoseRequest() {
	t, done := example("lose-request")
	defer done()
	e := zktest.Start(t)
	c := e.Connect(t, "A")
	f := c.Proxy.LoseRequest(zktest.Match{Op: zktest.Create, Path: "/job"})
	mark := c.Mark()
	_, err := c.Create("/job", nil, 0, zk.WorldACL(zk.PermAll))
	lost, _ := f.Wait(10 * time.Second)
	fmt.Println("create:", err)
	fmt.Println("request lost:", lost.Took, "| its op:", lost.Op)
	_ = c.WaitStateSince(mark, zk.StateHasSession, 10*time.Second) // reconnected, in the same session
	ok, _, _ := c.Exists("/job")
	fmt.Println("the node exists:", ok)
	// Output:
	// create: zk: connection closed
	// request lost: true | its op: create
	// the node exists: false
}

func ExampleProxy_Hold() {
	t, done := example("hold")
	defer done()
	e := zktest.Start(t)
	a := e.Connect(t, "A", zktest.SessionTimeout(4*time.Second))
	b := e.Connect(t, "B") // through a proxy of its own, which holds nothing
	a.Proxy.Hold()
	created := make(chan error, 1)
	go func() { _, err := a.Create("/late", nil, 0, zk.WorldACL(zk.PermAll)); created <- err }()
	for deadline := time.Now().Add(10 * time.Second); a.Proxy.Held() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // until A's bytes sit in its proxy
	}
	ok, _, _ := b.Exists("/late")
	fmt.Println("while A's bytes are held, the server has /late:", ok)
	a.Proxy.Release()
	fmt.Println("A's create after the release:", <-created)
	ok, _, _ = b.Exists("/late")
	fmt.Println("after the release, the server has /late:", ok)
	// Output:
	// while A's bytes are held, the server has /late: false
	// A's create after the release: <nil>
	// after the release, the server has /late: true
}

func ExampleEnsemble_HoldFollower() {
	t, done := example("hold-follower")
	defer done()
	e := zktest.StartEnsemble(t, 3)
	f := e.Followers()[0]
	w := e.Connect(t, "writer", zktest.To(e.Leader()))
	r := e.Connect(t, "reader", zktest.To(f))

	h := e.HoldFollower(f)
	_, err := w.Create("/config", []byte("v2"), 0, zk.WorldACL(zk.PermAll))
	fmt.Println("write through the leader:", err)
	ok, _, _ := r.Exists("/config")
	fmt.Println("the held follower sees it:", ok)
	fmt.Println("bytes delivered on release > 0:", h.Release() > 0)
	_, _ = r.Sync("/config")
	ok, _, _ = r.Exists("/config")
	fmt.Println("after release and sync:", ok)
	// Output:
	// write through the leader: <nil>
	// the held follower sees it: false
	// bytes delivered on release > 0: true
	// after release and sync: true
}

func ExampleProxy_Cut() {
	t, done := example("cut-heal")
	defer done()
	e := zktest.Start(t)
	c := e.Connect(t, "A", zktest.SessionTimeout(4*time.Second))
	before, mark := c.SessionID(), c.Mark()
	c.Proxy.Cut()
	fmt.Println("disconnected:", c.WaitStateSince(mark, zk.StateDisconnected, 10*time.Second) == nil)
	mark = c.Mark()
	c.Proxy.Heal()
	fmt.Println("back:", c.WaitStateSince(mark, zk.StateHasSession, 10*time.Second) == nil, "| same session:", c.SessionID() == before)
	// Output:
	// disconnected: true
	// back: true | same session: true
}

func ExampleClient_Expire() {
	t, done := example("expire")
	defer done()
	e := zktest.Start(t)
	c := e.Connect(t, "A") // a 1 s session
	_, _ = c.Create("/leader", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	fmt.Println("expire:", c.Expire(30*time.Second))
	_, _, err := c.Get("/leader") // the client opened a new session after the expiry
	fmt.Println("the ephemeral node is gone:", errors.Is(err, zk.ErrNoNode))
	// Output:
	// expire: <nil>
	// the ephemeral node is gone: true
}

func ExampleEnsemble_PartitionLeader() {
	t, done := example("partition")
	defer done()
	e := zktest.StartEnsemble(t, 3)
	pt := e.PartitionLeader()
	fmt.Println("a new leader without the old one:", pt.New != pt.Old)
	pt.Heal()
	m, _ := pt.Old.Mode()
	fmt.Println("the old leader rejoins as:", m)
	pt.Old.Restart()
	m, _ = pt.Old.Mode()
	fmt.Println("after a restart:", m)
	// Output:
	// a new leader without the old one: true
	// the old leader rejoins as: follower
	// after a restart: follower
}

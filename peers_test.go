package zk19_test

// The go-zookeeper comparison: the same scenarios run with go-zookeeper's
// own zk.Lock (v1.0.4) and with the recipe of internal/lock. These tests
// record what the peer did; they are not proofs of a claim, and a change in
// the peer's behaviour is logged, not failed. What they assert is ours.

import (
	"errors"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// peerNote logs a peer finding. The finding is what go-zookeeper did; its
// change is news for the README, not a failed claim.
func peerNote(t zkserver.TB, recorded bool, format string, args ...any) {
	t.Helper()
	if recorded {
		t.Logf("peer: "+format, args...)
		return
	}
	t.Logf("peer behaviour changed since v1.0.4: "+format, args...)
}

// TestPeerGoZookeeperLock_AcquiresWithoutItsNode: go-zookeeper's zk.Lock
// does not check that its node still exists, so a waiter whose node was
// deleted reports that it holds the lock once the nodes in front of it are
// gone. Ours, in the same scenario, returns ErrLostCandidacy (the property
// of claim L6, proved in lock_test.go).
//
// Both runs: A holds with zk.Lock; B waits with the implementation under
// test (the server shows B's watch on A's node); D deletes B's node; A
// unlocks. Recorded for v1.0.4: zk.Lock's Lock() returns nil with no node
// of B's on the server, and its Unlock fails with ErrNoNode.
func TestPeerGoZookeeperLock_AcquiresWithoutItsNode(t *testing.T) {
	s := sharedServer(t)
	d := zkclient.Connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	acl := zk.WorldACL(zk.PermAll)
	a := zkclient.Connect(t, "A", []string{s.Client})
	aa := newActor(t, "A")
	al := zk.NewLock(a.Conn, root, acl)
	// lockA makes A the holder with zk.Lock and returns its node.
	lockA := func() string {
		t.Helper()
		aa.invoke("zk.Lock %s", root)
		if err := al.Lock(); err != nil {
			t.Fatalf("A zk.Lock: %v", err)
		}
		kids := listChildren(t, d, root)
		if len(kids) != 1 {
			t.Fatalf("got children %v; want A's one node", kids)
		}
		aa.ok("%s", kids[0])
		return root + "/" + kids[0]
	}
	unlockA := func() {
		t.Helper()
		aa.invoke("zk.Unlock")
		if err := al.Unlock(); err != nil {
			t.Fatalf("A unlock: %v", err)
		}
		aa.ok("")
	}
	// deleteWaiter deletes the one node that is not aNode.
	deleteWaiter := func(aNode string) string {
		t.Helper()
		for _, k := range listChildren(t, d, root) {
			if root+"/"+k != aNode {
				deleteAs(t, d, da, root+"/"+k)
				return k
			}
		}
		t.Fatalf("no waiter node under %s", root)
		return ""
	}

	phase(t, "peer: B waits with go-zookeeper zk.Lock; D deletes B's node; A unlocks")
	aNode := lockA()
	b := zkclient.Connect(t, "B", []string{s.Client})
	ba := newActor(t, "B")
	bl := zk.NewLock(b.Conn, root, acl)
	bDone := make(chan error, 1)
	ba.invoke("zk.Lock %s", root)
	go func() { bDone <- bl.Lock() }()
	waitWatching(t, s, root, aNode, b.SessionHex())
	bNode := deleteWaiter(aNode)
	unlockA()
	var bErr error
	select {
	case bErr = <-bDone:
	case <-time.After(within):
		t.Fatalf("zk.Lock did not return within %v", within)
	}
	left := listChildren(t, d, root)
	if bErr == nil {
		ba.ok("Lock returned nil (acquired); its node %s exists: %v", bNode, len(left) != 0)
		uerr := bl.Unlock()
		ba.info("zk.Unlock: %v", uerr)
		peerNote(t, len(left) == 0 && errors.Is(uerr, zk.ErrNoNode), "zk.Lock reported acquisition while its node %s did not exist (children %v); Unlock then returned %v", bNode, left, uerr)
	} else {
		ba.fail("%v", bErr)
		peerNote(t, false, "zk.Lock returned %v; the recorded behaviour is a nil error without a node", bErr)
	}

	phase(t, "ours: same scenario")
	aNode = lockA()
	c := join(t, "C", []string{s.Client}, root, joinOpts{})
	pc := start(t, c)
	if err := expectWaiting(c, path.Base(aNode)); err != nil {
		t.Fatalf("%v", err)
	}
	waitWatching(t, s, root, aNode, c.c.SessionHex())
	deleteWaiter(aNode)
	unlockA()
	hc, err := pc.result(t)
	t.Logf("ours: hold=%v err=%v", hc != nil, err)
	if hc != nil || !errors.Is(err, lock.ErrLostCandidacy) {
		t.Errorf("ours: got %s, %v; want no hold and lock.ErrLostCandidacy", holdOf(hc), err)
	}
}

// TestPeerGoZookeeperLock_FailsOnAStrangerAndStrandsItsNode: candidates
// are the children named like lock nodes; any other child of the parent is
// not a candidate (claim L2's ordering, proved in lock_test.go).
// go-zookeeper's zk.Lock parses every child and fails on the first one that
// is not a lock node, and on that failure it leaves its own node behind, in
// front of every later candidate. Ours ignores the stranger and holds.
func TestPeerGoZookeeperLock_FailsOnAStrangerAndStrandsItsNode(t *testing.T) {
	s := sharedServer(t)
	d := zkclient.Connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	da.invoke("create %s/config (not a lock node)", root)
	if _, err := d.Create(root+"/config", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}
	da.ok("")

	phase(t, "peer: go-zookeeper zk.Lock")
	a := zkclient.Connect(t, "A", []string{s.Client})
	aa := newActor(t, "A")
	aa.invoke("zk.Lock %s", root)
	err := zk.NewLock(a.Conn, root, zk.WorldACL(zk.PermAll)).Lock()
	aa.fail("%v", err)
	stranded := ownedBy(t, d, root, a.SessionID())
	peerNote(t, err != nil && len(stranded) == 1, "zk.Lock failed on the stranger (%v) and left its node(s) %v in the queue", err, stranded)
	for _, k := range stranded {
		deleteAs(t, d, da, root+"/"+k)
	}

	phase(t, "ours, with the same stranger")
	b := join(t, "B", []string{s.Client}, root, joinOpts{})
	ctx := lockCtx(t)
	h, err := b.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("ours failed on a child that is not a lock node: %v", err)
	}
	b.a.ok("holds %s; the stranger is not a candidate", path.Base(h.Path))
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// ownedBy lists the children of root whose ephemeralOwner is session.
func ownedBy(t zkserver.TB, c *zkclient.Client, root string, session int64) []string {
	t.Helper()
	var out []string
	for _, k := range listChildren(t, c, root) {
		if ok, st := statOf(t, c, root+"/"+k); ok && st.EphemeralOwner == session {
			out = append(out, k)
		}
	}
	return out
}

// TestPeerGoZookeeperLock_UnlockAfterNodeLossDeadlocks: once a holder's
// node is gone (its session expired, or another client deleted it), the
// hold is over (claim L6's property, proved in lock_test.go). go-zookeeper's
// zk.Lock cannot get out of that state: Unlock fails with ErrNoNode and
// keeps the stale path, so every later Lock on the same instance returns
// ErrDeadlock. Ours reports lost candidacy at Release and acquires again
// with a fresh candidate.
func TestPeerGoZookeeperLock_UnlockAfterNodeLossDeadlocks(t *testing.T) {
	s := sharedServer(t)
	d := zkclient.Connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	deleteAll := func(owner int64) {
		t.Helper()
		for _, k := range ownedBy(t, d, root, owner) {
			deleteAs(t, d, da, root+"/"+k)
		}
	}

	phase(t, "peer: go-zookeeper zk.Lock")
	a := zkclient.Connect(t, "A", []string{s.Client})
	aa := newActor(t, "A")
	al := zk.NewLock(a.Conn, root, zk.WorldACL(zk.PermAll))
	if err := al.Lock(); err != nil {
		t.Fatalf("zk.Lock: %v", err)
	}
	aa.ok("zk.Lock holds")
	deleteAll(a.SessionID())
	aa.invoke("zk.Unlock")
	uerr := al.Unlock()
	aa.fail("%v", uerr)
	aa.invoke("zk.Lock again")
	lerr := al.Lock()
	aa.fail("%v", lerr)
	peerNote(t, errors.Is(uerr, zk.ErrNoNode) && errors.Is(lerr, zk.ErrDeadlock), "Unlock after node loss returned %v; the next Lock returned %v", uerr, lerr)

	phase(t, "ours")
	b := join(t, "B", []string{s.Client}, root, joinOpts{})
	ctx := lockCtx(t)
	h, err := b.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	deleteAll(b.c.SessionID())
	rerr := h.Release(ctx)
	b.a.fail("release: %v", rerr)
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		t.Errorf("ours: release after node loss returned %v; want lock.ErrLostCandidacy", rerr)
	}
	h2, err := b.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("ours cannot acquire again after a lost hold: %v", err)
	}
	b.a.ok("holds again with a fresh candidate %s", path.Base(h2.Path))
	if h2.GUID == h.GUID {
		t.Errorf("ours: the new acquisition reused GUID %s; want a fresh one", h.GUID)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

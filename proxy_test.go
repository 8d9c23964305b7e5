package zk19_test

// The R claims (article §4 "create 回复丢失以后怎样找回节点") and exercise 1
// (X1): a request takes effect on the server, its reply is lost on the way
// back, and the client has to find out what happened. The lost-reply
// fixture picks the request with a matcher, so the same experiment runs on
// a create (R1–R7), on the delete of a Release, or on any other request.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/jute"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// lostReply is the article's §4 experiment for any request, in a lock
// room on the shared server: A talks to the server through a fault proxy,
// O observes directly. The proxy lets the request a faultproxy.Match picks
// (by opcode and path) take effect and loses its reply (loseReply), or
// loses the request itself before the server sees it (loseRequest); either
// way A's connection closes, A's call sees a connection loss, and A
// reconnects in the same session.
type lostReply struct {
	*room
	proxy                       *faultproxy.Proxy
	a                           *contender // A, through the proxy, with its Locker
	sessionBefore, sessionAfter int64      // A's session before the fault and after reconnecting
}

// newLostReply sets the experiment up on the shared server; aOpts
// configures A.
func newLostReply(t zkserver.TB, aOpts joinOpts) *lostReply {
	t.Helper()
	s := sharedServer(t)
	return newLostReplyAt(t, s, s, aOpts)
}

// newLostReplyAt sets the experiment up with A's proxy in front of server
// a and O connected to server o.
func newLostReplyAt(t zkserver.TB, a, o *zkserver.Server, aOpts joinOpts) *lostReply {
	t.Helper()
	lr := &lostReply{room: newRoom(t, []string{o.Client})}
	lr.proxy = zkserver.ClientProxy(t, "A-proxy", a)
	aOpts.via = []string{lr.proxy.Addr()}
	lr.a = lr.join("A", aOpts)
	return lr
}

// The opcodes a lost-reply Match names: go-zookeeper's Create may send
// create or create2; a Release sends delete.
var (
	createOps = []int32{jute.OpCreate, jute.OpCreate2}
	deleteOps = []int32{jute.OpDelete}
)

// loseReply runs call, one of A's operations, while the proxy loses the
// reply to the request m picks. It returns what the fault did and call's
// error. A call that returns no error may have been answered (the fault then
// is cancelled, and the caller sees Dropped false) or may have resolved the
// loss itself; a call that returns an error saw the connection close.
//
// The fault and A's reconnection are the scene of claim id, not its
// observation: a reply dropped on a connection that stayed open (A's
// client saw no disconnect), a call that does not return, or a session
// that does not come back, within their bounds, stop the proof, not
// shown, with what was seen.
func (lr *lostReply) loseReply(t zkserver.TB, id string, m faultproxy.Match, call func() error) (faultproxy.DropResult, error) {
	t.Helper()
	d := lr.proxy.LoseReply(m)
	mark := lr.a.c.Mark()
	lr.sessionBefore = lr.a.c.SessionID()
	lr.a.a.info("the proxy will lose the reply to A's %s", m)
	ret := make(chan error, 1)
	go func() { ret <- call() }()
	scene := judged(t, id, notShown)
	// A dropped reply leaves A's call waiting until its connection ends, so
	// the call need not return first.
	wait.For(scene, within, fmt.Sprintf("A's call to return or the fault on A's %s to end", m), func() (bool, string) {
		select {
		case <-d.Done():
			return true, ""
		default:
			return len(ret) > 0, fmt.Sprintf("A's call pending; the fault so far: %+v", d.Result())
		}
	})
	var err error
	returned := false
	select {
	case <-d.Done():
	default: // A's call returned before the fault ended
		err, returned = <-ret, true
		if err == nil {
			d.Cancel() // a no-op once the fault has acted
		} else {
			faultEnded(scene, d, fmt.Sprintf("the end of the fault on A's %s after A's error %v", m, err))
		}
	}
	res := d.Result()
	if res.Dropped {
		// The reply is lost as the claims need it only with A's connection:
		// closed by the proxy, seen closed by A's client.
		if werr := lr.a.c.WaitStateSince(mark, zk.StateDisconnected, within); werr != nil {
			notShown(t, id, "the proxy reports the reply to A's %s dropped (xid=%d err=%d: %s), but A's connection did not close: %v; the proxy has %d connection(s) open; A's call returned: %v", jute.OpName(res.Op), res.Xid, res.Err, res.Reason, werr, lr.proxy.Stats().Open, returned)
		}
		lr.a.a.info("disconnected: the proxy closed A's connection with the reply")
	}
	if !returned {
		err = wait.ReceiveSeen(scene, lostCallWithin, "the return of A's call after the fault on its "+m.String(), ret, func() string {
			return fmt.Sprintf("A's call pending; the fault: %+v; A's session states since it was armed: %v", res, lr.a.c.States()[mark:])
		})
	}
	if !res.Dropped {
		lr.sessionAfter = lr.a.c.SessionID()
		lr.a.a.info("the fault ended without dropping (%s); session 0x%x", res.Reason, lr.sessionAfter)
		return res, err
	}
	if werr := lr.a.c.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); werr != nil {
		notShown(t, id, "after the lost reply A did not reconnect: %v", werr)
	}
	lr.sessionAfter = lr.a.c.SessionID()
	lr.a.a.info("reconnected: session 0x%x (before 0x%x)", lr.sessionAfter, lr.sessionBefore)
	return res, err
}

// lostCallWithin bounds the return of A's call once a fault has ended: the
// calls run under lockCtx (3 × within), and the recipe returns at most
// cleanupGrace (3 s) after its context ends.
const lostCallWithin = 4 * within

// faultEnded waits until the lost-reply fault d has acted (or given up),
// and fails t naming what it waited for and the fault's state otherwise.
// A fault that never acted is cancelled: it must not outlive the wait.
func faultEnded(t zkserver.TB, d *faultproxy.Drop, what string) faultproxy.DropResult {
	t.Helper()
	defer d.Cancel() // a no-op once the fault has acted
	wait.For(t, within, what, func() (bool, string) {
		select {
		case <-d.Done():
			return true, ""
		default:
			return false, fmt.Sprintf("%+v", d.Result())
		}
	})
	return d.Result()
}

// loseRequest runs call while the request m picks never reaches the
// server: the proxy holds A's traffic to the server until the request is
// among the held bytes, then cuts A's connection (the held bytes go with
// it), runs cut (A is cut off now), and heals. It returns call's error.
func (lr *lostReply) loseRequest(t zkserver.TB, id string, m faultproxy.Match, call func() error, cut func()) error {
	t.Helper()
	d := lr.proxy.LoseReply(m)
	mark := lr.a.c.Mark()
	lr.sessionBefore = lr.a.c.SessionID()
	lr.a.a.info("the proxy will lose A's %s before the server sees it", m)
	lr.proxy.Hold(faultproxy.Up)
	res := make(chan error, 1)
	go func() { res <- call() }()
	// As in loseReply, the fault and A's reconnection are claim id's scene.
	scene := judged(t, id, notShown)
	wait.For(scene, within, "the proxy to hold A's "+m.String(), func() (bool, string) {
		r := d.Result()
		return r.Xid != 0, fmt.Sprintf("%+v", r)
	})
	lr.proxy.Cut(faultproxy.BothEnds)
	cut()
	lr.proxy.Heal()
	err := wait.ReceiveSeen(scene, within, "the return of A's call after the heal", res, func() string {
		return fmt.Sprintf("A's call pending; A's session states since the fault was armed: %v", lr.a.c.States()[mark:])
	})
	if werr := lr.a.c.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); werr != nil {
		notShown(t, id, "after the lost request A did not reconnect: %v", werr)
	}
	lr.sessionAfter = lr.a.c.SessionID()
	return err
}

// lostCreate is the lost-reply experiment on the create of an acquisition.
type lostCreate struct {
	*lostReply
	guid      string
	createErr error
	drop      faultproxy.DropResult
}

// runLostCreate: A's acquisition creates its candidate, the proxy loses the
// create's successful reply, and A reconnects. If the fault did not happen
// as the claims need it (the proxy forwarded the reply, or A's create
// returned anything but a connection loss), the proof of claim id did not
// get as far as its observation: it stops, not shown.
func runLostCreate(t zkserver.TB, id string) *lostCreate {
	t.Helper()
	return loseCreate(t, id, newLostReply(t, joinOpts{}))
}

// loseCreate is runLostCreate on an experiment already set up.
func loseCreate(t zkserver.TB, id string, lr *lostReply) *lostCreate {
	t.Helper()
	lc := &lostCreate{lostReply: lr}
	phase(t, "the proxy loses the reply to A's create under %s", lc.parent)
	ctx := lockCtx(t)
	lc.drop, lc.createErr = lc.loseReply(t, id, faultproxy.Match{Ops: createOps, Under: lc.parent}, func() error {
		_, err := lc.a.l.Acquire(ctx)
		return err
	})
	if lc.createErr == nil {
		notShown(t, id, "A's create: got nil error; want connection loss (the proxy forwarded the reply: %s)", lc.drop.Reason)
	}
	ce, ok := errors.AsType[*lock.CreateError](lc.createErr)
	if !ok || !errors.Is(ce, zk.ErrConnectionClosed) {
		notShown(t, id, "A's create: got %v; want connection loss (fault: %+v)", lc.createErr, lc.drop)
	}
	lc.guid = ce.GUID
	return lc
}

// nodesWithGUID is what O sees directly on the server: the children of
// the root that carry the GUID, with their owners (ephemeralOwner).
func (lc *lostCreate) nodesWithGUID(t zkserver.TB) map[string]int64 {
	t.Helper()
	return carrying(t, lc.O, lc.o, lc.parent, lc.guid)
}

// TestR1_ProxyDropsTheSuccessfulCreateReply: a create can succeed on the
// server while its client never learns the name the server gave the node
// (claim R1, §4 ¶3).
//
// The proxy records the xid of A's create, lets it through, recognises the
// reply with that xid and err=0, discards it and closes A's connection. A's
// acquisition returns a *lock.CreateError wrapping a connection loss (and
// fails at once if the create returned anything else); O sees the node on
// the server. Then the same matcher is armed for two creates of A's that
// fail (the node exists; its parent is missing): it selects each, and the
// reply passes with its error on the same connection, so what is lost is
// the successful reply, not any reply to a create.
func TestR1_ProxyDropsTheSuccessfulCreateReply(t *testing.T) {
	parallel(t)
	claim(t, "R1")
	lc := runLostCreate(t, "R1")
	seen := lc.nodesWithGUID(t)
	evidence(t, "the proxy dropped the reply xid=%d op=%s zxid=%#x err=%d (dropped=%v); A's create returned %v; O sees %d node(s) with A's GUID: %v", lc.drop.Xid, jute.OpName(lc.drop.Op), lc.drop.Zxid, lc.drop.Err, lc.drop.Dropped, lc.createErr, len(seen), seen)
	// What the proxy dropped is the harness's part: a reply it did not
	// drop, or one that did not report success, is a fault of the proxy,
	// and the proof then has nothing to say about R1.
	if !lc.drop.Dropped || lc.drop.Err != 0 || lc.drop.Xid <= 0 {
		brokenCheck(t, "R1", "got drop result %+v; want a dropped reply with err=0 and a positive xid", lc.drop)
	}
	if len(seen) != 1 {
		refuted(t, "R1", "the server holds %d nodes with A's GUID; want 1 (the create succeeded)", len(seen))
	}
	phase(t, "the same matcher on A's creates that fail: their replies carry an error and pass")
	taken := lc.parent + "/taken"
	createAs(t, lc.O, lc.o, taken)
	for _, f := range []struct {
		why, path string
		want      error
		code      int32 // the reply header's err, as the server's KeeperException.Code numbers it
	}{
		{"the node exists", taken, zk.ErrNodeExists, -110},
		{"its parent is missing", lc.parent + "/missing/child", zk.ErrNoNode, -101},
	} {
		accepted := lc.proxy.Stats().Accepted
		res, err := lc.loseReply(t, "R1", faultproxy.Match{Ops: createOps, Under: lc.parent}, func() error {
			lc.a.a.invoke("create %s (%s)", f.path, f.why)
			_, err := lc.a.c.Create(f.path, nil, 0, zk.WorldACL(zk.PermAll))
			lc.a.a.fail("%v", err)
			return err
		})
		evidence(t, "A's create of %s (%s) matched the same fault: xid=%d op=%s err=%d dropped=%v (%s); A got %v; the proxy accepted %d connection(s) before, %d after", path.Base(f.path), f.why, res.Xid, jute.OpName(res.Op), res.Err, res.Dropped, res.Reason, err, accepted, lc.proxy.Stats().Accepted)
		if res.Xid <= 0 || res.Path != f.path {
			notShown(t, "R1", "the matcher did not select A's create of %s (drop result %+v); the failing reply was not put to it", f.path, res)
		}
		if res.Dropped || res.Err != f.code || !errors.Is(err, f.want) {
			refuted(t, "R1", "A's create of %s (%s): got %v, drop result dropped=%v err=%d; want %v passed through with err=%d (only a successful reply is lost)", f.path, f.why, err, res.Dropped, res.Err, f.want, f.code)
		}
		if n := lc.proxy.Stats().Accepted; n != accepted || lc.sessionAfter != lc.sessionBefore {
			refuted(t, "R1", "A's failed create of %s cost a connection: got %d accepted (was %d), session 0x%x (was 0x%x); want the same connection", f.path, n, accepted, lc.sessionAfter, lc.sessionBefore)
		}
	}
}

// createAs creates the persistent node p as actor a.
func createAs(t zkserver.TB, c *zkclient.Client, a actor, p string) {
	t.Helper()
	a.invoke("create %s", p)
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		a.fail("%v", err)
		t.Fatalf("create %s: %v", p, err)
	}
	a.ok("")
}

// TestR2_SessionSurvivesTheLostReply: after the lost reply A reconnects
// through the proxy and its session id is unchanged (claim R2, §4 ¶3).
func TestR2_SessionSurvivesTheLostReply(t *testing.T) {
	parallel(t)
	claim(t, "R2")
	lc := runLostCreate(t, "R2")
	accepted := lc.proxy.Stats().Accepted
	evidence(t, "A's session before the create 0x%x, after reconnecting 0x%x; the proxy accepted %d connections", lc.sessionBefore, lc.sessionAfter, accepted)
	// A reconnection through the proxy is the scenario, not the claim: it
	// is checked first, so a run without one is not shown.
	if accepted < 2 {
		brokenCheck(t, "R2", "the proxy accepted %d connections; want a reconnection (>= 2)", accepted)
	}
	if lc.sessionAfter != lc.sessionBefore || lc.sessionAfter == 0 {
		refuted(t, "R2", "session 0x%x after reconnecting; want the same 0x%x", lc.sessionAfter, lc.sessionBefore)
	}
}

// TestR3_RecoverFindsExactlyTheServersNode: recovery in the same session
// with the same GUID keeps the one child that carries the GUID and is owned
// by this session; it is the node the server created, as a second client
// sees it directly, and the proxy never read the reply's path, so the
// answer cannot come from the fault injector (claim R3, §4 ¶2).
//
// After the lost create reply, A's session also creates two look-alikes
// whose names merely contain the GUID (<guid>x-lock-… and x<guid>-lock-…):
// carrying the GUID means the name <guid>-lock-<10 digits>. A's Recover
// with the GUID adopts the server's node and, as Acquire would, holds it
// (no one else is queued); O sees that node with A's session as its owner,
// and the look-alikes left alone.
func TestR3_RecoverFindsExactlyTheServersNode(t *testing.T) {
	parallel(t)
	claim(t, "R3")
	lc := runLostCreate(t, "R3")
	servers := lc.nodesWithGUID(t)
	for _, name := range []string{lc.guid + "x" + fence.LockInfix, "x" + lc.guid + fence.LockInfix} {
		lc.a.a.invoke("create %s/%s (ephemeral sequential, a look-alike)", lc.parent, name)
		made, err := lc.a.c.Create(lc.parent+"/"+name, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			notShown(t, "R3", "A's look-alike %s: %v", name, err)
		}
		lc.a.a.ok("%s", path.Base(made))
	}
	ctx := lockCtx(t)
	h, err := lc.a.l.Recover(ctx, lc.guid)
	if err != nil {
		refutedNow(t, "R3", "Recover(%s) beside two look-alikes of A's session: got %v; want the server's node %v adopted", lc.guid, err, servers)
	}
	seen := lc.nodesWithGUID(t)
	evidence(t, "Recover(%s) adopted %s and holds with token %v, beside two look-alikes of the same session; O sees %v (owner = A's session 0x%x)", lc.guid, path.Base(h.Path), h.Token, seen, lc.sessionAfter)
	if len(servers) != 1 || servers[path.Base(h.Path)] != lc.sessionAfter || len(seen) != 3 {
		refuted(t, "R3", "recovered %s; O saw %v before the look-alikes and sees %v now; want the one node the server made, owned by A's session 0x%x, and the two look-alikes left", path.Base(h.Path), servers, seen, lc.sessionAfter)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR3_RecoverSyncsBeforeListing: R3 on three servers, where the server
// A reconnects to after the lost reply may not have applied the create yet
// (claim R3, §4 ¶2; the sync of §2 ¶1). The reply was lost, so A's session
// has not seen the create's zxid and a follower that lacks the node takes
// the session all the same; a listing there misses the node, and Recover
// would report it missing while it exists. Recover syncs first: the
// leader's answer to the sync follows the create's COMMIT on the
// follower's stream, so the listing after it has the node.
//
// A creates through a proxy in front of one follower (fresh), which loses
// the successful reply; A's next dial lands on the other follower
// (lagging). The link proxy from the leader to the lagging follower lets
// the create's proposal through and holds its COMMIT and every later
// packet but PINGs and REVALIDATEs (faultproxy.HoldCommit), so the lagging
// follower has logged the create, has not applied it, and revalidates A's
// session with the leader. The window is shown open first: A's own plain
// listing there lacks the node that O sees on the leader. Then Recover
// must not return while the COMMIT is held, its sync's answer (the
// leader's SYNC) is seen held behind the COMMIT, and after the release
// Recover adopts the node O sees.
func TestR3_RecoverSyncsBeforeListing(t *testing.T) {
	parallel(t)
	zkserver.RequireFaults(t)
	claim(t, "R3")
	c := leaseTrio(t)
	leader, fs := c.Leader(), c.Followers()
	fresh, lagging := fs[0], fs[1]
	route := &mover{dials: map[string]int{}}
	lr := newLostReplyAt(t, fresh, leader, joinOpts{client: []zkclient.Option{zkclient.WithDialer(route.dial)}})
	t.Logf("A creates through a proxy in front of %s and reconnects to %s; O reads on the leader %s", fresh.Label, lagging.Label, leader.Label)
	hold := c.links.HoldCommit(leader.ID, lagging.ID, faultproxy.TxnMatch{Types: createOps, Under: lr.parent, Session: lr.a.c.SessionID()})
	route.redirect(lagging.Client)
	lc := loseCreate(t, "R3", lr)
	select {
	case <-hold.Holding():
	case <-time.After(within):
		notShown(t, "R3", "the COMMIT of A's create was not held on its way to %s within %v: %+v", lagging.Label, within, hold.Result())
	}
	created := hold.Result()
	t.Logf("nemesis observes: %s got the proposal of %s at zxid %#x; its COMMIT is held", lagging.Label, path.Base(created.Path), created.Zxid)

	phase(t, "the window: %s has A's session and lacks A's node", lagging.Label)
	lc.a.a.info("its dialer sent %d connection(s) to %s since the reply was lost", route.dialsTo(lagging.Client), lagging.Label)
	st, err := lagging.Srvr()
	if err != nil {
		t.Fatalf("srvr %s: %v", lagging.Label, err)
	}
	seen := lc.nodesWithGUID(t)
	lc.a.a.invoke("children %s (plain, on %s)", lc.parent, lagging.Label)
	plain, _, err := lc.a.c.Children(lc.parent)
	if err != nil {
		t.Fatalf("A children: %v", err)
	}
	lc.a.a.ok("%v", plain)
	if route.dialsTo(lagging.Client) == 0 || lc.sessionAfter != lc.sessionBefore || seen[path.Base(created.Path)] != lc.sessionAfter ||
		slices.Contains(plain, path.Base(created.Path)) || st.Zxid >= created.Zxid {
		notShown(t, "R3", "the window is not open: A's dials to %s %d, session 0x%x (before 0x%x); O sees %v; A's plain listing there %v; its zxid %#x (the create's %#x); want A on %s in its session, lacking the node O sees",
			lagging.Label, route.dialsTo(lagging.Client), lc.sessionAfter, lc.sessionBefore, seen, plain, st.Zxid, created.Zxid, lagging.Label)
	}

	phase(t, "A recovers on %s while the COMMIT is held", lagging.Label)
	type outcome struct {
		h   *lock.Held
		err error
	}
	ctx := lockCtx(t)
	res := make(chan outcome, 1)
	lc.a.a.invoke("recover guid=%s", lc.guid)
	go func() { h, err := lc.a.l.Recover(ctx, lc.guid); res <- outcome{h, err} }()
	var early *outcome
	wait.For(t, within, "A's Recover to return, or the leader's SYNC to be held behind the COMMIT", func() (bool, string) {
		select {
		case o := <-res:
			early = &o
			return true, ""
		default:
		}
		r := hold.Result()
		return r.Held[jute.QuorumSync] > 0, "held: " + faultproxy.Kinds(r.Held)
	})
	if early != nil {
		lc.a.a.fail("%s, %v", holdOf(early.h), early.err)
		refutedNow(t, "R3", "Recover returned %s, %v (missing: %v) on %s while the COMMIT of the node O sees (%s) was held there (held: %s): it listed what the follower had without waiting for the leader's commits",
			holdOf(early.h), early.err, errors.Is(early.err, lock.ErrMissing), lagging.Label, path.Base(created.Path), faultproxy.Kinds(hold.Result().Held))
	}
	waiting := hold.Result()
	lc.a.a.info("recover pending: the leader's SYNC for it is held behind the COMMIT (held: %s)", faultproxy.Kinds(waiting.Held))

	phase(t, "the COMMIT and what followed it reach %s", lagging.Label)
	hold.Release()
	t.Logf("nemesis release-commit %d->%d: %s delivered in order", leader.ID, lagging.ID, faultproxy.Kinds(hold.Result().Held))
	var o outcome
	select {
	case o = <-res:
	case <-time.After(within):
		refutedNow(t, "R3", "Recover did not return within %v of the release", within)
	}
	if o.err != nil {
		lc.a.a.fail("%v", o.err)
		refutedNow(t, "R3", "Recover after the release: %v; want the node %s", o.err, path.Base(created.Path))
	}
	lc.a.a.ok("%s", path.Base(o.h.Path))
	after := lc.nodesWithGUID(t)
	evidence(t, "after the lost create reply A reconnected in its session 0x%x to %s, which had logged the create at zxid %#x but not applied it (its zxid %#x; A's plain listing there: %v; let past the hold: %s); "+
		"Recover did not return while the COMMIT was held, its sync's answer was held behind it (%s), and after the release Recover adopted %s; O sees %v",
		lc.sessionAfter, lagging.Label, created.Zxid, st.Zxid, plain, faultproxy.Kinds(waiting.Passed), faultproxy.Kinds(waiting.Held), path.Base(o.h.Path), after)
	if path.Base(o.h.Path) != path.Base(created.Path) || after[path.Base(o.h.Path)] != lc.sessionAfter {
		refuted(t, "R3", "Recover adopted %s; want %s, the node O sees owned by A's session 0x%x (O sees %v)", path.Base(o.h.Path), path.Base(created.Path), lc.sessionAfter, after)
	}
	if err := o.h.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR4_BlindRetryMakesASecondNodeAndRecoveryRefuses: retrying the same
// create after the lost reply makes a second node, because sequential
// creates are not deduplicated by name; recovery then finds two matches in
// this session and refuses, naming both and deleting neither (claim R4, §4 ¶5).
func TestR4_BlindRetryMakesASecondNodeAndRecoveryRefuses(t *testing.T) {
	parallel(t)
	claim(t, "R4")
	lc := runLostCreate(t, "R4")
	blindRetry(t, lc)
	before := lc.nodesWithGUID(t)
	if len(before) != 2 {
		refutedNow(t, "R4", "%d nodes carry the GUID after the retry; want 2", len(before))
	}
	lc.a.a.invoke("recover guid=%s", lc.guid)
	h, err := lc.a.l.Recover(lockCtx(t), lc.guid)
	lc.a.a.fail("%v", err)
	after := lc.nodesWithGUID(t)
	evidence(t, "after a blind retry O sees %d nodes with the GUID; Recover returned hold=%v err=%v; O then sees %d", len(before), h != nil, err, len(after))
	if h != nil || !errors.Is(err, lock.ErrAmbiguous) {
		refuted(t, "R4", "Recover returned %s, %v; want lock.ErrAmbiguous", holdOf(h), err)
	}
	for name := range before {
		if err == nil || !strings.Contains(err.Error(), name) {
			refuted(t, "R4", "the ambiguity error %q does not name %s", err, name)
		}
	}
	if len(after) != 2 {
		refuted(t, "R4", "recovery left %d nodes; want both still there", len(after))
	}
}

// blindRetry is A's application retrying the create with the same GUID, as
// the article's control run does.
func blindRetry(t zkserver.TB, lc *lostCreate) string {
	t.Helper()
	prefix := lc.parent + "/" + lc.guid + fence.LockInfix
	lc.a.a.invoke("create %s EPHEMERAL_SEQUENTIAL (blind retry)", prefix)
	p, err := lc.a.c.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("retry create: %v", err)
	}
	lc.a.a.ok("%s", path.Base(p))
	return path.Base(p)
}

// TestR5_NoMatchIsMissingNotANewAcquisition: when no node carries the GUID,
// recovery says the node is missing and creates nothing; it never turns
// into a new acquisition by itself (claim R5, §4 ¶2).
//
// Through the proxy, A's create is lost before the server sees it (the
// proxy holds it, then cuts A's connection): A sees the same connection
// loss as with a lost reply, but O sees no node. Recover returns
// ErrMissing and the parent stays empty.
func TestR5_NoMatchIsMissingNotANewAcquisition(t *testing.T) {
	parallel(t)
	claim(t, "R5")
	lr := newLostReply(t, joinOpts{})
	ctx := lockCtx(t)
	// A first acquisition checks the parent before its create; it is made
	// before the fault, so the held traffic is the create alone.
	h, err := lr.a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("A: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	createErr := lr.loseRequest(t, "R5", faultproxy.Match{Ops: createOps, Under: lr.parent}, func() error {
		_, err := lr.a.l.Acquire(ctx)
		return err
	}, func() {})
	ce, ok := errors.AsType[*lock.CreateError](createErr)
	if !ok || !errors.Is(ce, zk.ErrConnectionClosed) {
		notShown(t, "R5", "A's create: got %v; want connection loss (the proxy lost the request)", createErr)
	}
	lr.a.a.invoke("recover guid=%s", ce.GUID)
	h, err = lr.a.l.Recover(ctx, ce.GUID)
	lr.a.a.fail("%v", err)
	kids := listChildren(t, lr.O, lr.parent)
	evidence(t, "the create never reached the server; Recover(%s) returned hold=%v err=%v; O sees children %v", ce.GUID, h != nil, err, kids)
	if h != nil || !errors.Is(err, lock.ErrMissing) {
		refuted(t, "R5", "got %s, %v; want lock.ErrMissing", holdOf(h), err)
	}
	if len(kids) != 0 {
		refuted(t, "R5", "recovery left children %v; want none created", kids)
	}
}

// TestR6_ANodeOfAnotherSessionIsNotAdopted: a node that carries the GUID
// but is owned by another session is never recovered (claim R6, §4 ¶2).
//
// After the lost create reply, B (another session) creates a node that
// carries A's GUID. Recover adopts A's own node, not B's. Once A has
// released, only B's node carries the GUID: Recover returns ErrMissing,
// names B's node as not adopted, and B's node is still there.
func TestR6_ANodeOfAnotherSessionIsNotAdopted(t *testing.T) {
	parallel(t)
	claim(t, "R6")
	lc := runLostCreate(t, "R6")
	ctx := lockCtx(t)
	b := lc.join("B", joinOpts{})
	prefix := lc.parent + "/" + lc.guid + fence.LockInfix
	b.a.invoke("create %s EPHEMERAL_SEQUENTIAL (B's session %s, A's GUID)", prefix, b.c.SessionHex())
	bp, err := b.c.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("B create: %v", err)
	}
	b.a.ok("%s", path.Base(bp))
	h, err := lc.a.l.Recover(ctx, lc.guid)
	if err != nil {
		refutedNow(t, "R6", "Recover with both sessions' nodes present: %v", err)
	}
	if h.Path == bp {
		refuted(t, "R6", "A adopted B's node %s", bp)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	h2, err := lc.a.l.Recover(ctx, lc.guid)
	seen := lc.nodesWithGUID(t)
	evidence(t, "A adopted its own %s, not B's %s; with only B's left, Recover returned hold=%v err=%v; O sees %v", path.Base(h.Path), path.Base(bp), h2 != nil, err, seen)
	if h2 != nil || !errors.Is(err, lock.ErrMissing) || !strings.Contains(err.Error(), path.Base(bp)) {
		refuted(t, "R6", "got %s, %v; want lock.ErrMissing naming B's node %s as not adopted", holdOf(h2), err, path.Base(bp))
	}
	if owner, ok := seen[path.Base(bp)]; !ok || owner != b.c.SessionID() {
		refuted(t, "R6", "B's node %s is gone or changed owner (%v)", bp, seen)
	}
}

// TestR7_ProxyReadsHeadersAndTheCreateRequestOnly: the proxy learns the
// target xid from the request header and the CreateRequest's path, and the
// outcome from the reply header (xid, zxid, err); it has no decoder for the
// create's response body, so recovery cannot learn the path from it. The
// first frame of each connection, the session handshake, passes unread
// (claim R7, §4 ¶4). The frame decoders are fuzzed in
// internal/jute, and internal/faultproxy's TestZKNeverDecodesCreateReplyBody
// and TestZKFirstFrameIsNeverParsed check both properties byte by byte.
//
// Here, end to end: the dropped reply belongs to the create, on A's first
// connection, with a small request xid (a handshake read as a header would
// have shifted every later frame). The path in the proxy's record is the
// prefix A's create sent, never the name the server gave the node, and
// nothing else the proxy reports contains that name's sequence suffix.
func TestR7_ProxyReadsHeadersAndTheCreateRequestOnly(t *testing.T) {
	parallel(t)
	claim(t, "R7")
	lc := runLostCreate(t, "R7")
	seen := lc.nodesWithGUID(t)
	if len(seen) != 1 {
		notShown(t, "R7", "O sees %v; want the one created node", seen)
	}
	var created string
	for name := range seen {
		created = name
	}
	report := fmt.Sprintf("%+v", lc.drop)
	sent := lc.parent + "/" + lc.guid + fence.LockInfix
	evidence(t, "the proxy's record names the path %s, the prefix A sent, not the node %s the server made; whole record: %s", path.Base(lc.drop.Path), created, report)
	if lc.drop.Path != sent {
		refuted(t, "R7", "the proxy's record names path %q; want the prefix A's create sent, %q", lc.drop.Path, sent)
	}
	if !jute.IsCreate(lc.drop.Op) {
		refuted(t, "R7", "the dropped reply belongs to op %s; want a create", jute.OpName(lc.drop.Op))
	}
	if lc.drop.Conn != 1 {
		brokenCheck(t, "R7", "the drop happened on connection #%d; want #1 (the create's own connection)", lc.drop.Conn)
	}
	// go-zookeeper numbers requests from 1 per session; the handshake has
	// no xid.
	if lc.drop.Xid < 1 || lc.drop.Xid > 10 {
		refuted(t, "R7", "target xid %d; want a small request xid", lc.drop.Xid)
	}
	if suffix := created[strings.LastIndex(created, fence.LockInfix):]; strings.Contains(report, suffix) {
		refuted(t, "R7", "the proxy's report %s contains the created node's sequence suffix %s: it read the reply body", report, suffix)
	}
}

// TestR8_AfterExpiryTheOldNodeGivesNoCandidacy: once A's session has
// expired, its node is gone and nothing of the old acquisition counts: the
// Locker pinned to the old session refuses to release, recover or acquire
// in the session the client opened by itself (lock.ErrSessionChanged, each
// time); a new Locker in the new session finds no node for the old GUID
// (lock.ErrMissing); and a new acquisition uses a GUID other than the old
// one (claim R8, §4 ¶5).
//
// Dedicated server with a short tick; A holds through a client proxy with
// a short session. The proxy cuts A off until O sees the server delete A's
// node, then lets A through: A's client sees Expired and a new session.
func TestR8_AfterExpiryTheOldNodeGivesNoCandidacy(t *testing.T) {
	parallel(t)
	claim(t, "R8")
	s := expiryServer(t)
	r := newRoom(t, []string{s.Client})
	O, ctx := r.O, r.ctx
	p := zkserver.ClientProxy(t, "A-proxy", s)
	a := r.join("A", joinOpts{via: []string{p.Addr()}, client: []zkclient.Option{zkclient.WithSessionTimeout(expirySessionTimeout)}})
	h := a.acquire()
	_, _, gone, err := O.ExistsW(h.Path)
	if err != nil {
		t.Fatal(err)
	}
	phase(t, "A is cut off; its session expires on the server")
	old, mark := a.c.SessionID(), a.c.Mark()
	p.Cut(faultproxy.BothEnds)
	t.Cleanup(p.Heal)
	ev := wait.Receive(t, 10*expirySessionTimeout, "R8: the deletion of A's node", gone)
	r.o.ok("event %v on %s: A's node deleted by the server", ev.Type, ev.Path)
	p.Heal()
	for _, st := range []zk.State{zk.StateExpired, zk.StateHasSession} {
		if err := a.c.WaitStateSince(mark, st, zkclient.ConnectWithin); err != nil {
			notShown(t, "R8", "%v", err)
		}
	}
	a.a.info("expired; the client opened session %s by itself (old 0x%x)", a.c.SessionHex(), old)

	phase(t, "the old Locker in the new session")
	errs := map[string]error{"release": h.Release(ctx)}
	_, errs["recover"] = a.l.Recover(ctx, h.GUID)
	_, errs["acquire"] = a.l.Acquire(ctx)
	for _, what := range []string{"release", "recover", "acquire"} {
		a.a.fail("%s with the old Locker: %v", what, errs[what])
		if !errors.Is(errs[what], lock.ErrSessionChanged) {
			refuted(t, "R8", "%s with the old Locker returned %v; want lock.ErrSessionChanged", what, errs[what])
		}
	}
	phase(t, "a new Locker in the new session")
	a.relock()
	a.a.invoke("recover guid=%s (the old acquisition's GUID)", h.GUID)
	hr, rerr := a.l.Recover(ctx, h.GUID)
	a.a.fail("%v", rerr)
	if hr != nil || !errors.Is(rerr, lock.ErrMissing) {
		refuted(t, "R8", "the new session's Recover of the old GUID returned %s, %v; want lock.ErrMissing (the old node went with its session)", holdOf(hr), rerr)
	}
	h2, err := a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("new acquisition: %v", err)
	}
	ok, st := statOf(t, O, h2.Path)
	oldLeft, _ := statOf(t, O, h.Path)
	evidence(t, "after expiry the old Locker refused release/recover/acquire (%v, %v, %v); in the new session, Recover of the old GUID: %v; a new acquisition holds %s with GUID %s (old %s), owner 0x%x; the old node exists: %v", errs["release"], errs["recover"], errs["acquire"], rerr, path.Base(h2.Path), h2.GUID, h.GUID, st.EphemeralOwner, oldLeft)
	if h2.GUID == h.GUID {
		refuted(t, "R8", "the new acquisition reused GUID %s; want a new one", h.GUID)
	}
	if !ok || st.EphemeralOwner != a.c.SessionID() || oldLeft {
		refuted(t, "R8", "new node owner 0x%x (want the new session %s); old node exists: %v", st.EphemeralOwner, a.c.SessionHex(), oldLeft)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR3_ReleaseLooksAgainAfterALostDelete: the rule of R3 applied to the
// delete of a Release: after a connection loss the outcome is unknown, and
// the same session looks again at its own node before deciding (claim R3,
// §4 ¶2; issue 13's lost delete reply). Release reports success only once
// its node is known gone, deletes it again if it is still there, leaves a
// node of another session alone, and otherwise says that the outcome is
// unknown, which the caller settles by closing the session.
//
// A holds through the proxy; B waits on A directly. Four runs:
//   - the proxy loses the successful reply to A's delete: A's Release sees
//     a connection loss, looks again after the reconnect, finds its node
//     gone and returns nil; B holds on its own node;
//   - the delete never reaches the server (O still sees A's node while A
//     is cut off): Release finds its node still there after the reconnect
//     and deletes it again; B holds on its own node;
//   - the delete never reaches the server and A stays cut off: Release
//     returns lock.ErrOutcomeUnknown, and truly so (A's node is still there
//     and B still waits); A closes its session, and B holds;
//   - the reply is lost and, before A looks again, X (another session)
//     creates a node at A's exact path: Release leaves X's node alone and
//     returns lock.ErrLostCandidacy.
func TestR3_ReleaseLooksAgainAfterALostDelete(t *testing.T) {
	parallel(t)
	claim(t, "R3")
	t.Run("the delete took effect and its reply was lost", func(t *testing.T) {
		lr, ha, b, pb := releaseScene(t, joinOpts{})
		res, err := lr.loseReply(t, "R3", faultproxy.Match{Ops: deleteOps, Path: ha.Path}, func() error { return ha.Release(lockCtx(t)) })
		if !res.Dropped {
			notShown(t, "R3", "the proxy did not lose the delete's reply: %+v", res)
		}
		releaseOutcome(t, lr, ha, b, pb, err, fmt.Sprintf("the reply to A's delete (xid=%d, err=%d) was lost", res.Xid, res.Err))
	})
	t.Run("the delete never reached the server", func(t *testing.T) {
		lr, ha, b, pb := releaseScene(t, joinOpts{})
		var stillThere bool
		err := lr.loseRequest(t, "R3", faultproxy.Match{Ops: deleteOps, Path: ha.Path}, func() error { return ha.Release(lockCtx(t)) }, func() {
			stillThere, _ = statOf(t, lr.O, ha.Path)
			lr.o.info("A is cut off; A's node %s exists: %v", path.Base(ha.Path), stillThere)
		})
		if !stillThere {
			notShown(t, "R3", "A's node was gone while A was cut off; the request was not lost")
		}
		releaseOutcome(t, lr, ha, b, pb, err, "A's delete never reached the server (O saw the node while A was cut off)")
	})
	t.Run("the outcome stays unknown while A is cut off", releaseOutcomeUnknown)
	t.Run("another session's node took the path", releaseLeavesAnotherSessionsNode)
	t.Run("an abandoned candidate's delete never reached the server", abandonedCandidateLooksAgain)
}

// abandonedCandidateLooksAgain: A gives up waiting behind H (its context
// ends), and the delete that removes its candidate never reaches the
// server. The recipe deletes an abandoned candidate as Release deletes a
// hold: it looks again after the reconnect and deletes again, so no phantom
// candidate stays in front of the next waiter.
func abandonedCandidateLooksAgain(t *testing.T) {
	lr := newLostReply(t, joinOpts{})
	hh := lr.join("H", joinOpts{}).acquire()
	acq := lr.a.acquireInBackground().waitsOn(nodeOf(hh))
	aNode := lr.parent + "/" + acq.own
	var stillThere bool
	err := lr.loseRequest(t, "R3", faultproxy.Match{Ops: deleteOps, Under: lr.parent}, func() error {
		lr.a.a.info("gives up waiting")
		acq.cancel()
		<-acq.done // loseRequest bounds this call
		return acq.err
	}, func() {
		stillThere, _ = statOf(t, lr.O, aNode)
		lr.o.info("A is cut off; A's candidate %s exists: %v", path.Base(aNode), stillThere)
	})
	if !stillThere {
		notShown(t, "R3", "A's candidate %q was gone while A was cut off; the delete was not lost", aNode)
	}
	left, _ := statOf(t, lr.O, aNode)
	evidence(t, "A gave up (%v); its cleanup delete never reached the server; after the reconnect A's candidate %s exists: %v", err, path.Base(aNode), left)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("R3: A's acquisition returned %v; want context.Canceled", err)
	}
	if left {
		refuted(t, "R3", "A gave up but its candidate %s is still there: a phantom candidate in front of the next waiter", aNode)
	}
	if err := hh.Release(lr.ctx); err != nil {
		t.Errorf("H: %v", err)
	}
}

// releaseScene: A holds through the lost-reply proxy, B waits on A directly.
func releaseScene(t *testing.T, aOpts joinOpts) (*lostReply, *lock.Held, *contender, *acquisition) {
	t.Helper()
	lr := newLostReply(t, aOpts)
	ha := lr.a.acquire()
	b := lr.join("B", joinOpts{})
	return lr, ha, b, b.acquireInBackground().waitsOn(nodeOf(ha))
}

// releaseOutcome checks a Release that met a lost delete: it succeeded,
// A's node is gone, and B holds on its own node.
func releaseOutcome(t *testing.T, lr *lostReply, ha *lock.Held, b *contender, pb *acquisition, releaseErr error, what string) {
	t.Helper()
	aLeft, _ := statOf(t, lr.O, ha.Path)
	if releaseErr != nil {
		refuted(t, "R3", "Release returned %v; want nil once the own node is known gone", releaseErr)
	}
	if aLeft {
		refutedNow(t, "R3", "A's node %s is still there after Release returned %v: a phantom holder in front of B", ha.Path, releaseErr)
	}
	hb, berr := pb.resultOr(refutedNow)
	var bOwner int64
	if hb != nil {
		_, st := statOf(t, lr.O, hb.Path)
		bOwner = st.EphemeralOwner
	}
	evidence(t, "%s; A's Release returned %v in session 0x%x (before 0x%x); A's node is gone; B holds: %v (%v), its node owned by 0x%x", what, releaseErr, lr.sessionAfter, lr.sessionBefore, hb != nil, berr, bOwner)
	if berr != nil || bOwner != b.c.SessionID() {
		refuted(t, "R3", "B did not hold on its own node after A's Release: %v, owner 0x%x", berr, bOwner)
	}
}

// releaseOutcomeUnknown: A's delete never reaches the server, and A stays
// cut off until its Release's context ends. What Release says must match
// the server: A's node is still there, so success would make it a phantom
// holder. Nobody acts after that: once A is back in its session, the
// recipe deletes the node by itself (Held.Gone), and B holds.
func releaseOutcomeUnknown(t *testing.T) {
	lr, ha, b, pb := releaseScene(t, joinOpts{})
	returned := make(chan error, 1)
	var releaseErr error
	var aLeft bool
	var bWaits attempt
	lr.loseRequest(t, "R3", faultproxy.Match{Ops: deleteOps, Path: ha.Path}, func() error {
		// A's context ends while A is cut off, well inside its session.
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		err := ha.Release(ctx)
		returned <- err
		return err
	}, func() {
		// Release returns when its context ends, whatever the server does:
		// R3's own promise.
		releaseErr = wait.ReceiveSeen(judged(t, "R3", refutedNow), 2*within, "the return of A's Release, its context ending after "+within.String(), returned, func() string {
			return fmt.Sprintf("A's Release pending while A is cut off; A's session states: %v", lr.a.c.States())
		})
		lr.a.a.info("release while cut off: %v", releaseErr)
		aLeft, _ = statOf(t, lr.O, ha.Path)
		bWaits = pb.settled()
		lr.o.info("A's node %s exists: %v; B waiting=%v on %s", path.Base(ha.Path), aLeft, bWaits.Waiting, bWaits.Pred)
	})
	// The lost delete is the scenario: without it Release's answer says
	// nothing about R3, so it is checked first.
	if !aLeft || pb.finished() || !bWaits.Waiting {
		notShown(t, "R3", "while A was cut off its node exists=%v and B finished=%v; want the node there and B waiting (the delete was lost)", aLeft, pb.finished())
	}
	if !errors.Is(releaseErr, lock.ErrOutcomeUnknown) {
		refuted(t, "R3", "A's Release, cut off with its delete lost, returned %v; want lock.ErrOutcomeUnknown", releaseErr)
	}
	if lr.sessionAfter != lr.sessionBefore {
		notShown(t, "R3", "A came back in session 0x%x, not 0x%x: the node went with the old session, not by the recipe", lr.sessionAfter, lr.sessionBefore)
	}

	phase(t, "nobody acts: A is back in session 0x%x, and the recipe finishes its own delete", lr.sessionAfter)
	select {
	case <-ha.Gone():
	case <-time.After(3 * within):
		refutedNow(t, "R3", "A's Gone still open %v after A was back in its session; want the recipe to finish its delete", 3*within)
	}
	if ok, _ := statOf(t, lr.O, ha.Path); ok {
		refutedNow(t, "R3", "A's Gone closed with A's node %s still there and A's session 0x%x open: a lock nobody holds and nobody frees", path.Base(ha.Path), lr.a.c.SessionID())
	}
	hb, berr := pb.resultOr(refutedNow)
	var bOwner int64
	if hb != nil {
		_, st := statOf(t, lr.O, hb.Path)
		bOwner = st.EphemeralOwner
	}
	evidence(t, "A's delete never reached the server and A stayed cut off: Release returned %v while O saw A's node (exists=%v) and B waiting; with nobody acting and A's session 0x%x still open, A's node was gone once Gone closed, and B holds=%v on its own node (owner 0x%x, B 0x%x)", releaseErr, aLeft, lr.a.c.SessionID(), hb != nil, bOwner, b.c.SessionID())
	if berr != nil || bOwner != b.c.SessionID() {
		refuted(t, "R3", "after A's node was gone by the recipe, B: %v, owner 0x%x; want B holding its own node", berr, bOwner)
	}
}

// releaseLeavesAnotherSessionsNode: the reply to A's delete is lost and,
// while A reconnects, X creates a node at A's exact path (an ephemeral node
// of X's session, not a candidate anyone made through the recipe). A
// looking again finds a node at its path: it must tell by the owner that
// it is not its own and leave it.
func releaseLeavesAnotherSessionsNode(t *testing.T) {
	var intrude func()
	atLook := func(r locktrace.ReplyInfo) {
		// A delete whose answer was lost with the connection: the
		// Release looks again next.
		if r.Op == locktrace.OpDelete && errors.Is(r.Err, zk.ErrConnectionClosed) && intrude != nil {
			intrude()
			intrude = nil
		}
	}
	lr, ha, _, _ := releaseScene(t, joinOpts{trace: &locktrace.Trace{Reply: atLook}})
	x := zkclient.Connect(t, "X", []string{sharedServer(t).Client})
	xa := newActor(t, "X")
	var xErr error
	// Runs on A's releasing goroutine, between the lost delete and A's look
	// again; the Release waits for it.
	intrude = func() {
		xa.invoke("create %s EPHEMERAL (A's exact path, X's session %s)", ha.Path, x.SessionHex())
		if _, xErr = x.Create(ha.Path, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); xErr != nil {
			xa.fail("%v", xErr)
			return
		}
		xa.ok("")
	}
	res, err := lr.loseReply(t, "R3", faultproxy.Match{Ops: deleteOps, Path: ha.Path}, func() error { return ha.Release(lockCtx(t)) })
	if !res.Dropped || xErr != nil || intrude != nil {
		notShown(t, "R3", "reply dropped=%v, X's create ran=%v (err %v); want both", res.Dropped, intrude == nil, xErr)
	}
	ok, st := statOf(t, lr.O, ha.Path)
	evidence(t, "the reply to A's delete (xid=%d) was lost and X created a node at A's path before A looked again; A's Release returned %v; the node at the path exists=%v with owner 0x%x (X's session %s)", res.Xid, err, ok, st.EphemeralOwner, x.SessionHex())
	if !ok || st.EphemeralOwner != x.SessionID() {
		refuted(t, "R3", "A's Release removed X's node at %s (exists=%v owner=0x%x); want it left alone", ha.Path, ok, st.EphemeralOwner)
	}
	if !errors.Is(err, lock.ErrLostCandidacy) {
		refuted(t, "R3", "A's Release returned %v; want lock.ErrLostCandidacy (A's own node is gone; the path is another session's)", err)
	}
}

// Example_s4LostCreateReply is the article's lost-create flowchart (claims
// R1, R2, R3 and R4, §4 ¶2–5): A's acquisition makes a fresh GUID and
// sends its ephemeral sequential create; the server creates the node and
// names it; the fault proxy drops the successful reply and closes A's
// connection; A's call gets connection loss; A reconnects in the same
// session, lists the parent by the GUID and checks ephemeralOwner (O has
// made a node with the same GUID in its own session, so the check has
// something to refuse): exactly one match is A's, and A recovers the node
// the server made for it. Then the article's control run: A's application
// blindly creates again, two of A's nodes carry the GUID, and recovery
// refuses the ambiguity, deleting nothing; a GUID that no node carries is
// reported missing. Either way, no recovery is faked.
//
// A uses the public lock package on its own session; O lists the server
// directly. Every printed line is what the run observed; TestR1 to TestR4
// (and TestR6, for a node of another session) assert on the same
// observations.
func Example_s4LostCreateReply() {
	sc := exampleScope()
	defer endExample(sc)
	lr := newLostReply(sc, joinOpts{quiet: true}) // the shared server; A through a fault proxy, O directly
	A, O, session, mark := lr.a, lr.O, lr.a.c.SessionID(), lr.a.c.Mark()
	drop := lr.proxy.LoseReply(faultproxy.Match{Ops: createOps, Under: lr.parent})

	_, err := A.l.Acquire(lr.ctx) // a fresh GUID, then create <parent>/<GUID>-lock- EPHEMERAL_SEQUENTIAL
	lost, _ := errors.AsType[*lock.CreateError](err)
	fmt.Println("A: acquire -> connection loss:", errors.Is(err, zk.ErrConnectionClosed), "| GUID returned:", lost != nil && lost.GUID != "")
	dropped := faultEnded(sc, drop, "the end of the fault on A's create")
	fmt.Println("proxy: dropped the reply to the create:", dropped.Dropped && jute.IsCreate(dropped.Op), "| its err:", dropped.Err)
	made := carrying(sc, O, lr.o, lr.parent, lost.GUID) // node name -> ephemeralOwner
	fmt.Println("O: nodes carrying the GUID:", len(made), "| owned by A's session:", slices.Equal(slices.Collect(maps.Values(made)), []int64{session}))
	if err := A.c.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		sc.Fatalf("A reconnect: %v", err)
	}
	fmt.Println("A: reconnected in the same session:", A.c.SessionID() == session)

	prefix := lr.parent + "/" + lost.GUID + fence.LockInfix
	if _, err := O.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		sc.Fatalf("O create: %v", err)
	}
	fmt.Println("O: made a node with A's GUID in its own session; nodes carrying the GUID:", len(carrying(sc, O, lr.o, lr.parent, lost.GUID)))
	held, err := A.l.Recover(lr.ctx, lost.GUID) // the children carrying the GUID whose ephemeralOwner is A's session
	if err != nil {
		sc.Fatalf("A recover: %v", err)
	}
	_, serverMadeIt := made[nodeOf(held)]
	fmt.Println("A: recover -> holds the node the server made for A:", serverMadeIt, "| token", held.Token.Seq)

	second, err := A.c.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		sc.Fatalf("A blind retry: %v", err)
	}
	fmt.Println("A: blind retry of the create -> a node with sequence", seqOf(path.Base(second)))
	_, err = A.l.Recover(lr.ctx, lost.GUID)
	fmt.Println("A: recover -> ambiguous:", errors.Is(err, lock.ErrAmbiguous))
	fmt.Println("O: nodes carrying the GUID:", len(carrying(sc, O, lr.o, lr.parent, lost.GUID)))
	_, err = A.l.Recover(lr.ctx, uuid.NewString())
	fmt.Println("A: recover of a GUID no node carries -> missing:", errors.Is(err, lock.ErrMissing))
	// Output:
	// A: acquire -> connection loss: true | GUID returned: true
	// proxy: dropped the reply to the create: true | its err: 0
	// O: nodes carrying the GUID: 1 | owned by A's session: true
	// A: reconnected in the same session: true
	// O: made a node with A's GUID in its own session; nodes carrying the GUID: 2
	// A: recover -> holds the node the server made for A: true | token 0
	// A: blind retry of the create -> a node with sequence 2
	// A: recover -> ambiguous: true
	// O: nodes carrying the GUID: 3
	// A: recover of a GUID no node carries -> missing: true
}

// Example_s8aX1RetryAfterConnectionLoss is exercise 1 of the article (claim
// X1, §8 ¶2): after a create whose reply was lost, retrying with the same
// prefix gets a larger sequence number while the first create still
// exists; recovery has to check the session and ephemeralOwner and handle
// zero and many matches.
//
// runLostCreate is the setup (Example_s4LostCreateReply walks it step by
// step): A acquires through a fault proxy that lets
// A's create take effect on the server, loses its reply and closes A's
// connection; A reconnects; O lists the server directly.
func Example_s8aX1RetryAfterConnectionLoss() {
	sc := exampleScope()
	defer endExample(sc)
	lost := runLostCreate(sc, "X1")
	fmt.Println("create returned connection loss:", errors.Is(lost.createErr, zk.ErrConnectionClosed))
	fmt.Println("same session after reconnect:", lost.sessionAfter == lost.sessionBefore)

	created := lost.nodesWithGUID(sc) // node name -> ephemeralOwner, as O sees them
	var first string
	for name := range created {
		first = name
	}
	fmt.Println("the server created the node, owned by A's session:", len(created) == 1 && created[first] == lost.a.c.SessionID())

	// A's application retries blindly: the same prefix, the same GUID.
	prefix := lost.parent + "/" + lost.guid + fence.LockInfix
	second, err := lost.a.c.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		sc.Fatalf("retry create: %v", err)
	}
	fmt.Println("retry gets a larger sequence number:", seqOf(path.Base(second)) > seqOf(first))
	fmt.Println("first create still exists:", len(lost.nodesWithGUID(sc)) == 2)

	ctx := lost.ctx
	_, err = lost.a.l.Recover(ctx, lost.guid)
	fmt.Println("recover refuses two matches as ambiguous:", errors.Is(err, lock.ErrAmbiguous))
	_, err = lost.a.l.Recover(ctx, "00000000-0000-4000-8000-000000000000")
	fmt.Println("recover of an unknown GUID is missing:", errors.Is(err, lock.ErrMissing))
	// Output:
	// create returned connection loss: true
	// same session after reconnect: true
	// the server created the node, owned by A's session: true
	// retry gets a larger sequence number: true
	// first create still exists: true
	// recover refuses two matches as ambiguous: true
	// recover of an unknown GUID is missing: true
}

// BenchmarkProxyOverhead measures getData through the client proxy against
// getData direct, in one run: median latency added and throughput ratio.
func BenchmarkProxyOverhead(b *testing.B) {
	s := sharedServer(b)
	p, err := faultproxy.New(s.Client, faultproxy.WithZooKeeperFrames())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	direct := zkclient.Connect(b, "direct", []string{s.Client}, zkclient.Quiet())
	proxied := zkclient.Connect(b, "proxied", []string{p.Addr()}, zkclient.Quiet())
	measure := func(c *zkclient.Client, n int) (median time.Duration, perSec float64) {
		lat := make([]time.Duration, n)
		start := time.Now()
		for i := range lat {
			t0 := time.Now()
			if _, _, err := c.Get("/"); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}
		total := time.Since(start)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return lat[n/2], float64(n) / total.Seconds()
	}
	n := max(b.N, 200)
	b.ResetTimer()
	dm, dr := measure(direct, n)
	pm, pr := measure(proxied, n)
	b.ReportMetric(float64(dm.Microseconds()), "µs-median-direct")
	b.ReportMetric(float64(pm.Microseconds()), "µs-median-proxied")
	b.ReportMetric(float64((pm - dm).Microseconds()), "µs-added")
	b.ReportMetric(pr/dr, "throughput-ratio")
}

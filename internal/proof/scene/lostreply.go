package scene

import (
	"context"
	"errors"
	"fmt"
	"path"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
	"github.com/zk19/zk19/zktest"
)

// LostReply is the article's §4 experiment for any request, in a lock
// scene on the shared server: A talks to the server through a fault proxy,
// O observes directly. The proxy lets the request a faultproxy.Match picks
// (by opcode and path) take effect and loses its reply (loseReply), or
// loses the request itself before the server sees it (loseRequest); either
// way A's connection closes, A's call sees a connection loss, and A
// reconnects in the same session.
type LostReply struct {
	*Scene
	Proxy                       *zktest.Proxy
	A                           *Contender // A, through the proxy, with its Locker
	SessionBefore, SessionAfter int64      // A's session before the fault and after reconnecting
}

// NewLostReply sets the experiment up on the shared server; aOpts
// configures A.
func NewLostReply(t zkserver.TB, aOpts JoinOpts) *LostReply {
	t.Helper()
	s := harness.SharedServer(t)
	return NewLostReplyAt(t, s, s, aOpts)
}

// NewLostReplyAt sets the experiment up with A's proxy in front of server
// a and O connected to server o.
func NewLostReplyAt(t zkserver.TB, a, o *zkserver.Server, aOpts JoinOpts) *LostReply {
	t.Helper()
	lr := &LostReply{Scene: NewScene(t, []string{o.Client})}
	lr.Proxy = zktest.NewProxy(t, "A-proxy", a.Client)
	aOpts.Via = []string{lr.Proxy.Addr()}
	lr.A = lr.Join("A", aOpts)
	return lr
}

// The opcodes a lost-reply Match names: go-zookeeper's Create may send
// create or create2; a Release sends delete.
var (
	CreateOps = []int32{jute.OpCreate, jute.OpCreate2}
	DeleteOps = []int32{jute.OpDelete}
)

// LoseReply runs call, one of A's operations, while the proxy loses the
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
func (lr *LostReply) LoseReply(t zkserver.TB, id string, m zktest.Match, call func() error) (zktest.Lost, error) {
	t.Helper()
	d := lr.Proxy.LoseReply(m)
	mark := lr.A.Session.Mark()
	lr.SessionBefore = lr.A.Session.SessionID()
	lr.A.Log.Info("the proxy will lose the reply to A's %s", m)
	ret := make(chan error, 1)
	go func() { ret <- call() }()
	scene := claims.Judged(t, id, claims.NotShown)
	// A dropped reply leaves A's call waiting until its connection ends, so
	// the call need not return first.
	tb.WaitFor(scene, harness.Within, fmt.Sprintf("A's call to return or the fault on A's %s to end", m), func() (bool, string) {
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
			harness.FaultEnded(scene, d, fmt.Sprintf("the end of the fault on A's %s after A's error %v", m, err))
		}
	}
	res := d.Result()
	if res.Took {
		// The reply is lost as the claims need it only with A's connection:
		// closed by the proxy, seen closed by A's client.
		if werr := lr.A.Session.WaitStateSince(mark, zk.StateDisconnected, harness.Within); werr != nil {
			claims.NotShown(t, id, "the proxy reports the reply to A's %s dropped (xid=%d err=%d: %s), but A's connection did not close: %v; the proxy has %d connection(s) open; A's call returned: %v", jute.OpName(res.Opcode), res.Xid, res.Err, res.Why, werr, lr.Proxy.Conns(), returned)
		}
		lr.A.Log.Info("disconnected: the proxy closed A's connection with the reply")
	}
	if !returned {
		err = tb.ReceiveSeen(scene, lostCallWithin, "the return of A's call after the fault on its "+m.String(), ret, func() string {
			return fmt.Sprintf("A's call pending; the fault: %+v; A's session states since it was armed: %v", res, lr.A.Session.States()[mark:])
		})
	}
	if !res.Took {
		lr.SessionAfter = lr.A.Session.SessionID()
		lr.A.Log.Info("the fault ended without dropping (%s); session 0x%x", res.Why, lr.SessionAfter)
		return res, err
	}
	if werr := lr.A.Session.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); werr != nil {
		claims.NotShown(t, id, "after the lost reply A did not reconnect: %v", werr)
	}
	lr.SessionAfter = lr.A.Session.SessionID()
	lr.A.Log.Info("reconnected: session 0x%x (before 0x%x)", lr.SessionAfter, lr.SessionBefore)
	return res, err
}

// lostCallWithin bounds the return of A's call once a fault has ended: the
// calls run under lockCtx (3 × within), and the recipe returns at most
// cleanupGrace (3 s) after its context ends.
const lostCallWithin = 4 * harness.Within

// LoseRequest runs call while the request m picks never reaches the
// server: the proxy holds A's traffic to the server until the request is
// among the held bytes, then cuts A's connection (the held bytes go with
// it), runs cut (A is cut off now), and heals. It returns call's error.
func (lr *LostReply) LoseRequest(t zkserver.TB, id string, m zktest.Match, call func() error, cut func()) error {
	t.Helper()
	d := lr.Proxy.LoseReply(m)
	mark := lr.A.Session.Mark()
	lr.SessionBefore = lr.A.Session.SessionID()
	lr.A.Log.Info("the proxy will lose A's %s before the server sees it", m)
	lr.Proxy.Hold()
	res := make(chan error, 1)
	go func() { res <- call() }()
	// As in loseReply, the fault and A's reconnection are claim id's scene.
	scene := claims.Judged(t, id, claims.NotShown)
	tb.WaitFor(scene, harness.Within, "the proxy to hold A's "+m.String(), func() (bool, string) {
		r := d.Result()
		return r.Xid != 0, fmt.Sprintf("%+v", r)
	})
	lr.Proxy.Cut()
	cut()
	lr.Proxy.Heal()
	err := tb.ReceiveSeen(scene, harness.Within, "the return of A's call after the heal", res, func() string {
		return fmt.Sprintf("A's call pending; A's session states since the fault was armed: %v", lr.A.Session.States()[mark:])
	})
	if werr := lr.A.Session.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); werr != nil {
		claims.NotShown(t, id, "after the lost request A did not reconnect: %v", werr)
	}
	lr.SessionAfter = lr.A.Session.SessionID()
	return err
}

// LostCreate is the lost-reply experiment on the create of an acquisition.
type LostCreate struct {
	*LostReply
	Guid      string
	CreateErr error
	Drop      zktest.Lost
}

// LoseCreate: on the lost-reply experiment lr, A's application makes the
// recipe's first step as the article's code makes it: a fresh GUID it
// keeps, and a create of <parent>/<GUID>-lock- EPHEMERAL_SEQUENTIAL on A's
// own session. The proxy loses the create's successful reply, and A
// reconnects. (Package lock's Acquire would recover the lost reply by
// itself; the article tells the recovery as a step of its own, Recover
// with the kept GUID, and so do the proofs that take this as their first
// step: Example_s4LostCreateReply, the R claims' and X1's.) If the fault
// did not happen as the claims need it (the proxy forwarded the reply, or
// A's create returned anything but a connection loss), the proof of claim
// id did not get as far as its observation: it stops, not shown.
func LoseCreate(t zkserver.TB, id string, lr *LostReply) *LostCreate {
	t.Helper()
	lc := &LostCreate{LostReply: lr, Guid: uuid.NewString()}
	claims.Phase(t, "the proxy loses the reply to A's create under %s", lc.Parent)
	prefix := lc.Parent + "/" + lc.Guid + fence.LockInfix
	lc.Drop, lc.CreateErr = lc.LoseReply(t, id, zktest.Match{Op: zktest.Create, Under: lc.Parent}, func() error {
		lc.A.Log.Invoke("create %s EPHEMERAL_SEQUENTIAL", prefix)
		p, err := lc.A.Session.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			lc.A.Log.Fail("%v", err)
			return err
		}
		lc.A.Log.Ok("%s", path.Base(p))
		return nil
	})
	if lc.CreateErr == nil {
		claims.NotShown(t, id, "A's create: got nil error; want connection loss (the proxy forwarded the reply: %s)", lc.Drop.Why)
	}
	if !errors.Is(lc.CreateErr, zk.ErrConnectionClosed) {
		claims.NotShown(t, id, "A's create: got %v; want connection loss (fault: %+v)", lc.CreateErr, lc.Drop)
	}
	return lc
}

// NodesWithGUID is what O sees directly on the server: the children of
// the root that carry the GUID, with their owners (ephemeralOwner).
func (lc *LostCreate) NodesWithGUID(t zkserver.TB) map[string]int64 {
	t.Helper()
	return Carrying(t, lc.O, lc.OLog, lc.Parent, lc.Guid)
}

// CreateAs creates the persistent node p as actor a.
func CreateAs(t zkserver.TB, c *zkclient.Client, a claims.Actor, p string) {
	t.Helper()
	a.Invoke("create %s", p)
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		a.Fail("%v", err)
		t.Fatalf("create %s: %v", p, err)
	}
	a.Ok("")
}

// BlindRetry is A's application retrying the create with the same GUID, as
// the article's control run does.
func BlindRetry(t zkserver.TB, lc *LostCreate) string {
	t.Helper()
	prefix := lc.Parent + "/" + lc.Guid + fence.LockInfix
	lc.A.Log.Invoke("create %s EPHEMERAL_SEQUENTIAL (blind retry)", prefix)
	p, err := lc.A.Session.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("retry create: %v", err)
	}
	lc.A.Log.Ok("%s", path.Base(p))
	return path.Base(p)
}

// AbandonedCandidateLooksAgain: A gives up waiting behind H (its context
// ends), and the delete that removes its candidate never reaches the
// server. It returns what A's acquisition returned and whether A's
// candidate is there after the reconnect, once H has released; the recipe
// is to delete an abandoned candidate as Release deletes a hold, looking
// again after the reconnect, so that no phantom candidate stays in front of
// the next waiter.
func AbandonedCandidateLooksAgain(t *testing.T) Abandoned {
	lr := NewLostReply(t, JoinOpts{})
	hh := lr.Join("H", JoinOpts{}).Acquire()
	acq := lr.A.AcquireInBackground().WaitsOn(NodeOf(hh))
	aNode := lr.Parent + "/" + acq.Own
	var stillThere bool
	err := lr.LoseRequest(t, "R3", zktest.Match{Op: zktest.Delete, Under: lr.Parent}, func() error {
		lr.A.Log.Info("gives up waiting")
		acq.Cancel()
		<-acq.done // loseRequest bounds this call
		return acq.Err
	}, func() {
		stillThere, _ = StatOf(t, lr.O, aNode)
		lr.OLog.Info("A is cut off; A's candidate %s exists: %v", path.Base(aNode), stillThere)
	})
	if !stillThere {
		claims.NotShown(t, "R3", "A's candidate %q was gone while A was cut off; the delete was not lost", aNode)
	}
	left, _ := StatOf(t, lr.O, aNode)
	claims.Evidence(t, "A gave up (%v); its cleanup delete never reached the server; after the reconnect A's candidate %s exists: %v", err, path.Base(aNode), left)
	if err := hh.Release(lr.Ctx); err != nil {
		t.Errorf("H: %v", err)
	}
	return Abandoned{Err: err, Node: aNode, Left: left}
}

// Abandoned is what AbandonedCandidateLooksAgain observed: what A's
// acquisition returned, and whether its candidate Node was still there
// after the reconnect.
type Abandoned struct {
	Err  error
	Node string
	Left bool
}

// ReleaseScene makes A hold through the lost-reply proxy and B wait on A
// directly.
func ReleaseScene(t *testing.T, aOpts JoinOpts) (*LostReply, *lock.Held, *Contender, *Acquisition) {
	t.Helper()
	lr := NewLostReply(t, aOpts)
	ha := lr.A.Acquire()
	b := lr.Join("B", JoinOpts{})
	return lr, ha, b, b.AcquireInBackground().WaitsOn(NodeOf(ha))
}

// ReleaseCutOff is the first half of R3's unknown outcome: A's delete
// never reaches the server, and A stays cut off until its Release's context
// ends. It returns what Release said and what O saw while A was cut off;
// a Release that does not return within its bound is judged by late (its
// context ended, so it must return: R3's own promise).
func ReleaseCutOff(t *testing.T, late claims.Judge) CutOff {
	lr, ha, b, pb := ReleaseScene(t, JoinOpts{})
	c := CutOff{LostReply: lr, HA: ha, B: b, PB: pb}
	returned := make(chan error, 1)
	lr.LoseRequest(t, "R3", zktest.Match{Op: zktest.Delete, Path: ha.Path}, func() error {
		// A's context ends while A is cut off, well inside its session.
		ctx, cancel := context.WithTimeout(context.Background(), harness.Within)
		defer cancel()
		err := ha.Release(ctx)
		returned <- err
		return err
	}, func() {
		c.ReleaseErr = tb.ReceiveSeen(claims.Judged(t, "R3", late), 2*harness.Within, "the return of A's Release, its context ending after "+harness.Within.String(), returned, func() string {
			return fmt.Sprintf("A's Release pending while A is cut off; A's session states: %v", lr.A.Session.States())
		})
		lr.A.Log.Info("release while cut off: %v", c.ReleaseErr)
		c.ALeft, _ = StatOf(t, lr.O, ha.Path)
		c.BWaits = pb.Settled()
		lr.OLog.Info("A's node %s exists: %v; B waiting=%v on %s", path.Base(ha.Path), c.ALeft, c.BWaits.Waiting, c.BWaits.Pred)
	})
	return c
}

// CutOff is ReleaseCutOff's scene and what it saw: A's Release's answer,
// whether A's node was there and where B's acquisition stood while A was
// cut off.
type CutOff struct {
	*LostReply
	HA         *lock.Held
	B          *Contender
	PB         *Acquisition
	ReleaseErr error
	ALeft      bool
	BWaits     Attempt
}

// ReleaseLeavesAnotherSessionsNode: the reply to A's delete is lost and,
// while A reconnects, X creates a node at A's exact path (an ephemeral node
// of X's session, not a candidate anyone made through the recipe). A
// looking again finds a node at its path, which it must tell by the owner
// is not its own and leave; it returns what is at the path afterwards.
func ReleaseLeavesAnotherSessionsNode(t *testing.T) Intruded {
	var intrude func()
	atLook := func(r locktrace.ReplyInfo) {
		// A delete whose answer was lost with the connection: the
		// Release looks again next.
		if r.Op == locktrace.OpDelete && errors.Is(r.Err, zk.ErrConnectionClosed) && intrude != nil {
			intrude()
			intrude = nil
		}
	}
	lr, ha, _, _ := ReleaseScene(t, JoinOpts{Trace: &locktrace.Trace{Reply: atLook}})
	x := zkclient.Connect(t, "X", []string{harness.SharedServer(t).Client})
	xa := claims.NewActor(t, "X")
	var xErr error
	// Runs on A's releasing goroutine, between the lost delete and A's look
	// again; the Release waits for it.
	intrude = func() {
		xa.Invoke("create %s EPHEMERAL (A's exact path, X's session %s)", ha.Path, x.SessionHex())
		if _, xErr = x.Create(ha.Path, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); xErr != nil {
			xa.Fail("%v", xErr)
			return
		}
		xa.Ok("")
	}
	res, err := lr.LoseReply(t, "R3", zktest.Match{Op: zktest.Delete, Path: ha.Path}, func() error { return ha.Release(LockCtx(t)) })
	if !res.Took || xErr != nil || intrude != nil {
		claims.NotShown(t, "R3", "reply dropped=%v, X's create ran=%v (err %v); want both", res.Took, intrude == nil, xErr)
	}
	ok, st := StatOf(t, lr.O, ha.Path)
	claims.Evidence(t, "the reply to A's delete (xid=%d) was lost and X created a node at A's path before A looked again; A's Release returned %v; the node at the path exists=%v with owner 0x%x (X's session %s)", res.Xid, err, ok, st.EphemeralOwner, x.SessionHex())
	return Intruded{Path: ha.Path, Exists: ok, Owner: st.EphemeralOwner, X: x.SessionID(), ReleaseErr: err}
}

// Intruded is what ReleaseLeavesAnotherSessionsNode observed: the node
// at A's path (there or not, its owner), X's session and A's Release's
// answer.
type Intruded struct {
	Path       string
	Exists     bool
	Owner, X   int64
	ReleaseErr error
}

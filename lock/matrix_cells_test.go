package lock_test

// The states of the matrix: each request the recipe sends, in each state
// in which it sends it, with what the call must give under each fault
// (the doc's error table: a lost request or reply and a cut are retried
// and leave the outcome as without them; an expiry is ErrSessionChanged;
// a context's end is the context's error, or ErrOutcomeUnknown from
// Release; a busy TryAcquire is ErrLocked).

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// call is the package call a state runs.
type call int

const (
	callAcquire call = iota + 1
	callTry
	callRelease
	callRecover
	callHold // the hold's own-node watch: Lost, then Release
)

// phase says what the call must give under a fault.
type phase int

const (
	phHolds     phase = iota + 1 // Acquire, Recover, a free TryAcquire, a parked waiter
	phTryBusy                    // a busy TryAcquire before its decision
	phTryLocked                  // a busy TryAcquire deleting its candidate: decided
	phRelease                    // Release
	phCleanup                    // the cleanup after the caller's context ended
	phHold                       // a hold's own-node watch
	phAmbiguous                  // Recover with two nodes of its GUID in its session
	phMissing                    // Recover whose one node of its GUID is a live hold's
)

// at finds the cell's request among the subject's steps.
type at struct {
	op        locktrace.Op // opNone: the n-th parking on a watch
	round     int          // 1: before any wake; 2: after one; 0: either
	watch     int          // 1: with a watch; -1: without; 0: either
	lookAgain bool         // after the delete's reply was lost
	parked    int          // for opNone
}

func (a at) matches(h hist, ev event) bool {
	if a.op == opNone {
		return ev.waiting && ev.n == a.parked
	}
	switch {
	case ev.waiting, ev.op != a.op:
		return false
	case a.round == 1 && h.woke > 0, a.round == 2 && h.woke == 0:
		return false
	case a.watch == 1 && !ev.watch, a.watch == -1 && ev.watch:
		return false
	case a.lookAgain && !h.deleteFailed:
		return false
	}
	return true
}

// state is a request in a state of the recipe.
type state struct {
	req        string // the request in flight
	name       string // the state, as in the cell's name
	call       call
	phase      phase
	at         at
	busy       bool // a hold ahead of the subject
	round2     bool // and a waiter in between, whose leaving wakes the subject
	shared     bool // the other acquisition is on the subject's *zk.Conn
	parkCancel bool // the caller's context ends while the subject is parked
	loseDelete bool // the reply to the subject's delete is lost first
	// untraced is the request of a cleanup the recipe does not trace:
	// the one a create leaves when its caller's context ended before the
	// answer, which is then lost (lock.go's create, its late function).
	untraced     locktrace.Op
	lateAnswered bool // the create's answer comes after its caller left (else it is lost)
	ambiguous    bool // Recover finds two nodes of its GUID in its session (a blind retry's)
	heldAhead    bool // and one of them is a live hold of the same Locker
	pin          bool // the Locker's first call: its exists of the parent (untraced)
	// twin: another session's node carries the GUID of S's first create,
	// made just before it (issue 48, item 9): the recovery after a lost
	// create must never hold it nor delete it (checkTwin).
	twin    bool
	parents bool // the parent is missing and the Locker has WithParents
	faults  []fault
}

// want is what the call must give.
type want struct {
	held  bool    // a Held and no error
	kinds []error // else an error wrapping each of these (none: nil)
}

func (w want) String() string {
	if w.held {
		return "a hold"
	}
	if len(w.kinds) == 0 {
		return "nil"
	}
	s := make([]string, len(w.kinds))
	for i, k := range w.kinds {
		s[i] = k.Error()
	}
	return strings.Join(s, " and ")
}

func (st *state) want(f fault) want {
	expiry := want{kinds: []error{lock.ErrSessionChanged}}
	ended := want{kinds: []error{context.Canceled}}
	switch st.phase {
	case phTryLocked:
		return want{kinds: []error{lock.ErrLocked}}
	case phCleanup:
		return ended
	}
	switch {
	case f == expired && (st.pin || st.parents):
		// The first call's check of the parent, and its creation, come
		// before any candidate: the acquisition runs in the session the
		// check (or the create) is answered in.
		return want{held: true}
	case f == expired:
		return expiry
	case f == ctxEnded:
		if st.phase == phRelease {
			return want{kinds: []error{lock.ErrOutcomeUnknown, context.Canceled}}
		}
		return ended
	}
	switch st.phase {
	case phTryBusy:
		return want{kinds: []error{lock.ErrLocked}}
	case phAmbiguous:
		return want{kinds: []error{lock.ErrAmbiguous}}
	case phMissing:
		return want{kinds: []error{lock.ErrMissing}}
	case phRelease, phHold:
		return want{}
	}
	return want{held: true}
}

// drive sets the state up and runs the call under test.
func (st *state) drive(c *cell) result {
	if st.busy {
		c.holder()
	}
	if st.round2 {
		c.between()
	}
	switch {
	case st.pin:
		return c.drivePin()
	case st.untraced != 0:
		return c.driveLateCreate()
	case st.call == callTry:
		return c.run(c.l.TryAcquire)
	case st.call == callRelease:
		return c.driveRelease()
	case st.call == callRecover:
		return c.driveRecover()
	case st.call == callHold:
		return c.driveHold()
	}
	return c.run(c.l.Acquire)
}

// subjectHolds makes S hold (untraced by the cell: not armed yet) and, in
// a shared state, a companion acquisition on S's connection wait behind.
func (c *cell) subjectHolds() *lock.Held {
	h := mustAcquire(c.t, "S", c.l)
	c.addHeld("S", h)
	if c.st.shared {
		c.companion()
	}
	return h
}

func (c *cell) driveRelease() result {
	h := c.subjectHolds()
	res := c.run(func(ctx context.Context) (*lock.Held, error) {
		c.markReleased(h)
		return nil, h.Release(ctx)
	})
	res.gone = h.Gone()
	return res
}

// driveRecover makes the node of a create whose reply was lost (created
// by S's session, its name kept by the test) and recovers it.
//
// In an ambiguous state it makes two (a blind retry's): Recover must not
// adopt either.
//
// With a hold ahead, the first node is adopted by an earlier Recover of
// the same GUID, untraced by the cell, before the second is made: Recover
// must delete the second and leave the hold's node alone.
func (c *cell) driveRecover() result {
	guid := uuid.NewString()
	n := 1
	if c.st.ambiguous {
		n = 2
	}
	if c.st.heldAhead && !c.st.ambiguous {
		n = 1 // the one node, held: Recover finds nothing to adopt
	}
	for i := range n {
		p, err := c.w.c.Create(c.parent+"/"+guid+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			c.t.Fatalf("S create: %v", err)
		}
		c.logf("S ok %s (the node of a create whose reply was lost)", path.Base(p))
		if i == 0 && c.st.heldAhead {
			c.recoverAhead(guid)
		}
	}
	if c.st.shared {
		c.companion()
	}
	return c.run(func(ctx context.Context) (*lock.Held, error) { return c.l.Recover(ctx, guid) })
}

// recoverAhead makes S hold the one node of guid, as a Recover that finds
// it adopts it.
func (c *cell) recoverAhead(guid string) {
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	h, err := c.l.Recover(ctx, guid)
	if err != nil {
		c.t.Fatalf("S Recover of the one node of %s: %v", guid, err)
	}
	c.logf("S holds %s (recovered)", path.Base(h.Path))
	c.addHeld("S", h)
	c.a, c.aWho = h, "S"
}

// driveHold faults the hold's own-node watch, the exists the hold sends
// when it is made and again after a data change on the node: once the
// hold is made, the cell arms on the next such request (the first watch,
// if it has not gone out yet, or the one the observer's data change makes
// the hold set again). Under an expiry Lost must close, and Held.Err says
// why; otherwise the hold must go on, its watch set again after the fault,
// and the result is Release's.
func (c *cell) driveHold() result {
	h := mustAcquire(c.t, "S", c.l)
	c.addHeld("S", h)
	if c.st.shared {
		// The companion must not watch S's node, or the data change would
		// wake it too. An observer's candidate sits between them.
		x, err := c.o.Create(c.parent+"/"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			c.t.Fatalf("observer create: %v", err)
		}
		c.logf("observer ok %s (between S's node and the companion's)", path.Base(x))
		c.companion()
		defer func() {
			c.logf("observer invoke delete %s", path.Base(x))
			if err := c.o.Delete(x, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				c.t.Errorf("observer delete %s: %v", path.Base(x), err)
			}
		}()
	}
	start := time.Now()
	c.holdPath.Store(&h.Path)
	c.armed.Store(true)
	// The data change must reach the server after the hold's first watch:
	// an exists sent before the arming but answered after the set (its
	// proxy makes it the slower path) registers a watch that nothing wakes.
	if err := tb.WaitUntil(answerWithin, "the hold's first own-node watch to be set, or faulted", func() (bool, string) {
		return c.guards.Load() > 0 || c.fired.Load(), fmt.Sprintf("%d own-node watches set", c.guards.Load())
	}); err != nil {
		c.notShownNow("%v", err)
	}
	// A fault that took on the first watch needs no data change to
	// provoke another; after an expiry the node is gone, and a set would
	// find nothing. Otherwise the first watch is set and no exists is in
	// flight until the change wakes it.
	if c.fired.Load() {
		c.logf("the fault took on the hold's first own-node watch: no data change needed")
	} else {
		c.logf("observer invoke set %s (the hold watches it again)", path.Base(h.Path))
		if _, err := c.o.Set(h.Path, []byte("x"), -1); err != nil {
			c.notShownNow("observer set %s: %v", path.Base(h.Path), err)
		}
	}
	if err := tb.WaitUntil(answerWithin, "the hold's own-node watch to be faulted", func() (bool, string) {
		return c.fired.Load(), "not yet"
	}); err != nil {
		c.notShownNow("%v", err)
	}
	tb.Receive(c.t, 3*answerWithin, "the fault on the hold's watch to run its course", c.faultDone)
	// Every fault here drops the hold's connection: the hold must say so,
	// and then that it came back in its session, or, after an expiry, never.
	c.check(chkSuspension, "", func() {
		s := tb.Receive(c.t, answerWithin, "a Suspension from S's hold after its connection dropped", h.Suspensions())
		c.logf("S suspended at %v, expires by since+%v", s.Since.Format("15:04:05.000"), s.ExpiresBy.Sub(s.Since))
		if c.f != expired {
			tb.Receive(c.t, answerWithin, "S's Suspension to be Resumed in the same session", s.Resumed)
			return
		}
		tb.Receive(c.t, 2*answerWithin, "S's Lost to close after its session ended", h.Lost())
		select {
		case <-s.Resumed:
			c.fail(chkSuspension, "got Resumed closed after the session expired; want it never closed")
		default:
		}
	})
	if c.f == expired {
		c.markReleased(h)
		_ = h.Release(context.Background())
		return result{err: h.Err(), took: time.Since(start), end: time.Now(), gone: h.Gone()}
	}
	if err := tb.WaitUntil(answerWithin, "S's hold to watch its node again after the fault", func() (bool, string) {
		return c.guards.Load() > c.guardsAtFault.Load() || h.Err() != nil, fmt.Sprintf("%d own-node watches set, %d when the fault was armed; hold's Err %v", c.guards.Load(), c.guardsAtFault.Load(), h.Err())
	}); err != nil {
		c.notShownNow("%v", err)
	}
	select {
	case <-h.Lost():
		c.fail(chkKind, "got Lost closed (%v) after a %s on the hold's watch; want the hold to go on", h.Err(), c.f)
	default:
	}
	c.markReleased(h)
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	err := h.Release(ctx)
	return result{err: err, took: time.Since(start), end: time.Now(), gone: h.Gone()}
}

// matrixStates lists the states; each with a hold or queue ahead, or a
// call on a hold, comes again with the other acquisition on the
// subject's *zk.Conn (shared).
func matrixStates() []*state {
	noCtx := []fault{requestLost, replyLost, cut, expired}
	parkedFaults := []fault{cut, expired, ctxEnded}
	exists1 := at{op: locktrace.OpExists, round: 1, watch: 1}
	base := []state{
		{req: "create", name: "acquire-free", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpCreate}},
		{req: "create", name: "acquire-busy", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpCreate}, busy: true},
		{req: "children", name: "acquire-round1-free", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpChildren, round: 1}},
		{req: "children", name: "acquire-round1-busy", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpChildren, round: 1}, busy: true},
		{req: "exists", name: "acquire-round1", call: callAcquire, phase: phHolds, at: exists1, busy: true},
		{req: "watch", name: "acquire-parked-round1", call: callAcquire, phase: phHolds, at: at{parked: 1}, busy: true, faults: parkedFaults},
		{req: "children", name: "acquire-round2", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpChildren, round: 2}, busy: true, round2: true},
		{req: "exists", name: "acquire-round2", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpExists, round: 2, watch: 1}, busy: true, round2: true},
		{req: "watch", name: "acquire-parked-round2", call: callAcquire, phase: phHolds, at: at{parked: 2}, busy: true, round2: true, faults: parkedFaults},
		{req: "create", name: "try-free", call: callTry, phase: phHolds, at: at{op: locktrace.OpCreate}},
		{req: "children", name: "try-free", call: callTry, phase: phHolds, at: at{op: locktrace.OpChildren}},
		{req: "create", name: "try-busy", call: callTry, phase: phTryBusy, at: at{op: locktrace.OpCreate}, busy: true},
		{req: "children", name: "try-busy", call: callTry, phase: phTryBusy, at: at{op: locktrace.OpChildren}, busy: true},
		{req: "delete", name: "try-busy", call: callTry, phase: phTryLocked, at: at{op: locktrace.OpDelete}, busy: true},
		{req: "exists", name: "try-busy-look-again", call: callTry, phase: phTryLocked, at: at{op: locktrace.OpExists, watch: -1, lookAgain: true}, busy: true, loseDelete: true},
		{req: "delete", name: "release", call: callRelease, phase: phRelease, at: at{op: locktrace.OpDelete}},
		{req: "exists", name: "release-look-again", call: callRelease, phase: phRelease, at: at{op: locktrace.OpExists, watch: -1, lookAgain: true}, loseDelete: true},
		{req: "sync", name: "recover", call: callRecover, phase: phHolds, at: at{op: locktrace.OpSync}},
		{req: "children", name: "recover", call: callRecover, phase: phHolds, at: at{op: locktrace.OpChildren}},
		{req: "exists", name: "recover", call: callRecover, phase: phHolds, at: at{op: locktrace.OpExists, watch: -1}},
		{req: "sync", name: "recover-ambiguous", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpSync}, ambiguous: true},
		{req: "children", name: "recover-ambiguous", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpChildren}, ambiguous: true},
		{req: "exists", name: "recover-ambiguous", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpExists, watch: -1}, ambiguous: true},
		{req: "delete", name: "recover-ambiguous", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpDelete}, ambiguous: true},
		{req: "sync", name: "recover-held", call: callRecover, phase: phMissing, at: at{op: locktrace.OpSync}, heldAhead: true},
		{req: "children", name: "recover-held", call: callRecover, phase: phMissing, at: at{op: locktrace.OpChildren}, heldAhead: true},
		{req: "exists", name: "recover-held", call: callRecover, phase: phMissing, at: at{op: locktrace.OpExists, watch: -1}, heldAhead: true},
		{req: "sync", name: "recover-ambiguous-held", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpSync}, ambiguous: true, heldAhead: true},
		{req: "children", name: "recover-ambiguous-held", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpChildren}, ambiguous: true, heldAhead: true},
		{req: "exists", name: "recover-ambiguous-held", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpExists, watch: -1}, ambiguous: true, heldAhead: true},
		{req: "delete", name: "recover-ambiguous-held", call: callRecover, phase: phAmbiguous, at: at{op: locktrace.OpDelete}, ambiguous: true, heldAhead: true},
		{req: "delete", name: "cleanup", call: callAcquire, phase: phCleanup, at: at{op: locktrace.OpDelete}, busy: true, parkCancel: true, faults: noCtx},
		{req: "exists", name: "cleanup-look-again", call: callAcquire, phase: phCleanup, at: at{op: locktrace.OpExists, watch: -1, lookAgain: true}, busy: true, parkCancel: true, loseDelete: true, faults: noCtx},
		{req: "exists", name: "hold-watch", call: callHold, phase: phHold, faults: noCtx},
	}
	for _, op := range []locktrace.Op{locktrace.OpSync, locktrace.OpChildren, locktrace.OpExists, locktrace.OpDelete} {
		base = append(base, state{req: op.String(), name: "late-create-cleanup", call: callAcquire, phase: phCleanup, untraced: op, busy: true, faults: noCtx})
	}
	base = append(base,
		state{req: "exists", name: "acquire-first-call", call: callAcquire, phase: phHolds, pin: true},
		state{req: "exists", name: "try-first-call", call: callTry, phase: phHolds, pin: true})
	// Acquire's and TryAcquire's own recovery beside another session's node
	// of the same GUID, ahead of S's: the create's request lost (the
	// recovery finds only the other's node, and creates again) and its reply
	// lost (it finds its own and the other's).
	twinFaults := []fault{requestLost, replyLost}
	base = append(base,
		state{req: "create", name: "acquire-foreign-twin", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpCreate}, twin: true, faults: twinFaults},
		state{req: "create", name: "try-foreign-twin", call: callTry, phase: phTryBusy, at: at{op: locktrace.OpCreate}, twin: true, faults: twinFaults})
	base = append(base,
		state{req: "create-parent", name: "acquire-parent-missing", call: callAcquire, phase: phHolds, at: at{op: locktrace.OpCreateParent}, parents: true},
		state{req: "create-parent", name: "try-parent-missing", call: callTry, phase: phHolds, at: at{op: locktrace.OpCreateParent}, parents: true})
	base = append(base, state{req: "delete", name: "late-create-answered", call: callAcquire, phase: phCleanup, untraced: locktrace.OpDelete, lateAnswered: true, busy: true, faults: noCtx})
	var out []*state
	for _, st := range base {
		if st.faults == nil {
			st.faults = allFaults
		}
		out = append(out, &st)
		if st.busy || st.call == callRelease || st.call == callRecover || st.call == callHold {
			sh := st
			sh.shared, sh.name = true, st.name+"-shared"
			out = append(out, &sh)
		}
	}
	return out
}

// driveLateCreate: the caller's context ends while S's create is in
// flight (its reply held), Acquire returns, and the reply is then lost
// with the connection: the create's late function cleans up in the
// background, untraced (sync, list, exists of the GUID's nodes, delete),
// once the client is back. The fault is armed on the wire, for the next
// request of st.untraced, before the reply is lost.
//
// With lateAnswered the reply is delivered instead: the create's late
// function deletes the node it names (delete, and exists to look again
// after a lost delete).
func (c *cell) driveLateCreate() result {
	res := c.run(c.l.Acquire)
	if err := tb.WaitUntil(answerWithin, "the create's reply to be held", func() (bool, string) {
		n := c.w.px.Stats().DownHeld
		return n > 0, fmt.Sprintf("%d bytes held", n)
	}); err != nil {
		c.notShownNow("%v", err)
	}
	c.injectOnWire(c.st.untraced)
	if c.st.lateAnswered {
		c.logf("premise: the create's held reply is delivered after its caller left")
		c.w.px.Release(faultproxy.Down)
		return res
	}
	c.logf("premise: the create's held reply is lost with the connection")
	c.w.px.Blackhole(faultproxy.Down)
	c.w.px.Heal()
	return res
}

// holdCreateThenEnd, at S's create: hold the replies, and end the caller's
// context once the create has reached the server.
func (c *cell) holdCreateThenEnd() {
	ops := wireOps(locktrace.OpCreate)
	before := c.w.px.Requests(ops...)
	c.w.px.Hold(faultproxy.Down)
	c.logf("premise: S's proxy holds the replies; the caller's context ends once the create is on the wire")
	go func() {
		if err := tb.WaitUntil(answerWithin, "S's create on the wire", func() (bool, string) {
			return c.w.px.Requests(ops...) > before, "not yet"
		}); err != nil {
			c.faultErr.Store(err.Error())
		}
		c.endCtx()
	}()
}

// injectOnWire arms c's fault on S's next request op on the wire, for a
// request the recipe does not trace. A cut and an expiry come right after
// the request's reply is lost (the client waits a second before it dials
// again): the request reached the server, its reply did not come back.
func (c *cell) injectOnWire(op locktrace.Op) {
	c.fired.Store(true)
	m := faultproxy.Match{Ops: wireOps(op)}
	switch op {
	case locktrace.OpChildren:
		m.Path = c.parent
	case locktrace.OpExists, locktrace.OpDelete:
		m.Under = c.parent
	}
	c.logf("fault: %s on S's next %s (the background cleanup's, untraced)", c.f, m)
	if c.seamStopsFault() {
		return
	}
	if c.f == requestLost {
		c.afterDrop(c.w.px.LoseRequest(m))
		return
	}
	d := c.w.px.LoseReply(m)
	if c.f == replyLost {
		c.afterDrop(d)
		return
	}
	go func() {
		defer close(c.faultDone)
		select {
		case <-d.Done():
		case <-time.After(2 * answerWithin):
			d.Cancel()
		}
		if r := d.Result(); !r.Dropped {
			c.faultErr.Store("the proxy did not drop the reply: " + r.Reason)
			return
		}
		c.act(false)
	}()
}

// drivePin faults the first request of a Locker's first call: pin's
// exists of the parent, untraced, armed just before the call.
func (c *cell) drivePin() result {
	c.armed.Store(true)
	c.fired.Store(true)
	c.inject(locktrace.OpExists, c.parent)
	if c.st.call == callTry {
		return c.run(c.l.TryAcquire)
	}
	return c.run(c.l.Acquire)
}

// twinNode is T's node in a twin state: T, a session of its own, makes it
// with the GUID of S's first create just before S sends that create, so
// it is ahead of any node S makes.
type twinNode struct {
	t       *zkclient.Client
	path    string
	session int64
	left    bool // T deleted it: S waited behind it
}

// makeTwin, at S's first create of prefix (<parent>/<guid>-lock-), makes
// T's node with the same GUID.
func (c *cell) makeTwin(prefix string) {
	t := zkclient.Connect(c.t, "T", []string{server().Client}, zkclient.Quiet())
	p, err := t.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		c.t.Fatalf("T create %s: %v", path.Base(prefix), err)
	}
	c.twin = twinNode{t: t, path: p, session: t.SessionID()}
	c.logf("T ok %s (T's session 0x%x, the GUID of S's create)", path.Base(p), c.twin.session)
}

// twinLeaves: S waits (behind T's node, the lowest): T's node must still
// be T's, and T deletes it, so that S holds.
func (c *cell) twinLeaves() {
	c.check(chkTwinDelete, "", func() { c.twinThere("when S waits") })
	err := c.twin.t.Delete(c.twin.path, -1)
	c.twin.left = err == nil
	c.logf("T delete %s (T leaves): %v", path.Base(c.twin.path), errOrOK(err))
}

// twinThere fails the cell when T's node is gone or another's; with no
// T's node (S sent no create: the cell is not shown) it has nothing to
// check.
func (c *cell) twinThere(when string) {
	if c.twin.path == "" {
		return
	}
	ok, st, err := c.o.Exists(c.twin.path)
	switch {
	case err != nil:
		c.fail(chkTwinDelete, "observer exists %s: %v", c.twin.path, err)
	case !ok:
		c.broken(chkTwinDelete, "%s: got T's node %s deleted (only T deletes it, and T had not); want it left alone", when, path.Base(c.twin.path))
	case st.EphemeralOwner != c.twin.session:
		c.broken(chkTwinDelete, "%s: got the node %s owned by 0x%x; want T's session 0x%x", when, path.Base(c.twin.path), st.EphemeralOwner, c.twin.session)
	}
}

// checkTwinHold: in a twin state, the call never held T's node.
func (c *cell) checkTwinHold(res result) {
	if res.held != nil && c.twin.path != "" && res.held.Path == c.twin.path {
		c.broken(chkTwinHold, "got a Held of %s, T's node (session 0x%x); want S's own node, or no hold", path.Base(res.held.Path), c.twin.session)
	}
}

package lock_test

// A hold hears of its connection's drops as they happen (Held.Suspensions),
// before it can know whether the hold is lost. Both endings are proven
// here against the real server through a fault proxy: the connection comes
// back in the same session (Resumed, and the hold goes on), or it comes
// back after the server expired the session (Lost, never Resumed).

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// suspendBound is the doc's bound on a Suspension after the client sees
// its connection close (suspendPoll, 20ms), plus scheduling.
const suspendBound = 20*time.Millisecond + scheduling

// suspendedHolder makes H hold through its proxy with a session of
// shortSession, told to the Locker, then cuts H's connection and returns
// the Suspension H's hold reports, checked against the doc's bound and
// ExpiresBy's definition.
func suspendedHolder(t *testing.T) (*wire, *lock.Locker, *lock.Held, lock.Suspension, *zkclient.Client) {
	t.Helper()
	parent, o := freshParent(t)
	h := newWireTimeout(t, "H", shortSession)
	l := lock.New(h.c.Conn, parent, lock.WithSessionTimeout(shortSession))
	held := mustAcquire(t, "H", l)
	t.Logf("fault: H's proxy cuts H's connection and refuses new ones")
	cut := time.Now()
	h.px.Cut(faultproxy.BothEnds)
	t.Cleanup(h.px.Heal)
	s := nextSuspension(t, held, suspendBound+2*time.Second, fmt.Sprintf("within %v of the client's noticing (the cut closes its socket at once)", suspendBound))
	took := s.Since.Sub(cut)
	t.Logf("H suspended %v after the cut; expires by since+%v", took.Round(time.Millisecond), s.ExpiresBy.Sub(s.Since))
	t.Attr("suspended_after", took.Round(time.Millisecond).String())
	if took < 0 || took > suspendBound {
		t.Fatalf("H's Suspension: got Since %v after the cut; want within [0, %v]", took, suspendBound)
	}
	// A connection not made by lock.Connect: the doc's bound from
	// go-zookeeper's own (a connection silent for two thirds of the
	// timeout is dropped).
	if got, want := s.ExpiresBy.Sub(s.Since), shortSession-2*shortSession/3-20*time.Millisecond; got != want {
		t.Fatalf("H's Suspension on a plain connection: got ExpiresBy = Since + %v; want Since + %v (a third of the session timeout %v, less the poll)", got, want, shortSession)
	}
	return h, l, held, s, o
}

// nextSuspension returns the next Suspension held reports, failing when
// the hold is lost first or none comes within (want says when it should).
func nextSuspension(t *testing.T, held *lock.Held, within time.Duration, want string) lock.Suspension {
	t.Helper()
	select {
	case s := <-held.Suspensions():
		return s
	case <-held.Lost():
		t.Fatalf("H's hold: got Lost (%v) right after the fault; want a Suspension first", held.Err())
	case <-time.After(within):
		t.Fatalf("H's hold: got no Suspension within %v of the fault; want one %s", within, want)
	}
	panic("unreachable")
}

// TestASuspensionEndsInResumedWhenTheSessionSurvives: a cut healed before
// the session expires gives a Suspension, then Resumed, and the hold goes
// on: Lost stays open, Err is nil, and Release deletes the node.
func TestASuspensionEndsInResumedWhenTheSessionSurvives(t *testing.T) {
	h, _, held, s, _ := suspendedHolder(t)
	t.Logf("fault undone: H's proxy heals before the session's %v run out", shortSession)
	h.px.Heal()
	healed := time.Now()
	select {
	case <-s.Resumed:
	case <-held.Lost():
		t.Fatalf("H's hold after a heal before expiry: got Lost (%v); want Resumed", held.Err())
	case <-time.After(answerWithin):
		t.Fatalf("H's hold after the heal: got no Resumed within %v (client state %v); want it once the client has its session back", answerWithin, h.c.State())
	}
	t.Logf("H resumed %v after the heal, in session 0x%x", time.Since(healed).Round(time.Millisecond), h.c.SessionID())
	select {
	case <-held.Lost():
		t.Fatalf("H's hold after Resumed: got Lost (%v); want it still held", held.Err())
	default:
	}
	if err := held.Err(); err != nil {
		t.Fatalf("H's hold after Resumed: got Err %v; want nil", err)
	}
	if err := held.Release(context.Background()); err != nil {
		t.Fatalf("H's Release after Resumed: got %v; want nil", err)
	}
	if !errors.Is(held.Err(), lock.ErrReleased) {
		t.Fatalf("H's Err after Release: got %v; want ErrReleased", held.Err())
	}
}

// TestASuspensionPastExpiryEndsInLost: a cut that outlasts the session
// gives a Suspension, then, once the client reaches the server again and
// learns of the expiry, Lost with ErrSessionChanged; Resumed never closes.
// The Locker outlives the session: Release of the old hold says the
// session changed, and the next Acquire holds in the new session with a
// fresh GUID.
func TestASuspensionPastExpiryEndsInLost(t *testing.T) {
	t.Parallel()
	h, l, held, s, o := suspendedHolder(t)
	waitExpired(t, o, held)
	t.Logf("observer ok: %s gone: H's session expired on the server", path.Base(held.Path))
	select {
	case <-held.Lost():
		t.Fatalf("H's hold while still cut off: got Lost (%v); want it learned only after the reconnect", held.Err())
	default:
	}
	t.Logf("fault undone: H's proxy heals")
	h.px.Heal()
	tb.Receive(t, answerWithin, "H's Lost after the reconnect", held.Lost())
	if !errors.Is(held.Err(), lock.ErrSessionChanged) {
		t.Fatalf("H's Err after the expiry: got %v; want ErrSessionChanged", held.Err())
	}
	select {
	case <-s.Resumed:
		t.Fatalf("H's Suspension: got Resumed after the session expired; want it never closed")
	default:
	}
	t.Logf("H lost: %v", held.Err())
	if err := held.Release(context.Background()); !errors.Is(err, lock.ErrSessionChanged) || !errors.Is(err, lock.ErrAlreadyOver) {
		t.Fatalf("H's Release of the expired hold: got %v; want ErrAlreadyOver wrapping ErrSessionChanged", err)
	}
	next := mustAcquire(t, "H", l)
	defer next.Release(context.Background())
	_, st, err := o.Exists(next.Path)
	if err != nil || st == nil || st.EphemeralOwner != h.c.SessionID() || next.GUID == held.GUID {
		t.Fatalf("the same Locker's next Acquire: got %s (owner %v, %v), GUID %s; want a node of the new session 0x%x with a GUID other than %s", path.Base(next.Path), st, err, next.GUID, h.c.SessionID(), held.GUID)
	}
	t.Logf("H holds %s in the new session 0x%x", path.Base(next.Path), h.c.SessionID())
}

// heldReplySession is H's session timeout where the proxy holds its
// replies for a while: go-zookeeper drops a connection silent for two
// thirds of it, and H must not reconnect (in its session) before the test
// lets it.
const heldReplySession = 20 * time.Second

// TestAHoldLearnsOfItsExpiryWithoutANewSession: the hold's exists on its
// own node is in flight (its reply held by the proxy) when the server ends
// the session; the client learns of it at its next handshake (session 0),
// and the proxy then refuses every connection, so no new session comes.
// The hold must say Lost as soon as its client knows the session is gone,
// with ErrSessionChanged, and not wait for a new session to show it: the
// connection watcher sees a change only to another session, so the
// exists' own check of the session is what tells the hold here.
func TestAHoldLearnsOfItsExpiryWithoutANewSession(t *testing.T) {
	t.Parallel()
	parent, o := freshParent(t)
	h := newWireTimeout(t, "H", heldReplySession)
	t.Cleanup(h.px.Heal)
	var own atomic.Pointer[string] // the hold's node, once it is made
	var armed atomic.Bool
	sent := make(chan int, 1) // the proxy's count of exists before the held one
	var guards atomic.Int32   // own-node watches the hold has set
	tr := &locktrace.Trace{Guarded: func(locktrace.NodeInfo) { guards.Add(1) }, Request: func(r locktrace.RequestInfo) {
		if p := own.Load(); p != nil && r.Op == locktrace.OpExists && r.Watch && r.Path == *p && armed.CompareAndSwap(false, true) {
			before := h.px.Requests(wireOps(locktrace.OpExists)...)
			t.Logf("fault: H's proxy holds every reply from now on (H's exists %s is about to go out)", path.Base(r.Path))
			h.px.Hold(faultproxy.Down)
			sent <- before
		}
	}}
	l := lock.New(h.c.Conn, parent, lock.WithSessionTimeout(heldReplySession), lock.WithTrace(tr))
	held := mustAcquire(t, "H", l)
	mark := h.c.Mark() // every state the client reaches from here on
	own.Store(&held.Path)
	// The hold's first own-node watch may have gone out before the arming:
	// once it is set (the change must reach the server after it, or it
	// wakes nothing), a data change makes the hold send the next one.
	if err := tb.WaitUntil(answerWithin, "H's hold to set its first own-node watch, or to send it armed", func() (bool, string) {
		return guards.Load() > 0 || armed.Load(), fmt.Sprintf("%d own-node watches set", guards.Load())
	}); err != nil {
		t.Fatal(err)
	}
	if !armed.Load() {
		t.Logf("observer invoke set %s", path.Base(held.Path))
		if _, err := o.Set(held.Path, []byte("x"), -1); err != nil {
			t.Fatalf("observer set %s: %v", path.Base(held.Path), err)
		}
	}
	before := tb.Receive(t, answerWithin, "H's hold to send exists on its own node", sent)
	if err := tb.WaitUntil(answerWithin, "H's exists to reach the server", func() (bool, string) {
		n := h.px.Requests(wireOps(locktrace.OpExists)...)
		return n > before, fmt.Sprintf("%d exists passed, %d before", n, before)
	}); err != nil {
		t.Fatal(err)
	}
	sid := h.c.SessionID()
	if err := endSessionOf(h.px, sid); err != nil {
		t.Fatalf("ending H's session 0x%x on the server: %v", sid, err)
	}
	t.Logf("fault: the server ended H's session 0x%x; the held reply is lost with H's connection", sid)
	h.px.Blackhole(faultproxy.Down)
	h.px.Heal()
	if err := h.c.WaitStateSince(mark, zk.StateExpired, answerWithin); err != nil {
		t.Fatalf("H's client: %v; want it to learn of the expiry at its next handshake", err)
	}
	h.px.Cut(faultproxy.BothEnds)
	t.Logf("fault: H's client learned of the expiry; H's proxy refuses every connection from now on (session now 0x%x)", h.c.SessionID())
	tb.Receive(t, answerWithin, "H's Lost while its client has no session", held.Lost())
	if now := h.c.SessionID(); now != 0 {
		t.Fatalf("H's client: got session 0x%x when Lost closed; want none (the proxy refuses every connection)", now)
	}
	if !errors.Is(held.Err(), lock.ErrSessionChanged) {
		t.Fatalf("H's Err after its client learned of the expiry: got %v; want ErrSessionChanged", held.Err())
	}
	t.Logf("H lost: %v", held.Err())
}

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
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
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

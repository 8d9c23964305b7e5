package locktest

// The scenario "knows it may have lost, while cut off": between the drop
// of a holder's connection and the end of its session, a lock can be
// neither kept nor known lost. What a recipe owes its user there is a
// warning: the hold may be gone, stop starting writes. Curator gives its
// ConnectionStateListener SUSPENDED and tells lock users to watch for it;
// kazoo's documentation tells lock holders to pause on SUSPENDED; ours
// sends a Suspension on Held.Suspensions. go-zookeeper's zk.Lock has
// nothing to say it with.

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/peer"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
)

const (
	// suspendSession is W's session timeout in the scenario: long enough
	// that a heal soon after the warning comes well before the server can
	// expire the session.
	suspendSession = 10 * time.Second
	// suspicionWithin bounds the warning, for every recipe: a quarter of
	// the session, so that it comes while the session may still be alive
	// and the holder can still stop.
	suspicionWithin = suspendSession / 4
	// oursSuspendBound is the bound package lock's doc states for a
	// Suspension after the client notices the drop (suspendPoll, 20ms; the
	// cut closes the client's socket at once), and for Resumed after the
	// client has its session back, plus what a loaded 2-core machine may
	// add.
	oursSuspendBound = 20*time.Millisecond + 500*time.Millisecond
)

// heard is a recipe's signal: its word and how long after the fault (the
// cut, or the heal) it came.
type heard struct {
	word  string
	after time.Duration
}

func (h heard) String() string { return h.word + " " + took(h.after) }

// took writes a short duration to the millisecond, and one under a
// millisecond to ten microseconds, so that it never reads as 0s.
func took(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// peerSuspendedHolderKnows: W holds; its proxy cuts it off (closes its
// connection and refuses new ones). While cut off, well before the
// session can expire, does the recipe tell its user that the hold may be
// lost? Then the proxy heals before expiry: does the recipe say it is back,
// in the same session, still holding? Ours: a Suspension within the
// doc's bound, ExpiresBy after Since and less than the session timeout
// after it (counted from the last packet the server heard), then Resumed.
// Sequential: it asserts how long the signals took.
func peerSuspendedHolderKnows(sc *peerScene) peerCell {
	w := sc.join("W", suspendSession)
	sc.mustHold(w.acquire(0), "the hold is what may be lost")
	node, sess, mark := sc.onlyNode(w), w.session(), w.mark()
	sc.o.Info("fault: W's proxy cuts W's connection and refuses new ones (session timeout %v)", suspendSession)
	cut := time.Now()
	w.proxy().Cut(faultproxy.BothEnds)
	sc.t.Cleanup(w.proxy().Heal)
	switch l := w.(type) {
	case *oursLock:
		return sc.oursSuspended(l, node, sess, mark, cut)
	case *driverLock:
		return sc.driverSuspended(l, node, sess, mark, cut)
	case *gozkLock:
		return sc.gozkSuspended(l, node, sess, mark, cut)
	case *goLock:
		return sc.goSuspended(l, node, sess, cut)
	}
	sc.t.Fatalf("no recipe %T", w)
	return peerCell{}
}

// heal lets W through again and returns when, once W is back: the scenario
// needs the same session, W's node still its own.
func (sc *peerScene) heal(w peerLock, node, sess string) time.Time {
	sc.t.Helper()
	sc.o.Info("fault undone: W's proxy heals, before the session's %v can run out", suspendSession)
	healed := time.Now()
	w.proxy().Heal()
	return healed
}

// sameHold checks, once W says it is back, that the session survived and
// W's node is still its own (else the heal came too late and the
// observation was not made), and returns what the lock object says.
func (sc *peerScene) sameHold(w peerLock, node, sess string) zh.Text {
	sc.t.Helper()
	if now := w.session(); now != sess {
		sc.t.Fatalf("W after the heal: got session %s; want %s, which the heal came before the expiry of", now, sess)
	}
	if owner := sc.owners()[node]; owner != sess {
		sc.t.Fatalf("W's node %s after the heal: got owner %q; want session %s", node, owner, sess)
	}
	return sc.holdsNow(w)
}

// oursSuspended: a Suspension within the doc's bound of the cut, with
// ExpiresBy after Since and less than the session timeout after it; after
// the heal, Resumed within the doc's bound of the client's session coming
// back, and the hold goes on.
func (sc *peerScene) oursSuspended(l *oursLock, node, sess string, mark int, cut time.Time) peerCell {
	a := newActor(sc.t, l.who())
	h := l.hold()
	var s lock.Suspension
	select {
	case s = <-h.Suspensions():
	case <-h.Lost():
		return broke("", "Lost (%s) while cut off, the session alive; want a Suspension", brief(h.Err()))
	case <-time.After(time.Until(cut.Add(suspicionWithin))):
		sc.heal(l, node, sess)
		return broke("", "no Suspension on Held.Suspensions within %v of the cut", suspicionWithin)
	}
	told := heard{"Suspension", s.Since.Sub(cut)}
	a.Info("Suspension: Since %s after the cut, ExpiresBy = Since + %v", took(told.after), s.ExpiresBy.Sub(s.Since))
	if told.after > oursSuspendBound {
		sc.heal(l, node, sess)
		return broke("", "Suspension's Since %v after the cut; want within %v (the doc's bound)", told.after, oursSuspendBound)
	}
	if got := s.ExpiresBy.Sub(s.Since); got <= 0 || got >= suspendSession {
		sc.heal(l, node, sess)
		return broke("", "ExpiresBy = Since + %v; want after Since and before Since + the session timeout %v (the server counts from the last packet it heard, before the drop)", got, suspendSession)
	}
	healed := sc.heal(l, node, sess)
	hasSession := make(chan time.Time, 1)
	go func() {
		if l.p.Session.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin) == nil {
			hasSession <- time.Now()
		}
	}()
	var resumed time.Time
	select {
	case <-s.Resumed:
		resumed = time.Now()
	case <-h.Lost():
		return broke("", "%v after the cut; after the heal, Lost (%s) instead of Resumed", told, brief(h.Err()))
	case <-time.After(peerCallWithin):
		return broke("", "%v after the cut; no Resumed within %v of the heal", told, peerCallWithin)
	}
	back := heard{"Resumed", resumed.Sub(healed)}
	a.Info("Resumed %s after the heal", took(back.after))
	var lag time.Duration
	select {
	case at := <-hasSession:
		lag = resumed.Sub(at)
	case <-time.After(harness.Within):
		return broke("", "Resumed, but the client reported no session within %v of the heal", harness.Within)
	}
	if lag > oursSuspendBound {
		return broke("", "Resumed %v after the client had its session back; want within %v (the doc's bound)", lag, oursSuspendBound)
	}
	holds := sc.sameHold(l, node, sess)
	sc.releaseNow(l)
	return kept("told: %v after the cut (ExpiresBy = Since + %v); back: %v after the heal, same session; holds: %s",
		told, suspendSession, back, holds)
}

// driverSuspended reads the driver's state events (its connection
// listener's calls): one saying the client is not connected, within
// suspicionWithin of the cut; after the heal, one saying it is again.
func (sc *peerScene) driverSuspended(k *driverLock, node, sess string, mark int, cut time.Time) peerCell {
	a := newActor(sc.t, k.who())
	ctx, cancel := context.WithDeadline(context.Background(), cut.Add(suspicionWithin))
	e, err := k.k.WaitEvent(ctx, "a state event saying the client is not connected", mark, func(e peer.Event) bool {
		return e.Kind == "state" && e.Connected != nil && !*e.Connected
	})
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		sc.heal(k, node, sess)
		return broke("", "no signal: no state event saying the client is not connected within %v of the cut", suspicionWithin)
	} else if err != nil {
		sc.t.Fatalf("%v", err)
	}
	told := heard{e.State, time.Since(cut)}
	a.Info("the connection listener was told %v after the cut", told)
	again := k.mark()
	healed := sc.heal(k, node, sess)
	ctx, cancel = context.WithTimeout(context.Background(), peerCallWithin)
	e, err = k.k.WaitEvent(ctx, "a state event saying the client is connected again", again, func(e peer.Event) bool {
		return e.Kind == "state" && e.Connected != nil && *e.Connected
	})
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return broke("", "told %v after the cut; not told it was back within %v of the heal", told, peerCallWithin)
	} else if err != nil {
		sc.t.Fatalf("%v", err)
	}
	back := heard{e.State, time.Since(healed)}
	a.Info("the connection listener was told %v after the heal", back)
	holds := sc.sameHold(k, node, sess)
	sc.releaseNow(k)
	// Curator: the client's Disconnected becomes SUSPENDED for every
	// ConnectionStateListener.
	return sc.curatorBecause(kept("told: %v after the cut; back: %v after the heal, same session; holds: %s", told, back, holds),
		curatorImps+"CuratorFrameworkImpl.java:773-775", "internalConnectionHandler.suspendConnection(this);")
}

// gozkSuspended: zk.Lock has no listener and no state; what the client's
// own session events said is written beside, as what a caller would have
// to read for itself.
func (sc *peerScene) gozkSuspended(l *gozkLock, node, sess string, mark int, cut time.Time) peerCell {
	a := newActor(sc.t, l.who())
	client := zh.Say("the client's own session events said nothing")
	if err := l.c.WaitStateSince(mark, zk.StateDisconnected, suspicionWithin); err == nil {
		client = zh.Say("the client's own session events said StateDisconnected within %s of the cut", took(time.Since(cut)))
	}
	a.Info("zk.Lock has nothing to say it with; %s", client)
	again := l.c.Mark()
	healed := sc.heal(l, node, sess)
	if err := l.c.WaitStateSince(again, zk.StateHasSession, peerCallWithin); err != nil {
		sc.t.Fatalf("W: %v", err)
	}
	client = zh.Say("%s and StateHasSession within %s of the heal", client, took(time.Since(healed)))
	sc.sameHold(l, node, sess)
	sc.releaseNow(l)
	return broke(sc.cite("lock.go:18-24", "type Lock struct {"),
		"no signal (no way to be told): zk.Lock has no listener and no state to ask; only %s, which zk.Lock does not read", client)
}

// goSuspended reads a Go recipe's Signals, if its Lock is a Signaller:
// Suspended within suspicionWithin of the cut; after the heal, Resumed. A
// Lock that is no Signaller has no way to tell its user.
func (sc *peerScene) goSuspended(l *goLock, node, sess string, cut time.Time) peerCell {
	a := newActor(sc.t, l.who())
	sg, ok := l.l.(Signaller)
	if !ok {
		sc.heal(l, node, sess)
		sc.sameHold(l, node, sess)
		sc.releaseNow(l)
		return broke("", "no signal (no way to be told): the lock object is no locktest.Signaller")
	}
	signals := sg.Signals()
	var told, back heard
	select {
	case s := <-signals:
		if s != Suspended {
			sc.heal(l, node, sess)
			return broke("", "got signal %v after the cut; want Suspended", s)
		}
		told = heard{"Suspended", time.Since(cut)}
	case <-time.After(time.Until(cut.Add(suspicionWithin))):
		sc.heal(l, node, sess)
		return broke("", "no signal: no Suspended within %v of the cut", suspicionWithin)
	}
	a.Info("Suspended %v after the cut", told)
	healed := sc.heal(l, node, sess)
	select {
	case s := <-signals:
		if s != Resumed {
			return broke("", "got signal %v after the heal; want Resumed", s)
		}
		back = heard{"Resumed", time.Since(healed)}
	case <-time.After(peerCallWithin):
		return broke("", "told %v after the cut; not told it was back within %v of the heal", told, peerCallWithin)
	}
	holds := sc.sameHold(l, node, sess)
	sc.releaseNow(l)
	return kept("told: %v after the cut; back: %v after the heal, same session; holds: %s", told, back, holds)
}

package lock_test

// The API a service uses with no select, no retry loop and no parent of
// its own (issue 48): a hold that gates writes (Ready, Context), a
// Suspension whose ExpiresBy is never late, a Locker that waits for the
// client's next session, retries counted in a row, a Release that says in
// one check that the hold was already over, and a parent created as a
// container. These promises are the package doc's, not claims of the
// article; each test names the doc it proves.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// linked is a participant whose connection lock.Connect made, through a
// fault proxy of its own.
type linked struct {
	px   *faultproxy.Proxy
	conn *zk.Conn
}

// newLinked connects name through a fault proxy with lock.Connect, asking
// for timeout. Cleanup is registered before anything is made.
func newLinked(t *testing.T, name string, timeout time.Duration) *linked {
	t.Helper()
	px, err := faultproxy.New(server().Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames(), faultproxy.WithLogf(t.Logf))
	if err != nil {
		t.Fatalf("proxy for %s: %v", name, err)
	}
	t.Cleanup(func() { _ = px.Close() })
	conn, _, err := lock.Connect([]string{px.Addr()}, timeout, nil, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("lock.Connect for %s: %v", name, err)
	}
	t.Cleanup(conn.Close)
	tb.WaitFor(t, answerWithin, name+"'s first session", func() (bool, string) {
		return conn.State() == zk.StateHasSession, fmt.Sprintf("state %v", conn.State())
	})
	return &linked{px: px, conn: conn}
}

// cutHolder makes H hold on a fresh parent through a link lock.Connect
// made, then cuts H's connection and refuses new ones (healed at cleanup).
func cutHolder(t *testing.T) (*linked, *lock.Locker, *lock.Held, *zkclient.Client) {
	t.Helper()
	parent, o := freshParent(t)
	h := newLinked(t, "H", shortSession)
	l := lock.New(h.conn, parent)
	held := mustAcquire(t, "H", l)
	t.Logf("fault: H's proxy cuts H's connection and refuses new ones")
	h.px.Cut(faultproxy.BothEnds)
	t.Cleanup(h.px.Heal)
	return h, l, held, o
}

// waitExpired waits until the observer sees held's node gone: the server
// expired the holder's session.
func waitExpired(t *testing.T, o *zkclient.Client, held *lock.Held) {
	t.Helper()
	tb.WaitFor(t, answerWithin+shortSession, "the server to expire H's session (H's node gone)", func() (bool, string) {
		ok, _, err := o.Exists(held.Path)
		return err == nil && !ok, fmt.Sprintf("%s there: %v, err %v", path.Base(held.Path), ok, err)
	})
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// TestAKnownLossAlwaysWinsOverTheNextWrite: once a hold is known lost,
// Ready refuses every write after it and Context is cancelled with the
// cause, however many times it is asked: the check never picks at random
// between the loss and a go-ahead, as a select among two ready cases does
// (package doc, "A service gates its writes with one call"; issue 48,
// item 1).
func TestAKnownLossAlwaysWinsOverTheNextWrite(t *testing.T) {
	t.Parallel()
	parent, o := freshParent(t)
	l := lock.New(newWire(t, "H").c.Conn, parent)
	held := mustAcquire(t, "H", l)
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	if err := held.Ready(ctx); err != nil {
		t.Fatalf("H's Ready while holding: got %v; want nil", err)
	}
	if err := held.Context().Err(); err != nil {
		t.Fatalf("H's Context while holding: got %v; want not cancelled", err)
	}
	t.Logf("observer invoke delete %s (H's node)", path.Base(held.Path))
	if err := o.Delete(held.Path, -1); err != nil {
		t.Fatalf("not shown: delete H's node: %v", err)
	}
	tb.Receive(t, answerWithin, "H's Lost after its node was deleted", held.Lost())
	const iterations = 1000
	for i := range iterations {
		if err := held.Ready(ctx); !errors.Is(err, lock.ErrLostCandidacy) {
			t.Fatalf("H's Ready, call %d of %d after Lost closed: got %v; want ErrLostCandidacy every time (a known loss wins over the next write)", i+1, iterations, err)
		}
	}
	if cause := context.Cause(held.Context()); !errors.Is(cause, lock.ErrLostCandidacy) {
		t.Fatalf("H's Context after Lost: got cause %v; want ErrLostCandidacy", cause)
	}
	t.Logf("H's Ready refused %d writes in a row after the loss: %v", iterations, held.Err())
}

// TestReadyWaitsOutASuspension: while the connection carrying the hold's
// session is down, Ready gives no go-ahead (ErrSuspended when its ctx
// ends), and the hold's Context is not cancelled; once the client has the
// same session again, Ready returns nil (Held.Ready's doc; issue 48,
// item 1).
func TestReadyWaitsOutASuspension(t *testing.T) {
	h, _, held, _ := cutHolder(t)
	tb.WaitFor(t, answerWithin, "H's client to notice the cut", func() (bool, string) {
		return h.conn.State() != zk.StateHasSession, fmt.Sprintf("state %v", h.conn.State())
	})
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 100 {
		if err := held.Ready(ended); !errors.Is(err, lock.ErrSuspended) {
			t.Fatalf("H's Ready, call %d while its client has no connection (state %v): got %v; want ErrSuspended", i+1, h.conn.State(), err)
		}
	}
	if err := held.Context().Err(); err != nil {
		t.Fatalf("H's Context while suspended: got %v; want not cancelled (a suspension is no loss)", err)
	}
	ctx, stop := context.WithTimeout(context.Background(), answerWithin)
	defer stop()
	ready := make(chan error, 1)
	go func() { ready <- held.Ready(ctx) }()
	select {
	case err := <-ready:
		t.Fatalf("H's Ready while still cut off: got %v at once; want it to wait for the session", err)
	default:
	}
	t.Logf("fault undone: H's proxy heals")
	h.px.Heal()
	if err := tb.Receive(t, answerWithin, "H's Ready after the heal", ready); err != nil {
		t.Fatalf("H's Ready after the client has its session back: got %v; want nil", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatalf("H's Release after the heal: got %v; want nil", err)
	}
}

// TestExpiresByIsNeverLate: the server never expires a holder's session
// before the ExpiresBy of the Suspension the hold reported, whether the
// holder's link closed or went silent, wherever in the ping cycle it was
// cut: another session sees the holder's node vanish at or after it
// (Suspension.ExpiresBy's doc; issue 48, item 2). The timeout is given
// once, to lock.Connect; the Locker reads the negotiated one.
func TestExpiresByIsNeverLate(t *testing.T) {
	t.Parallel()
	const runs = 3
	for _, silent := range []bool{false, true} {
		for k := range runs {
			offset := time.Duration(k) * shortSession / 3 / runs
			name := fmt.Sprintf("closed link, cut %v after a ping", offset)
			if silent {
				name = fmt.Sprintf("silent link, blackholed %v after a ping", offset)
			}
			t.Run(name, func(t *testing.T) { t.Parallel(); expiresByRun(t, silent, offset) })
		}
	}
}

func expiresByRun(t *testing.T, silent bool, offset time.Duration) {
	parent, o := freshParent(t)
	h := newLinked(t, "H", shortSession)
	held := mustAcquire(t, "H", lock.New(h.conn, parent))
	ok, _, gone, err := o.ExistsW(held.Path)
	if err != nil || !ok {
		t.Fatalf("not shown: observer's watch on H's node: exists %v, %v", ok, err)
	}
	pings := h.px.Requests(jute.OpPing)
	tb.WaitFor(t, answerWithin, "H's next ping", func() (bool, string) {
		n := h.px.Requests(jute.OpPing)
		return n > pings, fmt.Sprintf("%d pings passed", n)
	})
	// Not a wait for a state: it places the fault at this point of the
	// ping cycle.
	<-time.After(offset)
	cut := time.Now()
	if silent {
		t.Logf("fault: H's proxy discards every byte both ways, %v after a ping", offset)
		h.px.Blackhole(faultproxy.Both)
	} else {
		t.Logf("fault: H's proxy cuts H's connection and refuses new ones, %v after a ping", offset)
		h.px.Cut(faultproxy.BothEnds)
	}
	t.Cleanup(h.px.Heal)
	s := nextSuspension(t, held, shortSession, "within the session timeout (a silent link is noticed after two thirds of it)")
	ev := tb.Receive(t, answerWithin+shortSession, "the observer's event on H's node", gone)
	observed := time.Now()
	if ev.Type != zk.EventNodeDeleted {
		t.Fatalf("not shown: the observer's event on H's node: got %v; want its deletion", ev.Type)
	}
	t.Logf("H suspended %v after the fault; ExpiresBy = fault + %v; the server expired the session (observer saw the node go) at fault + %v",
		s.Since.Sub(cut).Round(time.Millisecond), s.ExpiresBy.Sub(cut).Round(time.Millisecond), observed.Sub(cut).Round(time.Millisecond))
	t.Attr("expires_by_margin", observed.Sub(s.ExpiresBy).Round(time.Millisecond).String())
	if observed.Before(s.ExpiresBy) {
		t.Fatalf("H's Suspension: got ExpiresBy %v after the fault, but the server expired the session %v after it (%v early); want ExpiresBy never later than the expiry",
			s.ExpiresBy.Sub(cut).Round(time.Millisecond), observed.Sub(cut).Round(time.Millisecond), s.ExpiresBy.Sub(observed).Round(time.Millisecond))
	}
	// The last ping before the fault was sent at most a third of the
	// timeout before it: ExpiresBy counts from there, not from Since.
	if floor := cut.Add(shortSession - shortSession/3 - scheduling); s.ExpiresBy.Before(floor) {
		t.Fatalf("H's Suspension: got ExpiresBy %v after the fault; want at least %v (the session timeout from the last ping)", s.ExpiresBy.Sub(cut), floor.Sub(cut))
	}
}

// TestAnAcquireWhileTheSessionIsGoneHoldsInTheNext: an Acquire that starts
// while the client is still cut off from a session the server has
// expired waits for the client's next session and holds in it, rather
// than pinning the dead one and failing with ErrSessionChanged (package
// doc, errors table, "no session yet"; issue 48, item 3).
func TestAnAcquireWhileTheSessionIsGoneHoldsInTheNext(t *testing.T) {
	t.Parallel()
	h, l, held, o := cutHolder(t)
	old := h.conn.SessionID() // cut off, the client keeps it until it learns of the expiry
	waitExpired(t, o, held)
	if sid := h.conn.SessionID(); sid != old {
		t.Fatalf("not shown: H's client has session 0x%x before the heal; want the old 0x%x still", sid, old)
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	done := make(chan error, 1)
	var next *lock.Held
	go func() {
		var err error
		next, err = l.Acquire(ctx)
		done <- err
	}()
	t.Logf("H's Acquire started with the client cut off (state %v, session 0x%x expired); fault undone: H's proxy heals", h.conn.State(), old)
	h.px.Heal()
	if err := tb.Receive(t, answerWithin, "H's Acquire after the heal", done); err != nil {
		t.Fatalf("H's Acquire begun while its session was gone: got %v; want a hold in the client's next session", err)
	}
	defer next.Release(context.Background())
	_, st, err := o.Exists(next.Path)
	if err != nil || st == nil || st.EphemeralOwner == old || st.EphemeralOwner != h.conn.SessionID() {
		t.Fatalf("H's hold after the heal: got %s owned by %v (%v); want a node of the new session 0x%x", path.Base(next.Path), st, err, h.conn.SessionID())
	}
	t.Logf("H holds %s in the new session 0x%x", path.Base(next.Path), h.conn.SessionID())
}

// TestRetriesAreCountedInARow: three lost listing replies, then one
// answered, then a lost exists reply, and the acquisition goes on: the
// doc's "up to 3 lost connections in a row" counts from the last answered
// request of any kind, so B waits and holds once A releases (package doc,
// errors table; issue 48, item 9).
func TestRetriesAreCountedInARow(t *testing.T) {
	t.Parallel()
	parent, _ := freshParent(t)
	a := lock.New(newWire(t, "A").c.Conn, parent)
	ha := mustAcquire(t, "A", a)
	b := newWire(t, "B")
	var mu sync.Mutex
	var listings, lostExists int
	waiting := make(chan struct{}, 1)
	lb := lock.New(b.c.Conn, parent, lock.WithTrace(&locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("B invoke %s %s", r.Op, path.Base(r.Path))
			switch {
			case r.Op == locktrace.OpChildren && listings < 3:
				listings++
				t.Logf("fault: B's proxy loses the reply to listing %d", listings)
				b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: parent})
			case r.Op == locktrace.OpChildren:
				listings++
			case r.Op == locktrace.OpExists && r.Watch && listings == 4 && lostExists == 0:
				lostExists++
				t.Logf("fault: B's proxy loses the reply to the exists after the answered listing")
				b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpExists}, Path: r.Path})
			}
		},
		Reply: func(r locktrace.ReplyInfo) { t.Logf("B %s %s: %v", r.Op, path.Base(r.Path), errOrOK(r.Err)) },
		Waiting: func(locktrace.WatchInfo) {
			select {
			case waiting <- struct{}{}:
			default:
			}
		},
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*answerWithin)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		hb, err := lb.Acquire(ctx)
		if err == nil {
			err = hb.Release(ctx)
		}
		done <- err
	}()
	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("B's Acquire after 3 lost listings, one answered, one lost exists: got %v; want it still waiting (the count restarts at an answer)", err)
	case <-time.After(2 * answerWithin):
		t.Fatalf("B's Acquire: got no wait on A within %v", 2*answerWithin)
	}
	mu.Lock()
	if lostExists != 1 {
		mu.Unlock()
		t.Fatalf("not shown: B's exists reply lost %d times; want once, after the answered listing", lostExists)
	}
	mu.Unlock()
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A's Release: %v", err)
	}
	if err := tb.Receive(t, answerWithin, "B's Acquire after A released", done); err != nil {
		t.Fatalf("B's Acquire and Release: got %v; want B to hold and release", err)
	}
}

// TestAReleaseOfAHoldAlreadyOverIsOneCheck: a Release that finds the hold
// over before it was called wraps ErrAlreadyOver, whether the node was
// deleted or the session expired; with the server out of reach, a Release
// under a context without a deadline returns within the session timeout
// (ErrOutcomeUnknown), and once the client learns that the session had
// expired, Err says that first cause, not only that it was released
// (Release's and Err's docs; issue 48, item 4).
func TestAReleaseOfAHoldAlreadyOverIsOneCheck(t *testing.T) {
	t.Parallel()
	t.Run("node deleted", func(t *testing.T) {
		t.Parallel()
		parent, o := freshParent(t)
		held := mustAcquire(t, "H", lock.New(newWire(t, "H").c.Conn, parent))
		if err := o.Delete(held.Path, -1); err != nil {
			t.Fatalf("not shown: delete H's node: %v", err)
		}
		tb.Receive(t, answerWithin, "H's Lost after its node was deleted", held.Lost())
		if err := held.Release(context.Background()); !errors.Is(err, lock.ErrAlreadyOver) || !errors.Is(err, lock.ErrLostCandidacy) {
			t.Fatalf("H's Release after its node was deleted: got %v; want ErrAlreadyOver wrapping ErrLostCandidacy", err)
		}
	})
	t.Run("session expired, Release while cut off", func(t *testing.T) {
		t.Parallel()
		h, _, held, o := cutHolder(t)
		waitExpired(t, o, held)
		start := time.Now()
		released := make(chan error, 1)
		go func() { released <- held.Release(context.Background()) }()
		var err error
		select {
		case err = <-released:
		case <-time.After(shortSession + scheduling):
			t.Fatalf("H's Release cut off, ctx without deadline: got no return within %v; want ErrOutcomeUnknown within the session timeout %v", shortSession+scheduling, shortSession)
		}
		took := time.Since(start)
		t.Logf("H's Release while cut off: %v after %v", err, took.Round(time.Millisecond))
		if !errors.Is(err, lock.ErrOutcomeUnknown) {
			t.Fatalf("H's Release cut off, ctx without deadline: got %v after %v; want ErrOutcomeUnknown within the session timeout %v", err, took, shortSession)
		}
		t.Logf("fault undone: H's proxy heals")
		h.px.Heal()
		tb.Receive(t, answerWithin, "H's Gone after the heal", held.Gone())
		if err := held.Err(); !errors.Is(err, lock.ErrSessionChanged) {
			t.Fatalf("H's Err once the client learned of the expiry: got %v; want the first cause, ErrSessionChanged", err)
		}
		t.Logf("H's Err: %v", held.Err())
	})
	t.Run("session expired, Release after Lost", func(t *testing.T) {
		t.Parallel()
		h, _, held, o := cutHolder(t)
		waitExpired(t, o, held)
		h.px.Heal()
		tb.Receive(t, answerWithin, "H's Lost after the reconnect", held.Lost())
		if err := held.Release(context.Background()); !errors.Is(err, lock.ErrAlreadyOver) || !errors.Is(err, lock.ErrSessionChanged) {
			t.Fatalf("H's Release after its session expired: got %v; want ErrAlreadyOver wrapping ErrSessionChanged", err)
		}
	})
}

// TestWithParentsCreatesAContainerParent: under WithParents a Locker whose
// parent is missing creates it, as a container node (the server is asked
// with createContainer; it shows a container as persistent), with its
// ancestors as persistent nodes, and holds; without the option the parent
// is ErrParent (WithParents' doc; issue 48, item 5).
func TestWithParentsCreatesAContainerParent(t *testing.T) {
	root, o := freshParent(t)
	parent := root + "/services/billing/lock"
	h := newWire(t, "H")
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	if _, err := lock.New(h.c.Conn, parent).Acquire(ctx); !errors.Is(err, lock.ErrParent) {
		t.Fatalf("Acquire with the parent missing, no option: got %v; want ErrParent", err)
	}
	// The test seam sees the parent's create, and only the parent's: the
	// ancestors are the recipe's own business.
	var mu sync.Mutex
	var traced []string
	seam := &locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			if r.Op == locktrace.OpCreateParent {
				mu.Lock()
				defer mu.Unlock()
				traced = append(traced, "request "+r.Path)
			}
		},
		Reply: func(r locktrace.ReplyInfo) {
			if r.Op == locktrace.OpCreateParent {
				mu.Lock()
				defer mu.Unlock()
				traced = append(traced, "reply "+r.Path)
			}
		},
	}
	held := mustAcquire(t, "H", lock.New(h.c.Conn, parent, lock.WithParents(), lock.WithTrace(seam)))
	defer held.Release(context.Background())
	mu.Lock()
	if want := []string{"request " + parent, "reply " + parent}; !slices.Equal(traced, want) {
		t.Errorf("the seam's parent creates under WithParents: got %q; want %q", traced, want)
	}
	mu.Unlock()
	for _, p := range []string{root + "/services", root + "/services/billing", parent} {
		ok, st, err := o.Exists(p)
		if err != nil || !ok || st.EphemeralOwner != 0 {
			t.Fatalf("%s after Acquire under WithParents: got exists %v, %v, %+v; want a persistent node or a container", p, ok, err, st)
		}
	}
	if n, m := h.px.Requests(jute.OpCreateContainer), h.px.Requests(jute.OpCreate, jute.OpCreate2); n != 1 || m != 4 {
		t.Fatalf("H's creates under WithParents: got %d createContainer and %d create; want 1 (the parent) and 4 (3 ancestors, the first there already, and the candidate)", n, m)
	}
	t.Logf("H holds %s; the parent was created as a container, its ancestors as persistent nodes", path.Base(held.Path))
}

// TestARecreatedParentRefusesTheOldParentsToken: a container parent
// deleted (as the server deletes an empty one) and created again by the
// same Locker restarts its sequence numbers, but the new holds' tokens
// carry the new parent's larger czxid: a resource takes the new holder's
// write and refuses the old parent's token as stale (WithParents' doc;
// issue 48, item 5).
func TestARecreatedParentRefusesTheOldParentsToken(t *testing.T) {
	root, o := freshParent(t)
	parent := root + "/lock"
	l := lock.New(newWire(t, "H").c.Conn, parent, lock.WithParents())
	res := fence.NewMemory()
	defer res.Close()
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	var old fence.Token
	for range 2 { // two holds, so the old parent's last token has Seq 1
		held := mustAcquire(t, "H", l)
		old = held.Token
		if _, err := res.Write(ctx, old, "old parent"); err != nil {
			t.Fatalf("write with %v: %v", old, err)
		}
		if err := held.Release(ctx); err != nil {
			t.Fatalf("H's Release: %v", err)
		}
	}
	t.Logf("observer invoke delete %s (the empty container, as the server's reaper would)", parent)
	if err := o.Delete(parent, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("not shown: delete %s: %v", parent, err)
	}
	held := mustAcquire(t, "H", l)
	defer held.Release(ctx)
	t.Logf("old parent's token %v; the recreated parent's %v", old, held.Token)
	if _, err := res.Write(ctx, held.Token, "new parent"); err != nil {
		t.Fatalf("write with the recreated parent's token %v after %v: got %v; want it taken", held.Token, old, err)
	}
	_, err := res.Write(ctx, old, "late")
	if _, stale := errors.AsType[*fence.StaleError](err); !stale {
		t.Fatalf("write with the old parent's token %v after %v: got %v; want a *fence.StaleError", old, held.Token, err)
	}
}

// TestNoServerIsWaitedOutWithinCtx: while the client reaches no server,
// go-zookeeper fails each queued request with zk.ErrNoServer about once a
// second, though nothing was sent; an acquisition sends the request again
// within its ctx, never counting it as a lost connection nor returning it,
// and holds once the link is back (package doc, errors table, "no server
// reachable"; issue 48, item 3).
func TestNoServerIsWaitedOutWithinCtx(t *testing.T) {
	t.Parallel()
	parent, _ := freshParent(t)
	s := newWire(t, "S")
	const noServers = maxConnRetriesInDoc + 1
	var mu sync.Mutex
	cut, seen := false, 0
	l := lock.New(s.c.Conn, parent, lock.WithTrace(&locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			t.Logf("S invoke %s %s", r.Op, path.Base(r.Path))
			mu.Lock()
			defer mu.Unlock()
			if r.Op == locktrace.OpChildren && !cut {
				cut = true
				t.Logf("fault: S's proxy cuts S's connection and refuses new ones, as S lists the parent")
				s.px.Cut(faultproxy.BothEnds)
			}
		},
		Reply: func(r locktrace.ReplyInfo) {
			t.Logf("S %s %s: %v", r.Op, path.Base(r.Path), errOrOK(r.Err))
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(r.Err, zk.ErrNoServer) {
				if seen++; seen == noServers {
					t.Logf("fault undone: S's proxy heals after %d answers of zk.ErrNoServer", seen)
					s.px.Heal()
				}
			}
		},
	}))
	t.Cleanup(s.px.Heal)
	ctx, cancel := context.WithTimeout(context.Background(), 2*answerWithin)
	defer cancel()
	held, err := l.Acquire(ctx)
	mu.Lock()
	n := seen
	mu.Unlock()
	if n < noServers {
		t.Fatalf("not shown: S's listing got %d answers of zk.ErrNoServer; want %d", n, noServers)
	}
	if err != nil {
		t.Fatalf("S's Acquire through %d answers of zk.ErrNoServer: got %v; want a hold once the link is back", n, err)
	}
	defer held.Release(ctx)
	t.Logf("S holds %s after %d answers of zk.ErrNoServer", path.Base(held.Path), n)
}

// maxConnRetriesInDoc is the doc's "up to 3 lost connections in a row".
const maxConnRetriesInDoc = 3

// TestWithParentsSaysWhyItCouldNotCreateTheParent: under WithParents, a
// parent the server refuses to create (here its ancestor's ACL grants no
// create) is ErrParent wrapping the server's answer, not a parent that
// merely does not exist (WithParents' doc).
func TestWithParentsSaysWhyItCouldNotCreateTheParent(t *testing.T) {
	root, o := freshParent(t)
	if _, err := o.SetACL(root, zk.WorldACL(zk.PermAll&^zk.PermCreate), -1); err != nil {
		t.Fatalf("not shown: set the ACL of %s: %v", root, err)
	}
	parent := root + "/billing/lock"
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	_, err := lock.New(newWire(t, "H").c.Conn, parent, lock.WithParents()).Acquire(ctx)
	if !errors.Is(err, lock.ErrParent) || !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Acquire under WithParents, the parent's creation refused by the ACL: got %v; want ErrParent wrapping zk.ErrNoAuth", err)
	}
}

// TestWithoutParentsAParentDeletedUnderTheCreateIsNotMadeAgain: without
// WithParents, a parent deleted after the Locker checked it and before its
// create is an error (the create's zk.ErrNoNode), and the Locker does not
// make the parent again: only WithParents creates parents (its doc).
func TestWithoutParentsAParentDeletedUnderTheCreateIsNotMadeAgain(t *testing.T) {
	parent, o := freshParent(t)
	var once sync.Once
	seam := &locktrace.Trace{Request: func(r locktrace.RequestInfo) {
		if r.Op == locktrace.OpCreate {
			once.Do(func() {
				if err := o.Delete(parent, -1); err != nil {
					t.Errorf("not shown: delete %s before H's create: %v", parent, err)
				}
			})
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	_, err := lock.New(newWire(t, "H").c.Conn, parent, lock.WithTrace(seam)).Acquire(ctx)
	if !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("Acquire, the parent deleted before its create: got %v; want an error wrapping zk.ErrNoNode", err)
	}
	if ok, _, err := o.Exists(parent); err != nil || ok {
		t.Errorf("after the Acquire: got the parent there %v (%v); want it still gone", ok, err)
	}
}

// TestATraceWithoutAWaitingCallbackWaits: a Trace sets only the callbacks
// it wants (locktrace's doc); a waiter whose Trace has no Waiting waits
// behind the holder and holds once it releases, the nil callback never
// called.
func TestATraceWithoutAWaitingCallbackWaits(t *testing.T) {
	parent, _ := freshParent(t)
	ha := mustAcquire(t, "A", lock.New(newWire(t, "A").c.Conn, parent))
	behind := make(chan struct{}, 1)
	seam := &locktrace.Trace{Reply: func(r locktrace.ReplyInfo) {
		if r.Op == locktrace.OpExists && r.Exists && r.Path == ha.Path {
			select {
			case behind <- struct{}{}:
			default:
			}
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	acquired := make(chan error, 1)
	go func() {
		hb, err := lock.New(newWire(t, "B").c.Conn, parent, lock.WithTrace(seam)).Acquire(ctx)
		if err == nil {
			err = hb.Release(ctx)
		}
		acquired <- err
	}()
	tb.Receive(t, answerWithin, "B's exists on A's node, answered: A is there", behind)
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A's Release: %v", err)
	}
	if err := tb.Receive(t, answerWithin, "B's Acquire after A released", acquired); err != nil {
		t.Fatalf("B's Acquire behind A, its Trace without Waiting: got %v; want it to hold and release", err)
	}
}

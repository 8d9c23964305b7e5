package lock_test

// The promises of the package doc that a service relies on, each proven on
// its own against the real server main_test.go starts: every call returns
// when its context ends, whatever the server does, and leaves no candidate
// once the server answers again; Recover adopts only its own GUID's node;
// TryAcquire leaves no node when the lock is held; a Release whose context
// ended finishes its delete by itself. Each test steers the wire with a
// fault proxy and logs one line per operation and fault.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/jute"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

const (
	// callDeadline is the context every bounded call gets in these tests.
	callDeadline = time.Second
	// cleanupGrace is the package's stated bound (its doc: three seconds)
	// on how long Acquire, TryAcquire and Recover wait for the delete of
	// their own candidate after ctx ends.
	cleanupGrace = 3 * time.Second
	// scheduling is what a loaded 2-core machine may add to a return.
	scheduling = 500 * time.Millisecond
	// answerWithin bounds each wait for the server's side after the fault
	// is undone: a reconnect, a delete.
	answerWithin = 20 * time.Second
	// sessionTimeout outlives every held reply here: go-zookeeper drops a
	// connection that stays silent for two thirds of it, and these tests
	// need the connection to stay open while the replies are held.
	sessionTimeout = 30 * time.Second
)

// wire is one participant's session through a fault proxy of its own.
type wire struct {
	t    *testing.T
	name string
	px   *faultproxy.Proxy
	c    *zkclient.Client
}

func newWire(t *testing.T, name string) *wire {
	t.Helper()
	px, err := faultproxy.New(server().Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames(), faultproxy.WithLogf(t.Logf))
	if err != nil {
		t.Fatalf("proxy for %s: %v", name, err)
	}
	t.Cleanup(func() { _ = px.Close() })
	c := zkclient.Connect(t, name, []string{px.Addr()}, zkclient.WithSessionTimeout(sessionTimeout), zkclient.Quiet())
	return &wire{t: t, name: name, px: px, c: c}
}

// freshParent creates a persistent lock parent for one test.
func freshParent(t *testing.T) (string, *zkclient.Client) {
	t.Helper()
	o := zkclient.Connect(t, "observer", []string{server().Client}, zkclient.Quiet())
	p := "/" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + uuid.NewString()[:8]
	if _, err := o.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	return p, o
}

// ownedBy lists the children of parent whose ephemeral owner is session,
// as the observer's direct session sees them.
func ownedBy(t *testing.T, o *zkclient.Client, parent string, session int64) ([]string, error) {
	t.Helper()
	kids, _, err := o.Children(parent)
	if err != nil {
		return nil, err
	}
	var owned []string
	for _, k := range kids {
		ok, st, err := o.Exists(parent + "/" + k)
		if err != nil {
			return nil, err
		}
		if ok && st.EphemeralOwner == session {
			owned = append(owned, k)
		}
	}
	slices.Sort(owned)
	return owned, nil
}

// waitNoneOwned waits until session owns no child of parent.
func waitNoneOwned(t *testing.T, o *zkclient.Client, parent, who string, session int64) {
	t.Helper()
	wait.For(t, answerWithin, who+"'s candidates to be gone", func() (bool, string) {
		owned, err := ownedBy(t, o, parent, session)
		if err != nil {
			return false, "list: " + err.Error()
		}
		return len(owned) == 0, fmt.Sprintf("%s owns %v", who, owned)
	})
	t.Logf("observer ok: %s owns no node under %s", who, parent)
}

// returnsBy runs call on a goroutine and fails the test at once, naming
// the promise, if it has not returned by bound.
func returnsBy[T any](t *testing.T, promise string, bound time.Duration, call func() (T, error)) (T, time.Duration, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	start := time.Now()
	done := make(chan result, 1)
	go func() { v, err := call(); done <- result{v, err} }()
	select {
	case r := <-done:
		return r.v, time.Since(start), r.err
	case <-time.After(bound):
		t.Fatalf("%s: got no return within %v; want ctx's error by its deadline (%v) plus the stated grace (%v) and %v of scheduling", promise, bound, callDeadline, cleanupGrace, scheduling)
		panic("unreachable")
	}
}

// holdRepliesAt returns a Trace that makes w's proxy hold every reply
// (the connection stays open) just before the recipe sends its first
// request of op, and the flag that says it did.
func (w *wire) holdRepliesAt(op locktrace.Op) (*locktrace.Trace, *atomic.Bool) {
	held := new(atomic.Bool)
	return &locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			w.t.Logf("%s invoke %s %s", w.name, r.Op, r.Path)
			if r.Op == op && !held.Swap(true) {
				w.t.Logf("fault: %s's proxy holds every reply from now on; the connection stays open", w.name)
				w.px.Hold(faultproxy.Down)
			}
		},
		Reply: func(r locktrace.ReplyInfo) { w.t.Logf("%s %s %s: %v", w.name, r.Op, r.Path, errOrOK(r.Err)) },
	}, held
}

func errOrOK(err error) any {
	if err == nil {
		return "ok"
	}
	return err
}

// TestAcquireReturnsWhenItsContextEnds: whichever request of an
// acquisition the server leaves unanswered on an open connection, Acquire
// returns ctx's error by the deadline plus the stated grace, and once the
// replies flow again none of its candidates is left. A holds, so B's
// acquisition has a create, a listing and an exists on A's node to be
// held at.
func TestAcquireReturnsWhenItsContextEnds(t *testing.T) {
	for _, op := range []locktrace.Op{locktrace.OpCreate, locktrace.OpChildren, locktrace.OpExists} {
		t.Run(fmt.Sprintf("Acquire returns by the deadline when the reply to %s is held, and leaves no candidate", op), func(t *testing.T) {
			parent, o := freshParent(t)
			a := lock.New(zkclient.Connect(t, "A", []string{server().Client}, zkclient.Quiet()).Conn, parent)
			ha := mustAcquire(t, "A", a)
			b := newWire(t, "B")
			tr, held := b.holdRepliesAt(op)
			lb := lock.New(b.c.Conn, parent, lock.WithTrace(tr))

			ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
			defer cancel()
			_, took, err := returnsBy(t, "B's Acquire", callDeadline+cleanupGrace+scheduling, func() (*lock.Held, error) { return lb.Acquire(ctx) })
			t.Logf("B Acquire returned after %v: %v", took.Round(time.Millisecond), err)
			if !held.Load() {
				t.Fatalf("not shown: B never sent %s, so no reply was held (Acquire said %v)", op, err)
			}
			t.Attr("returned_after", took.Round(time.Millisecond).String())
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("B's Acquire with the reply to %s held: got %v; want an error wrapping context.DeadlineExceeded", op, err)
			}

			t.Logf("fault undone: B's proxy delivers the held replies")
			b.px.Release(faultproxy.Down)
			waitNoneOwned(t, o, parent, "B", b.c.SessionID())
			if err := ha.Release(context.Background()); err != nil {
				t.Fatalf("A release: %v", err)
			}
		})
	}
}

// TestRecoverReturnsWhenItsContextEnds: Recover, after a lost create reply,
// with its sync left unanswered on an open connection, returns ctx's error
// by the deadline, and the lost create's node is gone once the replies flow
// again: an abandoned recovery leaves no candidate, as an abandoned
// acquisition does.
func TestRecoverReturnsWhenItsContextEnds(t *testing.T) {
	parent, o := freshParent(t)
	b := newWire(t, "B")
	tr, held := b.holdRepliesAt(locktrace.OpSync)
	lb := lock.New(b.c.Conn, parent, lock.WithTrace(tr))

	t.Logf("fault: B's proxy loses the reply to B's next create under %s", parent)
	drop := b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpCreate, jute.OpCreate2}, Under: parent})
	ctx0, cancel0 := context.WithTimeout(context.Background(), answerWithin)
	defer cancel0()
	_, err := lb.Acquire(ctx0)
	var ce *lock.CreateError
	if !errors.As(err, &ce) || !drop.Result().Dropped {
		t.Fatalf("not shown: the create's reply was not lost (Acquire said %v; proxy: %s)", err, drop.Result().Reason)
	}
	if owned, err := ownedBy(t, o, parent, b.c.SessionID()); err != nil || len(owned) != 1 {
		t.Fatalf("not shown: after the lost reply B owns %v (%v); want the one node the create made", owned, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	_, took, err := returnsBy(t, "B's Recover", callDeadline+cleanupGrace+scheduling, func() (*lock.Held, error) { return lb.Recover(ctx, ce.GUID) })
	t.Logf("B Recover returned after %v: %v", took.Round(time.Millisecond), err)
	if !held.Load() {
		t.Fatalf("not shown: Recover never sent its sync (it said %v)", err)
	}
	t.Attr("returned_after", took.Round(time.Millisecond).String())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("B's Recover with the sync's reply held: got %v; want an error wrapping context.DeadlineExceeded", err)
	}
	t.Logf("fault undone: B's proxy delivers the held replies")
	b.px.Release(faultproxy.Down)
	waitNoneOwned(t, o, parent, "B", b.c.SessionID())
}

// TestRecoverAdoptsOnlyItsGUIDsNode: nodes of the same session whose names
// merely contain the GUID (<guid>x-lock-…, x<guid>-lock-…) are not the lost
// create's node. With only those under the parent Recover reports
// ErrMissing and leaves them; beside the real one it adopts the real one.
func TestRecoverAdoptsOnlyItsGUIDsNode(t *testing.T) {
	c := zkclient.Connect(t, "B", []string{server().Client}, zkclient.Quiet())
	guid := uuid.NewString()
	lookAlikes := []string{guid + "x", "x" + guid}
	create := func(parent, prefix string) string {
		t.Helper()
		t.Logf("B invoke create %s/%s-lock- EPHEMERAL_SEQUENTIAL", parent, prefix)
		p, err := c.Create(parent+"/"+prefix+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		t.Logf("B ok %s", path.Base(p))
		return path.Base(p)
	}

	t.Run("Recover refuses when only look-alikes of the GUID are there", func(t *testing.T) {
		parent, o := freshParent(t)
		for _, p := range lookAlikes {
			create(parent, p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
		defer cancel()
		h, err := lock.New(c.Conn, parent).Recover(ctx, guid)
		t.Logf("B Recover(%s): %v", guid, err)
		if !errors.Is(err, lock.ErrMissing) {
			if h != nil {
				t.Fatalf("got a hold of %s; want ErrMissing: no node is named %s-lock-<10 digits>", h.Path, guid)
			}
			t.Fatalf("got %v; want ErrMissing: no node is named %s-lock-<10 digits>", err, guid)
		}
		if owned, err := ownedBy(t, o, parent, c.SessionID()); err != nil || len(owned) != len(lookAlikes) {
			t.Fatalf("after Recover: got B's nodes %v (%v); want the %d look-alikes untouched", owned, err, len(lookAlikes))
		}
	})

	t.Run("Recover adopts the real node beside the look-alikes", func(t *testing.T) {
		parent, _ := freshParent(t)
		real := create(parent, guid) // the lost create's node, first in line
		for _, p := range lookAlikes {
			create(parent, p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
		defer cancel()
		h, err := lock.New(c.Conn, parent).Recover(ctx, guid)
		if err != nil {
			t.Fatalf("got %v; want a hold of %s", err, real)
		}
		t.Logf("B Recover(%s): holds %s", guid, h.Path)
		if got := path.Base(h.Path); got != real {
			t.Fatalf("got a hold of %s; want %s", got, real)
		}
		if err := h.Release(ctx); err != nil {
			t.Fatalf("release: %v", err)
		}
	})
}

// TestTryAcquireLeavesNoNodeWhenHeld: TryAcquire holds on a free lock and,
// on a held one, returns ErrLocked with its candidate already deleted.
func TestTryAcquireLeavesNoNodeWhenHeld(t *testing.T) {
	parent, o := freshParent(t)
	ca := zkclient.Connect(t, "A", []string{server().Client}, zkclient.Quiet())
	cb := zkclient.Connect(t, "B", []string{server().Client}, zkclient.Quiet())
	a, b := lock.New(ca.Conn, parent), lock.New(cb.Conn, parent)
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()

	ha, err := a.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("A TryAcquire on a free lock: got %v; want a hold", err)
	}
	t.Logf("A TryAcquire: holds %s", path.Base(ha.Path))

	hb, err := b.TryAcquire(ctx)
	t.Logf("B TryAcquire: %v", err)
	if !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("B TryAcquire while A holds: got %v (hold %v); want ErrLocked", err, hb != nil)
	}
	owned, err := ownedBy(t, o, parent, cb.SessionID())
	t.Attr("b_nodes_after_busy", fmt.Sprint(owned))
	if err != nil || len(owned) != 0 {
		t.Fatalf("after B's busy TryAcquire returned: got B's nodes %v (%v); want none", owned, err)
	}

	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err = b.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("B TryAcquire after A released: got %v; want a hold", err)
	}
	t.Logf("B TryAcquire: holds %s", path.Base(hb.Path))
	if hb.Token.Compare(ha.Token) <= 0 {
		t.Fatalf("B's token %v after A's %v: want it larger", hb.Token, ha.Token)
	}
	_ = hb.Release(ctx)
}

// TestReleaseFinishesItsCleanupAfterItsContextEnds (the CURATOR-678
// scene, ours alone): W holds; its delete never reaches the server (held
// on the wire, then the connection is cut, and reconnects are refused);
// W's Release returns ErrOutcomeUnknown when its context ends. Nobody does
// anything else: once W's client is back in the same session the recipe
// deletes the node by itself, and Gone is closed.
func TestReleaseFinishesItsCleanupAfterItsContextEnds(t *testing.T) {
	parent, o := freshParent(t)
	w := newWire(t, "W")
	lw := lock.New(w.c.Conn, parent, lock.WithTrace(&locktrace.Trace{
		Request: func(r locktrace.RequestInfo) { t.Logf("W invoke %s %s", r.Op, r.Path) },
		Reply:   func(r locktrace.ReplyInfo) { t.Logf("W %s %s: %v", r.Op, r.Path, errOrOK(r.Err)) },
	}))
	h := mustAcquire(t, "W", lw)
	session := w.c.SessionID()

	t.Logf("fault: W's proxy holds what W sends")
	w.px.Hold(faultproxy.Up)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	released := make(chan error, 1)
	go func() { released <- h.Release(ctx) }()
	wait.For(t, answerWithin, "W's delete to be held on the wire", func() (bool, string) {
		st := w.px.Stats()
		return st.UpHeld > 0, fmt.Sprintf("%d bytes held up", st.UpHeld)
	})
	mark := w.c.Mark()
	t.Logf("fault: cut W's connection (the held delete is discarded); new connections refused")
	w.px.Cut(faultproxy.BothEnds)
	t.Cleanup(w.px.Heal)
	if err := w.c.WaitStateSince(mark, zk.StateDisconnected, answerWithin); err != nil {
		t.Fatalf("not shown: W's client never saw the cut: %v", err)
	}
	cancel()
	err := wait.Receive(t, cleanupGrace+scheduling, "W's Release to return after its context ended", released)
	t.Logf("W Release: %v", err)
	if !errors.Is(err, lock.ErrOutcomeUnknown) {
		t.Fatalf("W's Release cut off, ctx ended: got %v; want ErrOutcomeUnknown", err)
	}
	if owned, err := ownedBy(t, o, parent, session); err != nil || len(owned) != 1 {
		t.Fatalf("not shown: with W cut off, got W's nodes %v (%v); want its node still there (the delete never reached the server)", owned, err)
	}
	select {
	case <-h.Gone():
		t.Fatalf("Gone closed while W's node is still on the server")
	default:
	}

	mark = w.c.Mark()
	t.Logf("fault undone: W's proxy heals; nobody calls anything on W")
	w.px.Heal()
	if err := w.c.WaitStateSince(mark, zk.StateHasSession, answerWithin); err != nil {
		t.Fatalf("not shown: W did not reconnect: %v", err)
	}
	if now := w.c.SessionID(); now != session {
		t.Fatalf("not shown: W came back in session 0x%x, not 0x%x", now, session)
	}
	wait.Receive(t, answerWithin, "Gone to close after W is back", h.Gone())
	owned, err := ownedBy(t, o, parent, session)
	t.Attr("w_nodes_after_gone", fmt.Sprint(owned))
	if err != nil || len(owned) != 0 {
		t.Fatalf("Gone closed, W's session still open: got W's nodes %v (%v); want none", owned, err)
	}
	t.Logf("observer ok: W's node is gone and W's session 0x%x is still open", session)
}

// mustAcquire acquires with a bounded context or fails the test.
func mustAcquire(t *testing.T, who string, l *lock.Locker) *lock.Held {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	h, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("%s Acquire: %v", who, err)
	}
	t.Logf("%s holds %s", who, path.Base(h.Path))
	return h
}

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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
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
	return newWireTimeout(t, name, sessionTimeout)
}

// newWireTimeout is newWire with the session timeout the client asks for.
func newWireTimeout(t *testing.T, name string, timeout time.Duration) *wire {
	t.Helper()
	px, err := faultproxy.New(server().Client, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames(), faultproxy.WithLogf(t.Logf))
	if err != nil {
		t.Fatalf("proxy for %s: %v", name, err)
	}
	t.Cleanup(func() { _ = px.Close() })
	c := zkclient.Connect(t, name, []string{px.Addr()}, zkclient.WithSessionTimeout(timeout), zkclient.Quiet())
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

// denyDeletes makes parent's ACL grant every permission but delete, so the
// server refuses the delete of any of its children.
func denyDeletes(t *testing.T, o *zkclient.Client, parent string) {
	t.Helper()
	if _, err := o.SetACL(parent, zk.WorldACL(zk.PermAll&^zk.PermDelete), -1); err != nil {
		t.Fatalf("observer setACL %s: %v", parent, err)
	}
	t.Logf("observer ok: %s grants no delete", parent)
}

// waitNoneOwned waits until session owns no child of parent.
func waitNoneOwned(t *testing.T, o *zkclient.Client, parent, who string, session int64) {
	t.Helper()
	tb.WaitFor(t, answerWithin, who+"'s candidates to be gone", func() (bool, string) {
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
	t.Parallel()
	for _, op := range []locktrace.Op{locktrace.OpCreate, locktrace.OpChildren, locktrace.OpExists} {
		t.Run(fmt.Sprintf("Acquire returns by the deadline when the reply to %s is held, and leaves no candidate", op), func(t *testing.T) {
			t.Parallel()
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

// TestARecoveryReturnsWhenItsContextEnds: a recovery, after a lost create
// reply, with its sync left unanswered on an open connection, returns
// ctx's error by the deadline plus the stated grace, and the lost create's
// node is gone once the replies flow again: an abandoned recovery leaves no
// candidate, as an abandoned acquisition does. The recovery is Acquire's
// own, and Recover's for a GUID the caller kept.
func TestARecoveryReturnsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	t.Run("Acquire, recovering its lost create, returns by the deadline and leaves no candidate", func(t *testing.T) {
		parent, o := freshParent(t)
		b := newWire(t, "B")
		tr, held := b.holdRepliesAt(locktrace.OpSync)
		lb := lock.New(b.c.Conn, parent, lock.WithTrace(tr))
		t.Logf("fault: B's proxy loses the reply to B's next create under %s", parent)
		drop := b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpCreate, jute.OpCreate2}, Under: parent})
		ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
		defer cancel()
		_, took, err := returnsBy(t, "B's Acquire", callDeadline+cleanupGrace+scheduling, func() (*lock.Held, error) { return lb.Acquire(ctx) })
		t.Logf("B Acquire returned after %v: %v", took.Round(time.Millisecond), err)
		if !drop.Result().Dropped || !held.Load() {
			t.Fatalf("not shown: the create's reply lost %v, the recovery's sync sent %v; want both (Acquire said %v; proxy: %s)", drop.Result().Dropped, held.Load(), err, drop.Result().Reason)
		}
		t.Attr("returned_after", took.Round(time.Millisecond).String())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("B's Acquire with its recovery's sync held: got %v; want an error wrapping context.DeadlineExceeded", err)
		}
		// The caller left; the recovery did not fail to decide: ctx's
		// error, not a CreateError, and not a lost connection's error
		// (which says three connections were lost in a row).
		if _, ok := errors.AsType[*lock.CreateError](err); ok || errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("B's Acquire with its recovery's sync held: got %v (a *CreateError: %v); want ctx's error, no *CreateError and no zk.ErrConnectionClosed", err, ok)
		}
		t.Logf("fault undone: B's proxy delivers the held replies")
		b.px.Release(faultproxy.Down)
		waitNoneOwned(t, o, parent, "B", b.c.SessionID())
	})
	t.Run("Recover of a kept GUID returns by the deadline and leaves no candidate", func(t *testing.T) {
		parent, o := freshParent(t)
		b := newWire(t, "B")
		tr, held := b.holdRepliesAt(locktrace.OpSync)
		lb := lock.New(b.c.Conn, parent, lock.WithTrace(tr))
		guid := createCandidate(b.c.Conn, parent)
		ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
		defer cancel()
		_, took, err := returnsBy(t, "B's Recover", callDeadline+cleanupGrace+scheduling, func() (*lock.Held, error) { return lb.Recover(ctx, guid) })
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
	})
}

// TestRecoverAdoptsOnlyItsGUIDsNode: nodes of the same session whose names
// merely contain the GUID (<guid>x-lock-…, x<guid>-lock-…, and
// <guid>-lock-x-lock-…, whose sequence suffix parses) are not the lost
// create's node. With only those under the parent Recover reports
// ErrMissing and leaves them; beside the real one it adopts the real one.
func TestRecoverAdoptsOnlyItsGUIDsNode(t *testing.T) {
	c := zkclient.Connect(t, "B", []string{server().Client}, zkclient.Quiet())
	guid := uuid.NewString()
	lookAlikes := []string{guid + "x", "x" + guid, guid + "-lock-x"}
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
	// Once Release has returned, its cleanup goes on untraced: the trace
	// is the caller's, who may be gone (a test that returned).
	healed := new(atomic.Bool)
	var afterHeal atomic.Int32
	lw := lock.New(w.c.Conn, parent, lock.WithTrace(&locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			if healed.Load() {
				afterHeal.Add(1)
			}
			t.Logf("W invoke %s %s", r.Op, r.Path)
		},
		Reply: func(r locktrace.ReplyInfo) {
			if healed.Load() {
				afterHeal.Add(1)
			}
			t.Logf("W %s %s: %v", r.Op, r.Path, errOrOK(r.Err))
		},
	}))
	h := mustAcquire(t, "W", lw)
	session := w.c.SessionID()

	t.Logf("fault: W's proxy holds what W sends")
	w.px.Hold(faultproxy.Up)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	released := make(chan error, 1)
	go func() { released <- h.Release(ctx) }()
	tb.WaitFor(t, answerWithin, "W's delete to be held on the wire", func() (bool, string) {
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
	err := tb.Receive(t, cleanupGrace+scheduling, "W's Release to return after its context ended", released)
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
	healed.Store(true)
	w.px.Heal()
	if err := w.c.WaitStateSince(mark, zk.StateHasSession, answerWithin); err != nil {
		t.Fatalf("not shown: W did not reconnect: %v", err)
	}
	if now := w.c.SessionID(); now != session {
		t.Fatalf("not shown: W came back in session 0x%x, not 0x%x", now, session)
	}
	tb.Receive(t, answerWithin, "Gone to close after W is back", h.Gone())
	owned, err := ownedBy(t, o, parent, session)
	t.Attr("w_nodes_after_gone", fmt.Sprint(owned))
	if err != nil || len(owned) != 0 {
		t.Fatalf("Gone closed, W's session still open: got W's nodes %v (%v); want none", owned, err)
	}
	if n := afterHeal.Load(); n != 0 {
		t.Fatalf("W's cleanup after its Release returned: got %d trace callbacks; want none (the cleanup outlives its caller untraced)", n)
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

// recorder is a Trace that logs each request and reply of one participant
// and counts the requests by op.
type recorder struct {
	mu    sync.Mutex
	sent  map[locktrace.Op]int
	ended []locktrace.End
}

func (r *recorder) trace(t *testing.T, who string) *locktrace.Trace {
	r.sent = map[locktrace.Op]int{}
	return &locktrace.Trace{
		Request: func(i locktrace.RequestInfo) {
			t.Logf("%s invoke %s %s", who, i.Op, i.Path)
			r.mu.Lock()
			r.sent[i.Op]++
			r.mu.Unlock()
		},
		Reply: func(i locktrace.ReplyInfo) { t.Logf("%s %s %s: %v", who, i.Op, path.Base(i.Path), errOrOK(i.Err)) },
		Ended: func(i locktrace.EndInfo) {
			t.Logf("%s %s %s: %v", who, i.End, path.Base(i.Path), i.Err)
			r.mu.Lock()
			r.ended = append(r.ended, i.End)
			r.mu.Unlock()
		},
	}
}

func (r *recorder) count(op locktrace.Op) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[op]
}

func (r *recorder) ends() []locktrace.End {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ended)
}

// TestALostCandidacyDeletesNothing: a candidacy or hold that is over
// because its node is gone ends as lost, and the recipe sends no delete:
// there is nothing of its own left to delete, and a delete of the path
// could only hit what is not its own. A waiter whose node another client
// deleted learns it at its next listing; a holder learns it from Lost, and
// its Release says so (and Gone is closed).
func TestALostCandidacyDeletesNothing(t *testing.T) {
	t.Run("a waiter whose node was deleted ends as lost and deletes nothing", func(t *testing.T) {
		parent, o := freshParent(t)
		a := lock.New(zkclient.Connect(t, "A", []string{server().Client}, zkclient.Quiet()).Conn, parent)
		ha := mustAcquire(t, "A", a)
		var rb recorder
		waiting := make(chan string, 1)
		tr := rb.trace(t, "B")
		tr.Waiting = func(i locktrace.WatchInfo) {
			select {
			case waiting <- i.Own:
			default:
			}
		}
		b := lock.New(zkclient.Connect(t, "B", []string{server().Client}, zkclient.Quiet()).Conn, parent, lock.WithTrace(tr))
		ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
		defer cancel()
		done := make(chan error, 1)
		go func() { _, err := b.Acquire(ctx); done <- err }()
		own := tb.Receive(t, answerWithin, "B to wait on A's node", waiting)
		t.Logf("observer invoke delete %s (B's node)", own)
		if err := o.Delete(parent+"/"+own, -1); err != nil {
			t.Fatalf("not shown: delete B's node: %v", err)
		}
		if err := ha.Release(ctx); err != nil {
			t.Fatalf("A release: %v", err)
		}
		err := tb.Receive(t, answerWithin, "B's Acquire to return after A released", done)
		if !errors.Is(err, lock.ErrLostCandidacy) {
			t.Fatalf("B's Acquire with its node deleted: got %v; want ErrLostCandidacy", err)
		}
		if n, ends := rb.count(locktrace.OpDelete), rb.ends(); n != 0 || !slices.Equal(ends, []locktrace.End{locktrace.EndLost}) {
			t.Fatalf("B's lost candidacy: got %d deletes sent and ends %v; want none sent and [lost]", n, ends)
		}
	})

	t.Run("a holder whose node was deleted is told by Lost, and its Release deletes nothing", func(t *testing.T) {
		parent, o := freshParent(t)
		var ra recorder
		a := lock.New(zkclient.Connect(t, "A", []string{server().Client}, zkclient.Quiet()).Conn, parent, lock.WithTrace(ra.trace(t, "A")))
		ha := mustAcquire(t, "A", a)
		lost := ha.Lost()
		t.Logf("observer invoke delete %s (A's node)", path.Base(ha.Path))
		if err := o.Delete(ha.Path, -1); err != nil {
			t.Fatalf("not shown: delete A's node: %v", err)
		}
		tb.Receive(t, answerWithin, "A's Lost to close after its node was deleted", lost)
		err := ha.Release(context.Background())
		t.Logf("A Release: %v", err)
		if !errors.Is(err, lock.ErrLostCandidacy) {
			t.Fatalf("A's Release after Lost closed: got %v; want ErrLostCandidacy", err)
		}
		if n := ra.count(locktrace.OpDelete); n != 0 {
			t.Fatalf("A's Release of a hold known lost: got %d deletes sent; want none", n)
		}
		select {
		case <-ha.Gone():
		default:
			t.Fatalf("A's Gone still open after Release of a hold known lost; want it closed")
		}
	})
}

// TestLostArmedAfterTheNodeIsGoneCloses: Lost called for the first time
// after the hold's node was deleted finds no node to watch and closes.
func TestLostArmedAfterTheNodeIsGoneCloses(t *testing.T) {
	parent, o := freshParent(t)
	h := mustAcquire(t, "H", lock.New(zkclient.Connect(t, "H", []string{server().Client}, zkclient.Quiet()).Conn, parent))
	t.Logf("observer invoke delete %s (H's node)", path.Base(h.Path))
	if err := o.Delete(h.Path, -1); err != nil {
		t.Fatalf("not shown: delete H's node: %v", err)
	}
	tb.Receive(t, answerWithin, "H's Lost, armed after its node was deleted, to close", h.Lost())
	if err := h.Release(context.Background()); !errors.Is(err, lock.ErrLostCandidacy) {
		t.Fatalf("H's Release: got %v; want ErrLostCandidacy", err)
	}
}

// TestLostClosesOnRelease: Release ends the hold, and Lost says so, whether
// it was armed before the Release (its watch on the own node is then
// stopped by the Release, not by the deletion it causes) or only asked
// for after it. Lost's doc promises both; Err's, that a Release that
// deleted the node leaves ErrReleased alone as the cause.
func TestLostClosesOnRelease(t *testing.T) {
	parent, _ := freshParent(t)
	l := lock.New(zkclient.Connect(t, "H", []string{server().Client}, zkclient.Quiet()).Conn, parent)
	armed := mustAcquire(t, "H", l)
	lost := armed.Lost()
	if err := armed.Release(context.Background()); err != nil {
		t.Fatalf("H's first Release: %v", err)
	}
	tb.Receive(t, answerWithin, "H's Lost, armed before its Release, to close", lost)
	if err := armed.Err(); err == nil || err.Error() != lock.ErrReleased.Error() {
		t.Fatalf("Err after a Release that deleted the node: got %v; want %v alone (the hold had no earlier cause to end)", err, lock.ErrReleased)
	}
	later := mustAcquire(t, "H", l)
	if err := later.Release(context.Background()); err != nil {
		t.Fatalf("H's second Release: %v", err)
	}
	select {
	case <-later.Lost():
	default:
		t.Fatalf("Lost asked for after Release: got an open channel; want it closed: the hold is over")
	}
}

// TestAListingIsRetriedThreeTimes: a reply to the listing lost with the
// connection is never an empty queue; the recipe lists again, at most
// maxConnRetries (3) times in a row, then gives up with the connection's
// error. Here every listing's reply is lost.
func TestAListingIsRetriedThreeTimes(t *testing.T) {
	t.Parallel()
	parent, o := freshParent(t)
	b := newWire(t, "B")
	var drops []*faultproxy.Drop
	var mu sync.Mutex
	lb := lock.New(b.c.Conn, parent, lock.WithTrace(&locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			t.Logf("B invoke %s %s", r.Op, r.Path)
			if r.Op == locktrace.OpChildren {
				t.Logf("fault: B's proxy loses the reply to this listing")
				mu.Lock()
				drops = append(drops, b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: parent}))
				mu.Unlock()
			}
		},
		Reply: func(r locktrace.ReplyInfo) { t.Logf("B %s %s: %v", r.Op, path.Base(r.Path), errOrOK(r.Err)) },
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*answerWithin)
	defer cancel()
	_, err := lb.Acquire(ctx)
	t.Logf("B Acquire: %v", err)
	mu.Lock()
	sent := len(drops)
	mu.Unlock()
	t.Attr("listings_sent", fmt.Sprint(sent))
	for i, d := range drops[:sent-1] {
		if !d.Result().Dropped {
			t.Fatalf("not shown: the reply to listing %d was not lost: %s", i+1, d.Result().Reason)
		}
	}
	if !errors.Is(err, zk.ErrConnectionClosed) || sent != 4 {
		t.Fatalf("B's Acquire with every listing's reply lost: got %v after %d listings; want zk.ErrConnectionClosed after 4 (one and 3 retries)", err, sent)
	}
	waitNoneOwned(t, o, parent, "B", b.c.SessionID())
}

// TestLostWatchesTheHoldsNodeOnce: a hold sets one watch on its own node
// when it is made, and Lost, however often it is called, sends nothing (it
// has no side effect); a data change on the node is no end of the hold:
// the recipe watches again and Lost stays open; the deletion closes it.
func TestLostWatchesTheHoldsNodeOnce(t *testing.T) {
	parent, o := freshParent(t)
	h := newWire(t, "H")
	exists := func() int { return h.px.Requests(jute.OpExists) }
	base := exists()
	held := mustAcquire(t, "H", lock.New(h.c.Conn, parent))
	// A fresh Locker's first acquisition checks the parent with exists; the
	// hold then sets its watch: two in all.
	tb.WaitFor(t, answerWithin, "H's watch on its own node", func() (bool, string) {
		return exists()-base >= 2, fmt.Sprintf("%d exists sent", exists()-base)
	})
	lost := held.Lost()
	held.Lost()
	if _, err := h.c.Sync(parent); err != nil { // every request sent before it has gone out
		t.Fatalf("H sync: %v", err)
	}
	open := func(when string) {
		t.Helper()
		select {
		case <-lost:
			t.Fatalf("%s: got Lost closed while H's node is there; want it open", when)
		default:
		}
	}
	if n := exists() - base; n != 2 {
		t.Fatalf("a hold, and Lost called twice: got %d exists sent (the parent's check included); want 2: one watch on H's node, none for Lost", n)
	}
	base += 1
	open("after the watch was set")

	t.Logf("observer invoke set %s (H's node's data)", path.Base(held.Path))
	if _, err := o.Set(held.Path, []byte("x"), -1); err != nil {
		t.Fatalf("not shown: set data: %v", err)
	}
	tb.WaitFor(t, answerWithin, "H to watch its node again after the data change", func() (bool, string) {
		return exists()-base == 2, fmt.Sprintf("%d exists sent by H", exists()-base)
	})
	open("after the data change")

	t.Logf("observer invoke delete %s", path.Base(held.Path))
	if err := o.Delete(held.Path, -1); err != nil {
		t.Fatalf("not shown: delete: %v", err)
	}
	tb.Receive(t, answerWithin, "H's Lost to close after its node was deleted", lost)
	if err := held.Release(context.Background()); !errors.Is(err, lock.ErrLostCandidacy) {
		t.Fatalf("H's Release after its node was deleted: got %v; want ErrLostCandidacy", err)
	}
}

// TestRecoverRetriesALostSync: the reply to Recover's own sync lost with
// the connection is sent again after the reconnect, as every idempotent
// call of the recipe is; Recover then adopts the node.
func TestRecoverRetriesALostSync(t *testing.T) {
	parent, _ := freshParent(t)
	b := newWire(t, "B")
	guid := uuid.NewString()
	p, err := b.c.Create(parent+"/"+guid+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Logf("B ok %s (the node of a create whose reply was lost)", path.Base(p))
	t.Logf("fault: B's proxy loses the reply to B's next sync")
	drop := b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpSync}})
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	recovered := make(chan string, 2)
	seam := &locktrace.Trace{Recovered: func(n locktrace.NodeInfo) { recovered <- n.Path }}
	h, err := lock.New(b.c.Conn, parent, lock.WithTrace(seam)).Recover(ctx, guid)
	if !drop.Result().Dropped {
		t.Fatalf("not shown: the sync's reply was not lost: %s (Recover: %v)", drop.Result().Reason, err)
	}
	if err != nil {
		t.Fatalf("Recover with its sync's reply lost: got %v; want a hold of %s", err, path.Base(p))
	}
	close(recovered) // Recover has returned: no call comes after
	var calls []string
	for c := range recovered {
		calls = append(calls, c)
	}
	if !slices.Equal(calls, []string{p}) {
		t.Fatalf("the seam's Recovered after Recover adopted %s: got calls %q; want one, for %s", path.Base(p), calls, p)
	}
	t.Logf("B Recover: holds %s", path.Base(h.Path))
	_ = h.Release(ctx)
}

// loss is one fault of loseInTurn: the request m selects, or its reply,
// lost with the connection.
type loss struct {
	m       faultproxy.Match
	request bool
}

// loseInTurn arms the first of faults on w's proxy now and each next one
// once the one before it was spent, before the client has reconnected to
// send again. The returned function closes the proxy (which spends a
// fault still armed) and returns how many took.
func (w *wire) loseInTurn(faults []loss) func() int {
	arm := func(f loss) *faultproxy.Drop {
		if f.request {
			return w.px.LoseRequest(f.m)
		}
		return w.px.LoseReply(f.m)
	}
	d := arm(faults[0])
	lost := make(chan int, 1)
	go func() {
		n := 0
		for {
			<-d.Done()
			if !d.Result().Dropped {
				break
			}
			w.t.Logf("fault: %s's proxy lost %s's %s (the request: %v)", w.name, w.name, faults[n].m, faults[n].request)
			if n++; n == len(faults) {
				break
			}
			d = arm(faults[n])
		}
		lost <- n
	}()
	return func() int {
		w.px.Close()
		return <-lost
	}
}

// TestRecoverCountsItsRetriesInARow: Recover's look-up sends a request
// again after a lost connection up to 3 times in a row, counted from the
// last answered request (package doc, errors table): its sync's reply
// lost once, then answered, then three listing replies lost, and Recover
// still adopts the node.
func TestRecoverCountsItsRetriesInARow(t *testing.T) {
	parent, _ := freshParent(t)
	b := newWire(t, "B")
	guid := createCandidate(b.c.Conn, parent)
	faults := []loss{{m: faultproxy.Match{Ops: []int32{jute.OpSync}}}}
	for range 3 {
		faults = append(faults, loss{m: faultproxy.Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: parent}})
	}
	took := b.loseInTurn(faults)
	ctx, cancel := context.WithTimeout(context.Background(), 2*answerWithin)
	defer cancel()
	h, err := lock.New(b.c.Conn, parent).Recover(ctx, guid)
	if err == nil {
		t.Logf("B Recover: holds %s", path.Base(h.Path))
		_ = h.Release(ctx)
	}
	if n := took(); n != len(faults) {
		t.Fatalf("not shown: %d of the %d replies lost (Recover: %v)", n, len(faults), err)
	}
	if err != nil {
		t.Fatalf("Recover after a lost sync, an answered one and three lost listings: got %v; want a hold (the count restarts at an answer)", err)
	}
}

// TestReleaseCountsItsRetriesInARow: Release's delete, and the exists
// that looks whether a delete lost with the connection took, are sent
// again up to 3 lost connections in a row, counted from the last answered
// request (package doc, errors table): a lost delete, two lost exists
// replies, an answered exists (the node is still there), another lost
// delete, and Release still deletes the node.
func TestReleaseCountsItsRetriesInARow(t *testing.T) {
	parent, o := freshParent(t)
	b := newWire(t, "B")
	h := mustAcquire(t, "B", lock.New(b.c.Conn, parent))
	del := loss{m: faultproxy.Match{Ops: []int32{jute.OpDelete}, Path: h.Path}, request: true}
	exists := loss{m: faultproxy.Match{Ops: []int32{jute.OpExists}, Path: h.Path}}
	faults := []loss{del, exists, exists, del}
	took := b.loseInTurn(faults)
	ctx, cancel := context.WithTimeout(context.Background(), 2*answerWithin)
	defer cancel()
	err := h.Release(ctx)
	if n := took(); n != len(faults) {
		t.Fatalf("not shown: %d of the %d faults took (Release: %v)", n, len(faults), err)
	}
	if err != nil {
		t.Fatalf("Release after a lost delete, two lost exists, an answered one and a lost delete: got %v; want nil (the count restarts at an answer)", err)
	}
	if ok, _, err := o.Exists(h.Path); err != nil || ok {
		t.Fatalf("after Release returned nil: got B's node there %v (%v); want it gone", ok, err)
	}
}

// TestRecoverOfAnAmbiguousGUIDDeletesItsOwnNodesOnly: several nodes of
// one GUID in this session (a blind retry's) make Recover refuse with
// ErrAmbiguous; its error lists them by sequence number, whatever order the
// server listed them in, and Recover deletes them all, since none is held
// and all are its own. Another session's nodes of the same GUID are
// listed, by sequence number too, as not adopted, and left alone.
func TestRecoverOfAnAmbiguousGUIDDeletesItsOwnNodesOnly(t *testing.T) {
	parent, o := freshParent(t)
	c := zkclient.Connect(t, "B", []string{server().Client}, zkclient.Quiet())
	guid := uuid.NewString()
	create := func(who string, c *zkclient.Client) string {
		p, err := c.Create(parent+"/"+guid+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("%s create: %v", who, err)
		}
		t.Logf("%s ok %s", who, path.Base(p))
		return path.Base(p)
	}
	var made []string
	for range 8 {
		made = append(made, create("B", c))
	}
	var foreign []string
	for range 8 {
		foreign = append(foreign, create("observer", o))
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	_, err := lock.New(c.Conn, parent).Recover(ctx, guid)
	t.Logf("B Recover: %v", err)
	re, ok := errors.AsType[*lock.RecoverError](err)
	if !ok || !errors.Is(err, lock.ErrAmbiguous) {
		t.Fatalf("Recover with 8 nodes of its GUID: got %v; want a *RecoverError wrapping ErrAmbiguous", err)
	}
	if got, want := fmt.Sprint(re.Owned, re.Deleted, re.Foreign), fmt.Sprint(made, made, foreign); got != want {
		t.Fatalf("Recover's error: got owned, deleted, foreign %s; want %s", got, want)
	}
	if want := "owned by this session: " + strings.Join(made, ", "); !strings.Contains(err.Error(), want) {
		t.Fatalf("Recover's error: got %q; want it to list %q", err, want)
	}
	waitNoneOwned(t, o, parent, "B", c.SessionID())
	for _, f := range foreign {
		if ok, _, err := o.Exists(parent + "/" + f); err != nil || !ok {
			t.Fatalf("the observer's node %s of the same GUID: got exists %v (%v); want it left alone", f, ok, err)
		}
	}
}

// TestRecoverSaysWhyItsAmbiguousNodesStay: when the server refuses
// Recover's deletes of this session's ambiguous nodes (here the parent's
// ACL grants no delete), the *RecoverError says so: Deleted is empty and
// Cleanup wraps the server's answer, so errors.Is finds zk.ErrNoAuth.
func TestRecoverSaysWhyItsAmbiguousNodesStay(t *testing.T) {
	parent, o := freshParent(t)
	c := zkclient.Connect(t, "B", []string{server().Client}, zkclient.Quiet())
	guid := uuid.NewString()
	for range 2 {
		p, err := c.Create(parent+"/"+guid+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("B create: %v", err)
		}
		t.Logf("B ok %s", path.Base(p))
	}
	denyDeletes(t, o, parent)
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	_, err := lock.New(c.Conn, parent).Recover(ctx, guid)
	t.Logf("B Recover: %v", err)
	re, ok := errors.AsType[*lock.RecoverError](err)
	if !ok || !errors.Is(err, lock.ErrAmbiguous) || !errors.Is(err, zk.ErrNoAuth) || len(re.Deleted) != 0 || re.Cleanup == nil {
		t.Fatalf("Recover with 2 nodes of its GUID it may not delete: got %v; want a *RecoverError wrapping ErrAmbiguous and zk.ErrNoAuth, Deleted empty, Cleanup set", err)
	}
}

// shortSession is the session timeout TestALateCreateInANewSessionIsDeleted
// asks for: the server grants at least two ticks (4 s), and the test waits
// for that session to expire.
const shortSession = 4 * time.Second

// TestALateCreateInANewSessionIsDeleted: a create that goes out after the
// acquisition's session has given way to a new one makes its node in the
// new session. It bears the acquisition's GUID and nobody will ever hold
// or release it, so the recipe deletes it, whoever's session it is in:
// once the answer comes when the caller has left, and before Acquire
// returns ErrSessionChanged when the caller still waits. B's session
// expires behind its blackholed proxy while B's create is about to be
// sent; the create goes out in B's new session. When the caller leaves,
// the create's reply is held first, and once the reply flows the node is
// gone; when it stays, the reply flows, and the node is gone by Acquire's
// return.
func TestALateCreateInANewSessionIsDeleted(t *testing.T) {
	t.Parallel()
	t.Run("the caller left before the answer: the node is deleted once it comes", func(t *testing.T) { t.Parallel(); lateCreateInANewSession(t, false) })
	t.Run("the caller waits: Acquire deletes the node and returns ErrSessionChanged", func(t *testing.T) { t.Parallel(); lateCreateInANewSession(t, true) })
}

// lateCreateInANewSession is TestALateCreateInANewSessionIsDeleted with
// the caller leaving before the answer, or staying for it.
func lateCreateInANewSession(t *testing.T, stays bool) {
	parent, o := freshParent(t)
	b := newWireTimeout(t, "B", shortSession)
	old := b.c.SessionID()
	marker := parent + "-marker-of-B"
	if _, err := b.c.Create(marker, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("B create %s: %v", marker, err)
	}
	t.Logf("B ok: ephemeral %s in session 0x%x", marker, old)

	reached, proceed := make(chan struct{}), make(chan struct{})
	letCreateGo := sync.OnceFunc(func() { close(proceed) })
	defer letCreateGo() // whatever fails, the acquisition is not left parked
	var once sync.Once
	tr := &locktrace.Trace{Request: func(r locktrace.RequestInfo) {
		t.Logf("B invoke %s %s", r.Op, r.Path)
		if r.Op == locktrace.OpCreate {
			once.Do(func() { close(reached); <-proceed })
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		h   *lock.Held
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := lock.New(b.c.Conn, parent, lock.WithTrace(tr)).Acquire(ctx)
		done <- result{h, err}
	}()
	select {
	case <-reached:
	case <-time.After(answerWithin):
		t.Fatalf("B's acquisition did not reach its create within %v", answerWithin)
	}

	t.Logf("fault: B's proxy blackholes both directions until B's session 0x%x expires", old)
	b.px.Blackhole(faultproxy.Both)
	tb.WaitFor(t, answerWithin+shortSession, "B's session to expire on the server (its ephemeral marker gone)", func() (bool, string) {
		ok, _, err := o.Exists(marker)
		return err == nil && !ok, fmt.Sprintf("marker there: %v, err %v", ok, err)
	})
	t.Logf("observer ok: %s gone: session 0x%x expired", marker, old)
	b.px.Heal()
	tb.WaitFor(t, answerWithin, "B's client to have a new session", func() (bool, string) {
		s := b.c.SessionID()
		return s != 0 && s != old, fmt.Sprintf("session 0x%x", s)
	})
	fresh := b.c.SessionID()
	t.Logf("B info new session 0x%x", fresh)

	creates := func() int { return b.px.Requests(jute.OpCreate, jute.OpCreate2) }
	before := creates()
	if stays {
		letCreateGo()
		select {
		case r := <-done:
			t.Logf("B Acquire: %v", r.err)
			if r.h != nil || !errors.Is(r.err, lock.ErrSessionChanged) || creates() == before {
				t.Fatalf("B's Acquire whose create went out in its new session: got %v, %v (%d creates passed); want ErrSessionChanged after the create", r.h, r.err, creates()-before)
			}
		case <-time.After(answerWithin):
			t.Fatalf("B's Acquire: got no return within %v of its create going out; want ErrSessionChanged", answerWithin)
		}
		if owned, err := ownedBy(t, o, parent, fresh); err != nil || len(owned) != 0 {
			t.Fatalf("at B's Acquire's return: got B's new session owning %v (%v); want none", owned, err)
		}
		return
	}
	t.Logf("fault: B's proxy holds every reply from now on; the connection stays open")
	b.px.Hold(faultproxy.Down)
	letCreateGo()
	tb.WaitFor(t, answerWithin, "B's create to reach the server", func() (bool, string) {
		return creates() > before, fmt.Sprintf("%d creates passed", creates())
	})
	tb.WaitFor(t, answerWithin, "B's candidate to exist in its new session", func() (bool, string) {
		owned, err := ownedBy(t, o, parent, fresh)
		return err == nil && len(owned) == 1, fmt.Sprintf("new session owns %v, err %v", owned, err)
	})
	owned, _ := ownedBy(t, o, parent, fresh)
	t.Logf("observer ok: %s owned by B's new session 0x%x", owned[0], fresh)

	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("B's Acquire after its caller left: got %v, %v; want context.Canceled", r.h, r.err)
		}
		t.Logf("B fail acquire: %v", r.err)
	case <-time.After(cleanupGrace + scheduling):
		t.Fatalf("B's Acquire: got no return within %v of its caller leaving; want context.Canceled", cleanupGrace+scheduling)
	}
	b.px.Release(faultproxy.Down)
	t.Logf("fault: B's proxy delivers the held replies")
	waitNoneOwned(t, o, parent, "B's new session", fresh)
}

// TestTheTokenCarriesTheParentsCzxidByDefault: without an option, a hold's
// token names its lock and carries the parent's czxid as its domain, so a
// recreated parent's holders order after the old one's (claim T2's
// repair); WithoutCzxidDomain leaves the domain 0.
func TestTheTokenCarriesTheParentsCzxidByDefault(t *testing.T) {
	parent, o := freshParent(t)
	_, st, err := o.Exists(parent)
	if err != nil {
		t.Fatalf("observer exists %s: %v", parent, err)
	}
	c := zkclient.Connect(t, "H", []string{server().Client}, zkclient.Quiet())
	for _, tc := range []struct {
		name   string
		opts   []lock.Option
		domain int64
	}{{"by default", nil, st.Czxid}, {"WithoutCzxidDomain", []lock.Option{lock.WithoutCzxidDomain()}, 0}} {
		h := mustAcquire(t, "H", lock.New(c.Conn, parent, tc.opts...))
		t.Logf("H holds with token %v (%s)", h.Token, tc.name)
		if h.Token.Domain != tc.domain || h.Token.Lock != fence.LockID(parent) {
			t.Fatalf("H's token %s: got domain %d, lock %q; want domain %d (the parent's czxid is %d) and lock %q", tc.name, h.Token.Domain, h.Token.Lock, tc.domain, st.Czxid, fence.LockID(parent))
		}
		if err := h.Release(context.Background()); err != nil {
			t.Fatalf("H release: %v", err)
		}
	}
}

// TestAcquireDeletesTheNodesOfAnAmbiguousCreate: when Acquire's own
// recovery of a lost create reply finds two nodes of its GUID in its
// session (here the test makes the first through B's connection, in the
// trace's Request callback, just before the recipe's create goes out and
// loses its reply), none is held and both are its own: Acquire deletes
// them and returns a *CreateError wrapping ErrAmbiguous that names them.
// When the server refuses the deletes (the parent's ACL grants none), the
// error's Cleanup says so, as RecoverError's does, and errors.Is finds
// zk.ErrNoAuth.
func TestAcquireDeletesTheNodesOfAnAmbiguousCreate(t *testing.T) {
	t.Parallel()
	for _, refused := range []bool{false, true} {
		name := "Acquire deletes both nodes of its GUID and names them"
		if refused {
			name = "Acquire whose deletes are refused says why in Cleanup"
		}
		t.Run(name, func(t *testing.T) {
			parent, o := freshParent(t)
			b := newWire(t, "B")
			if refused {
				denyDeletes(t, o, parent)
			}
			var drop *faultproxy.Drop
			var first atomic.Bool
			tr := &locktrace.Trace{Request: func(r locktrace.RequestInfo) {
				t.Logf("B invoke %s %s", r.Op, r.Path)
				if r.Op != locktrace.OpCreate || first.Swap(true) {
					return
				}
				p, err := b.c.Create(r.Path, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
				t.Logf("B (the test, on B's connection) create %s: %s %v", r.Path, path.Base(p), errOrOK(err))
				t.Logf("fault: B's proxy loses the reply to B's next create under %s", parent)
				drop = b.px.LoseReply(faultproxy.Match{Ops: []int32{jute.OpCreate, jute.OpCreate2}, Under: parent})
			}}
			lb := lock.New(b.c.Conn, parent, lock.WithTrace(tr))
			ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
			defer cancel()
			h, err := lb.Acquire(ctx)
			t.Logf("B Acquire: %v", err)
			if h != nil {
				t.Fatalf("B's Acquire with two nodes of its GUID: got a hold of %s; want none", h.Path)
			}
			if drop == nil || !drop.Result().Dropped {
				t.Fatalf("not shown: the recipe's create reply was not lost (Acquire said %v)", err)
			}
			ce, ok := errors.AsType[*lock.CreateError](err)
			if !ok || !errors.Is(err, lock.ErrAmbiguous) || len(ce.Owned) != 2 {
				t.Fatalf("B's Acquire with two nodes of its GUID: got %v; want a *CreateError wrapping ErrAmbiguous that names both", err)
			}
			t.Attr("deleted", fmt.Sprint(ce.Deleted))
			if refused {
				if len(ce.Deleted) != 0 || ce.Cleanup == nil || !errors.Is(err, zk.ErrNoAuth) {
					t.Fatalf("B's Acquire whose deletes are refused: got Deleted %v, Cleanup %v; want none deleted and Cleanup wrapping zk.ErrNoAuth", ce.Deleted, ce.Cleanup)
				}
				return
			}
			if !slices.Equal(ce.Deleted, ce.Owned) || ce.Cleanup != nil {
				t.Fatalf("B's Acquire: got Deleted %v, Cleanup %v; want both of %v deleted and no Cleanup", ce.Deleted, ce.Cleanup, ce.Owned)
			}
			if owned, err := ownedBy(t, o, parent, b.c.SessionID()); err != nil || len(owned) != 0 {
				t.Fatalf("after B's Acquire returned: got B's nodes %v (%v); want none", owned, err)
			}
		})
	}
}

// TestReleaseRefusedByTheParentsACLSaysSo: when the server refuses
// Release's delete (the parent's ACL grants no delete, so the node stays
// first in the queue), Release says so with the server's answer,
// zk.ErrNoAuth, and not with ErrOutcomeUnknown: the outcome is known. The
// hold is over and Gone closes; the node goes with the session.
func TestReleaseRefusedByTheParentsACLSaysSo(t *testing.T) {
	parent, o := freshParent(t)
	b := newWire(t, "B")
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	l := lock.New(b.c.Conn, parent)
	h, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("B Acquire: %v", err)
	}
	t.Logf("B ok: holds %s", path.Base(h.Path))
	denyDeletes(t, o, parent)
	err = h.Release(ctx)
	t.Logf("B Release: %v", err)
	if !errors.Is(err, zk.ErrNoAuth) || errors.Is(err, lock.ErrOutcomeUnknown) {
		t.Fatalf("B's Release refused by the parent's ACL: got %v; want an error wrapping zk.ErrNoAuth and not ErrOutcomeUnknown", err)
	}
	tb.Receive(t, answerWithin, "B's Gone to close", h.Gone())
	if owned, err := ownedBy(t, o, parent, b.c.SessionID()); err != nil || len(owned) != 1 {
		t.Fatalf("after B's refused Release: got B's nodes %v (%v); want its node still there", owned, err)
	}
	// The hold is over, though its node stays: the Locker no longer counts
	// the node as a live hold's, so Recover of its GUID adopts it.
	again, err := l.Recover(ctx, h.GUID)
	if err != nil || again.Path != h.Path {
		t.Fatalf("B Recover of the released hold's GUID, its node still there: got %v (%v); want a hold of %s", again, err, path.Base(h.Path))
	}
	t.Logf("B ok: Recover holds %s again", path.Base(again.Path))
}

package zk19_test

// The lock claims (L1–L10, article §3 "临时顺序锁怎样判断资格") run the recipe
// of internal/lock against real servers. Timing comes from the recipe's
// Probe and from reads that order notifications, never from sleeping. The
// go-zookeeper comparison is in peers_test.go, the benchmarks in
// bench_test.go, the shared helpers in contenders_test.go.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/fence"
	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

var herd1000 = flag.Bool("zk19.herd1000", false, "L7: also measure N=1000 candidates (1000 sessions)")

// TestL1_FreshGUIDEphemeralSequentialUnderOneParent: every logical
// acquisition names its node with a GUID of its own, and the node is an
// ephemeral, sequential child of the one persistent lock parent (claim L1,
// §3 ¶1).
//
// Session A acquires and releases three times: each hold has a new
// version-4 UUID and a name <guid>-lock-<10 digits> directly under the
// parent; a second session reads A's session as the node's ephemeralOwner
// and a growing sequence number. A candidate goes when its session closes.
// The first acquisition refuses a missing or an ephemeral parent (the
// constructor makes no call, so it cannot check).
func TestL1_FreshGUIDEphemeralSequentialUnderOneParent(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L1")
	d, da, root, ctx := lockRoom(t, []string{s.Client})
	a := join(t, "A", []string{s.Client}, root, joinOpts{})

	phase(t, "three acquisitions by session A, one after another")
	var guids []string
	last := int64(-1)
	for i := 0; i < 3; i++ {
		h, err := a.l.Acquire(ctx)
		if err != nil {
			t.Fatalf("A acquire %d: %v", i, err)
		}
		if u, err := uuid.Parse(h.GUID); err != nil || u.Version() != 4 {
			t.Errorf("L1 violated: got GUID %q (%v); want a version-4 UUID", h.GUID, err)
		}
		if slices.Contains(guids, h.GUID) {
			t.Errorf("L1 violated: GUID %s used by two acquisitions", h.GUID)
		}
		guids = append(guids, h.GUID)
		if want := fmt.Sprintf("%s/%s%s%010d", root, h.GUID, fence.LockInfix, h.Token.Seq); h.Path != want {
			t.Errorf("L1 violated: got node %q; want %q", h.Path, want)
		}
		da.invoke("exists %s", h.Path)
		ok, st := statOf(t, d, h.Path)
		da.ok("%v ephemeralOwner=0x%x", ok, st.EphemeralOwner)
		if !ok || st.EphemeralOwner != a.c.SessionID() {
			t.Errorf("L1 violated: got exists=%v ephemeralOwner=0x%x; want true and A's session %s", ok, st.EphemeralOwner, a.c.SessionHex())
		}
		if h.Token.Seq <= last {
			t.Errorf("L1 violated: got sequence %d after %d; want it to grow", h.Token.Seq, last)
		}
		last = h.Token.Seq
		if err := h.Release(ctx); err != nil {
			t.Fatalf("A release: %v", err)
		}
	}
	_, rst := statOf(t, d, root)
	if rst.EphemeralOwner != 0 {
		t.Errorf("L1 violated: got parent ephemeralOwner 0x%x; want 0 (persistent)", rst.EphemeralOwner)
	}
	evidence(t, "three acquisitions of A: GUIDs %v, each a node under %s owned by A's session %s, sequences growing to %d", guids, root, a.c.SessionHex(), last)

	phase(t, "a candidate is ephemeral: it goes when its session closes")
	e := join(t, "E", []string{s.Client}, root, joinOpts{})
	he, err := e.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("E acquire: %v", err)
	}
	e.a.info("close session %s", e.c.SessionHex())
	e.c.Close()
	wait.For(t, within, "E's node to go after its session closed", func() (bool, string) {
		ok, _, err := d.Exists(he.Path)
		return err == nil && !ok, fmt.Sprintf("exists=%v err=%v", ok, err)
	})
	da.info("%s gone after E's session closed", path.Base(he.Path))

	phase(t, "the parent must exist and be persistent")
	if _, err := d.Create(root+"/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral: %v", err)
	}
	for _, bad := range []string{root + "/missing", root + "/eph"} {
		h, err := lock.New(d.Conn, bad).Acquire(ctx)
		if h != nil || !errors.Is(err, lock.ErrParent) {
			t.Errorf("L1 violated: got %v, %v acquiring under %s; want lock.ErrParent", h, err, bad)
		}
		da.info("acquire under %s: %v", path.Base(bad), err)
	}
}

// TestL2_SequenceSuffixOrdersCandidates: the queue is the order of the
// parsed number after the last "-lock-"; whole names start with a random
// GUID and sort in an unrelated order (claim L2, §3 ¶1).
//
// One session starts twelve acquisitions one after another. Each waiter
// blocks on the candidate created right before it, although the names,
// sorted as strings, give another order. Children without "-lock-" are not
// candidates: an acquisition holds past them. A child with "-lock-" and a
// malformed suffix makes an acquisition fail with the parse error, and the
// failed acquisition removes its own node.
func TestL2_SequenceSuffixOrdersCandidates(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L2")
	d, da, root, ctx := lockRoom(t, []string{s.Client})
	a := join(t, "A", []string{s.Client}, root, joinOpts{quiet: true})

	phase(t, "twelve acquisitions with random GUIDs, started in order")
	h0, err := a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("A acquire: %v", err)
	}
	created := []string{path.Base(h0.Path)}
	var ps []*pending
	for i := 1; i < 12; i++ {
		w := start(t, a)
		ps = append(ps, w)
		got, err := nextWait(a)
		if err != nil {
			t.Fatalf("L2: %v", err)
		}
		if want := created[i-1]; got != want {
			t.Errorf("L2 violated: candidate %d (%s) waits on %s; want %s, created right before it", i, w.own, got, want)
		}
		created = append(created, w.own)
	}
	byName := slices.Sorted(slices.Values(created))
	rank := make([]int, len(byName))
	for i, n := range byName {
		rank[i] = slices.Index(created, n)
	}
	evidence(t, "each of 11 waiters watched the candidate created right before it; creation index of the candidates in name order: %v", rank)
	if slices.Equal(byName, created) {
		t.Errorf("L2 not shown: name order equals creation order (chance 1/12!); rerun")
	}
	for _, w := range ps {
		w.cancel()
		if _, err := w.result(t); !errors.Is(err, context.Canceled) {
			t.Fatalf("L2: cancelled waiter %s: got %v; want context.Canceled", w.own, err)
		}
	}
	if err := h0.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}

	phase(t, "a child without %q is not a candidate; one with a malformed suffix is an error", fence.LockInfix)
	for _, n := range []string{"ready", "config"} {
		if _, err := d.Create(root+"/"+n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
	}
	h, err := a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("L2 violated: children that are not candidates stopped an acquisition: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	bad := root + "/intruder-lock-12"
	da.invoke("create %s persistent", bad)
	if _, err := d.Create(bad, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", bad, err)
	}
	da.ok("")
	b := join(t, "B", []string{s.Client}, root, joinOpts{})
	hb, err := b.l.Acquire(ctx)
	if hb != nil || !errors.Is(err, fence.ErrShortSeq) {
		t.Errorf("L2 violated: got %v, %v with a malformed candidate present; want no hold and the short-suffix error", hb, err)
	}
	t.Logf("B's error: %v", err)
	for _, k := range listChildren(t, d, root) {
		if ok, st := statOf(t, d, root+"/"+k); ok && st.EphemeralOwner == b.c.SessionID() {
			t.Errorf("the failed acquisition left its node %s behind", k)
		}
	}
}

// nextWait returns the predecessor p's next acquisition step blocks on.
func nextWait(p *contender) (string, error) {
	select {
	case got := <-p.waits:
		return got, nil
	case <-time.After(within):
		return "", fmt.Errorf("%s did not start waiting within %v", p.name, within)
	}
}

// TestL3_EachWaiterWatchesOnlyItsPredecessor: the lowest candidate holds and
// every other one watches only the candidate right before it, and the
// server's own watch tables say so (claim L3, §3 ¶2).
//
// A holds, B waits, C waits. wchp (path -> sessions) lists exactly A's node
// watched by B's session and B's node watched by C's session; wchc (session
// -> paths) agrees and shows A watching nothing; both are filtered to the
// test's own parent. wchc and wchp list data and exists watches only, so
// on a server of the test's own the total from mntr, which counts child
// watches too, must be 2: nobody watches the parent's children. On the
// external backend's shared server that total is everyone's: not checked.
func TestL3_EachWaiterWatchesOnlyItsPredecessor(t *testing.T) {
	claim(t, "L3")
	srv := zkserver.Start(t, zkserver.WithLabel("l3-"), zkserver.AllowExternal())
	ch := startChain(t, []string{srv.Client}, joinOpts{})
	root, ctx, b, c, ha, pb, pc := ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc
	pbPath := root + "/" + pb.own

	phase(t, "the server's watch tables")
	sb, scc := b.c.SessionHex(), c.c.SessionHex()
	t.Logf("sessions: A=%s B=%s C=%s", ch.a.c.SessionHex(), sb, scc)
	wchp := watchTable(t, srv, "wchp", root)
	wantP := map[string][]string{ha.Path: {sb}, pbPath: {scc}}
	if fmt.Sprint(wchp) != fmt.Sprint(wantP) {
		t.Errorf("L3 violated: got wchp %v; want %v (B->A, C->B)", wchp, wantP)
	}
	wchc := watchTable(t, srv, "wchc", root)
	wantC := map[string][]string{sb: {ha.Path}, scc: {pbPath}}
	if fmt.Sprint(wchc) != fmt.Sprint(wantC) {
		t.Errorf("L3 violated: got wchc %v; want %v (A watches nothing)", wchc, wantC)
	}
	evidence(t, "server watch tables under %s: wchp %v, wchc %v", root, wchp, wchc)
	t.Run("no child watch on the parent: mntr on a server of its own", func(t *testing.T) {
		if srv.External() {
			t.Skipf("skipped: mntr's zk_watch_count counts the watches of every client of the shared external server %s, and wchp and wchc list no child watches", srv.Client)
		}
		m := mntr(t, srv)
		evidence(t, "mntr zk_watch_count=%d (data, exists and child watches of the whole server)", m["zk_watch_count"])
		if m["zk_watch_count"] != 2 {
			t.Errorf("L3 violated: got %d watches on the server; want 2 (no child watch on the parent)", m["zk_watch_count"])
		}
	})

	phase(t, "the chain unwinds")
	hb := handOver(t, ctx, "L3", ha, "A", pb)
	handOver(t, ctx, "L3", hb, "B", pc)
}

// TestL4_DeletionWakesOnlyTheNextCandidate: deleting the holder's node
// notifies only the candidate right behind it, which lists again and holds;
// the one after it hears nothing and keeps waiting (claim L4, §3 ¶3).
//
// A holds, B waits on A, C waits on B. A releases: B acquires after exactly
// one event and two lists. C's state, settled after a read on C's own
// connection: no event, still waiting on B, not holding. The server still
// lists C's watch on B's node, untouched.
func TestL4_DeletionWakesOnlyTheNextCandidate(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L4")
	ch := startChain(t, []string{s.Client}, joinOpts{})
	root, ctx, b, c, ha, pb, pc := ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc

	phase(t, "A releases")
	hb := handOver(t, ctx, "L4 violated", ha, "A", pb)
	sb := settle(t, b, pb.own)
	if sb.Wakeups != 1 || sb.Rounds != 2 {
		t.Errorf("L4 violated: got B acquiring after %d events and %d lists; want 1 event and 2 lists", sb.Wakeups, sb.Rounds)
	}
	sc := settle(t, c, pc.own)
	evidence(t, "after A's release B acquired after %d event(s); C, settled by a read on its own connection, got %d events, waiting=%v on %s, acquired=%v", sb.Wakeups, sc.Wakeups, sc.Waiting, sc.Pred, pc.finished())
	if sc.Wakeups != 0 {
		t.Errorf("L4 violated: C got %d events after A's deletion; want 0", sc.Wakeups)
	}
	if pc.finished() || !sc.Waiting || sc.Pred != pb.own {
		t.Errorf("L4 violated: C acquired after A's deletion or stopped waiting on B (finished=%v waiting=%v pred=%s)", pc.finished(), sc.Waiting, sc.Pred)
	}
	if got := watchTable(t, s, "wchp", root)[root+"/"+pb.own]; !slices.Equal(got, []string{c.c.SessionHex()}) {
		t.Errorf("L4 violated: got watchers of B's node %v; want C's session %s", got, c.c.SessionHex())
	}

	phase(t, "B releases")
	handOver(t, ctx, "L4", hb, "B", pc)
}

// TestL5_WatchEventIsNotSuccess: a watch event means "look again", never
// "you hold it": when the candidate in front gives up while someone further
// ahead still holds, the waiter wakes, lists, watches its new predecessor
// and keeps waiting (claim L5, §3 ¶2).
//
// A holds, B waits on A, C waits on B. B gives up (its context is
// cancelled; it deletes its own node). C gets one event, lists again, now
// waits on A and does not hold; the server shows C's session watching A's
// node. When A releases, C holds.
func TestL5_WatchEventIsNotSuccess(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L5")
	ch := startChain(t, []string{s.Client}, joinOpts{})
	d, root, ctx, b, c, ha, pb, pc := ch.d, ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc

	phase(t, "B gives up while A holds")
	b.a.info("cancel")
	pb.cancel()
	if _, err := pb.result(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("B: got %v; want context.Canceled", err)
	}
	if ok, _ := statOf(t, d, root+"/"+pb.own); ok {
		t.Fatalf("B's node %s still exists after B gave up", pb.own)
	}
	if err := expectWaiting(c, path.Base(ha.Path)); err != nil {
		t.Fatalf("L5 violated: %v", err)
	}
	st := settle(t, c, pc.own)
	evidence(t, "after B gave up, C got %d event(s) and listed %d times; it waits=%v on %s and acquired=%v while A holds", st.Wakeups, st.Rounds, st.Waiting, st.Pred, pc.finished())
	if st.Wakeups != 1 || st.Rounds != 2 {
		t.Errorf("L5 violated: got C with %d events and %d lists; want 1 event and 2 lists", st.Wakeups, st.Rounds)
	}
	if pc.finished() || !st.Waiting || st.Pred != path.Base(ha.Path) {
		t.Errorf("L5 violated: C acquired on B's deletion or does not wait on A (finished=%v waiting=%v pred=%s)", pc.finished(), st.Waiting, st.Pred)
	}
	wchp := watchTable(t, s, "wchp", root)
	t.Logf("wchp under %s: %v (B's old watch on A stays until A changes or B's session ends)", root, wchp)
	if !slices.Contains(wchp[ha.Path], c.c.SessionHex()) {
		t.Errorf("L5 violated: got watchers of A's node %v; want C's session %s among them", wchp[ha.Path], c.c.SessionHex())
	}

	phase(t, "A releases")
	handOver(t, ctx, "L5", ha, "A", pc)
	c.a.info("holds after %d events", settle(t, c, pc.own).Wakeups)
}

// TestL6_OwnNodeGoneMeansLostCandidacy: a candidate whose own node has
// disappeared has no candidacy left; the recipe says so with an error and
// never reports that it holds the lock (claim L6, §3 ¶2).
//
// Waiter: A holds, B waits on A; D deletes B's node. B only finds out at its
// next round (it watches A, not itself): settled, it still waits with no
// event. A releases; B wakes, lists, does not find itself and returns
// ErrLostCandidacy. Holder: E holds and asks for Lost(); D deletes E's node;
// Lost closes, and Release says why: ErrLostCandidacy.
func TestL6_OwnNodeGoneMeansLostCandidacy(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L6")
	q := queueOfTwo(t, s, "A", "B")
	d, da, root, ctx, b, ha, pb := q.d, q.da, q.root, q.ctx, q.waiter, q.held, q.next

	phase(t, "D deletes B's node while B waits on A")
	deleteAs(t, d, da, root+"/"+pb.own)
	st := settle(t, b, pb.own)
	b.a.info("settled: events=%d waiting=%v pred=%s", st.Wakeups, st.Waiting, st.Pred)
	if pb.finished() {
		t.Fatalf("B returned before its next round: %v", pb.err)
	}

	phase(t, "A releases; B looks again")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err := pb.result(t)
	evidence(t, "B, whose node D deleted, returned hold=%v err=%v when A released", hb != nil, err)
	if hb != nil {
		t.Errorf("L6 violated: B reported acquisition (%s) without its node", hb.Path)
	}
	if !errors.Is(err, lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: got %v; want lock.ErrLostCandidacy", err)
	}
	if kids := listChildren(t, d, root); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}

	phase(t, "a holder: D deletes E's node; Lost closes")
	e := join(t, "E", []string{s.Client}, root, joinOpts{})
	he, err := e.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("E: %v", err)
	}
	lost := he.Lost()
	// Lost sets its watch asynchronously; wait until the server has it.
	waitWatching(t, s, root, he.Path, e.c.SessionHex())
	select {
	case <-lost:
		t.Fatalf("Lost closed while E's node exists")
	default:
	}
	deleteAs(t, d, da, he.Path)
	select {
	case <-lost:
	case <-time.After(within):
		t.Fatalf("L6 violated: E's Lost not closed %v after its node was deleted", within)
	}
	rerr := he.Release(ctx)
	e.a.info("Lost closed; Release: %v", rerr)
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: got Release %v after Lost; want lock.ErrLostCandidacy (node deleted)", rerr)
	}
}

// deleteAs deletes p as client c, logged as actor a's operation.
func deleteAs(t zkserver.TB, c *zkclient.Client, a actor, p string) {
	t.Helper()
	a.invoke("delete %s", p)
	if err := c.Delete(p, -1); err != nil {
		a.fail("%v", err)
		t.Fatalf("%s delete %s: %v", c.Name, p, err)
	}
	a.ok("")
}

// TestL6_LateReleaseDeletesNothingOfTheNextHolder: a holder whose node
// another client deleted has nothing left to release; its late Release says
// so and must not touch the node of whoever holds now (claim L6, §3 ¶2;
// issue 12's first undetected fault).
//
// E holds, F waits on E. D deletes E's node; F is notified and holds. E,
// which never asked for Lost, releases late: ErrLostCandidacy, and F's node
// still exists, owned by F, with F still holding. A Release that deleted
// "the lowest child" instead of its own node would delete F's here.
func TestL6_LateReleaseDeletesNothingOfTheNextHolder(t *testing.T) {
	claim(t, "L6")
	q := queueOfTwo(t, sharedServer(t), "E", "F")

	phase(t, "D deletes E's node; F holds")
	deleteAs(t, q.d, q.da, q.held.Path)
	hf, err := q.next.result(t)
	if err != nil {
		t.Fatalf("F: %v", err)
	}

	phase(t, "E releases late")
	rerr := q.held.Release(q.ctx)
	q.holder.a.info("release: %v", rerr)
	ok, st := statOf(t, q.d, hf.Path)
	evidence(t, "E's late Release returned %v; F's node %s exists=%v with owner 0x%x (F's session %s)", rerr, path.Base(hf.Path), ok, st.EphemeralOwner, q.waiter.c.SessionHex())
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: E's late Release returned %v; want lock.ErrLostCandidacy", rerr)
	}
	if !ok || st.EphemeralOwner != q.waiter.c.SessionID() {
		t.Errorf("L6 violated: E's late Release removed F's node %s (exists=%v owner=0x%x); want it untouched", hf.Path, ok, st.EphemeralOwner)
	}
	if err := hf.Release(q.ctx); err != nil {
		t.Errorf("L6 violated: F's Release after E's late one: %v; want nil (F's node was its own to delete)", err)
	}
}

// TestL6_ExpiredWaiterReportsSessionChanged: when a waiter's session
// expires, its candidacy is over: the client library quietly opens a new
// session, and the waiter says the session changed instead of ever holding
// (claim L6, §3 ¶2; the new session's part is R8's).
//
// Dedicated server with a short tick. A holds; B, through a client proxy
// and with a short session, waits on A. The proxy cuts B off (closes its
// connection and refuses new ones) until D sees the server delete B's
// node: the session expired by itself. Let through again, B's client learns
// of the expiry, and B's acquisition returns ErrSessionChanged wrapping
// zk.ErrSessionExpired, never a hold.
func TestL6_ExpiredWaiterReportsSessionChanged(t *testing.T) {
	claim(t, "L6")
	srv := expiryServer(t, zkserver.WithLabel("l6x-"))
	d, da, root, ctx := lockRoom(t, []string{srv.Client})
	a := join(t, "A", []string{srv.Client}, root, joinOpts{})
	p := zkserver.ClientProxy(t, "B-proxy", srv)
	b := join(t, "B", []string{p.Addr()}, root, joinOpts{client: []zkclient.Option{zkclient.WithSessionTimeout(expirySessionTimeout)}})
	oldSession := b.c.SessionHex()
	_, pb := waitBehind(t, ctx, a, b)

	phase(t, "B is cut off until the server expires its session (%v)", expirySessionTimeout)
	mark := b.c.Mark()
	p.Cut(faultproxy.BothEnds)
	t.Cleanup(p.Heal)
	wait.For(t, 10*expirySessionTimeout, "the server to delete B's node", func() (bool, string) {
		ok, _, err := d.Exists(root + "/" + pb.own)
		return err == nil && !ok, fmt.Sprintf("exists=%v err=%v", ok, err)
	})
	da.info("B's node %s deleted by the server: session %s expired", pb.own, oldSession)
	p.Heal()
	hb, err := pb.result(t)
	evidence(t, "B, cut off until its session %s expired, returned hold=%v err=%v", oldSession, hb != nil, err)
	if hb != nil {
		t.Errorf("L6 violated: B reported acquisition after its session expired")
	}
	if !errors.Is(err, lock.ErrSessionChanged) || !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("L6 violated: got %v; want lock.ErrSessionChanged wrapping zk.ErrSessionExpired", err)
	}
	if err := b.c.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("B: %v", err)
	}
	b.a.info("new session %s (old %s)", b.c.SessionHex(), oldSession)
}

// TestL7_HerdEffect: watching the predecessor wakes one waiter per release;
// watching the parent's children wakes every waiter (claim L7, §3 ¶3). One
// wakeup per release holds for a run without faults; the article warns that
// faults and session events can add callbacks.
//
// N candidates, each its own session: one holds, N-1 wait. Ours, three
// releases in a row: each wakes exactly one waiter, counted by the waiters
// themselves (settled by a read on every waiter's connection) and by the
// server: on a server of the test's own, the summed number of watches a
// deletion triggered (mntr, server-wide: 1 node-deleted watch, 0 child
// watches); on the external backend's shared server, wchp filtered to the
// test's parent (the released node's one watch, the next waiter's, is gone
// and no other changed). The watch-the-parent foil written below, same
// sessions, one release: N-1 waiters wake and, on a server of its own, the
// server triggered N-1 child watches (no four-letter word lists child
// watches, so a shared server cannot show them).
func TestL7_HerdEffect(t *testing.T) {
	claim(t, "L7")
	srv := zkserver.Start(t, zkserver.WithLabel("l7-"), zkserver.AllowExternal())
	sizes := []int{10, 100}
	if *herd1000 {
		sizes = append(sizes, 1000)
	} else {
		t.Logf("N=1000 skipped (pass -zk19.herd1000 to run it)")
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) { herd(t, srv, n) })
	}
}

func herd(t *testing.T, srv *zkserver.Server, n int) {
	if srv.External() {
		// A user's server limits the connections from one host (60 by
		// default); N waiters and D need N+1 at once.
		if lim, err := strconv.Atoi(zkserver.Fields(srv.Word(t, "conf"))["maxClientCnxns"]); err == nil && lim != 0 && lim < n+1 {
			t.Skipf("skipped: N=%d needs %d sessions from this host at once; the server's maxClientCnxns is %d: set it to 0 (no limit) or higher", n, n+1, lim)
		}
	}
	ss := []string{srv.Client}
	d := zkclient.Connect(t, "D", ss)
	root := testRoot(t, d)
	for _, p := range []string{root + "/ours", root + "/foil"} {
		if _, err := d.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	ps := make([]*contender, n)
	for i := range ps {
		ps[i] = join(t, fmt.Sprintf("P%d", i), ss, root+"/ours", joinOpts{quiet: true})
	}
	phase(t, "N=%d: ours (each waiter watches its predecessor)", n)
	herdOurs(t, srv, ps)
	phase(t, "N=%d: foil (every waiter watches the parent's children)", n)
	woke, fired := herdFoil(t, srv, ps, root+"/foil")
	if srv.External() {
		evidence(t, "N=%d foil release: %d waiter(s) woke (the shared server's child watch count is everyone's: not read)", n, woke)
		if woke != int64(n-1) {
			t.Errorf("L7: got foil %d wakeups; want N-1 = %d", woke, n-1)
		}
		return
	}
	evidence(t, "N=%d foil release: %d waiter(s) woke; server triggered %d child watch(es)", n, woke, fired)
	if woke != int64(n-1) || fired != int64(n-1) {
		t.Errorf("L7: got foil %d wakeups (server %d); want N-1 = %d", woke, fired, n-1)
	}
}

// watchCounts is what a release did to the watches under a parent: on a
// server of the test's own, the watches it triggered (mntr, server-wide);
// on a shared server, the watches wchp lists under the parent before and
// after it.
type watchCounts struct {
	srv    *zkserver.Server
	parent string
	m      map[string]int64
	wchp   map[string][]string
}

func readWatches(t *testing.T, srv *zkserver.Server, parent string) watchCounts {
	t.Helper()
	if srv.External() {
		return watchCounts{srv: srv, parent: parent, wchp: watchTable(t, srv, "wchp", parent)}
	}
	return watchCounts{srv: srv, parent: parent, m: mntr(t, srv)}
}

// requireOneWatchFired checks, against what was read before the release of
// released, that the server fired exactly one watch: next's on released.
func (before watchCounts) requireOneWatchFired(t *testing.T, n, r int, woke int64, released, next string) {
	t.Helper()
	after := readWatches(t, before.srv, before.parent)
	if before.wchp == nil {
		del := after.m["zk_sum_node_deleted_watch_count"] - before.m["zk_sum_node_deleted_watch_count"]
		chw := after.m["zk_sum_node_children_watch_count"] - before.m["zk_sum_node_children_watch_count"]
		evidence(t, "N=%d ours release %d: %d waiter(s) woke; server triggered %d node-deleted watch(es), %d child watch(es)", n, r, woke, del, chw)
		if woke != 1 || del != 1 || chw != 0 {
			t.Errorf("L7 violated: got %d wakeups (server: %d deleted, %d child watches) for one release; want 1 (1, 0)", woke, del, chw)
		}
		return
	}
	gone, added := watchDiff(before.wchp, after.wchp), watchDiff(after.wchp, before.wchp)
	evidence(t, "N=%d ours release %d: %d waiter(s) woke; wchp under %s lost %v and gained %v", n, r, woke, before.parent, gone, added)
	want := map[string][]string{released: {next}}
	if woke != 1 || fmt.Sprint(gone) != fmt.Sprint(want) || len(added) != 0 {
		t.Errorf("L7 violated: got %d wakeups (wchp lost %v, gained %v) for one release; want 1 (lost %v, gained nothing)", woke, gone, added, want)
	}
}

// watchDiff returns the path -> sessions entries of a that b lacks.
func watchDiff(a, b map[string][]string) map[string][]string {
	out := map[string][]string{}
	for p, ss := range a {
		for _, s := range ss {
			if !slices.Contains(b[p], s) {
				out[p] = append(out[p], s)
			}
		}
	}
	return out
}

// herdOurs queues ps on the recipe and releases three times, checking that
// each release wakes exactly one waiter.
func herdOurs(t *testing.T, srv *zkserver.Server, ps []*contender) {
	n := len(ps)
	ctx := lockCtx(t)
	holder, err := ps[0].l.Acquire(ctx)
	if err != nil {
		t.Fatalf("P0: %v", err)
	}
	pend := make([]*pending, n)
	prev := path.Base(holder.Path)
	for i := 1; i < n; i++ {
		pend[i] = start(t, ps[i])
		if err := expectWaiting(ps[i], prev); err != nil {
			t.Fatalf("%v", err)
		}
		prev = pend[i].own
	}
	events := func() (s int64) {
		for _, p := range ps {
			s += p.events.Load()
		}
		return s
	}
	for r := 1; r <= 3 && r < n; r++ {
		before, wBefore := readWatches(t, srv, ps[0].parent), events()
		if err := holder.Release(ctx); err != nil {
			t.Fatalf("release: %v", err)
		}
		next, err := pend[r].result(t)
		if err != nil {
			t.Fatalf("P%d: %v", r, err)
		}
		for i := r + 1; i < n; i++ {
			if st := settle(t, ps[i], pend[i].own); st.Wakeups != 0 {
				t.Errorf("L7 violated: P%d, still waiting, has woken %d times; want 0", i, st.Wakeups)
			}
		}
		before.requireOneWatchFired(t, n, r, events()-wBefore, holder.Path, ps[r].c.SessionHex())
		holder = next
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	for i := 1; i < n; i++ {
		pend[i].cancel()
	}
	for i := 1; i < n; i++ {
		_, _ = pend[i].result(t)
	}
}

// herdFoil queues the sessions of ps under parent with a recipe that
// watches the parent's children, releases once, and returns how many
// waiters woke and how many child watches the server triggered.
func herdFoil(t *testing.T, srv *zkserver.Server, ps []*contender, parent string) (woke, fired int64) {
	n := len(ps)
	names := make([]string, n)
	for i, p := range ps {
		pth, err := p.c.Create(parent+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("P%d foil create: %v", i, err)
		}
		names[i] = path.Base(pth)
	}
	var foilWoke atomic.Int64
	registered := make(chan int, n)
	acquired := make(chan int, n)
	fctx, fcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { fcancel(); wg.Wait() })
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			foilWaiter(fctx, ps[i].c, parent, names[i], func() { foilWoke.Add(1) }, registered, acquired, i)
		}(i)
	}
	for i := 1; i < n; i++ {
		select {
		case <-registered:
		case <-time.After(within):
			t.Fatalf("foil waiters not registered within %v", within)
		}
	}
	var before map[string]int64
	if !srv.External() {
		before = mntr(t, srv) // server-wide: read only on a server of the test's own
	}
	if err := ps[0].c.Delete(parent+"/"+names[0], -1); err != nil {
		t.Fatalf("foil release: %v", err)
	}
	select {
	case i := <-acquired:
		if i != 1 {
			t.Errorf("foil: P%d acquired; want P1", i)
		}
	case <-time.After(within):
		t.Fatalf("foil: nobody acquired within %v", within)
	}
	wait.For(t, within, "N-1 foil waiters to wake", func() (bool, string) {
		return foilWoke.Load() >= int64(n-1), fmt.Sprintf("%d woke", foilWoke.Load())
	})
	if srv.External() {
		return foilWoke.Load(), 0
	}
	after := mntr(t, srv)
	return foilWoke.Load(), after["zk_sum_node_children_watch_count"] - before["zk_sum_node_children_watch_count"]
}

// foilWaiter is the watch-the-parent recipe: list with a child watch, hold
// when the own node has the lowest sequence, otherwise wait for any change
// of the children.
func foilWaiter(ctx context.Context, c *zkclient.Client, parent, own string, woke func(), registered, acquired chan<- int, i int) {
	first := true
	for {
		kids, _, ch, err := c.ChildrenW(parent)
		if err != nil {
			return
		}
		if lowestBySeq(kids) == own {
			acquired <- i
			return
		}
		if first {
			registered <- i
			first = false
		}
		select {
		case <-ch:
			woke()
		case <-ctx.Done():
			return
		}
	}
}

// lowestBySeq returns the lock node among kids with the smallest parsed
// sequence number.
func lowestBySeq(kids []string) string {
	low, lowSeq := "", int64(-1)
	for _, k := range kids {
		if seq, err := fence.ParseSeq(k); err == nil && (lowSeq < 0 || seq < lowSeq) {
			low, lowSeq = k, seq
		}
	}
	return low
}

// TestL8_ListExistsRace: the predecessor can vanish between the list and
// the exists(pred, watch); exists then finds no node and the waiter must
// list again at once, since the event it would wait for has already been
// and gone (claim L8, §3 ¶4).
//
// The Probe's BeforeWatch hook deletes the predecessor exactly in that
// window, twenty times in a row: each time exists answers false, B lists
// again and holds, having received no watch event. No sleep: the hook makes
// the window every time. The exists on a missing node leaves a creation
// watch on the server (reported, not a claim).
func TestL8_ListExistsRace(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L8")
	d := zkclient.Connect(t, "D", []string{s.Client})
	root := testRoot(t, d)
	ctx := lockCtx(t)
	var hookErr error
	var b *contender
	hook := func(own, pred string) {
		b.a.info("hook after list: predecessor %s", pred)
		if err := d.Delete(root+"/"+pred, -1); err != nil {
			hookErr = err
			return
		}
		b.a.info("hook: %s deleted by D", pred)
	}
	a := join(t, "A", []string{s.Client}, root, joinOpts{quiet: true})
	b = join(t, "B", []string{s.Client}, root, joinOpts{beforeWatch: hook})
	const runs = 20
	for i := 0; i < runs; i++ {
		if i == 1 {
			b.a.info("runs 2-%d: same steps, log muted", runs)
			b.mute()
		}
		if _, err := a.l.Acquire(ctx); err != nil {
			t.Fatalf("A: %v", err)
		}
		hb, err := b.l.Acquire(ctx)
		if err != nil {
			t.Fatalf("run %d: B: %v", i, err)
		}
		if hookErr != nil {
			t.Fatalf("run %d: hook: %v", i, hookErr)
		}
		st := settle(t, b, path.Base(hb.Path))
		if st.NoNode != 1 || st.Rounds != 2 || st.Wakeups != 0 {
			t.Errorf("L8 violated in run %d: got exists-no-node=%d lists=%d events=%d; want 1, 2, 0", i, st.NoNode, st.Rounds, st.Wakeups)
		}
		if err := hb.Release(ctx); err != nil {
			t.Fatalf("B release: %v", err)
		}
	}
	evidence(t, "%d of %d runs: the hook deleted the predecessor between list and exists; exists found no node, B listed again and held without an event", runs, runs)
	left := watchTable(t, s, "wchc", root)[b.c.SessionHex()]
	t.Logf("creation watches B's exists left on deleted names: %d (cleared when B's session ends)", len(left))
}

// TestL9_ReadYourCreateOnFollower: after its own successful create, a
// session's getChildren includes its own node and every smaller candidate
// that still exists, also on a follower that was behind when the create
// arrived; so a smaller candidate missing from that list really has been
// deleted (claim L9, §3 ¶5).
//
// 3-server ensemble with link proxies; W's session is on follower F, and F
// reports itself a follower. Each lagging round holds the leader's stream
// to F; X (on the leader) creates and deletes x, Y (on the other follower)
// creates y. W's plain list then lacks y: F is behind at the read. W's
// create is sent while F is still behind, reaches the leader, and does not
// return while the stream is held; once it is released, W's create returns
// and W's list holds its own node, every y so far and no x.
func TestL9_ReadYourCreateOnFollower(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "L9")
	c := startCluster(t, 3, zkserver.WithTickTime(trioTick), zkserver.WithLimits(10, trioSyncLimit), zkserver.WithLabel("l9-"))
	fs := c.Followers()
	if len(fs) != 2 {
		t.Fatalf("got %d followers; want 2", len(fs))
	}
	f, other := fs[0], fs[1]
	l9 := &l9Round{t: t, c: c, f: f, live: map[string]bool{}}
	l9.x = zkclient.Connect(t, "X", []string{c.Leader().Client})
	l9.root = testRoot(t, l9.x)
	l9.y = zkclient.Connect(t, "Y", []string{other.Client})
	l9.w = zkclient.Connect(t, "W", []string{f.Client})
	l9.xa, l9.ya, l9.wa = newActor(t, "X"), newActor(t, "Y"), newActor(t, "W")
	l9.requireFollower()
	t.Logf("leader %s, W's follower %s, other follower %s", c.Leader().Label, f.Label, other.Label)
	phase(t, "two rounds, W's follower in step")
	for i := 1; i <= 2; i++ {
		l9.round(i, false)
	}
	phase(t, "three rounds, the leader's stream to W's follower held while X and Y change the parent")
	for i := 3; i <= 5; i++ {
		l9.round(i, true)
	}
}

// l9Round is TestL9's scenario state: X on the leader, Y on the other
// follower, W on follower f.
type l9Round struct {
	t          *testing.T
	c          *cluster
	f          *zkserver.Server
	root       string
	x, y, w    *zkclient.Client
	xa, ya, wa actor
	live       map[string]bool // candidates that exist now
	deleted    []string
}

// requireFollower checks that the server W's session is connected to
// reports itself a follower: on the leader the claim would hold trivially.
func (r *l9Round) requireFollower() {
	r.t.Helper()
	at := r.w.Server()
	for _, s := range r.c.Servers {
		if s.Client != at {
			continue
		}
		mode, err := s.Mode()
		r.wa.info("connected to %s, which reports mode %s", s.Label, mode)
		if err != nil || mode != "follower" || s != r.f {
			r.t.Fatalf("L9 setup: W's server %s reports mode %q (%v); want the follower %s", s.Label, mode, err, r.f.Label)
		}
		return
	}
	r.t.Fatalf("L9 setup: W is connected to %s, none of the ensemble's servers", at)
}

func (r *l9Round) create(c *zkclient.Client, a actor) string {
	r.t.Helper()
	a.invoke("create %s/<guid>-lock- EPHEMERAL_SEQUENTIAL", r.root)
	p, err := c.Create(r.root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		a.fail("%v", err)
		r.t.Fatalf("%s create: %v", c.Name, err)
	}
	a.ok("%s", path.Base(p))
	return path.Base(p)
}

func (r *l9Round) round(i int, lag bool) {
	t := r.t
	t.Helper()
	if lag {
		r.c.HoldStream(r.f)
	}
	xn := r.create(r.x, r.xa)
	yn := r.create(r.y, r.ya)
	r.live[yn] = true
	deleteAs(t, r.x, r.xa, r.root+"/"+xn)
	r.deleted = append(r.deleted, xn)
	var own string
	if lag {
		own = r.createBehind(i, yn)
	} else {
		own = r.create(r.w, r.wa)
	}
	r.wa.invoke("children %s (after W's create, same session)", r.root)
	kids, _, err := r.w.Children(r.root)
	if err != nil {
		t.Fatalf("W children: %v", err)
	}
	r.wa.ok("%d children", len(kids))
	if !slices.Contains(kids, own) {
		t.Errorf("L9 violated in round %d: W's list lacks its own node %s", i, own)
	}
	for n := range r.live {
		if !slices.Contains(kids, n) {
			t.Errorf("L9 violated in round %d: W's list lacks live smaller candidate %s", i, n)
		}
	}
	for _, n := range r.deleted {
		if slices.Contains(kids, n) {
			t.Errorf("L9 violated in round %d: W's list has %s, deleted before W's create", i, n)
		}
	}
	r.live[own] = true
}

// createBehind shows W's follower behind (its plain list lacks y), sends
// W's create while it is, and releases the held stream once the leader has
// answered the create into the hold. It returns W's node.
func (r *l9Round) createBehind(i int, y string) string {
	t := r.t
	t.Helper()
	r.wa.invoke("children %s (plain read, before W's create)", r.root)
	pre, _, err := r.w.Children(r.root)
	if err != nil {
		t.Fatalf("W children: %v", err)
	}
	r.wa.ok("%d children", len(pre))
	held := heldDown(r.c.StreamProxy(r.f))
	evidence(t, "round %d: W's follower %s was behind at W's plain read: it lacked %s, created by Y before the read; the proxy held %d bytes of the leader's stream to it", i, r.f.Label, y, held)
	if slices.Contains(pre, y) || held == 0 {
		t.Fatalf("L9 setup: the follower was not behind (y listed: %v, held bytes: %d); the round would prove nothing", slices.Contains(pre, y), held)
	}
	sp := r.c.StreamProxy(r.f)
	up0, held0 := sp.Stats().UpBytes, sp.Stats().DownHeld
	type created struct {
		p   string
		err error
	}
	done := make(chan created, 1)
	r.wa.invoke("create %s/<guid>-lock- EPHEMERAL_SEQUENTIAL (its follower behind)", r.root)
	go func() {
		p, err := r.w.Create(r.root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		done <- created{p, err}
	}()
	wait.For(t, within, "the follower to forward W's create and the leader to answer into the hold", func() (bool, string) {
		s := sp.Stats()
		return s.UpBytes > up0 && s.DownHeld > held0, fmt.Sprintf("up %d bytes (before %d), held %d (before %d)", s.UpBytes, up0, s.DownHeld, held0)
	})
	select {
	case cr := <-done:
		t.Fatalf("L9 setup: W's create returned (%v) while its follower's stream was held", cr.err)
	default:
	}
	r.c.ReleaseStream(r.f)
	var cr created
	select {
	case cr = <-done:
	case <-time.After(within):
		t.Fatalf("W's create did not return within %v of the release", within)
	}
	if cr.err != nil {
		t.Fatalf("W create: %v", cr.err)
	}
	r.wa.ok("%s", path.Base(cr.p))
	return path.Base(cr.p)
}

// TestL10_ElectionNeedsReadyAcrossFailover: in an election the lowest
// candidate is only a candidate; it becomes usable after it has recovered
// state and published "ready", and clients wait for "ready" (claim L10, §3 ¶6).
//
// Beyond Example_electionNeedsReady, a failover: L1 leads and has published
// ready; Q uses it and watches ready. L1's session ends: its candidate and
// its ephemeral ready go, Q's watch fires and Q stops using L1. L2 becomes
// the lowest and holds, but ready is absent until L2 has recovered (read
// epoch 1, written epoch 2); Q, watching ready, sees nothing until L2
// publishes it, then uses L2 and reads epoch 2.
func TestL10_ElectionNeedsReadyAcrossFailover(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L10")
	el := newElection(t, s)
	ctx := lockCtx(t)

	phase(t, "L1 is elected, recovers, publishes ready")
	ev := el.watchReady()
	l1 := join(t, "L1", []string{s.Client}, el.root+"/election", joinOpts{})
	l2 := join(t, "L2", []string{s.Client}, el.root+"/election", joinOpts{})
	_, p2 := waitBehind(t, ctx, l1, l2)
	el.notYet(ev, "while L1 is lowest but has not recovered")
	el.recoverAndPublish(l1, 1)
	name, state, ev := el.use(ev)
	if name != "L1" || state != "epoch=1" {
		t.Errorf("L10 violated: Q used %s with %s; want L1 with epoch=1", name, state)
	}

	phase(t, "L1's session ends: ready goes with it")
	l1.a.info("close session %s", l1.c.SessionHex())
	l1.c.Close()
	select {
	case e := <-ev:
		el.qa.info("event %s %s: stop using L1", e.Type, e.Path)
		if e.Type != zk.EventNodeDeleted {
			t.Errorf("Q: got %s; want EventNodeDeleted", e.Type)
		}
	case <-time.After(within):
		t.Fatalf("L10: Q saw no deletion of ready within %v", within)
	}
	ev = el.watchReady()
	h2, err := p2.result(t)
	if err != nil {
		t.Fatalf("L2: %v", err)
	}
	l2.a.info("lowest now (%s)", path.Base(h2.Path))
	el.notYet(ev, "while L2 is lowest but has not recovered")
	el.recoverAndPublish(l2, 2)
	name, state, _ = el.use(ev)
	evidence(t, "Q saw ready only after each leader had recovered: after the failover it used %s with %s", name, state)
	if name != "L2" || state != "epoch=2" {
		t.Errorf("L10 violated: Q used %s with %s; want L2 with epoch=2", name, state)
	}
}

// election is TestL10's scene: Q, a client of whoever leads, and the nodes
// the candidates share.
type election struct {
	t     *testing.T
	q     *zkclient.Client
	qa    actor
	root  string
	ready string
}

func newElection(t *testing.T, s *zkserver.Server) *election {
	el := &election{t: t, q: zkclient.Connect(t, "Q", []string{s.Client}), qa: newActor(t, "Q")}
	el.root = testRoot(t, el.q)
	el.ready = el.root + "/ready"
	for _, p := range []string{el.root + "/election", el.root + "/state"} {
		if _, err := el.q.Create(p, []byte("epoch=0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	return el
}

// watchReady sets Q's watch on ready, which must be absent.
func (el *election) watchReady() <-chan zk.Event {
	el.t.Helper()
	el.qa.invoke("exists %s watch", el.ready)
	ok, _, ev, err := el.q.ExistsW(el.ready)
	if err != nil || ok {
		el.t.Fatalf("Q exists ready: %v %v", ok, err)
	}
	el.qa.ok("false")
	return ev
}

// recoverAndPublish is p's work as the new leader: read the state the last
// one left, write the next epoch, then create ready.
func (el *election) recoverAndPublish(p *contender, epoch int) {
	t := el.t
	t.Helper()
	p.a.invoke("get %s/state", el.root)
	data, st, err := p.c.Get(el.root + "/state")
	if err != nil {
		t.Fatalf("%s get state: %v", p.name, err)
	}
	p.a.ok("%s", data)
	if want := fmt.Sprintf("epoch=%d", epoch-1); string(data) != want {
		t.Errorf("%s recovered %q; want %q", p.name, data, want)
	}
	p.a.invoke("set %s/state epoch=%d", el.root, epoch)
	if _, err := p.c.Set(el.root+"/state", []byte(fmt.Sprintf("epoch=%d", epoch)), st.Version); err != nil {
		t.Fatalf("%s set state: %v", p.name, err)
	}
	p.a.ok("")
	p.a.invoke("create %s ephemeral %q", el.ready, p.name)
	if _, err := p.c.Create(el.ready, []byte(p.name), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("%s publish ready: %v", p.name, err)
	}
	p.a.ok("")
}

// use waits for ready, then reads the leader's name and the state, leaving
// a watch on ready.
func (el *election) use(ev <-chan zk.Event) (string, string, <-chan zk.Event) {
	t := el.t
	t.Helper()
	select {
	case e := <-ev:
		el.qa.info("event %s %s", e.Type, e.Path)
	case <-time.After(within):
		t.Fatalf("L10: Q saw no event on ready within %v", within)
	}
	el.qa.invoke("get %s watch", el.ready)
	name, _, ch, err := el.q.GetW(el.ready)
	if err != nil {
		t.Fatalf("Q get ready: %v", err)
	}
	el.qa.ok("%s", name)
	state, _, err := el.q.Get(el.root + "/state")
	if err != nil {
		t.Fatalf("Q get state: %v", err)
	}
	el.qa.info("uses %s, state %s", name, state)
	return string(name), string(state), ch
}

// notYet checks that Q got no event on ready and ready is absent; a read on
// Q's connection first orders any notification before it.
func (el *election) notYet(ev <-chan zk.Event, what string) {
	t := el.t
	t.Helper()
	if _, _, err := el.q.Exists("/"); err != nil {
		t.Fatalf("Q barrier: %v", err)
	}
	select {
	case e := <-ev:
		t.Errorf("L10 violated: Q got %s on ready %s", e.Type, what)
	default:
	}
	if ok, _ := statOf(t, el.q, el.ready); ok {
		t.Errorf("L10 violated: ready exists %s", what)
	}
}

// TestL11_CallbackThatIsNoDeletionListsAgain: the predecessor chain does
// not promise that a waiter is called back once, and only for its
// predecessor's deletion. A change of the predecessor's data fires the same
// watch; the waiter lists again, watches the same predecessor again and
// keeps waiting, every time, and holds only once it is the lowest (claim
// L11, §3 ¶3).
//
// A holds, B waits on A, C waits on B. D changes the data of A's node three
// times: each time B gets EventNodeDataChanged, lists again, waits on A
// again and does not hold, and the server lists B's watch on A's node
// again; C hears nothing. D changes B's node: C is called back, lists
// again and keeps waiting on B. When A releases, B holds; when B releases,
// C holds. A recipe that took any event for success would hold at the
// first change while A still holds.
func TestL11_CallbackThatIsNoDeletionListsAgain(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L11")
	ch := startChain(t, []string{s.Client}, joinOpts{})
	root, ctx, b, c, ha, pb, pc := ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc
	da := newActor(t, "D")
	aNode := path.Base(ha.Path)

	const changes = 3
	phase(t, "D changes the data of A's node %d times while A holds", changes)
	for i := 1; i <= changes; i++ {
		setAs(t, ch.d, da, ha.Path, fmt.Sprintf("change %d", i))
		st := settle(t, b, pb.own)
		if pb.finished() || !st.Waiting || st.Pred != aNode {
			t.Fatalf("L11 violated: after change %d of A's node B finished=%v (hold %s, err %v), waiting=%v on %s; want B still waiting on A, which holds", i, pb.finished(), holdOf(pb.held), pb.err, st.Waiting, st.Pred)
		}
		if st.Wakeups != i || st.Rounds != i+1 {
			t.Errorf("L11 violated: after change %d B had %d events and %d lists; want %d and %d (one list per callback)", i, st.Wakeups, st.Rounds, i, i+1)
		}
	}
	stB := settle(t, b, pb.own)
	got := b.eventsReceived()
	evidence(t, "D changed A's node %d times while A held: B was called back %d times %v, listed %d times, waits=%v on A and acquired=%v", changes, stB.Wakeups, got, stB.Rounds, stB.Waiting, pb.finished())
	for _, ev := range got {
		if ev != "EventNodeDataChanged "+aNode {
			t.Errorf("L11 check: B received %q; want only EventNodeDataChanged on A's node", ev)
		}
	}
	if w := watchTable(t, s, "wchp", root)[ha.Path]; !slices.Contains(w, b.c.SessionHex()) {
		t.Errorf("L11 violated: got watchers of A's node %v after the changes; want B's session %s among them (B watches A again)", w, b.c.SessionHex())
	}
	if stC := settle(t, c, pc.own); stC.Wakeups != 0 || !stC.Waiting || stC.Pred != pb.own {
		t.Errorf("L11: C, which watches B, got %d events, waiting=%v on %s; want 0 events, waiting on B", stC.Wakeups, stC.Waiting, stC.Pred)
	}

	phase(t, "D changes the data of B's node, C's predecessor")
	setAs(t, ch.d, da, root+"/"+pb.own, "change")
	stC := settle(t, c, pc.own)
	evidence(t, "D changed B's node: C was called back %v, listed %d times, waits=%v on B and acquired=%v", c.eventsReceived(), stC.Rounds, stC.Waiting, pc.finished())
	if pc.finished() || !stC.Waiting || stC.Pred != pb.own || stC.Wakeups != 1 || stC.Rounds != 2 {
		t.Errorf("L11 violated: after the change of B's node C finished=%v, waiting=%v on %s with %d events and %d lists; want still waiting on B after 1 event and 2 lists", pc.finished(), stC.Waiting, stC.Pred, stC.Wakeups, stC.Rounds)
	}

	phase(t, "A releases, then B")
	hb := handOver(t, ctx, "L11", ha, "A", pb)
	b.a.info("holds after %d events", settle(t, b, pb.own).Wakeups)
	handOver(t, ctx, "L11", hb, "B", pc)
}

// setAs sets the data of p as client c, logged as actor a's operation.
func setAs(t zkserver.TB, c *zkclient.Client, a actor, p, data string) {
	t.Helper()
	a.invoke("set %s %q", p, data)
	if _, err := c.Set(p, []byte(data), -1); err != nil {
		a.fail("%v", err)
		t.Fatalf("%s set %s: %v", c.Name, p, err)
	}
	a.ok("")
}

// TestL11_LateCallbackAfterReconnectListsAgain: a waiter's connection can
// drop and come back while it waits; the client library then registers the
// waiter's watch again, and a change made while it was away reaches it
// late, after the reconnect. The waiter lists again and keeps waiting; it
// holds only once it is the lowest (claim L11, §3 ¶3).
//
// A holds; B, through a client proxy, waits on A. First a short cut with
// nothing changed: B's client reconnects in the same session, the server
// lists B's watch on A's node again, and B still waits on A, every callback
// (go-zookeeper delivers none for a reconnect) followed by one list. Then a
// second cut, during which D changes A's node: after the reconnect B is
// called back with EventNodeDataChanged for a change older than the
// reconnect, lists again and still waits on A. When A releases, B holds.
func TestL11_LateCallbackAfterReconnectListsAgain(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L11")
	d, da, root, ctx := lockRoom(t, []string{s.Client})
	a := join(t, "A", []string{s.Client}, root, joinOpts{})
	p := zkserver.ClientProxy(t, "B-proxy", s)
	b := join(t, "B", []string{p.Addr()}, root, joinOpts{})
	ha, pb := waitBehind(t, ctx, a, b)
	session := b.c.SessionID()
	stillWaiting := func(when string) lock.Attempt {
		t.Helper()
		st := settle(t, b, pb.own)
		if pb.finished() || !st.Waiting || st.Pred != path.Base(ha.Path) {
			t.Fatalf("L11 violated: %s B finished=%v (hold %s, err %v), waiting=%v on %s; want B still waiting on A, which holds", when, pb.finished(), holdOf(pb.held), pb.err, st.Waiting, st.Pred)
		}
		if st.Rounds != st.Wakeups+1 {
			t.Errorf("L11 violated: %s B had %d events and %d lists; want one list per callback (%d)", when, st.Wakeups, st.Rounds, st.Wakeups+1)
		}
		return st
	}

	phase(t, "a short cut while B waits; nothing changes")
	shortCut(t, p, b, func() {})
	waitWatching(t, s, root, ha.Path, b.c.SessionHex())
	st := stillWaiting("after a reconnect")
	plain := st.Wakeups
	b.a.info("after the reconnect: %d events, %d lists, waiting on %s", st.Wakeups, st.Rounds, st.Pred)
	before := b.events.Load()

	phase(t, "a second cut; D changes A's node while B is away")
	shortCut(t, p, b, func() { setAs(t, d, da, ha.Path, "changed while B was cut off") })
	wait.For(t, within, "B's late callback", func() (bool, string) {
		return b.events.Load() > before, fmt.Sprintf("B's events: %v", b.eventsReceived())
	})
	st = stillWaiting("after the late callback")
	evs := b.eventsReceived()
	evidence(t, "B, waiting on A, reconnected twice in session %s: the plain reconnect called B back %d times; D's change of A's node, made while B was cut off, reached B after the second reconnect as %v; B listed %d times, waits=%v on A and acquired=%v while A holds", b.c.SessionHex(), plain, evs, st.Rounds, st.Waiting, pb.finished())
	if want := "EventNodeDataChanged " + path.Base(ha.Path); len(evs) == 0 || evs[len(evs)-1] != want {
		t.Errorf("L11 not shown: B's callbacks %v; want the last to be %q", evs, want)
	}
	if b.c.SessionID() != session {
		t.Fatalf("L11 setup: B's session changed from 0x%x to %s; the cuts were meant to be short", session, b.c.SessionHex())
	}

	phase(t, "A releases")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	if _, err := pb.result(t); err != nil {
		t.Fatalf("L11: B did not hold after A's release: %v", err)
	}
}

// shortCut cuts p's client off (its connection closed, new ones refused)
// until the client has seen the disconnection, runs during, and lets it in
// again; it returns once the client has its session back.
func shortCut(t zkserver.TB, p *faultproxy.Proxy, who *contender, during func()) {
	t.Helper()
	mark := who.c.Mark()
	who.a.info("cut off")
	p.Cut(faultproxy.BothEnds)
	if err := who.c.WaitStateSince(mark, zk.StateDisconnected, within); err != nil {
		p.Heal()
		t.Fatalf("%s: %v", who.name, err)
	}
	during()
	p.Heal()
	if err := who.c.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("%s: %v", who.name, err)
	}
	who.a.info("reconnected in session %s", who.c.SessionHex())
}

package zk19_test

// The lock claims (L1–L10, article §3 "临时顺序锁怎样判断资格") run the recipe
// of package lock against real servers. Timing comes from the recipe's
// Trace and from reads that order notifications, never from sleeping; the
// counts the claims rest on come from each session's own proxy (witness). The
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

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
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
	r := newRoom(t, []string{s.Client})
	O, root, ctx := r.O, r.parent, r.ctx
	a := r.join("A", joinOpts{})

	phase(t, "three acquisitions by session A, one after another")
	var guids []string
	last := int64(-1)
	for i := 0; i < 3; i++ {
		h, err := a.l.Acquire(ctx)
		if err != nil {
			t.Fatalf("A acquire %d: %v", i, err)
		}
		if u, err := uuid.Parse(h.GUID); err != nil || u.Version() != 4 {
			refuted(t, "L1", "got GUID %q (%v); want a version-4 UUID", h.GUID, err)
		}
		if slices.Contains(guids, h.GUID) {
			refuted(t, "L1", "GUID %s used by two acquisitions", h.GUID)
		}
		guids = append(guids, h.GUID)
		if want := fmt.Sprintf("%s/%s%s%010d", root, h.GUID, fence.LockInfix, h.Token.Seq); h.Path != want {
			refuted(t, "L1", "got node %q; want %q", h.Path, want)
		}
		r.o.invoke("exists %s", h.Path)
		ok, st := statOf(t, O, h.Path)
		r.o.ok("%v ephemeralOwner=0x%x", ok, st.EphemeralOwner)
		if !ok || st.EphemeralOwner != a.c.SessionID() {
			refuted(t, "L1", "got exists=%v ephemeralOwner=0x%x; want true and A's session %s", ok, st.EphemeralOwner, a.c.SessionHex())
		}
		if h.Token.Seq <= last {
			refuted(t, "L1", "got sequence %d after %d; want it to grow", h.Token.Seq, last)
		}
		last = h.Token.Seq
		if err := h.Release(ctx); err != nil {
			t.Fatalf("A release: %v", err)
		}
	}
	_, rst := statOf(t, O, root)
	if rst.EphemeralOwner != 0 {
		refuted(t, "L1", "got parent ephemeralOwner 0x%x; want 0 (persistent)", rst.EphemeralOwner)
	}
	evidence(t, "three acquisitions of A: GUIDs %v, each a node under %s owned by A's session %s, sequences growing to %d", guids, root, a.c.SessionHex(), last)

	phase(t, "a candidate is ephemeral: it goes when its session closes")
	e := r.join("E", joinOpts{})
	he := e.acquire()
	e.a.info("close session %s", e.c.SessionHex())
	e.c.Close()
	wait.For(t, within, "E's node to go after its session closed", func() (bool, string) {
		ok, _, err := O.Exists(he.Path)
		return err == nil && !ok, fmt.Sprintf("exists=%v err=%v", ok, err)
	})
	r.o.info("%s gone after E's session closed", path.Base(he.Path))

	phase(t, "the parent must exist and be persistent")
	if _, err := O.Create(root+"/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral: %v", err)
	}
	for _, bad := range []string{root + "/missing", root + "/eph"} {
		h, err := lock.New(O.Conn, bad).Acquire(ctx)
		if h != nil || !errors.Is(err, lock.ErrParent) {
			refuted(t, "L1", "got %v, %v acquiring under %s; want lock.ErrParent", h, err, bad)
		}
		r.o.info("acquire under %s: %v", path.Base(bad), err)
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
	r := newRoom(t, []string{s.Client})
	O, root, ctx := r.O, r.parent, r.ctx
	a := r.join("A", joinOpts{quiet: true})

	phase(t, "twelve acquisitions with random GUIDs, started in order")
	h0 := a.acquire()
	created := []string{nodeOf(h0)}
	var ps []*acquisition
	for i := 1; i < 12; i++ {
		w := a.acquireInBackground()
		ps = append(ps, w)
		got := w.settled().Pred
		if want := created[i-1]; got != want {
			refuted(t, "L2", "candidate %d (%s) waits on %s; want %s, created right before it", i, w.own, got, want)
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
		brokenCheck(t, "L2", "name order equals creation order (chance 1/12!); rerun")
	}
	for _, w := range ps {
		w.cancel()
		if _, err := w.result(); !errors.Is(err, context.Canceled) {
			t.Fatalf("L2: cancelled waiter %s: got %v; want context.Canceled", w.own, err)
		}
	}
	if err := h0.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}

	phase(t, "a child without %q is not a candidate; one with a malformed suffix is an error", fence.LockInfix)
	for _, n := range []string{"ready", "config"} {
		if _, err := O.Create(root+"/"+n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
	}
	h, err := a.l.Acquire(ctx)
	if err != nil {
		refutedNow(t, "L2", "children that are not candidates stopped an acquisition: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	bad := root + "/intruder-lock-12"
	r.o.invoke("create %s persistent", bad)
	if _, err := O.Create(bad, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", bad, err)
	}
	r.o.ok("")
	b := r.join("B", joinOpts{})
	hb, err := b.l.Acquire(ctx)
	if hb != nil || !errors.Is(err, fence.ErrShortSeq) {
		refuted(t, "L2", "got %v, %v with a malformed candidate present; want no hold and the short-suffix error", hb, err)
	}
	t.Logf("B's error: %v", err)
	for _, k := range listChildren(t, O, root) {
		if ok, st := statOf(t, O, root+"/"+k); ok && st.EphemeralOwner == b.c.SessionID() {
			t.Errorf("the failed acquisition left its node %s behind", k)
		}
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
	parallel(t)
	claim(t, "L3")
	srv := leaseServer(t, soloKind)
	r := newRoom(t, []string{srv.Client})
	A, B, C := r.join("A", joinOpts{}), r.join("B", joinOpts{}), r.join("C", joinOpts{})
	heldByA := A.acquire()
	b := B.acquireInBackground().waitsOn(nodeOf(heldByA))
	c := C.acquireInBackground().waitsOn(b.own)
	root, ha := r.parent, heldByA
	pbPath := root + "/" + b.own

	phase(t, "the server's watch tables")
	sb, scc := B.c.SessionHex(), C.c.SessionHex()
	t.Logf("sessions: A=%s B=%s C=%s", A.c.SessionHex(), sb, scc)
	wchp := watchTable(t, srv, "wchp", root)
	wantP := map[string][]string{ha.Path: {sb}, pbPath: {scc}}
	if fmt.Sprint(wchp) != fmt.Sprint(wantP) {
		refuted(t, "L3", "got wchp %v; want %v (B->A, C->B)", wchp, wantP)
	}
	wchc := watchTable(t, srv, "wchc", root)
	wantC := map[string][]string{sb: {ha.Path}, scc: {pbPath}}
	if fmt.Sprint(wchc) != fmt.Sprint(wantC) {
		refuted(t, "L3", "got wchc %v; want %v (A watches nothing)", wchc, wantC)
	}
	evidence(t, "server watch tables under %s: wchp %v, wchc %v", root, wchp, wchc)
	t.Run("no child watch on the parent: mntr on a server of its own", func(t *testing.T) {
		if srv.External() {
			t.Skipf("skipped: mntr's zk_watch_count counts the watches of every client of the shared external server %s, and wchp and wchc list no child watches", srv.Client)
		}
		m := mntr(t, srv)
		evidence(t, "mntr zk_watch_count=%d (data, exists and child watches of the whole server)", m["zk_watch_count"])
		if m["zk_watch_count"] != 2 {
			refuted(t, "L3", "got %d watches on the server; want 2 (no child watch on the parent)", m["zk_watch_count"])
		}
	})

	phase(t, "the chain unwinds")
	heldByB := r.handOver("L3", heldByA, b)
	r.handOver("L3", heldByB, c)
}

// TestL4_DeletionWakesOnlyTheNextCandidate: deleting the holder's node
// notifies only the candidate right behind it, which lists again and holds;
// the one after it hears nothing and keeps waiting (claim L4, §3 ¶3, the
// predecessor-chain diagram; Example_s3bPredecessorChain prints the same
// observations).
//
// A holds with sequence 0, B (1) waits on A, C (2) waits on B. A releases:
// A's node is gone, and B acquires after exactly one notification and two
// listings, counted on B's wire. C's state, settled after a read on C's
// own connection: no notification, one listing, still waiting on B, not
// holding. The server still lists C's watch on B's node, untouched. B
// releases: C holds after one notification and two listings.
func TestL4_DeletionWakesOnlyTheNextCandidate(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L4")
	r := newRoom(t, []string{s.Client})
	A, B, C := r.join("A", joinOpts{}), r.join("B", joinOpts{}), r.join("C", joinOpts{})
	heldByA := A.acquire()
	b := B.acquireInBackground().waitsOn(nodeOf(heldByA))
	c := C.acquireInBackground().waitsOn(b.own)
	if got := []int64{heldByA.Token.Seq, seqOf(b.own), seqOf(c.own)}; !slices.Equal(got, []int64{0, 1, 2}) {
		notShown(t, "L4", "got sequences %v for A, B, C under a fresh parent; want [0 1 2]", got)
	}

	phase(t, "A releases")
	heldByB := r.handOver("L4", heldByA, b)
	if ok, _ := statOf(t, r.O, heldByA.Path); ok {
		brokenCheck(t, "L4", "A's node %s still exists after A's release", nodeOf(heldByA))
	}
	atB := b.settled()
	if atB.Wakeups != 1 || atB.Rounds != 2 {
		refuted(t, "L4", "got B acquiring after %d notifications and %d listings; want 1 and 2", atB.Wakeups, atB.Rounds)
	}
	atC := c.settled()
	evidence(t, "after A's release B acquired after %d notification(s) and %d listing(s); C, settled by a read on its own connection, got %d notifications and %d listing(s), waiting=%v on %s, acquired=%v", atB.Wakeups, atB.Rounds, atC.Wakeups, atC.Rounds, atC.Waiting, atC.Pred, c.finished())
	if atC.Wakeups != 0 || atC.Rounds != 1 {
		refuted(t, "L4", "C got %d notifications and listed %d times after A's deletion; want 0 and 1", atC.Wakeups, atC.Rounds)
	}
	if c.finished() || !atC.Waiting || atC.Pred != b.own {
		refuted(t, "L4", "C acquired after A's deletion or stopped waiting on B (finished=%v waiting=%v pred=%s)", c.finished(), atC.Waiting, atC.Pred)
	}
	if got := watchTable(t, s, "wchp", r.parent)[r.parent+"/"+b.own]; !slices.Equal(got, []string{C.c.SessionHex()}) {
		refuted(t, "L4", "got watchers of B's node %v; want C's session %s", got, C.c.SessionHex())
	}

	phase(t, "B releases")
	r.handOver("L4", heldByB, c)
	if atC = c.settled(); atC.Wakeups != 1 || atC.Rounds != 2 {
		refuted(t, "L4", "got C holding after %d notifications and %d listings; want 1 and 2", atC.Wakeups, atC.Rounds)
	}
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
	r := newRoom(t, []string{s.Client})
	A, B, C := r.join("A", joinOpts{}), r.join("B", joinOpts{}), r.join("C", joinOpts{})
	heldByA := A.acquire()
	b := B.acquireInBackground().waitsOn(nodeOf(heldByA))
	c := C.acquireInBackground().waitsOn(b.own)
	root := r.parent

	phase(t, "B gives up while A holds")
	B.a.info("cancel")
	b.cancel()
	// B giving up is the middle waiter of the claim: a cancel it does not
	// answer refutes it.
	if _, err := b.resultOr(refutedNow); !errors.Is(err, context.Canceled) {
		t.Fatalf("B: got %v; want context.Canceled", err)
	}
	// The claim starts from a waiter that gave up and left: a node of B's
	// still there is a premise that did not take, and C has nothing to
	// wake for.
	if ok, _ := statOf(t, r.O, root+"/"+b.own); ok {
		notShown(t, "L5", "B's node %s: got it still there after B gave up; want it deleted, so that C is woken", b.own)
	}
	c.waitsOnOr(refutedNow, nodeOf(heldByA))
	st := c.settledOr(refutedNow)
	evidence(t, "after B gave up, C got %d event(s) and listed %d times; it waits=%v on %s and acquired=%v while A holds", st.Wakeups, st.Rounds, st.Waiting, st.Pred, c.finished())
	if st.Wakeups != 1 || st.Rounds != 2 {
		refuted(t, "L5", "got C with %d events and %d lists; want 1 event and 2 lists", st.Wakeups, st.Rounds)
	}
	if c.finished() || !st.Waiting || st.Pred != nodeOf(heldByA) {
		refuted(t, "L5", "C acquired on B's deletion or does not wait on A (finished=%v waiting=%v pred=%s)", c.finished(), st.Waiting, st.Pred)
	}
	wchp := watchTable(t, s, "wchp", root)
	t.Logf("wchp under %s: %v (B's old watch on A stays until A changes or B's session ends)", root, wchp)
	if !slices.Contains(wchp[heldByA.Path], C.c.SessionHex()) {
		refuted(t, "L5", "got watchers of A's node %v; want C's session %s among them", wchp[heldByA.Path], C.c.SessionHex())
	}

	phase(t, "A releases")
	r.handOver("L5", heldByA, c)
	C.a.info("holds after %d events", c.settled().Wakeups)
}

// TestL6_OwnNodeGoneMeansLostCandidacy: a candidate whose own node has
// disappeared has no candidacy left; the recipe says so with an error and
// never reports that it holds the lock (claim L6, §3 ¶2).
//
// Waiter: A holds, B waits on A; O deletes B's node. B only finds out at its
// next round (it watches A, not itself): settled, it still waits with no
// event. A releases; B wakes, lists, does not find itself and returns
// ErrLostCandidacy. Holder: E holds and asks for Lost(); O deletes E's node;
// Lost closes, and Release says why: ErrLostCandidacy.
func TestL6_OwnNodeGoneMeansLostCandidacy(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L6")
	r := newRoom(t, []string{s.Client})
	A, B := r.join("A", joinOpts{}), r.join("B", joinOpts{})
	heldByA := A.acquire()
	b := B.acquireInBackground().waitsOn(nodeOf(heldByA))

	phase(t, "O deletes B's node while B waits on A")
	deleteAs(t, r.O, r.o, r.parent+"/"+b.own)
	st := b.settled()
	B.a.info("settled: events=%d waiting=%v pred=%s", st.Wakeups, st.Waiting, st.Pred)
	if b.finished() {
		t.Fatalf("B returned before its next round: %v", b.err)
	}

	phase(t, "A releases; B looks again")
	if err := heldByA.Release(r.ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err := b.resultOr(refutedNow)
	evidence(t, "B, whose node O deleted, returned hold=%v err=%v when A released", hb != nil, err)
	if hb != nil {
		refuted(t, "L6", "B reported acquisition (%s) without its node", hb.Path)
	}
	if !errors.Is(err, lock.ErrLostCandidacy) {
		refuted(t, "L6", "got %v; want lock.ErrLostCandidacy", err)
	}
	if kids := listChildren(t, r.O, r.parent); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}

	phase(t, "a holder: O deletes E's node; Lost closes")
	e := r.join("E", joinOpts{})
	he := e.acquire()
	lost := he.Lost()
	// Lost sets its watch asynchronously; wait until the server has it.
	waitWatching(t, s, r.parent, he.Path, e.c.SessionHex())
	select {
	case <-lost:
		t.Fatalf("Lost closed while E's node exists")
	default:
	}
	deleteAs(t, r.O, r.o, he.Path)
	wait.ReceiveSeen(judged(t, "L6", refutedNow), within, "E's Lost to close after O deleted E's node", lost, func() string {
		ok, st, err := r.O.Exists(he.Path)
		if err != nil {
			return fmt.Sprintf("Lost still open; O's exists %s: %v", nodeOf(he), err)
		}
		node := "gone"
		if ok {
			node = fmt.Sprintf("still there (owner 0x%x, E's session %s)", st.EphemeralOwner, e.c.SessionHex())
		}
		return fmt.Sprintf("Lost still open; E's node %s %s as O sees it; E's last step: %s", nodeOf(he), node, e.lastStep())
	})
	rerr := he.Release(r.ctx)
	e.a.info("Lost closed; Release: %v", rerr)
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		refuted(t, "L6", "got Release %v after Lost; want lock.ErrLostCandidacy (node deleted)", rerr)
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
// E holds, F waits on E. O deletes E's node; F is notified and holds. E,
// which never asked for Lost, releases late: ErrLostCandidacy, and F's node
// still exists, owned by F, with F still holding. A Release that deleted
// "the lowest child" instead of its own node would delete F's here.
func TestL6_LateReleaseDeletesNothingOfTheNextHolder(t *testing.T) {
	claim(t, "L6")
	r := newRoom(t, []string{sharedServer(t).Client})
	E, F := r.join("E", joinOpts{}), r.join("F", joinOpts{})
	heldByE := E.acquire()
	f := F.acquireInBackground().waitsOn(nodeOf(heldByE))

	phase(t, "O deletes E's node; F holds")
	deleteAs(t, r.O, r.o, heldByE.Path)
	hf, err := f.result()
	if err != nil {
		t.Fatalf("F: %v", err)
	}

	phase(t, "E releases late")
	rerr := heldByE.Release(r.ctx)
	E.a.info("release: %v", rerr)
	ok, st := statOf(t, r.O, hf.Path)
	evidence(t, "E's late Release returned %v; F's node %s exists=%v with owner 0x%x (F's session %s)", rerr, path.Base(hf.Path), ok, st.EphemeralOwner, F.c.SessionHex())
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		refuted(t, "L6", "E's late Release returned %v; want lock.ErrLostCandidacy", rerr)
	}
	if !ok || st.EphemeralOwner != F.c.SessionID() {
		refuted(t, "L6", "E's late Release removed F's node %s (exists=%v owner=0x%x); want it untouched", hf.Path, ok, st.EphemeralOwner)
	}
	if err := hf.Release(r.ctx); err != nil {
		refuted(t, "L6", "F's Release after E's late one: %v; want nil (F's node was its own to delete)", err)
	}
}

// TestL6_ExpiredWaiterReportsSessionChanged: when a waiter's session
// expires, its candidacy is over: the client library quietly opens a new
// session, and the waiter says the session changed instead of ever holding
// (claim L6, §3 ¶2; the new session's part is R8's).
//
// Dedicated server with a short tick. A holds; B, through a client proxy
// and with a short session, waits on A. The proxy cuts B off (closes its
// connection and refuses new ones) until O sees the server delete B's
// node: the session expired by itself. Let through again, B's client learns
// of the expiry, and B's acquisition returns ErrSessionChanged wrapping
// zk.ErrSessionExpired, never a hold.
func TestL6_ExpiredWaiterReportsSessionChanged(t *testing.T) {
	parallel(t)
	claim(t, "L6")
	srv := expiryServer(t)
	r := newRoom(t, []string{srv.Client})
	A := r.join("A", joinOpts{})
	p := zkserver.ClientProxy(t, "B-proxy", srv)
	b := r.join("B", joinOpts{via: []string{p.Addr()}, client: []zkclient.Option{zkclient.WithSessionTimeout(expirySessionTimeout)}})
	oldSession := b.c.SessionHex()
	heldByA := A.acquire()
	pb := b.acquireInBackground().waitsOn(nodeOf(heldByA))

	phase(t, "B is cut off until the server expires its session (%v)", expirySessionTimeout)
	mark := b.c.Mark()
	p.Cut(faultproxy.BothEnds)
	t.Cleanup(p.Heal)
	wait.For(t, 10*expirySessionTimeout, "the server to delete B's node", func() (bool, string) {
		ok, _, err := r.O.Exists(r.parent + "/" + pb.own)
		return err == nil && !ok, fmt.Sprintf("exists=%v err=%v", ok, err)
	})
	r.o.info("B's node %s deleted by the server: session %s expired", pb.own, oldSession)
	p.Heal()
	hb, err := pb.resultOr(refutedNow)
	evidence(t, "B, cut off until its session %s expired, returned hold=%v err=%v", oldSession, hb != nil, err)
	if hb != nil {
		refuted(t, "L6", "B reported acquisition after its session expired")
	}
	if !errors.Is(err, lock.ErrSessionChanged) || !errors.Is(err, zk.ErrSessionExpired) {
		refuted(t, "L6", "got %v; want lock.ErrSessionChanged wrapping zk.ErrSessionExpired", err)
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
	parallel(t)
	claim(t, "L7")
	srv := leaseServer(t, soloKind)
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
	r := newRoom(t, ss)
	root := r.parent
	for _, p := range []string{root + "/ours", root + "/foil"} {
		if _, err := r.O.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
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
		brokenCheck(t, "L7", "got foil %d wakeups (server %d); want N-1 = %d: the control did not herd", woke, fired, n-1)
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
			refuted(t, "L7", "got %d wakeups (server: %d deleted, %d child watches) for one release; want 1 (1, 0)", woke, del, chw)
		}
		return
	}
	gone, added := watchDiff(before.wchp, after.wchp), watchDiff(after.wchp, before.wchp)
	evidence(t, "N=%d ours release %d: %d waiter(s) woke; wchp under %s lost %v and gained %v", n, r, woke, before.parent, gone, added)
	want := map[string][]string{released: {next}}
	if woke != 1 || fmt.Sprint(gone) != fmt.Sprint(want) || len(added) != 0 {
		refuted(t, "L7", "got %d wakeups (wchp lost %v, gained %v) for one release; want 1 (lost %v, gained nothing)", woke, gone, added, want)
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
	// Each acquisition and release has a bound of its own: one bound for
	// the whole herd made a release under a loaded machine fail for the
	// time that queueing 99 waiters took before it.
	holder, err := ps[0].l.Acquire(lockCtx(t))
	if err != nil {
		t.Fatalf("P0: %v", err)
	}
	pend := make([]*acquisition, n)
	prev := nodeOf(holder)
	for i := 1; i < n; i++ {
		pend[i] = ps[i].acquireInBackground().waitsOn(prev)
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
		if err := holder.Release(lockCtx(t)); err != nil {
			t.Fatalf("release: %v", err)
		}
		next, err := pend[r].result()
		if err != nil {
			t.Fatalf("P%d: %v", r, err)
		}
		for i := r + 1; i < n; i++ {
			if st := pend[i].settled(); st.Wakeups != 0 {
				refuted(t, "L7", "P%d, still waiting, has woken %d times; want 0", i, st.Wakeups)
			}
		}
		before.requireOneWatchFired(t, n, r, events()-wBefore, holder.Path, ps[r].c.SessionHex())
		holder = next
	}
	if err := holder.Release(lockCtx(t)); err != nil {
		t.Fatalf("release: %v", err)
	}
	for i := 1; i < n; i++ {
		pend[i].cancel()
	}
	for i := 1; i < n; i++ {
		_, _ = pend[i].result()
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
		wait.Receive(t, within, fmt.Sprintf("foil waiter %d of %d registered", i, n-1), registered)
	}
	var before map[string]int64
	if !srv.External() {
		before = mntr(t, srv) // server-wide: read only on a server of the test's own
	}
	if err := ps[0].c.Delete(parent+"/"+names[0], -1); err != nil {
		t.Fatalf("foil release: %v", err)
	}
	if i := wait.Receive(t, within, "foil: a holder", acquired); i != 1 {
		t.Errorf("foil: P%d acquired; want P1", i)
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
// The Trace's Watching callback deletes the predecessor exactly in that
// window, twenty times in a row: each time exists answers false, B lists
// again and holds, having received no watch event. No sleep: the hook makes
// the window every time. The exists on a missing node leaves a creation
// watch on the server (reported, not a claim).
func TestL8_ListExistsRace(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L8")
	r := newRoom(t, []string{s.Client})
	root, ctx := r.parent, r.ctx
	var hookErr error
	var b *contender
	hook := func(i locktrace.WatchInfo) {
		pred := i.Predecessor
		b.a.info("hook after list: predecessor %s", pred)
		if err := r.O.Delete(root+"/"+pred, -1); err != nil {
			hookErr = err
			return
		}
		b.a.info("hook: %s deleted by O", pred)
	}
	a := r.join("A", joinOpts{quiet: true})
	b = r.join("B", joinOpts{trace: &locktrace.Trace{Watching: hook}})
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
		st := b.settled(nodeOf(hb))
		if st.NoNode != 1 || st.Rounds != 2 || st.Wakeups != 0 {
			refuted(t, "L8", "run %d: got exists-no-node=%d lists=%d events=%d; want 1, 2, 0", i, st.NoNode, st.Rounds, st.Wakeups)
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
	parallel(t)
	zkserver.RequireFaults(t)
	claim(t, "L9")
	c := leaseTrio(t)
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
			notShown(r.t, "L9", "W's server %s reports mode %q (%v); want the follower %s", s.Label, mode, err, r.f.Label)
		}
		return
	}
	notShown(r.t, "L9", "W is connected to %s, none of the ensemble's servers", at)
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
		refuted(t, "L9", "round %d: W's list lacks its own node %s", i, own)
	}
	for n := range r.live {
		if !slices.Contains(kids, n) {
			refuted(t, "L9", "round %d: W's list lacks live smaller candidate %s", i, n)
		}
	}
	for _, n := range r.deleted {
		if slices.Contains(kids, n) {
			refuted(t, "L9", "round %d: W's list has %s, deleted before W's create", i, n)
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
		notShown(t, "L9", "the follower was not behind (y listed: %v, held bytes: %d); the round would prove nothing", slices.Contains(pre, y), held)
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
		notShown(t, "L9", "W's create returned (%v) while its follower's stream was held", cr.err)
	default:
	}
	r.c.ReleaseStream(r.f)
	cr := wait.Receive(t, within, "the return of W's create after the release", done)
	if cr.err != nil {
		t.Fatalf("W create: %v", cr.err)
	}
	r.wa.ok("%s", path.Base(cr.p))
	return path.Base(cr.p)
}

// TestL12_UnseenDeletionOnlyDelaysTheWaiter: a deletion that the waiter's
// follower has not yet seen only makes the waiter wait longer; it holds once
// the follower has caught up and no candidate is left ahead, never before
// (claim L12, §3 ¶5, the first half of the sentence whose second half is
// L9's).
//
// 3-server ensemble with link proxies. H holds and P waits on H, both
// clients of the leader; W waits on P through follower F. Twice, the
// leader's stream to F is held while a node W waits on is deleted through
// the leader:
//   - P gives up while H still holds. O, on the leader, no longer finds P;
//     W's own read on F still does, and W is still waiting on P. After the
//     release W lists again, finds H ahead and waits on H: one holder.
//   - H releases. O no longer finds H; W's own read on F still does, and
//     W is still waiting on H. After the release W holds.
//
// "Still waiting" is W's acquisition as its Probe reports it once a read on
// W's own session has returned: the server sends a session's notifications
// in order with its replies, so any event F had sent is taken in first.
func TestL12_UnseenDeletionOnlyDelaysTheWaiter(t *testing.T) {
	parallel(t)
	zkserver.RequireFaults(t)
	claim(t, "L12")
	c := leaseTrio(t)
	leader := c.Leader()
	sc := &l12Scene{t: t, c: c, f: c.Followers()[0], r: newRoom(t, []string{leader.Client})}
	h := sc.r.join("H", joinOpts{})
	p := sc.r.join("P", joinOpts{})
	sc.w = sc.r.join("W", joinOpts{via: []string{sc.f.Client}})
	if mode, err := sc.f.Mode(); err != nil || mode != "follower" || sc.w.w.server(sc.w.c.Server()) != sc.f.Client {
		notShown(t, "L12", "W is connected to %s; want the follower %s (mode %q, %v)", sc.w.w.server(sc.w.c.Server()), sc.f.Client, mode, err)
	}
	t.Logf("leader %s; H and P are its clients; W's follower is %s", leader.Label, sc.f.Label)
	hH := h.acquire()
	pP := p.acquireInBackground().waitsOn(nodeOf(hH))
	sc.pW = sc.w.acquireInBackground().waitsOn(pP.own)

	phase(t, "P gives up while H holds; the leader's stream to %s is held", sc.f.Label)
	sc.unseenDeletion(pP.own, func() {
		p.a.info("gives up: its acquisition is cancelled")
		pP.cancel()
		pP.result() // P giving up is L12's scene, not its observation: a cancel P does not answer is not shown
	})
	phase(t, "released: W must list again, find H ahead and wait on it")
	sc.waitsOnOrReturns(path.Base(hH.Path), "H still holds")

	phase(t, "H releases; the leader's stream to %s is held again", sc.f.Label)
	sc.unseenDeletion(path.Base(hH.Path), func() {
		if err := hH.Release(sc.r.ctx); err != nil {
			notShown(t, "L12", "H's release: %v", err)
		}
	})
	hW, err := sc.pW.resultOr(refutedNow)
	if err != nil {
		refutedNow(t, "L12", "W's acquisition returned %v once its follower had caught up and no candidate was ahead; want a hold", err)
	}
	sc.w.a.ok("holds %s", path.Base(hW.Path))
	kids := listChildren(t, sc.r.O, sc.r.parent)
	evidence(t, "after the release W held %s, the only candidate left as O sees on the leader: %v", path.Base(hW.Path), kids)
	if len(kids) != 1 || kids[0] != sc.pW.own {
		refuted(t, "L12", "W holds while the parent holds %v; want W's node alone", kids)
	}
}

// l12Scene is TestL12's lock room: O on the leader, W's acquisition
// through follower f.
type l12Scene struct {
	t  *testing.T
	c  *cluster
	f  *zkserver.Server
	r  *room
	w  *contender
	pW *acquisition
}

// unseenDeletion holds the leader's stream to f, runs del, which deletes
// node through the leader, and shows W still waiting on node while f has
// not seen the deletion; then it releases the stream.
func (sc *l12Scene) unseenDeletion(node string, del func()) {
	t := sc.t
	t.Helper()
	events := sc.w.events.Load()
	sc.c.HoldStream(sc.f)
	del()
	atLeader, _ := statOf(t, sc.r.O, sc.r.parent+"/"+node)
	sc.r.o.info("%s exists on the leader: %v", node, atLeader)
	sc.w.a.invoke("exists %s (its own session, on %s)", node, sc.f.Label)
	atF, _, err := sc.w.c.Exists(sc.r.parent + "/" + node)
	if err != nil {
		t.Fatalf("W exists: %v", err)
	}
	sc.w.a.ok("%v", atF)
	// W's read on its own connection has returned: the wire's counts are
	// final, and await lets the recipe take in what was delivered.
	st := sc.w.w.await(t, sc.pW.own)
	held := sc.c.StreamProxy(sc.f).Stats().DownHeld
	evidence(t, "%s deleted through the leader (O finds it: %v); W's follower %s still has it (W's own read finds it: %v; %d bytes of the leader's stream held); W waiting on %s: %v, returned: %v, events since the hold: %d", node, atLeader, sc.f.Label, atF, held, st.Pred, st.Waiting, st.Done, sc.w.events.Load()-events)
	if atLeader || !atF || held == 0 {
		notShown(t, "L12", "the leader has %s: %v, W's follower has it: %v, held bytes: %d; want it deleted on the leader, not yet on the follower", node, atLeader, atF, held)
	}
	if st.Done || !st.Waiting || st.Pred != node {
		refuted(t, "L12", "while its follower had not seen %s deleted, W's acquisition returned: %v (acquired %v), waiting on %q; want it still waiting on %s", node, st.Done, st.Acquired, st.Pred, node)
	}
	if sc.pW.finished() {
		refuted(t, "L12", "W's acquisition returned before the follower's stream was released")
	}
	sc.c.ReleaseStream(sc.f)
}

// waitsOnOrReturns waits, once the stream is released, until W's
// acquisition waits on pred, which is still there (why), or returns: a
// return here is a second holder.
func (sc *l12Scene) waitsOnOrReturns(pred, why string) {
	t := sc.t
	t.Helper()
	wait.For(judged(t, "L12", refutedNow), within, "W to wait on "+pred+" or return", func() (bool, string) {
		at, _ := sc.w.w.now(sc.pW.own)
		return sc.pW.finished() || at.Waiting && at.Pred == pred, fmt.Sprintf("W waiting=%v on %q, returned %v", at.Waiting, at.Pred, sc.pW.finished())
	})
	if sc.pW.finished() {
		refutedNow(t, "L12", "once its follower caught up W's acquisition returned (hold: %v, %v) while %s: two holders", sc.pW.held != nil, sc.pW.err, why)
	}
	st := sc.pW.settled()
	evidence(t, "after the release W waits on %s (%s): waiting %v, returned %v", pred, why, st.Waiting, st.Done)
}

// TestL10_ElectionNeedsReadyAcrossFailover: in an election the lowest
// candidate is only a candidate; it can serve once it has recovered state
// and published "ready", and clients wait for "ready" (claim L10, §3 ¶6,
// sentences 3 and 4).
//
// Two clients of whoever leads ask for the leader at the same moments.
// Qready waits for the ready node; Qlowest, the control, takes the lowest
// candidate for the leader. L1 is elected (it holds the lock) and is
// halfway through its recovery (the state says "recovering") when both
// ask: Qlowest uses L1 at once and reads the half-recovered state; Qready
// is found waiting (its exists(ready) answered false; it has read nothing)
// until L1 has finished and published ready, and then reads L1's complete
// state. L1's session ends, ready with it; L2 holds, is halfway through
// its own recovery, and the same happens again. Example_s3dElectionNeedsReady
// is one such round.
func TestL10_ElectionNeedsReadyAcrossFailover(t *testing.T) {
	claim(t, "L10")
	el := newElection(t, sharedServer(t))
	Qready, Qlowest := el.client("Qready", waitForReady), el.client("Qlowest", lowestCandidate)
	L1, L2 := el.candidate("L1"), el.candidate("L2")

	phase(t, "L1 is elected and halfway through its recovery; L2 waits behind it")
	heldByL1 := L1.acquire()
	waitingL2 := L2.acquireInBackground().waitsOn(nodeOf(heldByL1))
	checkRound(t, el.round(L1, Qready, Qlowest))

	phase(t, "L1's session ends: its candidate and ready go with it; L2 holds and is halfway through its recovery")
	L1.a.info("close session %s", L1.c.SessionHex())
	L1.c.Close()
	if _, err := waitingL2.result(); err != nil {
		notShown(t, "L10", "L2's acquisition after L1's session ended: got %v; want a hold", err)
	}
	checkRound(t, el.round(L2, Qready, Qlowest))
}

// checkRound asserts L10 on one round: the control read the half-recovered
// state (else the round shows nothing), Qready never did.
func checkRound(t *testing.T, r electionRound) {
	t.Helper()
	evidence(t, "%s elected, state %q: Qlowest used %s and read %q; Qready %s, then used %s and read %q once %s had published ready", r.leader, r.half, r.control.leader, r.control.state, r.whileHalf, r.correct.leader, r.correct.state, r.leader)
	if r.control.leader != r.leader || r.control.state != r.half {
		brokenCheck(t, "L10", "Qlowest, the control, used %s and read %q; want %s and its half-recovered %q", r.control.leader, r.control.state, r.leader, r.half)
	}
	if r.returnedEarly {
		refuted(t, "L10", "Qready, which waits for ready, used %s and read %q while %s was half recovered (%q)", r.early.leader, r.early.state, r.leader, r.half)
		return
	}
	if r.correct.leader != r.leader || r.correct.state != r.recovered {
		refuted(t, "L10", "once %s published ready Qready used %s and read %q; want %s and %q", r.leader, r.correct.leader, r.correct.state, r.leader, r.recovered)
	}
}

// election is L10's scene: O, who set up the election parent and the
// state the leaders keep, the candidates, and the clients of whoever leads.
type election struct {
	t                    zkserver.TB
	ctx                  context.Context
	server               *zkserver.Server
	parent, state, ready string
	mu                   sync.Mutex
	names                map[int64]string // a candidate's session -> its name
}

// newElection makes the election parent and the state ("epoch=0 x=41", as
// an earlier leader left it) under a fresh root on s.
func newElection(t zkserver.TB, s *zkserver.Server) *election {
	t.Helper()
	o := zkclient.Connect(t, "O", []string{s.Client})
	root := testRoot(t, o)
	el := &election{t: t, ctx: lockCtx(t), server: s, parent: root + "/election", state: root + "/state", ready: root + "/ready", names: map[int64]string{}}
	for p, data := range map[string]string{el.parent: "", el.state: "epoch=0 x=41"} {
		if _, err := o.Create(p, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	return el
}

// electionCandidate is a contender of the election; once it holds, it
// recovers the state and publishes ready.
type electionCandidate struct {
	*contender
	el *election
}

func (el *election) candidate(name string) *electionCandidate {
	p := join(el.t, name, []string{el.server.Client}, el.parent, joinOpts{})
	el.mu.Lock()
	el.names[p.c.SessionID()] = name
	el.mu.Unlock()
	return &electionCandidate{contender: p, el: el}
}

// beginRecovery is the first half of p's recovery: it reads the state the
// last leader left ("epoch=N x=V") and marks it as being recovered into
// the next epoch. It returns what the state says now.
func (p *electionCandidate) beginRecovery() string {
	var epoch, x int
	version := p.readState("epoch=%d x=%d", &epoch, &x)
	now := fmt.Sprintf("epoch=%d recovering from x=%d", epoch+1, x)
	p.writeState(now, version)
	return now
}

// finishRecovery is the second half: the recovered state of the new epoch
// (the earlier leader's pending update applied), then ready, ephemeral,
// naming p. It returns the recovered state.
func (p *electionCandidate) finishRecovery() string {
	t := p.el.t
	t.Helper()
	var epoch, x int
	version := p.readState("epoch=%d recovering from x=%d", &epoch, &x)
	done := fmt.Sprintf("epoch=%d x=%d", epoch, x+1)
	p.writeState(done, version)
	p.a.invoke("create %s ephemeral %q", p.el.ready, p.name)
	if _, err := p.c.Create(p.el.ready, []byte(p.name), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("%s: publish ready: %v", p.name, err)
	}
	p.a.ok("")
	return done
}

// readState reads the state, parses it with format and returns its
// version.
func (p *electionCandidate) readState(format string, args ...any) int32 {
	t := p.el.t
	t.Helper()
	p.a.invoke("get %s", p.el.state)
	data, st, err := p.c.Get(p.el.state)
	if err != nil {
		t.Fatalf("%s: get state: %v", p.name, err)
	}
	p.a.ok("%s", data)
	if _, err := fmt.Sscanf(string(data), format, args...); err != nil {
		t.Fatalf("%s: state %q is not %q: %v", p.name, data, format, err)
	}
	return st.Version
}

func (p *electionCandidate) writeState(data string, version int32) {
	t := p.el.t
	t.Helper()
	p.a.invoke("set %s %q", p.el.state, data)
	if _, err := p.c.Set(p.el.state, []byte(data), version); err != nil {
		t.Fatalf("%s: set state: %v", p.name, err)
	}
	p.a.ok("")
}

// leaderRule is how a client decides whom to use as the leader.
type leaderRule func(q *electionClient) (leader string, err error)

// electionClient is a client of whoever leads: it finds the leader by its
// rule, then reads the state the leader serves.
type electionClient struct {
	name    string
	c       *zkclient.Client
	a       actor
	el      *election
	rule    leaderRule
	waiting chan struct{} // the rule found ready absent and waits
}

func (el *election) client(name string, rule leaderRule) *electionClient {
	return &electionClient{name: name, c: zkclient.Connect(el.t, name, []string{el.server.Client}), a: newActor(el.t, name), el: el, rule: rule, waiting: make(chan struct{}, 1)}
}

// waitForReady is the rule the article asks for: the leader is whoever
// ready names, and while ready is absent there is none to use.
func waitForReady(q *electionClient) (string, error) {
	for {
		q.a.invoke("exists %s watch", q.el.ready)
		ok, _, ev, err := q.c.ExistsW(q.el.ready)
		if err != nil {
			return "", err
		}
		if ok {
			q.a.ok("true")
			q.a.invoke("get %s", q.el.ready)
			name, _, err := q.c.Get(q.el.ready)
			if errors.Is(err, zk.ErrNoNode) {
				continue // gone again: wait for the next one
			}
			q.a.ok("%s", name)
			return string(name), err
		}
		q.a.ok("false: no leader to use yet")
		select {
		case q.waiting <- struct{}{}:
		default:
		}
		select {
		case e := <-ev:
			q.a.info("event %s %s", e.Type, e.Path)
		case <-q.el.ctx.Done():
			return "", q.el.ctx.Err()
		}
	}
}

// lowestCandidate is the control's rule: the candidate with the lowest
// sequence number is taken for the leader, whatever it has recovered.
func lowestCandidate(q *electionClient) (string, error) {
	q.a.invoke("children %s", q.el.parent)
	kids, _, err := q.c.Children(q.el.parent)
	if err != nil {
		return "", err
	}
	low := lowestBySeq(kids)
	ok, st, err := q.c.Exists(q.el.parent + "/" + low)
	if err != nil || !ok {
		return "", fmt.Errorf("lowest candidate %q: exists %v, %v", low, ok, err)
	}
	q.el.mu.Lock()
	name := q.el.names[st.EphemeralOwner]
	q.el.mu.Unlock()
	q.a.ok("lowest %s, of %s", low, name)
	return name, nil
}

// usage is whom a client used and the state it read there.
type usage struct {
	leader, state string
	err           error
}

// use finds the leader by q's rule and reads the state it serves.
func (q *electionClient) use() usage {
	leader, err := q.rule(q)
	if err != nil {
		return usage{err: err}
	}
	q.a.invoke("get %s (served by %s)", q.el.state, leader)
	state, _, err := q.c.Get(q.el.state)
	if err != nil {
		return usage{leader: leader, err: err}
	}
	q.a.ok("%s", state)
	return usage{leader: leader, state: string(state)}
}

// electionRound is what one round saw: the leader halfway through its
// recovery, the control's usage then, where Qready was meanwhile, and
// Qready's usage once the leader had published ready.
type electionRound struct {
	leader, half, recovered string
	control                 usage
	whileHalf               string // "waited for ready" or "returned"
	returnedEarly           bool
	early                   usage // Qready's usage if it returned while the leader was half recovered
	correct                 usage // Qready's usage, whenever it returned
}

// round: p holds the lock and begins its recovery; both clients ask for the
// leader while the state is half recovered; Qready, started in the
// background, is awaited until it waits for ready or returns; then p
// finishes its recovery and publishes ready (also when Qready returned
// early, so the scene can go on), and Qready's usage is taken.
func (el *election) round(p *electionCandidate, ready, lowest *electionClient) electionRound {
	t := el.t
	t.Helper()
	r := electionRound{leader: p.name, half: p.beginRecovery()}
	r.control = lowest.use()
	if r.control.err != nil {
		notShown(t, "L10", "%s: %v", lowest.name, r.control.err)
	}
	done := make(returned)
	var correct usage
	go func() {
		defer close(done)
		correct = ready.use()
	}()
	t.Cleanup(func() { wait.Receive(t, within, ready.name+"'s use", done) })
	select {
	case <-ready.waiting:
		r.whileHalf = "waited for ready"
	case <-done:
		r.whileHalf, r.returnedEarly, r.early = "returned", true, correct
	case <-time.After(within):
		notShown(t, "L10", "%s neither waited for ready nor returned within %v", ready.name, within)
	}
	ready.a.info("while %s is half recovered: %s", p.name, r.whileHalf)
	r.recovered = p.finishRecovery()
	wait.ReceiveSeen(judged(t, "L10", notShown), within, ready.name+"'s use once "+p.name+" published ready", done, func() string {
		return fmt.Sprintf("%s's use pending; while %s was half recovered it %s", ready.name, p.name, r.whileHalf)
	})
	if correct.err != nil {
		notShown(t, "L10", "%s: %v", ready.name, correct.err)
	}
	r.correct = correct
	return r
}

// TestL11_CallbackThatIsNoDeletionListsAgain: the predecessor chain does
// not promise that a waiter is called back once, and only for its
// predecessor's deletion. A change of the predecessor's data fires the same
// watch; the waiter lists again, watches the same predecessor again and
// keeps waiting, every time, and holds only once it is the lowest (claim
// L11, §3 ¶3).
//
// A holds, B waits on A, C waits on B. O changes the data of A's node three
// times: each time B gets EventNodeDataChanged, lists again, waits on A
// again and does not hold, and the server lists B's watch on A's node
// again; C hears nothing. O changes B's node: C is called back, lists
// again and keeps waiting on B. When A releases, B holds; when B releases,
// C holds. A recipe that took any event for success would hold at the
// first change while A still holds.
func TestL11_CallbackThatIsNoDeletionListsAgain(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L11")
	r := newRoom(t, []string{s.Client})
	A, B, C := r.join("A", joinOpts{}), r.join("B", joinOpts{}), r.join("C", joinOpts{})
	heldByA := A.acquire()
	pb := B.acquireInBackground().waitsOn(nodeOf(heldByA))
	pc := C.acquireInBackground().waitsOn(pb.own)
	root, ha, b, c := r.parent, heldByA, B, C
	aNode := nodeOf(ha)

	const changes = 3
	phase(t, "O changes the data of A's node %d times while A holds", changes)
	for i := 1; i <= changes; i++ {
		setAs(t, r.O, r.o, ha.Path, fmt.Sprintf("change %d", i))
		st := pb.settled()
		if pb.finished() || !st.Waiting || st.Pred != aNode {
			refutedNow(t, "L11", "after change %d of A's node B finished=%v (hold %s, err %v), waiting=%v on %s; want B still waiting on A, which holds", i, pb.finished(), holdOf(pb.held), pb.err, st.Waiting, st.Pred)
		}
		if st.Wakeups != i || st.Rounds != i+1 {
			refuted(t, "L11", "after change %d B had %d events and %d lists; want %d and %d (one list per callback)", i, st.Wakeups, st.Rounds, i, i+1)
		}
	}
	stB := pb.settled()
	got := b.eventsReceived()
	evidence(t, "O changed A's node %d times while A held: B was called back %d times %v, listed %d times, waits=%v on A and acquired=%v", changes, stB.Wakeups, got, stB.Rounds, stB.Waiting, pb.finished())
	for _, ev := range got {
		if ev != "EventNodeDataChanged "+aNode {
			brokenCheck(t, "L11", "B received %q; want only EventNodeDataChanged on A's node", ev)
		}
	}
	if w := watchTable(t, s, "wchp", root)[ha.Path]; !slices.Contains(w, b.c.SessionHex()) {
		refuted(t, "L11", "got watchers of A's node %v after the changes; want B's session %s among them (B watches A again)", w, b.c.SessionHex())
	}
	if stC := pc.settled(); stC.Wakeups != 0 || !stC.Waiting || stC.Pred != pb.own {
		t.Errorf("L11: C, which watches B, got %d events, waiting=%v on %s; want 0 events, waiting on B", stC.Wakeups, stC.Waiting, stC.Pred)
	}

	phase(t, "O changes the data of B's node, C's predecessor")
	setAs(t, r.O, r.o, root+"/"+pb.own, "change")
	stC := pc.settled()
	evidence(t, "O changed B's node: C was called back %v, listed %d times, waits=%v on B and acquired=%v", c.eventsReceived(), stC.Rounds, stC.Waiting, pc.finished())
	if pc.finished() || !stC.Waiting || stC.Pred != pb.own || stC.Wakeups != 1 || stC.Rounds != 2 {
		refuted(t, "L11", "after the change of B's node C finished=%v, waiting=%v on %s with %d events and %d lists; want still waiting on B after 1 event and 2 lists", pc.finished(), stC.Waiting, stC.Pred, stC.Wakeups, stC.Rounds)
	}

	phase(t, "A releases, then B")
	hb := r.handOver("L11", ha, pb)
	b.a.info("holds after %d events", pb.settled().Wakeups)
	r.handOver("L11", hb, pc)
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
// second cut, during which O changes A's node: after the reconnect B is
// called back with EventNodeDataChanged for a change older than the
// reconnect, lists again and still waits on A. When A releases, B holds.
func TestL11_LateCallbackAfterReconnectListsAgain(t *testing.T) {
	parallel(t)
	s := sharedServer(t)
	claim(t, "L11")
	r := newRoom(t, []string{s.Client})
	a := r.join("A", joinOpts{})
	p := zkserver.ClientProxy(t, "B-proxy", s)
	b := r.join("B", joinOpts{via: []string{p.Addr()}})
	ha := a.acquire()
	pb := b.acquireInBackground().waitsOn(nodeOf(ha))
	root, ctx := r.parent, r.ctx
	session := b.c.SessionID()
	stillWaiting := func(when string) attempt {
		t.Helper()
		st := pb.settled()
		if pb.finished() || !st.Waiting || st.Pred != path.Base(ha.Path) {
			refutedNow(t, "L11", "%s B finished=%v (hold %s, err %v), waiting=%v on %s; want B still waiting on A, which holds", when, pb.finished(), holdOf(pb.held), pb.err, st.Waiting, st.Pred)
		}
		if st.Rounds != st.Wakeups+1 {
			refuted(t, "L11", "%s B had %d events and %d lists; want one list per callback (%d)", when, st.Wakeups, st.Rounds, st.Wakeups+1)
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

	phase(t, "a second cut; O changes A's node while B is away")
	shortCut(t, p, b, func() { setAs(t, r.O, r.o, ha.Path, "changed while B was cut off") })
	wait.For(t, within, "B's late callback", func() (bool, string) {
		return b.events.Load() > before, fmt.Sprintf("B's events: %v", b.eventsReceived())
	})
	st = stillWaiting("after the late callback")
	evs := b.eventsReceived()
	evidence(t, "B, waiting on A, reconnected twice in session %s: the plain reconnect called B back %d times; O's change of A's node, made while B was cut off, reached B after the second reconnect as %v; B listed %d times, waits=%v on A and acquired=%v while A holds", b.c.SessionHex(), plain, evs, st.Rounds, st.Waiting, pb.finished())
	if want := "EventNodeDataChanged " + path.Base(ha.Path); len(evs) == 0 || evs[len(evs)-1] != want {
		brokenCheck(t, "L11", "B's callbacks %v; want the last to be %q", evs, want)
	}
	if b.c.SessionID() != session {
		notShown(t, "L11", "B's session changed from 0x%x to %s; the cuts were meant to be short", session, b.c.SessionHex())
	}

	phase(t, "A releases")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	if _, err := pb.result(); err != nil {
		notShown(t, "L11", "B did not hold after A's release: %v", err)
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

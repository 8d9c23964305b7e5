package zk19_test

// §3 of the article (临时顺序锁怎样判断资格): the ephemeral-sequential lock
// recipe of package lock. The section's four pictures come first, as
// Examples on a real server (sequence order is not name order, the
// predecessor chain, the list/exists race, an election that needs ready);
// then L1 to L12, in the order the article states them. Timing comes from
// the recipe's locktrace hooks and from reads that order notifications,
// never from sleeping; the counts the
// claims rest on come from each session's own proxy (internal/proof/scene's
// witness). The go-zookeeper comparison is in ./peers, the benchmarks in
// ./bench.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// herd1000 is L7's costly size, registered by this test binary only.
var herd1000 = flag.Bool("zk19.herd1000", false, "L7: also measure N=1000 candidates (1000 sessions)")

// Example_s3aSequenceOrderIsNotNameOrder: a candidate's place in the queue is
// the number the server appends, not its name; the GUID in front of the
// number is random, so sorting whole names scrambles the queue (claim L2, §3
// ¶1).
//
// One session creates three candidates the way the recipe does, in the
// order C, B, A, with GUIDs chosen so that C's sorts last and A's first (a
// random GUID can land anywhere; fixed ones make the output repeatable),
// as if each create's reply had been lost. The server numbers them 0, 1, 2
// in creation order; the names sorted as strings give the reverse. The
// recipe, recovering C's candidate by its GUID, holds at once with token 0:
// by name C would be last in the queue.
func Example_s3aSequenceOrderIsNotNameOrder() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	r := scene.ExampleScene(sc)
	session := r.Session("S")
	guids := map[string]string{
		"C": "cccccccc-0000-4000-8000-000000000000",
		"B": "bbbbbbbb-0000-4000-8000-000000000000",
		"A": "aaaaaaaa-0000-4000-8000-000000000000",
	}
	label := map[string]string{} // node name -> C, B or A
	for _, name := range []string{"C", "B", "A"} {
		node, err := session.Create(r.Parent+"/"+guids[name]+fence.LockInfix, nil,
			zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			sc.Fatalf("create %s: %v", name, err)
		}
		label[path.Base(node)] = name
	}

	children, _, err := r.O.Children(r.Parent)
	if err != nil {
		sc.Fatalf("children: %v", err)
	}
	byName := slices.Sorted(slices.Values(children))
	bySeq := slices.SortedFunc(slices.Values(children), func(a, b string) int { return int(scene.SeqOf(a) - scene.SeqOf(b)) })
	var seqOrder, nameOrder []string
	for i := range children {
		seqOrder = append(seqOrder, fmt.Sprintf("%s(%d)", label[bySeq[i]], scene.SeqOf(bySeq[i])))
		nameOrder = append(nameOrder, label[byName[i]])
	}
	fmt.Println("created:       C B A")
	fmt.Println("sequence order:", strings.Join(seqOrder, " "))
	fmt.Println("name order:    ", strings.Join(nameOrder, " "))

	held, err := lock.New(session.Conn, r.Parent).Recover(r.Ctx, guids["C"])
	if err != nil {
		sc.Fatalf("recover C: %v", err)
	}
	fmt.Println("holder:", label[path.Base(held.Path)], "token seq:", held.Token.Seq)
	// Output:
	// created:       C B A
	// sequence order: C(0) B(1) A(2)
	// name order:     A B C
	// holder: C token seq: 0
}

// Example_s3bPredecessorChain is the article's predecessor-chain diagram
// (§3 ¶3's flowchart); it proves claim L4 (§3 ¶3, the flowchart): a
// deletion wakes only the candidate right behind it.
//
// The steps: A, the lowest candidate, holds; B watches only A; C watches
// only B. A releases: B is notified, lists the parent again and holds; C
// hears nothing and still waits on B, not holding because A went. Then B
// releases and C holds. A sequence is the number the server appended to a
// candidate's node. The counts are what each session's own proxy saw on
// the wire (notifications pushed to it, getChildren requests it sent), not
// what the recipe says of itself, and Settled() reads on the session's own
// connection first, so every notification the server sent is counted. A
// recipe that held on the event without listing again would print one
// listing; one that woke every waiter would print a notification for C.
//
// The Example judges L4 itself: not shown when the queue or A's release
// did not come about, refuted on B's or C's counts, on C's state, or when
// the server lists a watcher of B's node other than C and B's own hold (a
// hold watches its own node from the start, lock.Held.Lost).
func Example_s3bPredecessorChain() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "L4")
	r := scene.ExampleScene(sc) // the shared server, an observer O, a fresh lock parent
	A, B, C := r.Join("A", scene.JoinOpts{}), r.Join("B", scene.JoinOpts{}), r.Join("C", scene.JoinOpts{})

	heldByA := A.Acquire()
	fmt.Println("A: sequence", heldByA.Token.Seq, "holds")
	b := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))
	fmt.Println("B: sequence", scene.SeqOf(b.Own), "watches", scene.SeqOf(b.Settled().Pred))
	c := C.AcquireInBackground().WaitsOn(b.Own)
	fmt.Println("C: sequence", scene.SeqOf(c.Own), "watches", scene.SeqOf(c.Settled().Pred))
	if got := []int64{heldByA.Token.Seq, scene.SeqOf(b.Own), scene.SeqOf(c.Own)}; !slices.Equal(got, []int64{0, 1, 2}) {
		claims.NotShown(sc, "L4", "got sequences %v for A, B, C under a fresh parent; want [0 1 2]", got)
	}

	claims.Phase(sc, "A releases")
	heldByB := r.HandOver("L4", heldByA, b)
	exists, _ := scene.StatOf(sc, r.O, heldByA.Path)
	if exists {
		claims.NotShown(sc, "L4", "A's node %s still exists after A's release", scene.NodeOf(heldByA))
	}
	fmt.Println("A released; its node exists:", exists)
	atB, atC := b.Settled(), c.Settled()
	scene.Guarded(sc, B, 1) // B's hold watches its own node from the start
	watchers := harness.WatchTable(sc, harness.SharedServer(sc), "wchp", r.Parent)[r.Parent+"/"+b.Own]
	slices.Sort(watchers)
	wantWatchers := slices.Sorted(slices.Values([]string{B.Session.SessionHex(), C.Session.SessionHex()}))
	claims.Evidence(sc, "after A's release B acquired after %d notification(s) and %d listing(s); C, settled by a read on its own connection, got %d notifications and %d listing(s), waiting=%v on %s, acquired=%v; the server lists %v watching B's node", atB.Wakeups, atB.Rounds, atC.Wakeups, atC.Rounds, atC.Waiting, atC.Pred, c.Finished(), watchers)
	if atB.Wakeups != 1 || atB.Rounds != 2 {
		claims.RefutedNow(sc, "L4", "got B acquiring after %d notifications and %d listings; want 1 and 2", atB.Wakeups, atB.Rounds)
	}
	if atC.Wakeups != 0 || atC.Rounds != 1 || c.Finished() || !atC.Waiting || atC.Pred != b.Own {
		claims.RefutedNow(sc, "L4", "after A's deletion C got %d notifications and %d listings, finished=%v, waiting=%v on %s; want 0 and 1, still waiting on B's %s", atC.Wakeups, atC.Rounds, c.Finished(), atC.Waiting, atC.Pred, b.Own)
	}
	if !slices.Equal(watchers, wantWatchers) {
		claims.RefutedNow(sc, "L4", "got watchers of B's node %v; want %v: C's session, and B's own hold's", watchers, wantWatchers)
	}
	fmt.Println("B:", atB.Wakeups, "notification(s),", atB.Rounds, "listing(s), holds with sequence", heldByB.Token.Seq)
	fmt.Println("C:", atC.Wakeups, "notification(s),", atC.Rounds, "listing(s), still waits on", scene.SeqOf(atC.Pred), atC.Waiting)

	claims.Phase(sc, "B releases")
	heldByC := r.HandOver("L4", heldByB, c)
	if atC = c.Settled(); atC.Wakeups != 1 || atC.Rounds != 2 {
		claims.RefutedNow(sc, "L4", "got C holding after %d notifications and %d listings; want 1 and 2", atC.Wakeups, atC.Rounds)
	}
	fmt.Println("B released; C:", atC.Wakeups, "notification(s),", atC.Rounds, "listing(s), holds with sequence", heldByC.Token.Seq)
	// Output:
	// A: sequence 0 holds
	// B: sequence 1 watches 0
	// C: sequence 2 watches 1
	// A released; its node exists: false
	// B: 1 notification(s), 2 listing(s), holds with sequence 1
	// C: 0 notification(s), 1 listing(s), still waits on 1 true
	// B released; C: 1 notification(s), 2 listing(s), holds with sequence 2
}

// Example_s3cListExistsRace: between listing the children and setting the
// watch on the predecessor, the predecessor may already be gone; exists
// then finds nothing and the waiter must list again at once, because the
// deletion it would wait for has already happened (claim L8, §3 ¶4).
//
// The Trace's Watching callback runs exactly inside that window and deletes
// the predecessor, so the race is taken on every attempt, with no sleep.
// Ten times: A holds, B lists and picks A, the hook deletes A's node, B's
// exists(A, watch) answers false, B lists again and holds, without having
// received any watch event.
func Example_s3cListExistsRace() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	r := scene.ExampleScene(sc)
	ctx := r.Ctx
	var hookErr error
	deleted := 0
	lockerA := r.Join("A", scene.JoinOpts{}).Locker
	B := r.Join("B", scene.JoinOpts{Trace: &locktrace.Trace{Watching: func(i locktrace.WatchInfo) {
		// Inside the window: after B's list, before its exists(pred, watch).
		if err := r.O.Delete(r.Parent+"/"+i.Predecessor, -1); err != nil && hookErr == nil {
			hookErr = err
		}
		deleted++
	}}})
	lockerB := B.Locker

	const runs = 10
	for i := 0; i < runs; i++ {
		if _, err := lockerA.Acquire(ctx); err != nil {
			sc.Fatalf("A acquire: %v", err)
		}
		heldByB, err := lockerB.Acquire(ctx)
		if err != nil {
			sc.Fatalf("B acquire: %v", err)
		}
		if err := heldByB.Release(ctx); err != nil {
			sc.Fatalf("B release: %v", err)
		}
	}
	if hookErr != nil {
		sc.Fatalf("hook delete: %v", hookErr)
	}

	attempts := B.Witness.All(sc) // B's ten acquisitions, all finished
	noNode, listedTwice, events := 0, 0, 0
	for _, at := range attempts {
		noNode += at.NoNode
		if at.Rounds == 2 {
			listedTwice++
		}
		events += at.Wakeups
	}
	fmt.Printf("attempts: %d, hook deleted the predecessor: %d\n", len(attempts), deleted)
	fmt.Printf("exists found no node: %d of %d\n", noNode, runs)
	fmt.Printf("listed again and held (2 rounds): %d of %d\n", listedTwice, runs)
	fmt.Printf("watch events received: %d\n", events)
	// Output:
	// attempts: 10, hook deleted the predecessor: 10
	// exists found no node: 10 of 10
	// listed again and held (2 rounds): 10 of 10
	// watch events received: 0
}

// Example_s3dElectionNeedsReady: the same queue can elect a leader, but being
// lowest only makes a candidate; before serving it has to recover state,
// and it says so by publishing a "ready" node. A client that waits for
// ready never reads a half-recovered state; one that takes the lowest
// candidate for the leader does (claim L10, §3 ¶6).
//
// L1 and L2 join the election; L1 is lowest and holds. L1 begins its
// recovery: the state an earlier leader left ("epoch=0 x=41") now says
// "recovering". Now both clients ask for the leader. Qlowest lists the
// candidates, takes the lowest (L1) and reads the half-recovered state.
// Qready finds no ready node and waits. L1 finishes (x=42, the earlier
// leader's pending update applied) and publishes ready; only then does
// Qready use L1, and it reads the recovered state.
// TestL10_ElectionNeedsReadyAcrossFailover plays this round twice, across
// a failover, and asserts on it.
func Example_s3dElectionNeedsReady() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "L10")
	el := scene.NewElection(sc, harness.SharedServer(sc)) // the election parent and the state, on the shared server
	Qready, Qlowest := el.Client("Qready", scene.WaitForReady), el.Client("Qlowest", scene.LowestCandidate)
	L1, L2 := el.Candidate("L1"), el.Candidate("L2")

	heldByL1 := L1.Acquire()
	waitingL2 := L2.AcquireInBackground().WaitsOn(scene.NodeOf(heldByL1))
	half := L1.BeginRecovery()
	fmt.Printf("L1 holds with token %v; L2 waits: %v; the state says %q\n", heldByL1.Token, !waitingL2.Finished(), half)

	control := Qlowest.Use()
	fmt.Printf("Qlowest takes the lowest candidate, %s, and reads %q\n", control.Leader, control.State)

	asked := make(harness.Returned)
	var correct scene.Usage
	go func() {
		defer close(asked)
		correct = Qready.Use()
	}()
	select {
	case <-Qready.Waiting:
		fmt.Printf("Qready finds no ready node and waits; used a leader meanwhile: %v\n", asked.Finished())
	case <-asked:
		fmt.Printf("Qready used %s and read %q\n", correct.Leader, correct.State)
	case <-time.After(harness.Within):
		claims.NotShown(sc, "L10", "Qready neither waited for ready nor returned within %v", harness.Within)
	}

	recovered := L1.FinishRecovery()
	fmt.Printf("L1 recovered %q and published ready\n", recovered)
	tb.ReceiveSeen(claims.Judged(sc, "L10", claims.NotShown), harness.Within, "Qready's use once L1 published ready", asked, func() string { return "Qready's use pending" })
	fmt.Printf("Qready uses %s and reads %q\n", correct.Leader, correct.State)
	// Output:
	// L1 holds with token g0/0; L2 waits: true; the state says "epoch=1 recovering from x=41"
	// Qlowest takes the lowest candidate, L1, and reads "epoch=1 recovering from x=41"
	// Qready finds no ready node and waits; used a leader meanwhile: false
	// L1 recovered "epoch=1 x=42" and published ready
	// Qready uses L1 and reads "epoch=1 x=42"
}

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
	s := harness.SharedServer(t)
	claims.Open(t, "L1")
	r := scene.NewScene(t, []string{s.Client})
	O, root, ctx := r.O, r.Parent, r.Ctx
	a := r.Join("A", scene.JoinOpts{})

	claims.Phase(t, "three acquisitions by session A, one after another")
	var guids []string
	last := int64(-1)
	for i := 0; i < 3; i++ {
		h, err := a.Locker.Acquire(ctx)
		if err != nil {
			t.Fatalf("A acquire %d: %v", i, err)
		}
		if u, err := uuid.Parse(h.GUID); err != nil || u.Version() != 4 {
			claims.Refuted(t, "L1", "got GUID %q (%v); want a version-4 UUID", h.GUID, err)
		}
		if slices.Contains(guids, h.GUID) {
			claims.Refuted(t, "L1", "GUID %s used by two acquisitions", h.GUID)
		}
		guids = append(guids, h.GUID)
		if want := fmt.Sprintf("%s/%s%s%010d", root, h.GUID, fence.LockInfix, h.Token.Seq); h.Path != want {
			claims.Refuted(t, "L1", "got node %q; want %q", h.Path, want)
		}
		r.OLog.Invoke("exists %s", h.Path)
		ok, st := scene.StatOf(t, O, h.Path)
		r.OLog.Ok("%v ephemeralOwner=0x%x", ok, st.EphemeralOwner)
		if !ok || st.EphemeralOwner != a.Session.SessionID() {
			claims.Refuted(t, "L1", "got exists=%v ephemeralOwner=0x%x; want true and A's session %s", ok, st.EphemeralOwner, a.Session.SessionHex())
		}
		if h.Token.Seq <= last {
			claims.Refuted(t, "L1", "got sequence %d after %d; want it to grow", h.Token.Seq, last)
		}
		last = h.Token.Seq
		if err := h.Release(ctx); err != nil {
			t.Fatalf("A release: %v", err)
		}
	}
	_, rst := scene.StatOf(t, O, root)
	if rst.EphemeralOwner != 0 {
		claims.Refuted(t, "L1", "got parent ephemeralOwner 0x%x; want 0 (persistent)", rst.EphemeralOwner)
	}
	claims.Evidence(t, "three acquisitions of A: GUIDs %v, each a node under %s owned by A's session %s, sequences growing to %d", guids, root, a.Session.SessionHex(), last)

	claims.Phase(t, "a candidate is ephemeral: it goes when its session closes")
	e := r.Join("E", scene.JoinOpts{})
	he := e.Acquire()
	e.Log.Info("close session %s", e.Session.SessionHex())
	e.Session.Close()
	tb.WaitFor(t, harness.Within, "E's node to go after its session closed", func() (bool, string) {
		ok, _, err := O.Exists(he.Path)
		return err == nil && !ok, fmt.Sprintf("exists=%v err=%v", ok, err)
	})
	r.OLog.Info("%s gone after E's session closed", path.Base(he.Path))

	claims.Phase(t, "the parent must exist and be persistent")
	if _, err := O.Create(root+"/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral: %v", err)
	}
	for _, bad := range []string{root + "/missing", root + "/eph"} {
		h, err := lock.New(O.Conn, bad).Acquire(ctx)
		if h != nil || !errors.Is(err, lock.ErrParent) {
			claims.Refuted(t, "L1", "got %v, %v acquiring under %s; want lock.ErrParent", h, err, bad)
		}
		r.OLog.Info("acquire under %s: %v", path.Base(bad), err)
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
	s := harness.SharedServer(t)
	claims.Open(t, "L2")
	r := scene.NewScene(t, []string{s.Client})
	O, root, ctx := r.O, r.Parent, r.Ctx
	a := r.Join("A", scene.JoinOpts{Quiet: true})

	claims.Phase(t, "twelve acquisitions with random GUIDs, started in order")
	h0 := a.Acquire()
	created := []string{scene.NodeOf(h0)}
	var ps []*scene.Acquisition
	for i := 1; i < 12; i++ {
		w := a.AcquireInBackground()
		ps = append(ps, w)
		got := w.Settled().Pred
		if want := created[i-1]; got != want {
			claims.Refuted(t, "L2", "candidate %d (%s) waits on %s; want %s, created right before it", i, w.Own, got, want)
		}
		created = append(created, w.Own)
	}
	byName := slices.Sorted(slices.Values(created))
	rank := make([]int, len(byName))
	for i, n := range byName {
		rank[i] = slices.Index(created, n)
	}
	claims.Evidence(t, "each of 11 waiters watched the candidate created right before it; creation index of the candidates in name order: %v", rank)
	if slices.Equal(byName, created) {
		claims.BrokenCheck(t, "L2", "name order equals creation order (chance 1/12!); rerun")
	}
	for _, w := range ps {
		w.Cancel()
		if _, err := w.Result(); !errors.Is(err, context.Canceled) {
			t.Fatalf("L2: cancelled waiter %s: got %v; want context.Canceled", w.Own, err)
		}
	}
	if err := h0.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}

	claims.Phase(t, "a child without %q is not a candidate; one with a malformed suffix is an error", fence.LockInfix)
	for _, n := range []string{"ready", "config"} {
		if _, err := O.Create(root+"/"+n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
	}
	h, err := a.Locker.Acquire(ctx)
	if err != nil {
		claims.RefutedNow(t, "L2", "children that are not candidates stopped an acquisition: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	bad := root + "/intruder-lock-12"
	r.OLog.Invoke("create %s persistent", bad)
	if _, err := O.Create(bad, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", bad, err)
	}
	r.OLog.Ok("")
	b := r.Join("B", scene.JoinOpts{})
	hb, err := b.Locker.Acquire(ctx)
	if hb != nil || !errors.Is(err, fence.ErrShortSeq) {
		claims.Refuted(t, "L2", "got %v, %v with a malformed candidate present; want no hold and the short-suffix error", hb, err)
	}
	t.Logf("B's error: %v", err)
	for _, k := range scene.ListChildren(t, O, root) {
		if ok, st := scene.StatOf(t, O, root+"/"+k); ok && st.EphemeralOwner == b.Session.SessionID() {
			t.Errorf("the failed acquisition left its node %s behind", k)
		}
	}
}

// TestL3_EachWaiterWatchesOnlyItsPredecessor: the lowest candidate holds and
// every other one watches only the candidate right before it, and the
// server's own watch tables say so (claim L3, §3 ¶2).
//
// A holds, B waits, C waits. wchp (path -> sessions) lists exactly A's node
// watched by B's session and by A's own hold (a hold watches its own node
// from the start, lock.Held.Lost), and B's node watched by C's session;
// wchc (session -> paths) agrees and shows A watching its own node only;
// both are filtered to the test's own parent. wchc and wchp list data and
// exists watches only, so on a server of the test's own the total from
// mntr, which counts child watches too, must be 3: nobody watches the
// parent's children. On the
// external backend's shared server that total is everyone's: not checked.
func TestL3_EachWaiterWatchesOnlyItsPredecessor(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "L3")
	srv := harness.LeaseServer(t, harness.SoloKind)
	r := scene.NewScene(t, []string{srv.Client})
	A, B, C := r.Join("A", scene.JoinOpts{}), r.Join("B", scene.JoinOpts{}), r.Join("C", scene.JoinOpts{})
	heldByA := A.Acquire()
	b := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))
	c := C.AcquireInBackground().WaitsOn(b.Own)
	root, ha := r.Parent, heldByA
	pbPath := root + "/" + b.Own

	claims.Phase(t, "the server's watch tables")
	sa, sb, scc := A.Session.SessionHex(), B.Session.SessionHex(), C.Session.SessionHex()
	t.Logf("sessions: A=%s B=%s C=%s", sa, sb, scc)
	scene.Guarded(t, A, 1) // A's hold watches its own node from the start
	wchp := harness.WatchTable(t, srv, "wchp", root)
	for _, ss := range wchp {
		slices.Sort(ss)
	}
	wantP := map[string][]string{ha.Path: slices.Sorted(slices.Values([]string{sa, sb})), pbPath: {scc}}
	if fmt.Sprint(wchp) != fmt.Sprint(wantP) {
		claims.Refuted(t, "L3", "got wchp %v; want %v (A->A, its hold's own watch; B->A, C->B)", wchp, wantP)
	}
	wchc := harness.WatchTable(t, srv, "wchc", root)
	wantC := map[string][]string{sa: {ha.Path}, sb: {ha.Path}, scc: {pbPath}}
	if fmt.Sprint(wchc) != fmt.Sprint(wantC) {
		claims.Refuted(t, "L3", "got wchc %v; want %v (A watches its own node only)", wchc, wantC)
	}
	claims.Evidence(t, "server watch tables under %s: wchp %v, wchc %v", root, wchp, wchc)
	t.Run("no child watch on the parent: mntr on a server of its own", func(t *testing.T) {
		if srv.External() {
			claims.Skip(t, "skipped: mntr's zk_watch_count counts the watches of every client of the shared external server %s, and wchp and wchc list no child watches", srv.Client)
		}
		m := harness.Mntr(t, srv)
		claims.Evidence(t, "mntr zk_watch_count=%d (data, exists and child watches of the whole server)", m["zk_watch_count"])
		if m["zk_watch_count"] != 3 {
			claims.Refuted(t, "L3", "got %d watches on the server; want 3: B's and C's on their predecessors and A's hold's on its own node (no child watch on the parent)", m["zk_watch_count"])
		}
	})

	claims.Phase(t, "the chain unwinds")
	heldByB := r.HandOver("L3", heldByA, b)
	r.HandOver("L3", heldByB, c)
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
	s := harness.SharedServer(t)
	claims.Open(t, "L5")
	r := scene.NewScene(t, []string{s.Client})
	A, B, C := r.Join("A", scene.JoinOpts{}), r.Join("B", scene.JoinOpts{}), r.Join("C", scene.JoinOpts{})
	heldByA := A.Acquire()
	b := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))
	c := C.AcquireInBackground().WaitsOn(b.Own)
	root := r.Parent

	claims.Phase(t, "B gives up while A holds")
	B.Log.Info("cancel")
	b.Cancel()
	// B giving up is the middle waiter of the claim: a cancel it does not
	// answer refutes it.
	if _, err := b.ResultOr(claims.RefutedNow); !errors.Is(err, context.Canceled) {
		t.Fatalf("B: got %v; want context.Canceled", err)
	}
	// The claim starts from a waiter that gave up and left: a node of B's
	// still there is a premise that did not take, and C has nothing to
	// wake for.
	if ok, _ := scene.StatOf(t, r.O, root+"/"+b.Own); ok {
		claims.NotShown(t, "L5", "B's node %s: got it still there after B gave up; want it deleted, so that C is woken", b.Own)
	}
	c.WaitsOnOr(claims.RefutedNow, scene.NodeOf(heldByA))
	st := c.SettledOr(claims.RefutedNow)
	claims.Evidence(t, "after B gave up, C got %d event(s) and listed %d times; it waits=%v on %s and acquired=%v while A holds", st.Wakeups, st.Rounds, st.Waiting, st.Pred, c.Finished())
	if st.Wakeups != 1 || st.Rounds != 2 {
		claims.Refuted(t, "L5", "got C with %d events and %d lists; want 1 event and 2 lists", st.Wakeups, st.Rounds)
	}
	if c.Finished() || !st.Waiting || st.Pred != scene.NodeOf(heldByA) {
		claims.Refuted(t, "L5", "C acquired on B's deletion or does not wait on A (finished=%v waiting=%v pred=%s)", c.Finished(), st.Waiting, st.Pred)
	}
	wchp := harness.WatchTable(t, s, "wchp", root)
	t.Logf("wchp under %s: %v (B's old watch on A stays until A changes or B's session ends)", root, wchp)
	if !slices.Contains(wchp[heldByA.Path], C.Session.SessionHex()) {
		claims.Refuted(t, "L5", "got watchers of A's node %v; want C's session %s among them", wchp[heldByA.Path], C.Session.SessionHex())
	}

	claims.Phase(t, "A releases")
	r.HandOver("L5", heldByA, c)
	C.Log.Info("holds after %d events", c.Settled().Wakeups)
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
	s := harness.SharedServer(t)
	claims.Open(t, "L6")
	r := scene.NewScene(t, []string{s.Client})
	A, B := r.Join("A", scene.JoinOpts{}), r.Join("B", scene.JoinOpts{})
	heldByA := A.Acquire()
	b := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))

	claims.Phase(t, "O deletes B's node while B waits on A")
	scene.DeleteAs(t, r.O, r.OLog, r.Parent+"/"+b.Own)
	st := b.Settled()
	B.Log.Info("settled: events=%d waiting=%v pred=%s", st.Wakeups, st.Waiting, st.Pred)
	if b.Finished() {
		t.Fatalf("B returned before its next round: %v", b.Err)
	}

	claims.Phase(t, "A releases; B looks again")
	if err := heldByA.Release(r.Ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err := b.ResultOr(claims.RefutedNow)
	claims.Evidence(t, "B, whose node O deleted, returned hold=%v err=%v when A released", hb != nil, err)
	if hb != nil {
		claims.Refuted(t, "L6", "B reported acquisition (%s) without its node", hb.Path)
	}
	if !errors.Is(err, lock.ErrLostCandidacy) {
		claims.Refuted(t, "L6", "got %v; want lock.ErrLostCandidacy", err)
	}
	if kids := scene.ListChildren(t, r.O, r.Parent); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}

	claims.Phase(t, "a holder: O deletes E's node; Lost closes")
	e := r.Join("E", scene.JoinOpts{})
	he := e.Acquire()
	lost := he.Lost()
	// Lost sets its watch asynchronously; wait until the server has it.
	scene.WaitWatching(t, s, r.Parent, he.Path, e.Session.SessionHex())
	select {
	case <-lost:
		t.Fatalf("Lost closed while E's node exists")
	default:
	}
	scene.DeleteAs(t, r.O, r.OLog, he.Path)
	tb.ReceiveSeen(claims.Judged(t, "L6", claims.RefutedNow), harness.Within, "E's Lost to close after O deleted E's node", lost, func() string {
		ok, st, err := r.O.Exists(he.Path)
		if err != nil {
			return fmt.Sprintf("Lost still open; O's exists %s: %v", scene.NodeOf(he), err)
		}
		node := "gone"
		if ok {
			node = fmt.Sprintf("still there (owner 0x%x, E's session %s)", st.EphemeralOwner, e.Session.SessionHex())
		}
		return fmt.Sprintf("Lost still open; E's node %s %s as O sees it; E's last step: %s", scene.NodeOf(he), node, e.LastStep())
	})
	rerr := he.Release(r.Ctx)
	e.Log.Info("Lost closed; Release: %v", rerr)
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		claims.Refuted(t, "L6", "got Release %v after Lost; want lock.ErrLostCandidacy (node deleted)", rerr)
	}
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
	claims.Open(t, "L6")
	r := scene.NewScene(t, []string{harness.SharedServer(t).Client})
	E, F := r.Join("E", scene.JoinOpts{}), r.Join("F", scene.JoinOpts{})
	heldByE := E.Acquire()
	f := F.AcquireInBackground().WaitsOn(scene.NodeOf(heldByE))

	claims.Phase(t, "O deletes E's node; F holds")
	scene.DeleteAs(t, r.O, r.OLog, heldByE.Path)
	hf, err := f.Result()
	if err != nil {
		t.Fatalf("F: %v", err)
	}

	claims.Phase(t, "E releases late")
	rerr := heldByE.Release(r.Ctx)
	E.Log.Info("release: %v", rerr)
	ok, st := scene.StatOf(t, r.O, hf.Path)
	claims.Evidence(t, "E's late Release returned %v; F's node %s exists=%v with owner 0x%x (F's session %s)", rerr, path.Base(hf.Path), ok, st.EphemeralOwner, F.Session.SessionHex())
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		claims.Refuted(t, "L6", "E's late Release returned %v; want lock.ErrLostCandidacy", rerr)
	}
	if !ok || st.EphemeralOwner != F.Session.SessionID() {
		claims.Refuted(t, "L6", "E's late Release removed F's node %s (exists=%v owner=0x%x); want it untouched", hf.Path, ok, st.EphemeralOwner)
	}
	if err := hf.Release(r.Ctx); err != nil {
		claims.Refuted(t, "L6", "F's Release after E's late one: %v; want nil (F's node was its own to delete)", err)
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
	harness.Parallel(t)
	claims.Open(t, "L6")
	srv := harness.ExpiryServer(t)
	r := scene.NewScene(t, []string{srv.Client})
	A := r.Join("A", scene.JoinOpts{})
	p := zkserver.ClientProxy(t, "B-proxy", srv)
	b := r.Join("B", scene.JoinOpts{Via: []string{p.Addr()}, Client: []zkclient.Option{zkclient.WithSessionTimeout(harness.ExpirySessionTimeout)}})
	oldSession := b.Session.SessionHex()
	heldByA := A.Acquire()
	pb := b.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))

	claims.Phase(t, "B is cut off until the server expires its session (%v)", harness.ExpirySessionTimeout)
	mark := b.Session.Mark()
	p.Cut(faultproxy.BothEnds)
	t.Cleanup(p.Heal)
	tb.WaitFor(t, 10*harness.ExpirySessionTimeout, "the server to delete B's node", func() (bool, string) {
		ok, _, err := r.O.Exists(r.Parent + "/" + pb.Own)
		return err == nil && !ok, fmt.Sprintf("exists=%v err=%v", ok, err)
	})
	r.OLog.Info("B's node %s deleted by the server: session %s expired", pb.Own, oldSession)
	p.Heal()
	hb, err := pb.ResultOr(claims.RefutedNow)
	claims.Evidence(t, "B, cut off until its session %s expired, returned hold=%v err=%v", oldSession, hb != nil, err)
	if hb != nil {
		claims.Refuted(t, "L6", "B reported acquisition after its session expired")
	}
	if !errors.Is(err, lock.ErrSessionChanged) || !errors.Is(err, zk.ErrSessionExpired) {
		claims.Refuted(t, "L6", "got %v; want lock.ErrSessionChanged wrapping zk.ErrSessionExpired", err)
	}
	if err := b.Session.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("B: %v", err)
	}
	b.Log.Info("new session %s (old %s)", b.Session.SessionHex(), oldSession)
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
	harness.Parallel(t)
	claims.Open(t, "L7")
	srv := harness.LeaseServer(t, harness.SoloKind)
	sizes := []int{10, 100}
	if *herd1000 {
		sizes = append(sizes, 1000)
	} else {
		t.Logf("N=1000 skipped (pass -zk19.herd1000 to run it)")
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) { scene.Herd(t, srv, n, func(h scene.HerdRelease) { judgeHerdRelease(t, h) }) })
	}
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
	s := harness.SharedServer(t)
	claims.Open(t, "L11")
	r := scene.NewScene(t, []string{s.Client})
	A, B, C := r.Join("A", scene.JoinOpts{}), r.Join("B", scene.JoinOpts{}), r.Join("C", scene.JoinOpts{})
	heldByA := A.Acquire()
	pb := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))
	pc := C.AcquireInBackground().WaitsOn(pb.Own)
	root, ha, b, c := r.Parent, heldByA, B, C
	aNode := scene.NodeOf(ha)

	const changes = 3
	claims.Phase(t, "O changes the data of A's node %d times while A holds", changes)
	for i := 1; i <= changes; i++ {
		scene.SetAs(t, r.O, r.OLog, ha.Path, fmt.Sprintf("change %d", i))
		st := pb.Settled()
		if pb.Finished() || !st.Waiting || st.Pred != aNode {
			claims.RefutedNow(t, "L11", "after change %d of A's node B finished=%v (hold %s, err %v), waiting=%v on %s; want B still waiting on A, which holds", i, pb.Finished(), scene.HoldOf(pb.Held), pb.Err, st.Waiting, st.Pred)
		}
		if st.Wakeups != i || st.Rounds != i+1 {
			claims.Refuted(t, "L11", "after change %d B had %d events and %d lists; want %d and %d (one list per callback)", i, st.Wakeups, st.Rounds, i, i+1)
		}
	}
	stB := pb.Settled()
	got := b.EventsReceived()
	claims.Evidence(t, "O changed A's node %d times while A held: B was called back %d times %v, listed %d times, waits=%v on A and acquired=%v", changes, stB.Wakeups, got, stB.Rounds, stB.Waiting, pb.Finished())
	for _, ev := range got {
		if ev != "EventNodeDataChanged "+aNode {
			claims.BrokenCheck(t, "L11", "B received %q; want only EventNodeDataChanged on A's node", ev)
		}
	}
	if w := harness.WatchTable(t, s, "wchp", root)[ha.Path]; !slices.Contains(w, b.Session.SessionHex()) {
		claims.Refuted(t, "L11", "got watchers of A's node %v after the changes; want B's session %s among them (B watches A again)", w, b.Session.SessionHex())
	}
	if stC := pc.Settled(); stC.Wakeups != 0 || !stC.Waiting || stC.Pred != pb.Own {
		t.Errorf("L11: C, which watches B, got %d events, waiting=%v on %s; want 0 events, waiting on B", stC.Wakeups, stC.Waiting, stC.Pred)
	}

	claims.Phase(t, "O changes the data of B's node, C's predecessor")
	scene.SetAs(t, r.O, r.OLog, root+"/"+pb.Own, "change")
	stC := pc.Settled()
	claims.Evidence(t, "O changed B's node: C was called back %v, listed %d times, waits=%v on B and acquired=%v", c.EventsReceived(), stC.Rounds, stC.Waiting, pc.Finished())
	if pc.Finished() || !stC.Waiting || stC.Pred != pb.Own || stC.Wakeups != 1 || stC.Rounds != 2 {
		claims.Refuted(t, "L11", "after the change of B's node C finished=%v, waiting=%v on %s with %d events and %d lists; want still waiting on B after 1 event and 2 lists", pc.Finished(), stC.Waiting, stC.Pred, stC.Wakeups, stC.Rounds)
	}

	claims.Phase(t, "A releases, then B")
	hb := r.HandOver("L11", ha, pb)
	b.Log.Info("holds after %d events", pb.Settled().Wakeups)
	r.HandOver("L11", hb, pc)
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
	harness.Parallel(t)
	s := harness.SharedServer(t)
	claims.Open(t, "L11")
	r := scene.NewScene(t, []string{s.Client})
	a := r.Join("A", scene.JoinOpts{})
	p := zkserver.ClientProxy(t, "B-proxy", s)
	b := r.Join("B", scene.JoinOpts{Via: []string{p.Addr()}})
	ha := a.Acquire()
	pb := b.AcquireInBackground().WaitsOn(scene.NodeOf(ha))
	root, ctx := r.Parent, r.Ctx
	session := b.Session.SessionID()
	stillWaiting := func(when string) scene.Attempt {
		t.Helper()
		st := pb.Settled()
		if pb.Finished() || !st.Waiting || st.Pred != path.Base(ha.Path) {
			claims.RefutedNow(t, "L11", "%s B finished=%v (hold %s, err %v), waiting=%v on %s; want B still waiting on A, which holds", when, pb.Finished(), scene.HoldOf(pb.Held), pb.Err, st.Waiting, st.Pred)
		}
		if st.Rounds != st.Wakeups+1 {
			claims.Refuted(t, "L11", "%s B had %d events and %d lists; want one list per callback (%d)", when, st.Wakeups, st.Rounds, st.Wakeups+1)
		}
		return st
	}

	claims.Phase(t, "a short cut while B waits; nothing changes")
	scene.ShortCut(t, p, b, func() {})
	scene.WaitWatching(t, s, root, ha.Path, b.Session.SessionHex())
	st := stillWaiting("after a reconnect")
	plain := st.Wakeups
	b.Log.Info("after the reconnect: %d events, %d lists, waiting on %s", st.Wakeups, st.Rounds, st.Pred)
	before := b.Events.Load()

	claims.Phase(t, "a second cut; O changes A's node while B is away")
	scene.ShortCut(t, p, b, func() { scene.SetAs(t, r.O, r.OLog, ha.Path, "changed while B was cut off") })
	tb.WaitFor(t, harness.Within, "B's late callback", func() (bool, string) {
		return b.Events.Load() > before, fmt.Sprintf("B's events: %v", b.EventsReceived())
	})
	st = stillWaiting("after the late callback")
	evs := b.EventsReceived()
	claims.Evidence(t, "B, waiting on A, reconnected twice in session %s: the plain reconnect called B back %d times; O's change of A's node, made while B was cut off, reached B after the second reconnect as %v; B listed %d times, waits=%v on A and acquired=%v while A holds", b.Session.SessionHex(), plain, evs, st.Rounds, st.Waiting, pb.Finished())
	if want := "EventNodeDataChanged " + path.Base(ha.Path); len(evs) == 0 || evs[len(evs)-1] != want {
		claims.BrokenCheck(t, "L11", "B's callbacks %v; want the last to be %q", evs, want)
	}
	if b.Session.SessionID() != session {
		claims.NotShown(t, "L11", "B's session changed from 0x%x to %s; the cuts were meant to be short", session, b.Session.SessionHex())
	}

	claims.Phase(t, "A releases")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	if _, err := pb.Result(); err != nil {
		claims.NotShown(t, "L11", "B did not hold after A's release: %v", err)
	}
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
	s := harness.SharedServer(t)
	claims.Open(t, "L8")
	r := scene.NewScene(t, []string{s.Client})
	root, ctx := r.Parent, r.Ctx
	var hookErr error
	var b *scene.Contender
	hook := func(i locktrace.WatchInfo) {
		pred := i.Predecessor
		b.Log.Info("hook after list: predecessor %s", pred)
		if err := r.O.Delete(root+"/"+pred, -1); err != nil {
			hookErr = err
			return
		}
		b.Log.Info("hook: %s deleted by O", pred)
	}
	a := r.Join("A", scene.JoinOpts{Quiet: true})
	b = r.Join("B", scene.JoinOpts{Trace: &locktrace.Trace{Watching: hook}})
	const runs = 20
	for i := 0; i < runs; i++ {
		if i == 1 {
			b.Log.Info("runs 2-%d: same steps, log muted", runs)
			b.Mute()
		}
		if _, err := a.Locker.Acquire(ctx); err != nil {
			t.Fatalf("A: %v", err)
		}
		hb, err := b.Locker.Acquire(ctx)
		if err != nil {
			t.Fatalf("run %d: B: %v", i, err)
		}
		if hookErr != nil {
			t.Fatalf("run %d: hook: %v", i, hookErr)
		}
		st := b.Settled(scene.NodeOf(hb))
		if st.NoNode != 1 || st.Rounds != 2 || st.Wakeups != 0 {
			claims.Refuted(t, "L8", "run %d: got exists-no-node=%d lists=%d events=%d; want 1, 2, 0", i, st.NoNode, st.Rounds, st.Wakeups)
		}
		if err := hb.Release(ctx); err != nil {
			t.Fatalf("B release: %v", err)
		}
	}
	claims.Evidence(t, "%d of %d runs: the hook deleted the predecessor between list and exists; exists found no node, B listed again and held without an event", runs, runs)
	left := harness.WatchTable(t, s, "wchc", root)[b.Session.SessionHex()]
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
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader while the session creates (a proxy on the leader's stream to it); on one server there is no follower to read through"))
	claims.Open(t, "L9")
	c := harness.LeaseTrio(t)
	fs := c.Followers()
	if len(fs) != 2 {
		t.Fatalf("got %d followers; want 2", len(fs))
	}
	f, other := fs[0], fs[1]
	l9 := &scene.CreateReadRound{T: t, C: c, F: f, Live: map[string]bool{}}
	l9.X = zkclient.Connect(t, "X", []string{c.Leader().Client})
	l9.Root = harness.TestRoot(t, l9.X)
	l9.Y = zkclient.Connect(t, "Y", []string{other.Client})
	l9.W = zkclient.Connect(t, "W", []string{f.Client})
	l9.Xa, l9.Ya, l9.Wa = claims.NewActor(t, "X"), claims.NewActor(t, "Y"), claims.NewActor(t, "W")
	l9.RequireFollower()
	t.Logf("leader %s, W's follower %s, other follower %s", c.Leader().Label, f.Label, other.Label)
	claims.Phase(t, "two rounds, W's follower in step")
	for i := 1; i <= 2; i++ {
		judgeL9List(t, l9.Round(i, false))
	}
	claims.Phase(t, "three rounds, the leader's stream to W's follower held while X and Y change the parent")
	for i := 3; i <= 5; i++ {
		judgeL9List(t, l9.Round(i, true))
	}
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
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower that has not yet seen the predecessor's deletion the leader applied (a proxy holding the leader's stream to it)"))
	claims.Open(t, "L12")
	c := harness.LeaseTrio(t)
	leader := c.Leader()
	sc := &scene.UnseenDeletionScene{T: t, C: c, F: c.Followers()[0], R: scene.NewScene(t, []string{leader.Client})}
	h := sc.R.Join("H", scene.JoinOpts{})
	p := sc.R.Join("P", scene.JoinOpts{})
	sc.W = sc.R.Join("W", scene.JoinOpts{Via: []string{sc.F.Client}})
	if mode, err := sc.F.Mode(); err != nil || mode != "follower" || sc.W.Witness.Server(sc.W.Session.Server()) != sc.F.Client {
		claims.NotShown(t, "L12", "W is connected to %s; want the follower %s (mode %q, %v)", sc.W.Witness.Server(sc.W.Session.Server()), sc.F.Client, mode, err)
	}
	t.Logf("leader %s; H and P are its clients; W's follower is %s", leader.Label, sc.F.Label)
	hH := h.Acquire()
	pP := p.AcquireInBackground().WaitsOn(scene.NodeOf(hH))
	sc.PW = sc.W.AcquireInBackground().WaitsOn(pP.Own)

	claims.Phase(t, "P gives up while H holds; the leader's stream to %s is held", sc.F.Label)
	judgeUnseen(t, sc.UnseenDeletion(pP.Own, func() {
		p.Log.Info("gives up: its acquisition is cancelled")
		pP.Cancel()
		pP.Result() // P giving up is L12's scene, not its observation: a cancel P does not answer is not shown
	}))
	claims.Phase(t, "released: W must list again, find H ahead and wait on it")
	waitsOnOrReturns(t, sc, path.Base(hH.Path), zh.Say("H still holds"))

	claims.Phase(t, "H releases; the leader's stream to %s is held again", sc.F.Label)
	judgeUnseen(t, sc.UnseenDeletion(path.Base(hH.Path), func() {
		if err := hH.Release(sc.R.Ctx); err != nil {
			claims.NotShown(t, "L12", "H's release: %v", err)
		}
	}))
	hW, err := sc.PW.ResultOr(claims.RefutedNow)
	if err != nil {
		claims.RefutedNow(t, "L12", "W's acquisition returned %v once its follower had caught up and no candidate was ahead; want a hold", err)
	}
	sc.W.Log.Ok("holds %s", path.Base(hW.Path))
	kids := scene.ListChildren(t, sc.R.O, sc.R.Parent)
	claims.Evidence(t, "after the release W held %s, the only candidate left as O sees on the leader: %v", path.Base(hW.Path), kids)
	if len(kids) != 1 || kids[0] != sc.PW.Own {
		claims.Refuted(t, "L12", "W holds while the parent holds %v; want W's node alone", kids)
	}
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
	claims.Open(t, "L10")
	el := scene.NewElection(t, harness.SharedServer(t))
	Qready, Qlowest := el.Client("Qready", scene.WaitForReady), el.Client("Qlowest", scene.LowestCandidate)
	L1, L2 := el.Candidate("L1"), el.Candidate("L2")

	claims.Phase(t, "L1 is elected and halfway through its recovery; L2 waits behind it")
	heldByL1 := L1.Acquire()
	waitingL2 := L2.AcquireInBackground().WaitsOn(scene.NodeOf(heldByL1))
	checkRound(t, el.Round(L1, Qready, Qlowest))

	claims.Phase(t, "L1's session ends: its candidate and ready go with it; L2 holds and is halfway through its recovery")
	L1.Log.Info("close session %s", L1.Session.SessionHex())
	L1.Session.Close()
	if _, err := waitingL2.Result(); err != nil {
		claims.NotShown(t, "L10", "L2's acquisition after L1's session ended: got %v; want a hold", err)
	}
	checkRound(t, el.Round(L2, Qready, Qlowest))
}

// checkRound asserts L10 on one round: the control read the half-recovered
// state (else the round shows nothing), Qready never did.
func checkRound(t *testing.T, r scene.ElectionRound) {
	t.Helper()
	claims.Evidence(t, "%s elected, state %q: Qlowest used %s and read %q; Qready %s, then used %s and read %q once %s had published ready", r.Leader, r.Half, r.Control.Leader, r.Control.State, r.WhileHalf, r.Correct.Leader, r.Correct.State, r.Leader)
	if r.Control.Leader != r.Leader || r.Control.State != r.Half {
		claims.BrokenCheck(t, "L10", "Qlowest, the control, used %s and read %q; want %s and its half-recovered %q", r.Control.Leader, r.Control.State, r.Leader, r.Half)
	}
	if r.ReturnedEarly {
		claims.Refuted(t, "L10", "Qready, which waits for ready, used %s and read %q while %s was half recovered (%q)", r.Early.Leader, r.Early.State, r.Leader, r.Half)
		return
	}
	if r.Correct.Leader != r.Leader || r.Correct.State != r.Recovered {
		claims.Refuted(t, "L10", "once %s published ready Qready used %s and read %q; want %s and %q", r.Leader, r.Correct.Leader, r.Correct.State, r.Leader, r.Recovered)
	}
}

// judgeL9List judges one round of L9: W's listing after its create has its
// own node and every live smaller candidate, and no node deleted before
// the create.
func judgeL9List(t *testing.T, l scene.CreateReadList) {
	t.Helper()
	if !slices.Contains(l.Kids, l.Own) {
		claims.Refuted(t, "L9", "round %d: W's list lacks its own node %s", l.Round, l.Own)
	}
	for _, n := range l.Live {
		if !slices.Contains(l.Kids, n) {
			claims.Refuted(t, "L9", "round %d: W's list lacks live smaller candidate %s", l.Round, n)
		}
	}
	for _, n := range l.Deleted {
		if slices.Contains(l.Kids, n) {
			claims.Refuted(t, "L9", "round %d: W's list has %s, deleted before W's create", l.Round, n)
		}
	}
}

// judgeUnseen judges L12 while W's follower had not seen a deletion: W's
// acquisition had not returned and still waited on the deleted node.
func judgeUnseen(t *testing.T, u scene.Unseen) {
	t.Helper()
	if st := u.Attempt; st.Done || !st.Waiting || st.Pred != u.Node {
		claims.Refuted(t, "L12", "while its follower had not seen %s deleted, W's acquisition returned: %v (acquired %v), waiting on %q; want it still waiting on %s", u.Node, st.Done, st.Acquired, st.Pred, u.Node)
	}
	if u.FinishedBeforeRelease {
		claims.Refuted(t, "L12", "W's acquisition returned before the follower's stream was released")
	}
}

// waitsOnOrReturns judges L12 once the stream is released: W's acquisition
// waits on pred, which is still there (why); a return is a second holder.
func waitsOnOrReturns(t *testing.T, sc *scene.UnseenDeletionScene, pred string, why zh.Text) {
	t.Helper()
	if sc.WaitsOnOrReturns(pred, claims.RefutedNow) {
		claims.RefutedNow(t, "L12", "once its follower caught up W's acquisition returned (hold: %v, %v) while %s: two holders", sc.PW.Held != nil, sc.PW.Err, why)
	}
	st := sc.PW.Settled()
	claims.Evidence(t, "after the release W waits on %s (%s): waiting %v, returned %v", pred, why, st.Waiting, st.Done)
}

// judgeHerdRelease judges one release of L7's herd (scene.Herd): it woke
// exactly one waiter, no waiter still waiting woke, and the server fired
// the next waiter's watch on the released node and the releaser's own.
func judgeHerdRelease(t *testing.T, h scene.HerdRelease) {
	t.Helper()
	for _, w := range h.StillWaiting {
		if w.Wakeups != 0 {
			claims.Refuted(t, "L7", "P%d, still waiting, has woken %d times; want 0", w.P, w.Wakeups)
		}
	}
	if h.Counted {
		if h.Woke != 1 || h.Deleted != 2 || h.ChildWatches != 0 {
			claims.Refuted(t, "L7", "got %d wakeups (server: %d deleted, %d child watches) for one release; want 1 (2: the next waiter's and the releaser's own, 0)", h.Woke, h.Deleted, h.ChildWatches)
		}
		return
	}
	if h.Woke != 1 || fmt.Sprint(h.Gone) != fmt.Sprint(h.WantGone) || fmt.Sprint(h.Added) != fmt.Sprint(h.WantAdded) {
		claims.Refuted(t, "L7", "got %d wakeups (wchp lost %v, gained %v) for one release; want 1 (lost %v: the next waiter's and the releaser's own; gained %v: the new holder's own)", h.Woke, h.Gone, h.Added, h.WantGone, h.WantAdded)
	}
}

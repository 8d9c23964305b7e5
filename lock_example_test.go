package zk19_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/scene"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

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
	sc := scene.ExampleScope()
	defer scene.EndExample(sc)
	r := scene.ExampleRoom(sc)
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

// Example_s3bPredecessorChain is the article's predecessor-chain diagram (claim
// L4, §3 ¶3): A, the lowest candidate, holds; B watches only A; C watches
// only B. A's node is deleted: B is notified, lists the parent again and
// holds; C hears nothing and still waits on B, not holding because A went.
// Then B releases and C holds.
//
// A sequence is the number the server appended to a candidate's node. The
// counts are what each session's own proxy saw on the wire (notifications
// pushed to it, getChildren requests it sent), not what the recipe says
// of itself, and settled() reads on the session's own connection first, so
// every notification the server sent is counted. A recipe that held on the
// event without listing again would print one listing; one that woke every
// waiter would print a notification for C. TestL4 asserts on the same
// observations.
func Example_s3bPredecessorChain() {
	sc := scene.ExampleScope()
	defer scene.EndExample(sc)
	r := scene.ExampleRoom(sc) // the shared server, an observer O, a fresh lock parent
	A, B, C := r.Join("A", scene.JoinOpts{}), r.Join("B", scene.JoinOpts{}), r.Join("C", scene.JoinOpts{})

	heldByA := A.Acquire()
	fmt.Println("A: sequence", heldByA.Token.Seq, "holds")
	b := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldByA))
	fmt.Println("B: sequence", scene.SeqOf(b.Own), "watches", scene.SeqOf(b.Settled().Pred))
	c := C.AcquireInBackground().WaitsOn(b.Own)
	fmt.Println("C: sequence", scene.SeqOf(c.Own), "watches", scene.SeqOf(c.Settled().Pred))

	if err := heldByA.Release(r.Ctx); err != nil {
		sc.Fatalf("A release: %v", err)
	}
	exists, _, _ := r.O.Exists(heldByA.Path)
	fmt.Println("A released; its node exists:", exists)
	heldByB, err := b.Result()
	if err != nil {
		sc.Fatalf("B: %v", err)
	}
	atB, atC := b.Settled(), c.Settled()
	fmt.Println("B:", atB.Wakeups, "notification(s),", atB.Rounds, "listing(s), holds with sequence", heldByB.Token.Seq)
	fmt.Println("C:", atC.Wakeups, "notification(s),", atC.Rounds, "listing(s), still waits on", scene.SeqOf(atC.Pred), atC.Waiting)

	if err := heldByB.Release(r.Ctx); err != nil {
		sc.Fatalf("B release: %v", err)
	}
	heldByC, err := c.Result()
	if err != nil {
		sc.Fatalf("C: %v", err)
	}
	atC = c.Settled()
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
	sc := scene.ExampleScope()
	defer scene.EndExample(sc)
	r := scene.ExampleRoom(sc)
	ctx := r.Ctx
	var hookErr error
	deleted := 0
	lockerA := r.Join("A", scene.JoinOpts{}).L
	B := r.Join("B", scene.JoinOpts{Trace: &locktrace.Trace{Watching: func(i locktrace.WatchInfo) {
		// Inside the window: after B's list, before its exists(pred, watch).
		if err := r.O.Delete(r.Parent+"/"+i.Predecessor, -1); err != nil && hookErr == nil {
			hookErr = err
		}
		deleted++
	}}})
	lockerB := B.L

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

	attempts := B.W.All(sc) // B's ten acquisitions, all finished
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
	sc := scene.ExampleScope()
	defer scene.EndExample(sc)
	claims.Open(sc, "L10")
	el := scene.NewElection(sc, scene.SharedServer(sc)) // the election parent and the state, on the shared server
	Qready, Qlowest := el.Client("Qready", scene.WaitForReady), el.Client("Qlowest", scene.LowestCandidate)
	L1, L2 := el.Candidate("L1"), el.Candidate("L2")

	heldByL1 := L1.Acquire()
	waitingL2 := L2.AcquireInBackground().WaitsOn(scene.NodeOf(heldByL1))
	half := L1.BeginRecovery()
	fmt.Printf("L1 holds with token %v; L2 waits: %v; the state says %q\n", heldByL1.Token, !waitingL2.Finished(), half)

	control := Qlowest.Use()
	fmt.Printf("Qlowest takes the lowest candidate, %s, and reads %q\n", control.Leader, control.State)

	asked := make(scene.Returned)
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
	case <-time.After(scene.Within):
		claims.NotShown(sc, "L10", "Qready neither waited for ready nor returned within %v", scene.Within)
	}

	recovered := L1.FinishRecovery()
	fmt.Printf("L1 recovered %q and published ready\n", recovered)
	wait.ReceiveSeen(claims.Judged(sc, "L10", claims.NotShown), scene.Within, "Qready's use once L1 published ready", asked, func() string { return "Qready's use pending" })
	fmt.Printf("Qready uses %s and reads %q\n", correct.Leader, correct.State)
	// Output:
	// L1 holds with token g0/0; L2 waits: true; the state says "epoch=1 recovering from x=41"
	// Qlowest takes the lowest candidate, L1, and reads "epoch=1 recovering from x=41"
	// Qready finds no ready node and waits; used a leader meanwhile: false
	// L1 recovered "epoch=1 x=42" and published ready
	// Qready uses L1 and reads "epoch=1 x=42"
}

package zk19_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/zkserver"
	"github.com/zk19/zk19/lock"
)

// Example_sequenceOrderIsNotNameOrder: a candidate's place in the queue is
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
func Example_sequenceOrderIsNotNameOrder() {
	runExample("Example_sequenceOrderIsNotNameOrder", func(sc *zkserver.Scope) {
		r := exampleRoom(sc)
		session := r.session("S")
		guids := map[string]string{
			"C": "cccccccc-0000-4000-8000-000000000000",
			"B": "bbbbbbbb-0000-4000-8000-000000000000",
			"A": "aaaaaaaa-0000-4000-8000-000000000000",
		}
		label := map[string]string{} // node name -> C, B or A
		for _, name := range []string{"C", "B", "A"} {
			node, err := session.Create(r.parent+"/"+guids[name]+fence.LockInfix, nil,
				zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				sc.Fatalf("create %s: %v", name, err)
			}
			label[path.Base(node)] = name
		}

		children, _, err := r.O.Children(r.parent)
		if err != nil {
			sc.Fatalf("children: %v", err)
		}
		byName := slices.Sorted(slices.Values(children))
		bySeq := slices.SortedFunc(slices.Values(children), func(a, b string) int { return int(seqOf(a) - seqOf(b)) })
		var seqOrder, nameOrder []string
		for i := range children {
			seqOrder = append(seqOrder, fmt.Sprintf("%s(%d)", label[bySeq[i]], seqOf(bySeq[i])))
			nameOrder = append(nameOrder, label[byName[i]])
		}
		fmt.Println("created:       C B A")
		fmt.Println("sequence order:", strings.Join(seqOrder, " "))
		fmt.Println("name order:    ", strings.Join(nameOrder, " "))

		held, err := lock.New(session.Conn, r.parent).Recover(r.ctx, guids["C"])
		if err != nil {
			sc.Fatalf("recover C: %v", err)
		}
		fmt.Println("holder:", label[path.Base(held.Path)], "token seq:", held.Token.Seq)
	})
	// Output:
	// created:       C B A
	// sequence order: C(0) B(1) A(2)
	// name order:     A B C
	// holder: C token seq: 0
}

// seqOf is a lock node's parsed sequence number, -1 for another child.
func seqOf(name string) int64 {
	seq, err := fence.ParseSeq(name)
	if err != nil {
		return -1
	}
	return seq
}

// Example_predecessorChain is the article's predecessor-chain diagram (claim
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
func Example_predecessorChain() {
	runExample("Example_predecessorChain", func(sc *zkserver.Scope) {
		r := exampleRoom(sc) // the shared server, an observer O, a fresh lock parent
		A, B, C := r.join("A", joinOpts{}), r.join("B", joinOpts{}), r.join("C", joinOpts{})

		heldByA := A.acquire()
		fmt.Println("A: sequence", heldByA.Token.Seq, "holds")
		b := B.acquireInBackground().waitsOn(nodeOf(heldByA))
		fmt.Println("B: sequence", seqOf(b.own), "watches", seqOf(b.settled().Pred))
		c := C.acquireInBackground().waitsOn(b.own)
		fmt.Println("C: sequence", seqOf(c.own), "watches", seqOf(c.settled().Pred))

		if err := heldByA.Release(r.ctx); err != nil {
			sc.Fatalf("A release: %v", err)
		}
		exists, _, _ := r.O.Exists(heldByA.Path)
		fmt.Println("A released; its node exists:", exists)
		heldByB, err := b.result()
		if err != nil {
			sc.Fatalf("B: %v", err)
		}
		atB, atC := b.settled(), c.settled()
		fmt.Println("B:", atB.Wakeups, "notification(s),", atB.Rounds, "listing(s), holds with sequence", heldByB.Token.Seq)
		fmt.Println("C:", atC.Wakeups, "notification(s),", atC.Rounds, "listing(s), still waits on", seqOf(atC.Pred), atC.Waiting)

		if err := heldByB.Release(r.ctx); err != nil {
			sc.Fatalf("B release: %v", err)
		}
		heldByC, err := c.result()
		if err != nil {
			sc.Fatalf("C: %v", err)
		}
		atC = c.settled()
		fmt.Println("B released; C:", atC.Wakeups, "notification(s),", atC.Rounds, "listing(s), holds with sequence", heldByC.Token.Seq)
	})
	// Output:
	// A: sequence 0 holds
	// B: sequence 1 watches 0
	// C: sequence 2 watches 1
	// A released; its node exists: false
	// B: 1 notification(s), 2 listing(s), holds with sequence 1
	// C: 0 notification(s), 1 listing(s), still waits on 1 true
	// B released; C: 1 notification(s), 2 listing(s), holds with sequence 2
}

// Example_listExistsRace: between listing the children and setting the
// watch on the predecessor, the predecessor may already be gone; exists
// then finds nothing and the waiter must list again at once, because the
// deletion it would wait for has already happened (claim L8, §3 ¶4).
//
// The Trace's Watching callback runs exactly inside that window and deletes
// the predecessor, so the race is taken on every attempt, with no sleep.
// Ten times: A holds, B lists and picks A, the hook deletes A's node, B's
// exists(A, watch) answers false, B lists again and holds, without having
// received any watch event.
func Example_listExistsRace() {
	runExample("Example_listExistsRace", func(sc *zkserver.Scope) {
		r := exampleRoom(sc)
		ctx := r.ctx
		var hookErr error
		deleted := 0
		lockerA := r.join("A", joinOpts{}).l
		B := r.join("B", joinOpts{trace: &lock.Trace{Watching: func(i lock.WatchInfo) {
			// Inside the window: after B's list, before its exists(pred, watch).
			if err := r.O.Delete(r.parent+"/"+i.Predecessor, -1); err != nil && hookErr == nil {
				hookErr = err
			}
			deleted++
		}}})
		lockerB := B.l

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

		attempts := B.w.all(sc) // B's ten acquisitions, all finished
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
	})
	// Output:
	// attempts: 10, hook deleted the predecessor: 10
	// exists found no node: 10 of 10
	// listed again and held (2 rounds): 10 of 10
	// watch events received: 0
}

// Example_electionNeedsReady: the same queue can elect a leader, but being
// lowest only makes a candidate; before serving it has to recover state,
// and it says so by publishing a "ready" node. Clients wait for "ready",
// not for the election result (claim L10, §3 ¶6).
//
// A client Q checks <root>/ready with a watch before any election: absent.
// Candidates L1 and L2 join the queue under <root>/election; L1 is lowest,
// and at that moment "ready" is still absent, so Q has nothing to use. L1
// recovers the state left by an earlier leader (x=41, one update pending),
// writes x=42, and only then creates "ready" (ephemeral, naming itself). Q's
// watch fires, Q reads "ready" and then the state, and sees x=42.
func Example_electionNeedsReady() {
	runExample("Example_electionNeedsReady", func(sc *zkserver.Scope) {
		setup := newLockExample(sc)
		ctx := setup.ctx
		q, root, acl := setup.observer, setup.parent, zk.WorldACL(zk.PermAll)
		for _, p := range []string{root + "/election", root + "/state"} {
			if _, err := q.Create(p, nil, 0, acl); err != nil {
				sc.Fatalf("create %s: %v", p, err)
			}
		}
		if _, err := q.Set(root+"/state", []byte("x=41"), -1); err != nil {
			sc.Fatalf("set state: %v", err)
		}
		ready := root + "/ready"
		ok, _, readyEvent, err := q.ExistsW(ready)
		if err != nil {
			sc.Fatalf("Q exists ready: %v", err)
		}
		fmt.Println("Q: ready exists before the election:", ok)

		l1 := setup.session("L1")
		L2 := join(sc, "L2", []string{setup.server.Client}, root+"/election", joinOpts{quiet: true})
		heldByL1, err := lock.New(l1.Conn, root+"/election").Acquire(ctx)
		if err != nil {
			sc.Fatalf("L1: %v", err)
		}
		acquiringL2 := acquireInBackground(sc, ctx, L2.l)
		L2.w.waitingOn(sc, path.Base(heldByL1.Path))
		ok, _, _ = q.Exists(ready)
		fmt.Println("lowest suffix: L1; ready exists:", ok)
		select {
		case <-readyEvent:
			fmt.Println("Q: unexpected event before ready")
		default:
			fmt.Println("Q: no leader to use yet")
		}

		// L1 recovers: read what the previous leader left, finish it, then
		// publish ready.
		state, stat, err := l1.Get(root + "/state")
		if err != nil {
			sc.Fatalf("L1 get state: %v", err)
		}
		if _, err := l1.Set(root+"/state", []byte("x=42"), stat.Version); err != nil {
			sc.Fatalf("L1 set state: %v", err)
		}
		fmt.Printf("L1 recovered %s, wrote x=42\n", state)
		if _, err := l1.Create(ready, []byte("L1"), zk.FlagEphemeral, acl); err != nil {
			sc.Fatalf("L1 publish ready: %v", err)
		}
		fmt.Println("L1 published ready")

		select {
		case ev := <-readyEvent:
			fmt.Println("Q: event", ev.Type)
		case <-time.After(within):
			sc.Fatalf("Q: no event on ready within %v", within)
		}
		leader, _, err := q.Get(ready)
		if err != nil {
			sc.Fatalf("Q get ready: %v", err)
		}
		state, _, err = q.Get(root + "/state")
		if err != nil {
			sc.Fatalf("Q get state: %v", err)
		}
		fmt.Printf("Q uses %s, sees %s\n", leader, state)
		fmt.Println("L2 still a candidate:", !acquiringL2.finished())
	})
	// Output:
	// Q: ready exists before the election: false
	// lowest suffix: L1; ready exists: false
	// Q: no leader to use yet
	// L1 recovered x=41, wrote x=42
	// L1 published ready
	// Q: event EventNodeCreated
	// Q uses L1, sees x=42
	// L2 still a candidate: true
}

package zk19_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/zkclient"
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
		setup := newLockExample(sc)
		session := setup.session("S")
		guids := map[string]string{
			"C": "cccccccc-0000-4000-8000-000000000000",
			"B": "bbbbbbbb-0000-4000-8000-000000000000",
			"A": "aaaaaaaa-0000-4000-8000-000000000000",
		}
		label := map[string]string{} // node name -> C, B or A
		for _, name := range []string{"C", "B", "A"} {
			node, err := session.Create(setup.parent+"/"+guids[name]+fence.LockInfix, nil,
				zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				sc.Fatalf("create %s: %v", name, err)
			}
			label[path.Base(node)] = name
		}

		children, _, err := setup.observer.Children(setup.parent)
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

		held, err := lock.New(session.Conn, setup.parent).Recover(setup.ctx, guids["C"])
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

// Example_predecessorChain: a release wakes only the candidate right behind
// it; that one lists again and holds, and the one after it hears nothing
// and keeps waiting (claim L4, §3 ¶3, the article's predecessor-chain
// diagram).
//
// A holds; B waits on A's node; C waits on B's. A releases: B gets one
// notification, lists the parent a second time and holds. C gets none and
// still waits on B, certain because a read on C's own connection orders
// every notification before its answer. B releases: C holds. The counts
// are what each session's own proxy saw on the wire (notifications pushed
// to it, getChildren requests it sent), not what the recipe says of
// itself; a recipe that held on the event without listing again would
// print one listing.
func Example_predecessorChain() {
	runExample("Example_predecessorChain", func(sc *zkserver.Scope) {
		room := newLockExample(sc)
		ctx := room.ctx
		A, B, C := room.contender("A"), room.contender("B"), room.contender("C")
		nodeOf := map[string]string{} // node name -> who created it

		heldByA, err := A.l.Acquire(ctx)
		if err != nil {
			sc.Fatalf("A: %v", err)
		}
		nodeOf[path.Base(heldByA.Path)] = "A"
		acquiringB := acquireInBackground(sc, ctx, B.l)
		b := B.w.waitingOn(sc, path.Base(heldByA.Path))
		nodeOf[b.Own] = "B"
		acquiringC := acquireInBackground(sc, ctx, C.l)
		c := C.w.waitingOn(sc, b.Own)
		nodeOf[c.Own] = "C"
		fmt.Printf("A holds; B waits on %s; C waits on %s\n", nodeOf[b.Pred], nodeOf[c.Pred])

		if err := heldByA.Release(ctx); err != nil {
			sc.Fatalf("A release: %v", err)
		}
		fmt.Println("A releases")
		heldByB, err := acquiringB.result(sc)
		if err != nil {
			sc.Fatalf("B: %v", err)
		}
		b = B.w.await(sc, b.Own)
		fmt.Printf("B: %d notification(s), %d listing(s), holds: %v\n", b.Wakeups, b.Rounds, b.Acquired)
		c = settle(sc, C, c.Own)
		fmt.Printf("C: %d notification(s), %d listing(s), waits on %s: %v\n", c.Wakeups, c.Rounds, nodeOf[c.Pred], c.Waiting)

		if err := heldByB.Release(ctx); err != nil {
			sc.Fatalf("B release: %v", err)
		}
		fmt.Println("B releases")
		if _, err := acquiringC.result(sc); err != nil {
			sc.Fatalf("C: %v", err)
		}
		c = C.w.await(sc, c.Own)
		fmt.Printf("C: %d notification(s), %d listing(s), holds: %v\n", c.Wakeups, c.Rounds, c.Acquired)
	})
	// Output:
	// A holds; B waits on A; C waits on B
	// A releases
	// B: 1 notification(s), 2 listing(s), holds: true
	// C: 0 notification(s), 1 listing(s), waits on B: true
	// B releases
	// C: 1 notification(s), 2 listing(s), holds: true
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
		setup := newLockExample(sc)
		ctx := setup.ctx
		var hookErr error
		deleted := 0
		lockerA := setup.contender("A").l
		B := setup.contender("B", &lock.Trace{Watching: func(i lock.WatchInfo) {
			// Inside the window: after B's list, before its exists(pred, watch).
			if err := setup.observer.Delete(setup.parent+"/"+i.Predecessor, -1); err != nil && hookErr == nil {
				hookErr = err
			}
			deleted++
		}})
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
func Example_electionNeedsReady() {
	runExample("Example_electionNeedsReady", func(sc *zkserver.Scope) {
		claim(sc, "L10")
		el := newElection(sc, sharedServer(sc)) // the election parent and the state, on the shared server
		Qready, Qlowest := el.client("Qready", waitForReady), el.client("Qlowest", lowestCandidate)
		L1, L2 := el.candidate("L1"), el.candidate("L2")

		heldByL1, waitingL2 := waitBehind(sc, el.ctx, L1.contender, L2.contender)
		half := L1.beginRecovery()
		fmt.Printf("L1 holds with token %v; L2 waits: %v; the state says %q\n", heldByL1.Token, !waitingL2.finished(), half)

		control := Qlowest.use()
		fmt.Printf("Qlowest takes the lowest candidate, %s, and reads %q\n", control.leader, control.state)

		asked := make(returned)
		var correct usage
		go func() {
			defer close(asked)
			correct = Qready.use()
		}()
		select {
		case <-Qready.waiting:
			fmt.Printf("Qready finds no ready node and waits; used a leader meanwhile: %v\n", asked.finished())
		case <-asked:
			fmt.Printf("Qready used %s and read %q\n", correct.leader, correct.state)
		case <-time.After(within):
			notShown(sc, "L10", "Qready neither waited for ready nor returned within %v", within)
		}

		recovered := L1.finishRecovery()
		fmt.Printf("L1 recovered %q and published ready\n", recovered)
		asked.await(sc, "Qready's use")
		fmt.Printf("Qready uses %s and reads %q\n", correct.leader, correct.state)
	})
	// Output:
	// L1 holds with token g0/0; L2 waits: true; the state says "epoch=1 recovering from x=41"
	// Qlowest takes the lowest candidate, L1, and reads "epoch=1 recovering from x=41"
	// Qready finds no ready node and waits; used a leader meanwhile: false
	// L1 recovered "epoch=1 x=42" and published ready
	// Qready uses L1 and reads "epoch=1 x=42"
}

// lockExample is the setup the lock Examples share: a fresh persistent lock
// parent on the shared server, an observer session, a bound for the lock
// calls, and one new session per name. Everything is closed when the
// Example ends.
type lockExample struct {
	scope    *zkserver.Scope
	server   *zkserver.Server
	ctx      context.Context
	parent   string
	observer *zkclient.Client
}

func newLockExample(sc *zkserver.Scope) *lockExample {
	s := sharedServer(sc)
	observer := zkclient.Connect(sc, "observer", []string{s.Client}, zkclient.Quiet())
	return &lockExample{scope: sc, server: s, ctx: lockCtx(sc), parent: testRoot(sc, observer), observer: observer}
}

// contender joins a named session, quiet, to the example's lock parent;
// trace adds the example's own callbacks.
func (x *lockExample) contender(name string, trace ...*lock.Trace) *contender {
	return join(x.scope, name, []string{x.server.Client}, x.parent, joinOpts{quiet: true, trace: chainTraces(trace...)})
}

// session opens a new session on the shared server.
func (x *lockExample) session(name string) *zkclient.Client {
	return zkclient.Connect(x.scope, name, []string{x.server.Client}, zkclient.Quiet())
}

// acquisition is a Locker's Acquire running in its own goroutine.
type acquisition struct {
	done returned
	held *lock.Held
	err  error
}

// acquireInBackground starts l.Acquire; at the end of the Example it is
// cancelled if still running, and a hold is released.
func acquireInBackground(t zkserver.TB, ctx context.Context, l *lock.Locker) *acquisition {
	ctx, cancel := context.WithCancel(ctx)
	a := &acquisition{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.held, a.err = l.Acquire(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-a.done // Acquire returns once its context ends
		if a.held != nil {
			rctx, rcancel := context.WithTimeout(context.Background(), within)
			defer rcancel()
			_ = a.held.Release(rctx)
		}
	})
	return a
}

// result waits for the acquisition to return.
func (a *acquisition) result(t zkserver.TB) (*lock.Held, error) {
	t.Helper()
	a.done.await(t, "the acquisition")
	return a.held, a.err
}

func (a *acquisition) finished() bool { return a.done.finished() }

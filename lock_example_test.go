package zk19_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/zkserver"
)

// Claim L2 (section "临时顺序锁怎样判断资格"): a candidate's place in the
// queue is the number the server appends, not its name; the GUID in front
// of the number is random, so sorting whole names scrambles the queue.
//
// Three candidates are created on a real server, in the order C, B, A, with
// GUIDs chosen so that C's GUID sorts last and A's first (a random GUID can
// land anywhere; fixed ones make the output repeatable). The server numbers
// them 0, 1, 2 in creation order; the lexicographic order of the full names
// is the reverse. The recipe's order (lock.Order) follows the numbers, and
// the holder it picks is C, the first one created.
func Example_sequenceOrderIsNotNameOrder() {
	sc := zkserver.NewScope("Example_sequenceOrderIsNotNameOrder")
	defer sc.Close()
	c := connect(sc, "A", []string{shared.Client}, lkQuiet()...)
	root := testRoot(sc, c)
	l, err := lock.New(c.Conn, root)
	if err != nil {
		sc.Fatalf("lock.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lkWithin)
	defer cancel()
	guids := map[string]string{ // label -> GUID, created in the order C, B, A
		"C": "cccccccc-0000-4000-8000-000000000000",
		"B": "bbbbbbbb-0000-4000-8000-000000000000",
		"A": "aaaaaaaa-0000-4000-8000-000000000000",
	}
	label := map[string]string{}
	var first *lock.Candidate
	for _, lb := range []string{"C", "B", "A"} {
		cand, err := l.Create(ctx, guids[lb])
		if err != nil {
			sc.Fatalf("create %s: %v", lb, err)
		}
		label[cand.Name] = lb
		if first == nil {
			first = cand
		}
	}
	kids, _, err := c.Children(root)
	if err != nil {
		sc.Fatalf("children: %v", err)
	}
	ord, err := lock.Order(kids)
	if err != nil {
		sc.Fatalf("order: %v", err)
	}
	var bySeq []string
	for _, e := range ord {
		bySeq = append(bySeq, fmt.Sprintf("%s(%d)", label[e.Name], e.Seq))
	}
	names := append([]string(nil), kids...)
	sort.Strings(names)
	var byName []string
	for _, n := range names {
		byName = append(byName, label[n])
	}
	fmt.Println("created:       C B A")
	fmt.Println("sequence order:", strings.Join(bySeq, " "))
	fmt.Println("name order:    ", strings.Join(byName, " "))
	fmt.Println("name order differs from creation order:", strings.Join(byName, " ") != "C B A")
	h, err := l.AcquireFrom(ctx, first)
	if err != nil {
		sc.Fatalf("acquire: %v", err)
	}
	fmt.Println("holder:", label[h.Name], "token seq:", h.Token.Seq)
	// Output:
	// created:       C B A
	// sequence order: C(0) B(1) A(2)
	// name order:     A B C
	// name order differs from creation order: true
	// holder: C token seq: 0
}

// Claim L4 (section "临时顺序锁怎样判断资格"): a release wakes only the
// candidate right behind it; that one looks again and holds, and the one
// after it hears nothing and keeps waiting.
//
// A holds; B waits on A; C waits on B (each its own session). A releases.
// B acquires after one watch event. For C, a read on C's own connection
// after the release orders any notification for it before the read's
// answer, and Locker.Inspect makes C take in whatever was delivered: C had
// no event and still waits on B. When B releases, C holds after one event.
func Example_predecessorChain() {
	sc := zkserver.NewScope("Example_predecessorChain")
	defer sc.Close()
	admin := connect(sc, "D", []string{shared.Client}, lkQuiet()...)
	root := testRoot(sc, admin)
	ctx, cancel := context.WithTimeout(context.Background(), lkWithin)
	defer cancel()
	a := lkJoin(sc, "A", []string{shared.Client}, root, lkOpt{quiet: true})
	b := lkJoin(sc, "B", []string{shared.Client}, root, lkOpt{quiet: true})
	c := lkJoin(sc, "C", []string{shared.Client}, root, lkOpt{quiet: true})
	ha, err := a.l.Acquire(ctx)
	if err != nil {
		sc.Fatalf("A acquire: %v", err)
	}
	fmt.Println("A holds")
	pb := lkStart(sc, b)
	fmt.Println("B waits on A:", lkExpectWaiting(sc, b, ha.Name) == nil)
	pc := lkStart(sc, c)
	fmt.Println("C waits on B:", lkExpectWaiting(sc, c, pb.cand.Name) == nil)

	if err := ha.Release(ctx); err != nil {
		sc.Fatalf("A release: %v", err)
	}
	fmt.Println("A releases")
	hb, err := pb.result(sc, lkWithin)
	if err != nil {
		sc.Fatalf("B: %v", err)
	}
	fmt.Printf("B holds after %d watch event(s)\n", hb.Stats.Wakeups)
	st := lkSettle(sc, c)
	fmt.Printf("C: %d watch event(s), waiting on B: %v, acquired: %v\n", st.Wakeups, st.Waiting && st.Pred == pb.cand.Name, pc.finished())

	if err := hb.Release(ctx); err != nil {
		sc.Fatalf("B release: %v", err)
	}
	fmt.Println("B releases")
	hc, err := pc.result(sc, lkWithin)
	if err != nil {
		sc.Fatalf("C: %v", err)
	}
	fmt.Printf("C holds after %d watch event(s)\n", hc.Stats.Wakeups)
	// Output:
	// A holds
	// B waits on A: true
	// C waits on B: true
	// A releases
	// B holds after 1 watch event(s)
	// C: 0 watch event(s), waiting on B: true, acquired: false
	// B releases
	// C holds after 1 watch event(s)
}

// Claim L8 (section "临时顺序锁怎样判断资格"): between listing the children
// and setting the watch on the predecessor, the predecessor may already be
// gone; exists then finds nothing and the waiter must list again at once,
// because the deletion it would wait for has already happened.
//
// A hook of the recipe (Hooks.AfterList) runs exactly inside that window and
// deletes the predecessor, so the race is taken on every attempt, with no
// sleep. Ten times: A holds, B lists and picks A, the hook deletes A's node,
// B's exists(A, watch) answers false, B lists again and holds, without
// having received any watch event.
func Example_listExistsRace() {
	sc := zkserver.NewScope("Example_listExistsRace")
	defer sc.Close()
	admin := connect(sc, "D", []string{shared.Client}, lkQuiet()...)
	root := testRoot(sc, admin)
	ctx, cancel := context.WithTimeout(context.Background(), lkWithin)
	defer cancel()
	var hookErr error
	deleted := 0
	hooks := lock.Hooks{AfterList: func(own string, children []string, pred string) {
		if err := admin.Delete(root+"/"+pred, -1); err != nil && hookErr == nil {
			hookErr = err
		}
		deleted++
	}}
	a := lkJoin(sc, "A", []string{shared.Client}, root, lkOpt{quiet: true})
	b := lkJoin(sc, "B", []string{shared.Client}, root, lkOpt{quiet: true, hooks: hooks})
	const runs = 10
	noNode, relisted, events := 0, 0, 0
	for i := 0; i < runs; i++ {
		if _, err := a.l.Acquire(ctx); err != nil {
			sc.Fatalf("A acquire: %v", err)
		}
		hb, err := b.l.Acquire(ctx)
		if err != nil {
			sc.Fatalf("B acquire: %v", err)
		}
		noNode += hb.Stats.NoNode
		if hb.Stats.Rounds == 2 {
			relisted++
		}
		events += hb.Stats.Wakeups
		if err := hb.Release(ctx); err != nil {
			sc.Fatalf("B release: %v", err)
		}
	}
	if hookErr != nil {
		sc.Fatalf("hook delete: %v", hookErr)
	}
	fmt.Printf("attempts: %d, hook deleted the predecessor: %d\n", runs, deleted)
	fmt.Printf("exists found no node: %d of %d\n", noNode, runs)
	fmt.Printf("listed again and held (2 rounds): %d of %d\n", relisted, runs)
	fmt.Printf("watch events received: %d\n", events)
	// Output:
	// attempts: 10, hook deleted the predecessor: 10
	// exists found no node: 10 of 10
	// listed again and held (2 rounds): 10 of 10
	// watch events received: 0
}

// Claim L10 (section "临时顺序锁怎样判断资格", last paragraph): the same
// queue can elect a leader, but being lowest only makes a candidate; before
// serving it has to recover state, and it says so by publishing a "ready"
// node. Clients wait for "ready", not for the election result.
//
// A client Q checks <root>/ready with a watch before any election: absent.
// Candidates L1 and L2 join the queue under <root>/election; L1 is lowest,
// and at that moment "ready" is still absent, so Q has nothing to use. L1
// recovers the state left by an earlier leader (x=41, one update pending),
// writes x=42, and only then creates "ready" (ephemeral, naming itself). Q's
// watch fires, Q reads "ready" and then the state, and sees x=42.
func Example_electionNeedsReady() {
	sc := zkserver.NewScope("Example_electionNeedsReady")
	defer sc.Close()
	q := connect(sc, "Q", []string{shared.Client}, lkQuiet()...)
	root := testRoot(sc, q)
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{root + "/election", root + "/state"} {
		if _, err := q.Create(p, nil, 0, acl); err != nil {
			sc.Fatalf("create %s: %v", p, err)
		}
	}
	if _, err := q.Set(root+"/state", []byte("x=41"), -1); err != nil {
		sc.Fatalf("set state: %v", err)
	}
	ready := root + "/ready"
	ok, _, readyEv, err := q.ExistsW(ready)
	if err != nil {
		sc.Fatalf("Q exists ready: %v", err)
	}
	fmt.Println("Q: ready exists before the election:", ok)

	ctx, cancel := context.WithTimeout(context.Background(), lkWithin)
	defer cancel()
	l1 := lkJoin(sc, "L1", []string{shared.Client}, root+"/election", lkOpt{quiet: true})
	l2 := lkJoin(sc, "L2", []string{shared.Client}, root+"/election", lkOpt{quiet: true})
	h1, err := l1.l.Acquire(ctx)
	if err != nil {
		sc.Fatalf("L1: %v", err)
	}
	p2 := lkStart(sc, l2)
	if err := lkExpectWaiting(sc, l2, h1.Name); err != nil {
		sc.Fatalf("L2: %v", err)
	}
	ok, _, _ = q.Exists(ready)
	fmt.Println("lowest suffix: L1; ready exists:", ok)
	select {
	case <-readyEv:
		fmt.Println("Q: unexpected event before ready")
	default:
		fmt.Println("Q: no leader to use yet")
	}

	// L1 recovers: read what the previous leader left, finish it, then
	// publish ready.
	st, stat, err := l1.c.Get(root + "/state")
	if err != nil {
		sc.Fatalf("L1 get state: %v", err)
	}
	if _, err := l1.c.Set(root+"/state", []byte("x=42"), stat.Version); err != nil {
		sc.Fatalf("L1 set state: %v", err)
	}
	fmt.Printf("L1 recovered %s, wrote x=42\n", st)
	if _, err := l1.c.Create(ready, []byte("L1"), zk.FlagEphemeral, acl); err != nil {
		sc.Fatalf("L1 publish ready: %v", err)
	}
	fmt.Println("L1 published ready")

	select {
	case ev := <-readyEv:
		fmt.Println("Q: event", ev.Type)
	case <-time.After(lkWithin):
		sc.Fatalf("Q: no event on ready within %v", lkWithin)
	}
	leader, _, err := q.Get(ready)
	if err != nil {
		sc.Fatalf("Q get ready: %v", err)
	}
	state, _, err := q.Get(root + "/state")
	if err != nil {
		sc.Fatalf("Q get state: %v", err)
	}
	fmt.Printf("Q uses %s, sees %s\n", leader, state)
	fmt.Println("L2 still a candidate:", !p2.finished())
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

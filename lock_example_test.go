package zk19_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/fence"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
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
		s := sharedServer(sc)
		d := zkclient.Connect(sc, "D", []string{s.Client}, zkclient.Quiet())
		root := testRoot(sc, d)
		p := join(sc, "S", []string{s.Client}, root, joinOpts{quiet: true})
		guids := map[string]string{
			"C": "cccccccc-0000-4000-8000-000000000000",
			"B": "bbbbbbbb-0000-4000-8000-000000000000",
			"A": "aaaaaaaa-0000-4000-8000-000000000000",
		}
		label := map[string]string{}
		for _, lb := range []string{"C", "B", "A"} {
			pth, err := p.c.Create(root+"/"+guids[lb]+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				sc.Fatalf("create %s: %v", lb, err)
			}
			label[path.Base(pth)] = lb
		}
		kids := listChildren(sc, d, root) // sorted as strings
		bySeq := slices.Clone(kids)
		slices.SortFunc(bySeq, func(a, b string) int { return int(seqOf(a) - seqOf(b)) })
		var seqOrder, nameOrder []string
		for i := range kids {
			seqOrder = append(seqOrder, fmt.Sprintf("%s(%d)", label[bySeq[i]], seqOf(bySeq[i])))
			nameOrder = append(nameOrder, label[kids[i]])
		}
		fmt.Println("created:       C B A")
		fmt.Println("sequence order:", strings.Join(seqOrder, " "))
		fmt.Println("name order:    ", strings.Join(nameOrder, " "))
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		h, err := p.l.Recover(ctx, guids["C"])
		if err != nil {
			sc.Fatalf("recover C: %v", err)
		}
		fmt.Println("holder:", label[path.Base(h.Path)], "token seq:", h.Token.Seq)
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
// it; that one looks again and holds, and the one after it hears nothing
// and keeps waiting (claim L4, §3 ¶3).
//
// A holds; B waits on A; C waits on B (each its own session). A releases.
// B acquires after one watch event. For C, a read on C's own connection
// after the release orders any notification for it before the read's
// answer, and the Probe makes C take in whatever was delivered: C had no
// event and still waits on B. When B releases, C holds after one event.
func Example_predecessorChain() {
	runExample("Example_predecessorChain", func(sc *zkserver.Scope) {
		ch := startChain(sc, []string{sharedServer(sc).Client}, joinOpts{quiet: true})
		fmt.Println("A holds; B waits on A; C waits on B")
		if err := ch.ha.Release(ch.ctx); err != nil {
			sc.Fatalf("A release: %v", err)
		}
		fmt.Println("A releases")
		hb, err := ch.pb.result(sc)
		if err != nil {
			sc.Fatalf("B: %v", err)
		}
		fmt.Printf("B holds after %d watch event(s)\n", settle(sc, ch.b, ch.pb.own).Wakeups)
		st := settle(sc, ch.c, ch.pc.own)
		fmt.Printf("C: %d watch event(s), waiting on B: %v, acquired: %v\n", st.Wakeups, st.Waiting && st.Pred == ch.pb.own, ch.pc.finished())
		if err := hb.Release(ch.ctx); err != nil {
			sc.Fatalf("B release: %v", err)
		}
		fmt.Println("B releases")
		if _, err := ch.pc.result(sc); err != nil {
			sc.Fatalf("C: %v", err)
		}
		fmt.Printf("C holds after %d watch event(s)\n", settle(sc, ch.c, ch.pc.own).Wakeups)
	})
	// Output:
	// A holds; B waits on A; C waits on B
	// A releases
	// B holds after 1 watch event(s)
	// C: 0 watch event(s), waiting on B: true, acquired: false
	// B releases
	// C holds after 1 watch event(s)
}

// Example_listExistsRace: between listing the children and setting the
// watch on the predecessor, the predecessor may already be gone; exists
// then finds nothing and the waiter must list again at once, because the
// deletion it would wait for has already happened (claim L8, §3 ¶4).
//
// The Probe's BeforeWatch hook runs exactly inside that window and deletes
// the predecessor, so the race is taken on every attempt, with no sleep.
// Ten times: A holds, B lists and picks A, the hook deletes A's node, B's
// exists(A, watch) answers false, B lists again and holds, without having
// received any watch event.
func Example_listExistsRace() {
	runExample("Example_listExistsRace", func(sc *zkserver.Scope) {
		s := sharedServer(sc)
		admin := zkclient.Connect(sc, "D", []string{s.Client}, zkclient.Quiet())
		root := testRoot(sc, admin)
		ctx := lockCtx(sc)
		var hookErr error
		deleted := 0
		hook := func(own, pred string) {
			if err := admin.Delete(root+"/"+pred, -1); err != nil && hookErr == nil {
				hookErr = err
			}
			deleted++
		}
		a := join(sc, "A", []string{s.Client}, root, joinOpts{quiet: true})
		b := join(sc, "B", []string{s.Client}, root, joinOpts{quiet: true, beforeWatch: hook})
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
			st := settle(sc, b, path.Base(hb.Path))
			noNode += st.NoNode
			if st.Rounds == 2 {
				relisted++
			}
			events += st.Wakeups
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
		s := sharedServer(sc)
		q := zkclient.Connect(sc, "Q", []string{s.Client}, zkclient.Quiet())
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

		ctx := lockCtx(sc)
		l1 := join(sc, "L1", []string{s.Client}, root+"/election", joinOpts{quiet: true})
		l2 := join(sc, "L2", []string{s.Client}, root+"/election", joinOpts{quiet: true})
		h1, err := l1.l.Acquire(ctx)
		if err != nil {
			sc.Fatalf("L1: %v", err)
		}
		p2 := start(sc, l2)
		if err := expectWaiting(l2, path.Base(h1.Path)); err != nil {
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
		case <-time.After(within):
			sc.Fatalf("Q: no event on ready within %v", within)
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

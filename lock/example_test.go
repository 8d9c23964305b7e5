package lock_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock"
)

// Two services share one lock parent, each with its own ZooKeeper session.
// A holds; B's Acquire waits behind A until A releases, then holds with a
// larger token.
func ExampleLocker_Acquire() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent() // a persistent node, e.g. /services/billing/lock

	a := lock.New(connect("A"), parent)
	b := lock.New(connect("B"), parent)

	heldByA, err := a.Acquire(ctx)
	if err != nil {
		fmt.Println("A:", err)
		return
	}
	fmt.Println("A holds with token sequence", heldByA.Token.Seq)

	bHolds := make(chan *lock.Held)
	go func() {
		h, err := b.Acquire(ctx) // waits on A's node
		if err != nil {
			fmt.Println("B:", err)
		}
		bHolds <- h
	}()

	// ... A does its work, then:
	if err := heldByA.Release(ctx); err != nil {
		fmt.Println("A release:", err)
		return
	}
	heldByB := <-bHolds
	if heldByB == nil {
		return
	}
	defer heldByB.Release(ctx)
	fmt.Println("B holds with token sequence", heldByB.Token.Seq)
	fmt.Println("B's token orders after A's:", heldByB.Token.Compare(heldByA.Token) > 0)
	// Output:
	// A holds with token sequence 0
	// B holds with token sequence 1
	// B's token orders after A's: true
}

// TryAcquire does not wait: while A holds, B's try comes back at once with
// ErrLocked, and B's candidate is already deleted, so it blocks nobody.
// Once A has released, B's next try holds.
func ExampleLocker_TryAcquire() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()
	a := lock.New(connect("A"), parent)
	b := lock.New(connect("B"), parent)

	heldByA, err := a.TryAcquire(ctx)
	if err != nil {
		fmt.Println("A:", err)
		return
	}
	fmt.Println("A holds with token sequence", heldByA.Token.Seq)

	_, err = b.TryAcquire(ctx)
	fmt.Println("B, while A holds: locked:", errors.Is(err, lock.ErrLocked))

	if err := heldByA.Release(ctx); err != nil {
		fmt.Println("A release:", err)
		return
	}
	heldByB, err := b.TryAcquire(ctx)
	if err != nil {
		fmt.Println("B:", err)
		return
	}
	defer heldByB.Release(ctx)
	fmt.Println("B, after A released: holds with token sequence", heldByB.Token.Seq)
	// Output:
	// A holds with token sequence 0
	// B, while A holds: locked: true
	// B, after A released: holds with token sequence 2
}

// Lost tells a holder that its hold is over without its doing: here
// another session deletes the holder's node. The holder must stop writing;
// Err says why, and Release then has nothing left to release.
func ExampleHeld_Lost() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()

	held, err := lock.New(connect("A"), parent).Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	deleteNode(held.Path) // an operator, a buggy client, or a session expiry

	select {
	case <-held.Lost(): // the hold watches its own node from the start
		fmt.Println("A: lost the lock; stop writing")
	case <-ctx.Done():
		fmt.Println("A: still holds?", ctx.Err())
		return
	}
	fmt.Println("why: own node deleted:", errors.Is(held.Err(), lock.ErrLostCandidacy))
	err = held.Release(ctx)
	fmt.Println("Release:", errors.Is(err, lock.ErrLostCandidacy))
	// Output:
	// A: lost the lock; stop writing
	// why: own node deleted: true
	// Release: true
}

// While the connection carrying A's session is down, A cannot know whether
// it still holds: the session may expire on the server at any moment.
// Suspensions says so as it happens, with the time by which the session
// may already have expired; A stops starting writes until Resumed (the
// client is back in the same session) or Lost (it is not).
func ExampleHeld_Suspensions() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()
	const sessionTimeout = 10 * time.Second // given once, to lock.Connect
	conn, cut, heal := connectCuttable("A", sessionTimeout)

	held, err := lock.New(conn, parent).Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer held.Release(ctx)

	cut() // a partition, a restarting server, a dropped NAT entry
	var s lock.Suspension
	select {
	case s = <-held.Suspensions():
		// The server heard A at most a ping interval before the cut, and
		// expires the session a timeout after that, not after Since.
		left := s.ExpiresBy.Sub(s.Since)
		fmt.Println("A: suspended; stop starting writes; the session lasts at least until ExpiresBy, within the timeout:", left > 0 && left <= sessionTimeout)
	case <-ctx.Done():
		return
	}

	heal()
	select {
	case <-s.Resumed:
		fmt.Println("A: resumed in the same session; the hold goes on:", held.Err() == nil)
	case <-held.Lost():
		fmt.Println("A: lost:", held.Err())
	case <-time.After(time.Until(s.ExpiresBy)):
		fmt.Println("A: neither by ExpiresBy; treat the hold as lost")
	}
	// Output:
	// A: suspended; stop starting writes; the session lasts at least until ExpiresBy, within the timeout: true
	// A: resumed in the same session; the hold goes on: true
}

// A service gates each write with Ready, right before it: nil while the
// hold is good; while the connection is down it waits (within its ctx) for
// the session to come back; once the hold is known lost it refuses, every
// time. Context is cancelled on loss, for the write already under way.
// No select of the service's own.
func ExampleHeld_Ready() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()
	conn, cut, heal := connectCuttable("A", 10*time.Second)
	held, err := lock.New(conn, parent).Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	res := fence.NewMemory()
	defer res.Close()
	write := func(v string) error {
		if err := held.Ready(ctx); err != nil {
			return err
		}
		_, err := res.Write(held.Context(), held.Token, v)
		return err
	}
	fmt.Println("write 1:", write("1"))

	cut()
	brief, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	select {
	case <-held.Suspensions():
	case <-ctx.Done():
	}
	fmt.Println("while cut off:", errors.Is(held.Ready(brief), lock.ErrSuspended))
	stop()
	heal()
	fmt.Println("write 2, after the heal:", write("2"))

	deleteNode(held.Path) // somebody else's hand
	select {
	case <-held.Lost():
	case <-ctx.Done():
	}
	fmt.Println("write 3, after the loss:", errors.Is(write("3"), lock.ErrLostCandidacy), context.Cause(held.Context()) == held.Err())
	// Output:
	// write 1: <nil>
	// while cut off: true
	// write 2, after the heal: <nil>
	// write 3, after the loss: true true
}

// The reply of the create is lost: the server made the node, the client saw
// only a closed connection. Retrying the create would leave a second node
// that blocks the queue. Acquire does not: in the same session it syncs,
// lists, and finds the one node that carries the acquisition's GUID and is
// owned by this session, and goes on waiting with it. The caller writes
// nothing for it.
func ExampleLocker_Acquire_lostCreateReply() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()
	conn, loseNextCreateReply := connectLossy("A", parent)

	loseNextCreateReply()
	held, err := lock.New(conn, parent).Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer held.Release(ctx)
	fmt.Println("holds the node the lost create made:", path.Base(held.Path) == held.GUID+fence.LockInfix+"0000000000")
	fmt.Println("token sequence", held.Token.Seq)
	// Output:
	// holds the node the lost create made: true
	// token sequence 0
}

// Recover is for a caller that kept a GUID: here a node of this session
// whose GUID an earlier step recorded (a create made outside the Locker,
// as a migration from a hand-written recipe would). Recover adopts the one
// node of that GUID this session owns, and waits with it as Acquire does.
func ExampleLocker_Recover() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()
	conn := connect("A")
	guid := createCandidate(conn, parent) // the GUID the earlier step kept

	held, err := lock.New(conn, parent).Recover(ctx, guid)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer held.Release(ctx)
	fmt.Println("Recover holds the node of the kept GUID:", held.GUID == guid)
	fmt.Println("token sequence", held.Token.Seq)
	// Output:
	// Recover holds the node of the kept GUID: true
	// token sequence 0
}

// A fenced write: the holder passes its token with every write, and the
// resource compares it with the largest token it has accepted, in the same
// critical section as the write. A's hold has passed to B (here A's node was
// deleted; in production A paused past its session timeout); A's late write
// is refused because the resource has seen B's larger token.
func Example_fencedWrite() {
	ctx, cancel := bounded()
	defer cancel()
	parent := newParent()
	resource := fence.NewMemory() // in a service: the database or storage that takes the writes
	write := func(who string, h *lock.Held, value string) {
		_, err := resource.Write(context.Background(), h.Token, value)
		if err != nil && !errors.Is(err, fence.ErrStale) { // a refusal is an error wrapping fence.ErrStale
			fmt.Println(err)
			return
		}
		fmt.Printf("%s writes %q with token sequence %d: accepted=%v\n", who, value, h.Token.Seq, err == nil)
	}

	heldByA, err := lock.New(connect("A"), parent).Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	write("A", heldByA, "from A")

	deleteNode(heldByA.Path) // A's hold ends while A is not looking
	heldByB, err := lock.New(connect("B"), parent).Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer heldByB.Release(ctx)
	write("B", heldByB, "from B")
	write("A", heldByA, "late, from A")

	v, mark, _, _ := resource.Read(ctx)
	fmt.Printf("value %q, mark is B's token: %v\n", v, mark == heldByB.Token)
	// Output:
	// A writes "from A" with token sequence 0: accepted=true
	// B writes "from B" with token sequence 1: accepted=true
	// A writes "late, from A" with token sequence 0: accepted=false
	// value "from B", mark is B's token: true
}

package zk19_test

// §8 of the article (两道练习): the two exercises, each told as an Example
// that carries its own claim: X1, a retry after connection loss; X2, an
// expired session is no rejection.

import (
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/fencescene"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/lock"
)

// Example_s8aX1RetryAfterConnectionLoss is exercise 1 of the article (claim
// X1, §8 ¶2): after a create whose reply was lost, retrying with the same
// prefix gets a larger sequence number while the first create still
// exists; recovery has to check the session and ephemeralOwner and handle
// zero and many matches.
//
// The setup is Example_s4LostCreateReply's first step, with the same
// verbs (scene.NewLostReply, scene.LoseCreate): A acquires through a fault
// proxy that lets A's create take effect on the server, loses its reply
// and closes A's connection; A reconnects; O lists the server directly.
// It states X1's verdict as every proof does: not shown when the create's
// reply was not lost, A came back in another session or the server holds
// no node of A's; refuted when the retry's node is not larger while the
// first still exists, or Recover does not answer two matches with
// lock.ErrAmbiguous and none with lock.ErrMissing.
func Example_s8aX1RetryAfterConnectionLoss() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "X1")
	lost := scene.LoseCreate(sc, "X1", scene.NewLostReply(sc, scene.JoinOpts{})) // not shown unless A's create returned connection loss
	if lost.SessionAfter != lost.SessionBefore {
		claims.NotShown(sc, "X1", "A reconnected in session 0x%x; want its session 0x%x: the exercise retries in the session that made the first node", lost.SessionAfter, lost.SessionBefore)
	}
	fmt.Println("create returned connection loss:", errors.Is(lost.CreateErr, zk.ErrConnectionClosed))
	fmt.Println("same session after reconnect:", lost.SessionAfter == lost.SessionBefore)

	created := lost.NodesWithGUID(sc) // node name -> ephemeralOwner, as O sees them
	var first string
	for name := range created {
		first = name
	}
	if len(created) != 1 || created[first] != lost.A.Session.SessionID() {
		claims.NotShown(sc, "X1", "O sees %v carrying A's GUID; want one node owned by A's session 0x%x: the lost create took effect", created, lost.A.Session.SessionID())
	}
	fmt.Println("the server created the node, owned by A's session:", len(created) == 1 && created[first] == lost.A.Session.SessionID())

	// A's application retries blindly: the same prefix, the same GUID.
	prefix := lost.Parent + "/" + lost.Guid + fence.LockInfix
	second, err := lost.A.Session.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		claims.NotShown(sc, "X1", "A's retry of the create: %v", err)
	}
	both := lost.NodesWithGUID(sc)
	_, firstKept := both[first]
	larger := scene.SeqOf(path.Base(second)) > scene.SeqOf(first)
	if !larger || !firstKept || len(both) != 2 {
		claims.RefutedNow(sc, "X1", "the retry made %s after %s; O sees %v; want a larger sequence number while the first node still exists, two nodes", path.Base(second), first, both)
	}
	fmt.Println("retry gets a larger sequence number:", larger)
	fmt.Println("first create still exists:", firstKept && len(both) == 2)

	ctx := lost.Ctx
	_, ambiguous := lost.A.Locker.Recover(ctx, lost.Guid)
	unknown := "00000000-0000-4000-8000-000000000000"
	_, missing := lost.A.Locker.Recover(ctx, unknown)
	claims.Evidence(sc, "A's create returned %v in session 0x%x (0x%x after reconnecting); O saw %s owned by it; the blind retry made %s while the first still exists (%d nodes carry the GUID); Recover then returned %v; Recover of a GUID no node carries returned %v", lost.CreateErr, lost.SessionBefore, lost.SessionAfter, first, path.Base(second), len(both), ambiguous, missing)
	if !errors.Is(ambiguous, lock.ErrAmbiguous) || !errors.Is(missing, lock.ErrMissing) {
		claims.RefutedNow(sc, "X1", "Recover with two nodes of A's session carrying the GUID returned %v, with none %v; want lock.ErrAmbiguous and lock.ErrMissing: recovery handles several and zero matches", ambiguous, missing)
	}
	fmt.Println("recover refuses two matches as ambiguous:", errors.Is(ambiguous, lock.ErrAmbiguous))
	fmt.Println("recover of an unknown GUID is missing:", errors.Is(missing, lock.ErrMissing))
	// Output:
	// create returned connection loss: true
	// same session after reconnect: true
	// the server created the node, owned by A's session: true
	// retry gets a larger sequence number: true
	// first create still exists: true
	// recover refuses two matches as ambiguous: true
	// recover of an unknown GUID is missing: true
}

// Example_s8bX2ExpiryIsNotRejection is exercise 2 of the article as it is put
// (claim X2, §8 ¶4). A holds token 0 and has written with it, so the
// resource's high-water mark is A's token 0. Before its next write A asks
// ZooKeeper whether it still holds: its node exists. A's worker then
// pauses; meanwhile A's session expires and B acquires token 1. A's write
// arrives before any of B's: the resource, whose mark is still A's token
// 0, accepts it over A's own earlier value. Only once B's token 1 has been
// accepted is token 0 refused. Neither the mark alone nor the question to
// ZooKeeper stopped the late write; the guarantee begins when the resource
// accepts the new token.
//
// It states X2's verdict: not shown when the mark is not A's token before
// the expiry, A's check did not pass or the resource changed before A's
// late write; refuted when that write is refused, or B's write does not
// end token 0's run.
func Example_s8bX2ExpiryIsNotRejection() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "X2")
	cast := fencescene.NewFencingCast(sc) // O observes; A talks through a proxy that can cut it off; B talks directly
	res := fence.NewMemory()

	holdA := cast.A.Acquire()
	fencescene.WriteAs(sc, cast.A.Log, res, holdA.Token, "A-first")
	_, first, _ := fencescene.ReadResource(sc, res)
	if first != holdA.Token {
		claims.NotShown(sc, "X2", "the resource's mark after A's write is %v; want A's token %v: the exercise starts from it", first, holdA.Token)
	}
	fmt.Printf("A holds token %d and has written with it; the resource's mark is token %d\n", holdA.Token.Seq, first.Seq)

	worker := fencescene.StartAskingWorker(sc, cast.A, holdA.Path, res, holdA.Token, "A-after-check")
	asked := worker.Asked(sc)
	if !asked {
		claims.NotShown(sc, "X2", "A asked ZooKeeper whether its node %s exists and is its own and got no yes: the race needs A's check to pass", holdA.Path)
	}
	fmt.Println("A asks ZooKeeper whether its lock node exists and is its own:", asked)

	cast.ExpireA(sc, holdA.Path)
	holdB := cast.B.Acquire()
	fmt.Printf("A pauses; its session expires; B holds token %d\n", holdB.Token.Seq)
	value, mark, _ := fencescene.ReadResource(sc, res)
	if value != "A-first" || mark != holdA.Token {
		claims.NotShown(sc, "X2", "after B acquired %v the resource holds %q with mark %v; want A's \"A-first\" and token %v: nobody else wrote", holdB.Token, value, mark, holdA.Token)
	}
	fmt.Printf("the resource still holds %q with mark token %d\n", value, mark.Seq)

	late := worker.Resume(sc)
	fmt.Printf("A resumes: its write with token %d is accepted: %v\n", holdA.Token.Seq, late.Accepted)

	b := fencescene.WriteAs(sc, cast.B.Log, res, holdB.Token, "new-owner")
	fmt.Printf("B's write with token %d: accepted %v\n", holdB.Token.Seq, b.Accepted)
	again := fencescene.WriteAs(sc, cast.A.Log, res, holdA.Token, "A-again")
	fmt.Printf("A's next write with token %d: accepted %v\n", holdA.Token.Seq, again.Accepted)
	claims.Evidence(sc, "mark %v before the expiry; A's check answered that it holds; after B acquired %v the resource still held %q with mark %v, and A's write with %v was accepted=%v over %q; after B's write accepted=%v, A's token refused: %v", first, holdB.Token, value, mark, holdA.Token, late.Accepted, late.Prev, b.Accepted, !again.Accepted)
	if !late.Accepted || late.Prev != "A-first" {
		claims.RefutedNow(sc, "X2", "A's late write with %v, after its check passed and its session expired, got accepted=%v over %q (mark %v); want accepted over \"A-first\": the mark is still A's own token, and an expiry is no rejection", holdA.Token, late.Accepted, late.Prev, late.Mark)
	}
	if !b.Accepted || again.Accepted {
		claims.RefutedNow(sc, "X2", "B's write with %v got accepted=%v, then A's with %v accepted=%v; want B's accepted and A's refused: the guarantee begins when the resource accepts the new token", holdB.Token, b.Accepted, holdA.Token, again.Accepted)
	}
	// Output:
	// A holds token 0 and has written with it; the resource's mark is token 0
	// A asks ZooKeeper whether its lock node exists and is its own: true
	// A pauses; its session expires; B holds token 1
	// the resource still holds "A-first" with mark token 0
	// A resumes: its write with token 0 is accepted: true
	// B's write with token 1: accepted true
	// A's next write with token 0: accepted false
}

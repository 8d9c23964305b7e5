package zk19_test

// §4 of the article (create 回复丢失以后怎样找回节点): a create takes effect on
// the server, its reply is lost on the way back, and the client must find
// out what happened. The section's diagram comes first, as
// Example_s4LostCreateReply; then R1 to R8 and E5 (which checks the proxy's
// Jute codec against the server's own classes), in the order the article
// states them. The lost-reply scene picks
// the request with a matcher, so the same experiment runs on a create, on
// the delete of a Release, or on any other request.

import (
	"context"
	"errors"
	"fmt"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/replicas"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/juteoracle"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
	"github.com/zk19/zk19/zktest"
)

// Example_s4LostCreateReply is the article's lost-create flowchart (claims
// R1, R2, R3 and R4, §4 ¶2–5): A's acquisition makes a fresh GUID and
// sends its ephemeral sequential create; the server creates the node and
// names it; the fault proxy drops the successful reply and closes A's
// connection; A's call gets connection loss; A reconnects in the same
// session, lists the parent by the GUID and checks ephemeralOwner (O has
// made a node with the same GUID in its own session, so the check has
// something to refuse): exactly one match is A's, and A recovers the node
// the server made for it. Then the article's control run: A's application
// blindly creates again, two of A's nodes carry the GUID, and recovery
// refuses the ambiguity; it deletes the retry's node, which no hold owns,
// and nothing of O's or of A's hold; a GUID that no node carries is
// reported missing. Either way, no recovery is faked. The Example states
// R1–R4's verdicts: not shown when the proxy did not lose the create's
// successful reply, refuted on what O sees, A's session, or what Recover
// returns.
//
// A uses the public lock package on its own session; O lists the server
// directly. The lost create and the blind retry are the scene's verbs
// (scene.LoseCreate, scene.BlindRetry), the very steps TestR1 to TestR4
// take before they assert, so the flowchart's steps are told once. Every
// printed line is what the run observed.
func Example_s4LostCreateReply() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	for _, id := range []string{"R1", "R2", "R3", "R4"} {
		claims.Open(sc, id)
	}
	lr := scene.NewLostReply(sc, scene.JoinOpts{Quiet: true}) // the shared server; A through a fault proxy, O directly
	A, O := lr.A, lr.O
	lc := scene.LoseCreate(sc, "R1", lr) // A keeps a fresh GUID and creates <parent>/<GUID>-lock-; the proxy loses the reply; A reconnects
	if !lc.Drop.Took || !jute.IsCreate(lc.Drop.Opcode) || lc.Drop.Err != 0 {
		claims.NotShown(sc, "R1", "got drop result %+v; want the successful reply to A's create dropped", lc.Drop)
	}
	fmt.Println("A: create of <GUID>-lock- -> connection loss:", errors.Is(lc.CreateErr, zk.ErrConnectionClosed), "| GUID kept:", lc.Guid != "")
	fmt.Println("proxy: dropped the reply to the create:", lc.Drop.Took && jute.IsCreate(lc.Drop.Opcode), "| its err:", lc.Drop.Err)
	made := scene.Carrying(sc, O, lr.OLog, lr.Parent, lc.Guid) // node name -> ephemeralOwner
	ownedByA := slices.Equal(slices.Collect(maps.Values(made)), []int64{lc.SessionBefore})
	claims.Evidence(sc, "the proxy dropped the reply xid=%d err=%d; A's create returned %v; O sees %v carrying A's GUID; A's session 0x%x before, 0x%x after reconnecting", lc.Drop.Xid, lc.Drop.Err, lc.CreateErr, made, lc.SessionBefore, lc.SessionAfter)
	if len(made) != 1 || !ownedByA {
		claims.RefutedNow(sc, "R1", "O sees %v carrying A's GUID; want one node, owned by A's session 0x%x: the create took effect", made, lc.SessionBefore)
	}
	fmt.Println("O: nodes carrying the GUID:", len(made), "| owned by A's session:", ownedByA)
	if lc.SessionAfter != lc.SessionBefore {
		claims.RefutedNow(sc, "R2", "A reconnected in session 0x%x; want the same 0x%x", lc.SessionAfter, lc.SessionBefore)
	}
	fmt.Println("A: reconnected in the same session:", lc.SessionAfter == lc.SessionBefore)

	prefix := lr.Parent + "/" + lc.Guid + fence.LockInfix
	if _, err := O.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		claims.NotShown(sc, "R3", "O's node with A's GUID: %v", err)
	}
	fmt.Println("O: made a node with A's GUID in its own session; nodes carrying the GUID:", len(scene.Carrying(sc, O, lr.OLog, lr.Parent, lc.Guid)))
	held, err := A.Locker.Recover(lr.Ctx, lc.Guid) // the children carrying the GUID whose ephemeralOwner is A's session
	if err != nil {
		claims.RefutedNow(sc, "R3", "Recover(%s) beside O's node with the same GUID: got %v; want the node the server made for A", lc.Guid, err)
	}
	_, serverMadeIt := made[scene.NodeOf(held)]
	if !serverMadeIt {
		claims.RefutedNow(sc, "R3", "Recover adopted %s; want the node the server made for A, one of %v", scene.NodeOf(held), made)
	}
	fmt.Println("A: recover -> holds the node the server made for A:", serverMadeIt, "| token", held.Token.Seq)

	second := scene.BlindRetry(sc, lc) // the same create again, as an application that retries blindly
	fmt.Println("A: blind retry of the create -> a node with sequence", scene.SeqOf(second))
	_, err = A.Locker.Recover(lr.Ctx, lc.Guid)
	left := scene.Carrying(sc, O, lr.OLog, lr.Parent, lc.Guid)
	claims.Evidence(sc, "after a blind retry Recover(%s) returned %v; O then sees %v", lc.Guid, err, left)
	_, retryLeft := left[second]
	heldLeft := left[scene.NodeOf(held)] == lc.SessionAfter
	if !errors.Is(err, lock.ErrAmbiguous) || retryLeft || !heldLeft || len(left) != 2 {
		claims.RefutedNow(sc, "R4", "after the blind retry Recover returned %v and O sees %v; want lock.ErrAmbiguous, the retry's %s deleted (no hold owns it), A's held %s and O's node left", err, left, second, scene.NodeOf(held))
	}
	fmt.Println("A: recover -> ambiguous:", errors.Is(err, lock.ErrAmbiguous))
	fmt.Println("O: nodes carrying the GUID:", len(left), "| the blind retry's node deleted:", !retryLeft)
	_, err = A.Locker.Recover(lr.Ctx, uuid.NewString())
	fmt.Println("A: recover of a GUID no node carries -> missing:", errors.Is(err, lock.ErrMissing))
	// Output:
	// A: create of <GUID>-lock- -> connection loss: true | GUID kept: true
	// proxy: dropped the reply to the create: true | its err: 0
	// O: nodes carrying the GUID: 1 | owned by A's session: true
	// A: reconnected in the same session: true
	// O: made a node with A's GUID in its own session; nodes carrying the GUID: 2
	// A: recover -> holds the node the server made for A: true | token 0
	// A: blind retry of the create -> a node with sequence 2
	// A: recover -> ambiguous: true
	// O: nodes carrying the GUID: 2 | the blind retry's node deleted: true
	// A: recover of a GUID no node carries -> missing: true
}

// TestR6_ANodeOfAnotherSessionIsNotAdopted: a node that carries the GUID
// but is owned by another session is never recovered (claim R6, §4 ¶2).
//
// After the lost create reply, B (another session) creates a node that
// carries A's GUID. Recover adopts A's own node, not B's. Once A has
// released, only B's node carries the GUID: Recover returns ErrMissing,
// names B's node as not adopted, and B's node is still there.
func TestR6_ANodeOfAnotherSessionIsNotAdopted(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R6")
	lc := scene.LoseCreate(t, "R6", scene.NewLostReply(t, scene.JoinOpts{}))
	ctx := scene.LockCtx(t)
	b := lc.Join("B", scene.JoinOpts{})
	prefix := lc.Parent + "/" + lc.Guid + fence.LockInfix
	b.Log.Invoke("create %s EPHEMERAL_SEQUENTIAL (B's session %s, A's GUID)", prefix, b.Session.SessionHex())
	bp, err := b.Session.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("B create: %v", err)
	}
	b.Log.Ok("%s", path.Base(bp))
	h, err := lc.A.Locker.Recover(ctx, lc.Guid)
	if err != nil {
		claims.RefutedNow(t, "R6", "Recover with both sessions' nodes present: %v", err)
	}
	if h.Path == bp {
		claims.Refuted(t, "R6", "A adopted B's node %s", bp)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	h2, err := lc.A.Locker.Recover(ctx, lc.Guid)
	seen := lc.NodesWithGUID(t)
	claims.Evidence(t, "A adopted its own %s, not B's %s; with only B's left, Recover returned hold=%v err=%v; O sees %v", path.Base(h.Path), path.Base(bp), h2 != nil, err, seen)
	if h2 != nil || !errors.Is(err, lock.ErrMissing) || !strings.Contains(err.Error(), path.Base(bp)) {
		claims.Refuted(t, "R6", "got %s, %v; want lock.ErrMissing naming B's node %s as not adopted", scene.HoldOf(h2), err, path.Base(bp))
	}
	if owner, ok := seen[path.Base(bp)]; !ok || owner != b.Session.SessionID() {
		claims.Refuted(t, "R6", "B's node %s is gone or changed owner (%v)", bp, seen)
	}
}

// TestR3_RecoverFindsExactlyTheServersNode: recovery in the same session
// with the same GUID keeps the one child that carries the GUID and is owned
// by this session; it is the node the server created, as a second client
// sees it directly, and the proxy never read the reply's path, so the
// answer cannot come from the fault injector (claim R3, §4 ¶2).
//
// After the lost create reply, A's session also creates two look-alikes
// whose names merely contain the GUID (<guid>x-lock-… and x<guid>-lock-…):
// carrying the GUID means the name <guid>-lock-<10 digits>. A's Recover
// with the GUID adopts the server's node and, as Acquire would, holds it
// (no one else is queued); O sees that node with A's session as its owner,
// and the look-alikes left alone.
func TestR3_RecoverFindsExactlyTheServersNode(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R3")
	lc := scene.LoseCreate(t, "R3", scene.NewLostReply(t, scene.JoinOpts{}))
	servers := lc.NodesWithGUID(t)
	for _, name := range []string{lc.Guid + "x" + fence.LockInfix, "x" + lc.Guid + fence.LockInfix} {
		lc.A.Log.Invoke("create %s/%s (ephemeral sequential, a look-alike)", lc.Parent, name)
		made, err := lc.A.Session.Create(lc.Parent+"/"+name, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			claims.NotShown(t, "R3", "A's look-alike %s: %v", name, err)
		}
		lc.A.Log.Ok("%s", path.Base(made))
	}
	ctx := scene.LockCtx(t)
	h, err := lc.A.Locker.Recover(ctx, lc.Guid)
	if err != nil {
		claims.RefutedNow(t, "R3", "Recover(%s) beside two look-alikes of A's session: got %v; want the server's node %v adopted", lc.Guid, err, servers)
	}
	seen := lc.NodesWithGUID(t)
	claims.Evidence(t, "Recover(%s) adopted %s and holds with token %v, beside two look-alikes of the same session; O sees %v (owner = A's session 0x%x)", lc.Guid, path.Base(h.Path), h.Token, seen, lc.SessionAfter)
	if len(servers) != 1 || servers[path.Base(h.Path)] != lc.SessionAfter || len(seen) != 3 {
		claims.Refuted(t, "R3", "recovered %s; O saw %v before the look-alikes and sees %v now; want the one node the server made, owned by A's session 0x%x, and the two look-alikes left", path.Base(h.Path), servers, seen, lc.SessionAfter)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR3_RecoverSyncsBeforeListing: R3 on three servers, where the server
// A reconnects to after the lost reply may not have applied the create yet
// (claim R3, §4 ¶2; the sync of §2 ¶1). The reply was lost, so A's session
// has not seen the create's zxid and a follower that lacks the node takes
// the session all the same; a listing there misses the node, and Recover
// would report it missing while it exists. Recover syncs first: the
// leader's answer to the sync follows the create's COMMIT on the
// follower's stream, so the listing after it has the node.
//
// A creates through a proxy in front of one follower (fresh), which loses
// the successful reply; A's next dial lands on the other follower
// (lagging). The link proxy from the leader to the lagging follower lets
// the create's proposal through and holds its COMMIT and every later
// packet but PINGs and REVALIDATEs (faultproxy.HoldCommit), so the lagging
// follower has logged the create, has not applied it, and revalidates A's
// session with the leader. The window is shown open first: A's own plain
// listing there lacks the node that O sees on the leader. Then Recover
// must not return while the COMMIT is held, its sync's answer (the
// leader's SYNC) is seen held behind the COMMIT, and after the release
// Recover adopts the node O sees.
func TestR3_RecoverSyncsBeforeListing(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower that logged the create and has not applied it (a proxy holding the COMMIT on the leader's stream to it)"))
	claims.Open(t, "R3")
	c := harness.LeaseTrio(t)
	leader, fs := c.Leader(), c.Followers()
	fresh, lagging := fs[0], fs[1]
	route := &replicas.Mover{Dials: map[string]int{}}
	lr := scene.NewLostReplyAt(t, fresh, leader, scene.JoinOpts{Client: []zkclient.Option{zkclient.WithDialer(route.Dial)}})
	t.Logf("A creates through a proxy in front of %s and reconnects to %s; O reads on the leader %s", fresh.Label, lagging.Label, leader.Label)
	hold := c.Links.HoldCommit(leader.ID, lagging.ID, faultproxy.TxnMatch{Types: scene.CreateOps, Under: lr.Parent, Session: lr.A.Session.SessionID()})
	route.Redirect(lagging.Client)
	lc := scene.LoseCreate(t, "R3", lr)
	select {
	case <-hold.Holding():
	case <-time.After(harness.Within):
		claims.NotShown(t, "R3", "the COMMIT of A's create was not held on its way to %s within %v: %+v", lagging.Label, harness.Within, hold.Result())
	}
	created := hold.Result()
	t.Logf("nemesis observes: %s got the proposal of %s at zxid %#x; its COMMIT is held", lagging.Label, path.Base(created.Path), created.Zxid)

	claims.Phase(t, "the window: %s has A's session and lacks A's node", lagging.Label)
	lc.A.Log.Info("its dialer sent %d connection(s) to %s since the reply was lost", route.DialsTo(lagging.Client), lagging.Label)
	st, err := lagging.Srvr()
	if err != nil {
		t.Fatalf("srvr %s: %v", lagging.Label, err)
	}
	seen := lc.NodesWithGUID(t)
	lc.A.Log.Invoke("children %s (plain, on %s)", lc.Parent, lagging.Label)
	plain, _, err := lc.A.Session.Children(lc.Parent)
	if err != nil {
		t.Fatalf("A children: %v", err)
	}
	lc.A.Log.Ok("%v", plain)
	if route.DialsTo(lagging.Client) == 0 || lc.SessionAfter != lc.SessionBefore || seen[path.Base(created.Path)] != lc.SessionAfter ||
		slices.Contains(plain, path.Base(created.Path)) || st.Zxid >= created.Zxid {
		claims.NotShown(t, "R3", "the window is not open: A's dials to %s %d, session 0x%x (before 0x%x); O sees %v; A's plain listing there %v; its zxid %#x (the create's %#x); want A on %s in its session, lacking the node O sees",
			lagging.Label, route.DialsTo(lagging.Client), lc.SessionAfter, lc.SessionBefore, seen, plain, st.Zxid, created.Zxid, lagging.Label)
	}

	claims.Phase(t, "A recovers on %s while the COMMIT is held", lagging.Label)
	type outcome struct {
		h   *lock.Held
		err error
	}
	ctx := scene.LockCtx(t)
	res := make(chan outcome, 1)
	lc.A.Log.Invoke("recover guid=%s", lc.Guid)
	go func() { h, err := lc.A.Locker.Recover(ctx, lc.Guid); res <- outcome{h, err} }()
	var early *outcome
	tb.WaitFor(t, harness.Within, "A's Recover to return, or the leader's SYNC to be held behind the COMMIT", func() (bool, string) {
		select {
		case o := <-res:
			early = &o
			return true, ""
		default:
		}
		r := hold.Result()
		return r.Held[jute.QuorumSync] > 0, "held: " + faultproxy.Kinds(r.Held)
	})
	if early != nil {
		lc.A.Log.Fail("%s, %v", scene.HoldOf(early.h), early.err)
		claims.RefutedNow(t, "R3", "Recover returned %s, %v (missing: %v) on %s while the COMMIT of the node O sees (%s) was held there (held: %s): it listed what the follower had without waiting for the leader's commits",
			scene.HoldOf(early.h), early.err, errors.Is(early.err, lock.ErrMissing), lagging.Label, path.Base(created.Path), faultproxy.Kinds(hold.Result().Held))
	}
	waiting := hold.Result()
	lc.A.Log.Info("recover pending: the leader's SYNC for it is held behind the COMMIT (held: %s)", faultproxy.Kinds(waiting.Held))

	claims.Phase(t, "the COMMIT and what followed it reach %s", lagging.Label)
	hold.Release()
	t.Logf("nemesis release-commit %d->%d: %s delivered in order", leader.ID, lagging.ID, faultproxy.Kinds(hold.Result().Held))
	var o outcome
	select {
	case o = <-res:
	case <-time.After(harness.Within):
		claims.RefutedNow(t, "R3", "Recover did not return within %v of the release", harness.Within)
	}
	if o.err != nil {
		lc.A.Log.Fail("%v", o.err)
		claims.RefutedNow(t, "R3", "Recover after the release: %v; want the node %s", o.err, path.Base(created.Path))
	}
	lc.A.Log.Ok("%s", path.Base(o.h.Path))
	after := lc.NodesWithGUID(t)
	claims.Evidence(t, "after the lost create reply A reconnected in its session 0x%x to %s, which had logged the create at zxid %#x but not applied it (its zxid %#x; A's plain listing there: %v; let past the hold: %s); "+
		"Recover did not return while the COMMIT was held, its sync's answer was held behind it (%s), and after the release Recover adopted %s; O sees %v",
		lc.SessionAfter, lagging.Label, created.Zxid, st.Zxid, plain, faultproxy.Kinds(waiting.Passed), faultproxy.Kinds(waiting.Held), path.Base(o.h.Path), after)
	if path.Base(o.h.Path) != path.Base(created.Path) || after[path.Base(o.h.Path)] != lc.SessionAfter {
		claims.Refuted(t, "R3", "Recover adopted %s; want %s, the node O sees owned by A's session 0x%x (O sees %v)", path.Base(o.h.Path), path.Base(created.Path), lc.SessionAfter, after)
	}
	if err := o.h.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR3_AcquireSyncsBeforeListing: R3 through Acquire's own recovery, on
// the lagging follower of TestR3_RecoverSyncsBeforeListing (claim R3, §4
// ¶2, the second sentence; the sync of §2 ¶1; issue 48, item 9). Acquire
// recovers a lost create reply by itself, with the same sync as Recover:
// were it to list the parent on a follower that has not applied its
// create, it would find no node of its GUID, take the create as not made
// and create again, and its first node, the one the server made, would
// stay in the queue ahead of its second.
//
// The scene is the neighbour's, with lock.Acquire in place of A's
// hand-made create and Recover: the proxy in front of the fresh follower
// loses the reply to the create Acquire sends, A's next dial lands on the
// lagging follower, whose link from the leader holds the create's COMMIT
// and what follows it. The window is shown open when the recovery sends
// its first request (a trace hook on A's acquiring goroutine: A's own plain
// listing goes out first, on the same connection, and lacks the node O
// sees on the leader). Then Acquire must neither return nor create again
// while the COMMIT is held, its sync's answer (the leader's SYNC) is seen
// held behind it, and after the release Acquire holds the node O sees,
// owned by A's session, and A's session has no other node.
func TestR3_AcquireSyncsBeforeListing(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower that logged the create and has not applied it (a proxy holding the COMMIT on the leader's stream to it)"))
	claims.Open(t, "R3")
	c := harness.LeaseTrio(t)
	leader, fs := c.Leader(), c.Followers()
	fresh, lagging := fs[0], fs[1]
	route := &replicas.Mover{Dials: map[string]int{}}

	// What A's recipe does, as its trace says: the creates it sends, the
	// lost one's error, the requests after it, and the window as A's own
	// plain listing saw it just before the first of those went out.
	type window struct {
		first string   // the recovery's first request
		plain []string // A's plain listing, sent just before it
		err   error
	}
	var (
		mu       sync.Mutex
		creates  []string // the prefixes of A's creates: <parent>/<guid>-lock-
		after    []string // A's requests after the lost create
		lost     bool
		lookedAt bool
	)
	createErr, looked := make(chan error, 1), make(chan window, 1)
	var lr *scene.LostReply
	trace := &locktrace.Trace{
		Request: func(i locktrace.RequestInfo) {
			mu.Lock()
			if i.Op == locktrace.OpCreate {
				creates = append(creates, i.Path)
			}
			look := lost && !lookedAt
			if lost {
				after = append(after, i.Op.String())
				lookedAt = true
			}
			mu.Unlock()
			if look {
				// A's plain listing goes out once A has its session again,
				// ahead of the recovery's request, which waits for this hook.
				w := window{first: i.Op.String()}
				if w.err = tb.WaitUntil(harness.Within, "A's session again", func() (bool, string) {
					s := lr.A.Session.State()
					return s == zk.StateHasSession, s.String()
				}); w.err == nil {
					w.plain, _, w.err = lr.A.Session.Children(lr.Parent)
				}
				looked <- w
			}
		},
		Reply: func(i locktrace.ReplyInfo) {
			mu.Lock()
			first := i.Op == locktrace.OpCreate && i.Err != nil && !lost
			lost = lost || first
			mu.Unlock()
			if first {
				createErr <- i.Err
			}
		},
	}
	lr = scene.NewLostReplyAt(t, fresh, leader, scene.JoinOpts{Client: []zkclient.Option{zkclient.WithDialer(route.Dial)}, Trace: trace})
	t.Logf("A creates through a proxy in front of %s and reconnects to %s; O reads on the leader %s", fresh.Label, lagging.Label, leader.Label)
	hold := c.Links.HoldCommit(leader.ID, lagging.ID, faultproxy.TxnMatch{Types: scene.CreateOps, Under: lr.Parent, Session: lr.A.Session.SessionID()})
	route.Redirect(lagging.Client)

	type outcome struct {
		h   *lock.Held
		err error
	}
	ctx := scene.LockCtx(t)
	res := make(chan outcome, 1)
	var early *outcome
	claims.Phase(t, "the proxy loses the reply to the create of A's Acquire under %s", lr.Parent)
	drop, cerr := lr.LoseReply(t, "R3", zktest.Match{Op: zktest.Create, Under: lr.Parent}, func() error {
		lr.A.Log.Invoke("acquire")
		go func() { h, err := lr.A.Locker.Acquire(ctx); res <- outcome{h, err} }()
		select {
		case err := <-createErr:
			return err
		case o := <-res:
			early = &o
			return nil
		}
	})
	if early != nil || !errors.Is(cerr, zk.ErrConnectionClosed) {
		claims.NotShown(t, "R3", "A's create: got %v (Acquire returned early: %v); want connection loss (fault: %+v)", cerr, early != nil, drop)
	}
	select {
	case <-hold.Holding():
	case <-time.After(harness.Within):
		claims.NotShown(t, "R3", "the COMMIT of A's create was not held on its way to %s within %v: %+v", lagging.Label, harness.Within, hold.Result())
	}
	created := hold.Result()
	t.Logf("nemesis observes: %s got the proposal of %s at zxid %#x; its COMMIT is held", lagging.Label, path.Base(created.Path), created.Zxid)

	claims.Phase(t, "the window: %s has A's session and lacks A's node when the recovery begins", lagging.Label)
	var w window
	select {
	case w = <-looked:
	case o := <-res:
		claims.RefutedNow(t, "R3", "Acquire returned %s, %v after its create's lost reply without a request of its own; want its recovery", scene.HoldOf(o.h), o.err)
	case <-time.After(harness.Within):
		claims.NotShown(t, "R3", "Acquire's recovery sent no request within %v of the lost reply", harness.Within)
	}
	lr.A.Log.Info("its recovery's first request: %s; A's plain listing on %s just before it: %v (err %v)", w.first, lagging.Label, w.plain, w.err)
	lr.A.Log.Info("its dialer sent %d connection(s) to %s since the reply was lost", route.DialsTo(lagging.Client), lagging.Label)
	st, err := lagging.Srvr()
	if err != nil {
		t.Fatalf("srvr %s: %v", lagging.Label, err)
	}
	guid := strings.TrimSuffix(path.Base(creates[0]), fence.LockInfix)
	seen := scene.Carrying(t, lr.O, lr.OLog, lr.Parent, guid)
	if w.err != nil || route.DialsTo(lagging.Client) == 0 || lr.SessionAfter != lr.SessionBefore || seen[path.Base(created.Path)] != lr.SessionAfter ||
		slices.Contains(w.plain, path.Base(created.Path)) || st.Zxid >= created.Zxid {
		claims.NotShown(t, "R3", "the window is not open: A's dials to %s %d, session 0x%x (before 0x%x); O sees %v; A's plain listing there %v, %v; its zxid %#x (the create's %#x); want A on %s in its session, lacking the node O sees",
			lagging.Label, route.DialsTo(lagging.Client), lr.SessionAfter, lr.SessionBefore, seen, w.plain, w.err, st.Zxid, created.Zxid, lagging.Label)
	}

	claims.Phase(t, "A's Acquire recovers on %s while the COMMIT is held", lagging.Label)
	var again []string
	tb.WaitFor(t, harness.Within, "A's Acquire to return or create again, or the leader's SYNC to be held behind the COMMIT", func() (bool, string) {
		select {
		case o := <-res:
			early = &o
			return true, ""
		default:
		}
		mu.Lock()
		again = slices.Clone(creates[1:])
		mu.Unlock()
		r := hold.Result()
		return len(again) > 0 || r.Held[jute.QuorumSync] > 0, "held: " + faultproxy.Kinds(r.Held)
	})
	mu.Lock()
	sent := slices.Clone(after)
	mu.Unlock()
	if early != nil || len(again) > 0 {
		returned := "no"
		if early != nil {
			returned = fmt.Sprintf("%s, %v", scene.HoldOf(early.h), early.err)
		}
		lr.A.Log.Fail("returned: %s; created again: %v", returned, again)
		claims.RefutedNow(t, "R3", "got Acquire returned: %s, and created again: %v, after the lost reply (its requests since: %v) on %s while the COMMIT of the node O sees (%s) was held there (held: %s); want neither: its recovery listed what the follower had without waiting for the leader's commits",
			returned, again, sent, lagging.Label, path.Base(created.Path), faultproxy.Kinds(hold.Result().Held))
	}
	waiting := hold.Result()
	lr.A.Log.Info("acquire pending (requests since the lost create: %v): the leader's SYNC for it is held behind the COMMIT (held: %s)", sent, faultproxy.Kinds(waiting.Held))

	claims.Phase(t, "the COMMIT and what followed it reach %s", lagging.Label)
	hold.Release()
	t.Logf("nemesis release-commit %d->%d: %s delivered in order", leader.ID, lagging.ID, faultproxy.Kinds(hold.Result().Held))
	var o outcome
	select {
	case o = <-res:
	case <-time.After(harness.Within):
		claims.RefutedNow(t, "R3", "Acquire did not return within %v of the release", harness.Within)
	}
	if o.err != nil {
		lr.A.Log.Fail("%v", o.err)
		claims.RefutedNow(t, "R3", "Acquire after the release: %v; want a hold of the node %s", o.err, path.Base(created.Path))
	}
	lr.A.Log.Ok("%s", path.Base(o.h.Path))
	after2 := scene.Carrying(t, lr.O, lr.OLog, lr.Parent, guid)
	var mine []string // the nodes of A's session under the parent
	for _, k := range scene.ListChildren(t, lr.O, lr.Parent) {
		if ok, st := scene.StatOf(t, lr.O, lr.Parent+"/"+k); ok && st.EphemeralOwner == lr.SessionAfter {
			mine = append(mine, k)
		}
	}
	mu.Lock()
	made := slices.Clone(creates)
	mu.Unlock()
	claims.Evidence(t, "after the lost reply to its Acquire's create, A reconnected in its session 0x%x to %s, which had logged the create at zxid %#x but not applied it (its zxid %#x; A's plain listing there: %v; let past the hold: %s); "+
		"Acquire's recovery began with %s, did not return nor create again while the COMMIT was held, its sync's answer was held behind it (%s), and after the release Acquire holds %s; O sees %v, and A's session owns %v",
		lr.SessionAfter, lagging.Label, created.Zxid, st.Zxid, w.plain, faultproxy.Kinds(waiting.Passed), w.first, faultproxy.Kinds(waiting.Held), path.Base(o.h.Path), after2, mine)
	if path.Base(o.h.Path) != path.Base(created.Path) || after2[path.Base(o.h.Path)] != lr.SessionAfter || len(made) != 1 || len(mine) != 1 {
		claims.Refuted(t, "R3", "Acquire holds %s after creates %v, A's session owns %v; want a hold of %s, the node O sees owned by A's session 0x%x (O sees %v), its one create, its one node",
			path.Base(o.h.Path), made, mine, path.Base(created.Path), lr.SessionAfter, after2)
	}
	if err := o.h.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR3_ReleaseLooksAgainAfterALostDelete: the rule of R3 applied to the
// delete of a Release: after a connection loss the outcome is unknown, and
// the same session looks again at its own node before deciding (claim R3,
// §4 ¶2; issue 13's lost delete reply). Release reports success only once
// its node is known gone, deletes it again if it is still there, leaves a
// node of another session alone, and otherwise says that the outcome is
// unknown, which the caller settles by closing the session.
//
// A holds through the proxy; B waits on A directly. Four runs:
//   - the proxy loses the successful reply to A's delete: A's Release sees
//     a connection loss, looks again after the reconnect, finds its node
//     gone and returns nil; B holds on its own node;
//   - the delete never reaches the server (O still sees A's node while A
//     is cut off): Release finds its node still there after the reconnect
//     and deletes it again; B holds on its own node;
//   - the delete never reaches the server and A stays cut off: Release
//     returns lock.ErrOutcomeUnknown, and truly so (A's node is still there
//     and B still waits); A closes its session, and B holds;
//   - the reply is lost and, before A looks again, X (another session)
//     creates a node at A's exact path: Release leaves X's node alone and
//     returns lock.ErrLostCandidacy.
func TestR3_ReleaseLooksAgainAfterALostDelete(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R3")
	t.Run("the delete took effect and its reply was lost", func(t *testing.T) {
		lr, ha, b, pb := scene.ReleaseScene(t, scene.JoinOpts{})
		res, err := lr.LoseReply(t, "R3", zktest.Match{Op: zktest.Delete, Path: ha.Path}, func() error { return ha.Release(scene.LockCtx(t)) })
		if !res.Took {
			claims.NotShown(t, "R3", "the proxy did not lose the delete's reply: %+v", res)
		}
		releaseOutcome(t, lr, ha, b, pb, err, zh.Say("the reply to A's delete (xid=%d, err=%d) was lost", res.Xid, res.Err))
	})
	t.Run("the delete never reached the server", func(t *testing.T) {
		lr, ha, b, pb := scene.ReleaseScene(t, scene.JoinOpts{})
		var stillThere bool
		err := lr.LoseRequest(t, "R3", zktest.Match{Op: zktest.Delete, Path: ha.Path}, func() error { return ha.Release(scene.LockCtx(t)) }, func() {
			stillThere, _ = scene.StatOf(t, lr.O, ha.Path)
			lr.OLog.Info("A is cut off; A's node %s exists: %v", path.Base(ha.Path), stillThere)
		})
		if !stillThere {
			claims.NotShown(t, "R3", "A's node was gone while A was cut off; the request was not lost")
		}
		releaseOutcome(t, lr, ha, b, pb, err, zh.Say("A's delete never reached the server (O saw the node while A was cut off)"))
	})
	t.Run("the outcome stays unknown while A is cut off", releaseOutcomeUnknown)
	t.Run("another session's node took the path", func(t *testing.T) {
		x := scene.ReleaseLeavesAnotherSessionsNode(t)
		if !x.Exists || x.Owner != x.X {
			claims.Refuted(t, "R3", "A's Release removed X's node at %s (exists=%v owner=0x%x); want it left alone", x.Path, x.Exists, x.Owner)
		}
		if !errors.Is(x.ReleaseErr, lock.ErrLostCandidacy) {
			claims.Refuted(t, "R3", "A's Release returned %v; want lock.ErrLostCandidacy (A's own node is gone; the path is another session's)", x.ReleaseErr)
		}
	})
	t.Run("an abandoned candidate's delete never reached the server", func(t *testing.T) {
		a := scene.AbandonedCandidateLooksAgain(t)
		if !errors.Is(a.Err, context.Canceled) {
			t.Errorf("R3: A's acquisition returned %v; want context.Canceled", a.Err)
		}
		if a.Left {
			claims.Refuted(t, "R3", "A gave up but its candidate %s is still there: a phantom candidate in front of the next waiter", a.Node)
		}
	})
}

// TestR5_NoMatchIsMissingNotANewAcquisition: when no node carries the GUID,
// recovery says the node is missing and creates nothing; it never turns
// into a new acquisition by itself (claim R5, §4 ¶2).
//
// Through the proxy, A's create (made with a GUID A keeps, as in
// scene.LoseCreate) is lost before the server sees it (the proxy holds it,
// then cuts A's connection): A sees the same connection loss as with a
// lost reply, but O sees no node. Recover returns
// ErrMissing and the parent stays empty.
func TestR5_NoMatchIsMissingNotANewAcquisition(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R5")
	lr := scene.NewLostReply(t, scene.JoinOpts{})
	ctx := scene.LockCtx(t)
	guid := uuid.NewString() // A keeps the GUID, as the article's code does
	prefix := lr.Parent + "/" + guid + fence.LockInfix
	createErr := lr.LoseRequest(t, "R5", zktest.Match{Op: zktest.Create, Under: lr.Parent}, func() error {
		lr.A.Log.Invoke("create %s EPHEMERAL_SEQUENTIAL", prefix)
		_, err := lr.A.Session.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		return err
	}, func() {})
	if !errors.Is(createErr, zk.ErrConnectionClosed) {
		claims.NotShown(t, "R5", "A's create: got %v; want connection loss (the proxy lost the request)", createErr)
	}
	lr.A.Log.Invoke("recover guid=%s", guid)
	h, err := lr.A.Locker.Recover(ctx, guid)
	lr.A.Log.Fail("%v", err)
	kids := scene.ListChildren(t, lr.O, lr.Parent)
	claims.Evidence(t, "the create never reached the server; Recover(%s) returned hold=%v err=%v; O sees children %v", guid, h != nil, err, kids)
	if h != nil || !errors.Is(err, lock.ErrMissing) {
		claims.Refuted(t, "R5", "got %s, %v; want lock.ErrMissing", scene.HoldOf(h), err)
	}
	if len(kids) != 0 {
		claims.Refuted(t, "R5", "recovery left children %v; want none created", kids)
	}
}

// TestR1_ProxyDropsTheSuccessfulCreateReply: a create can succeed on the
// server while its client never learns the name the server gave the node
// (claim R1, §4 ¶3).
//
// The proxy records the xid of A's create, lets it through, recognises the
// reply with that xid and err=0, discards it and closes A's connection. A's
// acquisition returns a *lock.CreateError wrapping a connection loss (and
// fails at once if the create returned anything else); O sees the node on
// the server. Then the same matcher is armed for two creates of A's that
// fail (the node exists; its parent is missing): it selects each, and the
// reply passes with its error on the same connection, so what is lost is
// the successful reply, not any reply to a create.
func TestR1_ProxyDropsTheSuccessfulCreateReply(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R1")
	lc := scene.LoseCreate(t, "R1", scene.NewLostReply(t, scene.JoinOpts{}))
	seen := lc.NodesWithGUID(t)
	claims.Evidence(t, "the proxy dropped the reply xid=%d op=%s zxid=%#x err=%d (dropped=%v); A's create returned %v; O sees %d node(s) with A's GUID: %v", lc.Drop.Xid, jute.OpName(lc.Drop.Opcode), lc.Drop.Zxid, lc.Drop.Err, lc.Drop.Took, lc.CreateErr, len(seen), seen)
	// What the proxy dropped is the harness's part: a reply it did not
	// drop, or one that did not report success, is a fault of the proxy,
	// and the proof then has nothing to say about R1.
	if !lc.Drop.Took || lc.Drop.Err != 0 || lc.Drop.Xid <= 0 {
		claims.BrokenCheck(t, "R1", "got drop result %+v; want a dropped reply with err=0 and a positive xid", lc.Drop)
	}
	if len(seen) != 1 {
		claims.Refuted(t, "R1", "the server holds %d nodes with A's GUID; want 1 (the create succeeded)", len(seen))
	}
	claims.Phase(t, "the same matcher on A's creates that fail: their replies carry an error and pass")
	taken := lc.Parent + "/taken"
	scene.CreateAs(t, lc.O, lc.OLog, taken)
	for _, f := range []struct {
		why  zh.Text
		path string
		want error
		code int32 // the reply header's err, as the server's KeeperException.Code numbers it
	}{
		{zh.Say("the node exists"), taken, zk.ErrNodeExists, -110},
		{zh.Say("its parent is missing"), lc.Parent + "/missing/child", zk.ErrNoNode, -101},
	} {
		accepted := lc.Proxy.Accepted()
		res, err := lc.LoseReply(t, "R1", zktest.Match{Op: zktest.Create, Under: lc.Parent}, func() error {
			lc.A.Log.Invoke("create %s (%s)", f.path, f.why)
			_, err := lc.A.Session.Create(f.path, nil, 0, zk.WorldACL(zk.PermAll))
			lc.A.Log.Fail("%v", err)
			return err
		})
		claims.Evidence(t, "A's create of %s (%s) matched the same fault: xid=%d op=%s err=%d dropped=%v (%s); A got %v; the proxy accepted %d connection(s) before, %d after", path.Base(f.path), f.why, res.Xid, jute.OpName(res.Opcode), res.Err, res.Took, res.Why, err, accepted, lc.Proxy.Accepted())
		if res.Xid <= 0 || res.Path != f.path {
			claims.NotShown(t, "R1", "the matcher did not select A's create of %s (drop result %+v); the failing reply was not put to it", f.path, res)
		}
		if res.Took || res.Err != zk.ErrCode(f.code) || !errors.Is(err, f.want) {
			claims.Refuted(t, "R1", "A's create of %s (%s): got %v, drop result dropped=%v err=%d; want %v passed through with err=%d (only a successful reply is lost)", f.path, f.why, err, res.Took, res.Err, f.want, f.code)
		}
		if n := lc.Proxy.Accepted(); n != accepted || lc.SessionAfter != lc.SessionBefore {
			claims.Refuted(t, "R1", "A's failed create of %s cost a connection: got %d accepted (was %d), session 0x%x (was 0x%x); want the same connection", f.path, n, accepted, lc.SessionAfter, lc.SessionBefore)
		}
	}
}

// TestR2_SessionSurvivesTheLostReply: after the lost reply A reconnects
// through the proxy and its session id is unchanged (claim R2, §4 ¶3).
func TestR2_SessionSurvivesTheLostReply(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R2")
	lc := scene.LoseCreate(t, "R2", scene.NewLostReply(t, scene.JoinOpts{}))
	accepted := lc.Proxy.Accepted()
	claims.Evidence(t, "A's session before the create 0x%x, after reconnecting 0x%x; the proxy accepted %d connections", lc.SessionBefore, lc.SessionAfter, accepted)
	// A reconnection through the proxy is the scenario, not the claim: it
	// is checked first, so a run without one is not shown.
	if accepted < 2 {
		claims.BrokenCheck(t, "R2", "the proxy accepted %d connections; want a reconnection (>= 2)", accepted)
	}
	if lc.SessionAfter != lc.SessionBefore || lc.SessionAfter == 0 {
		claims.Refuted(t, "R2", "session 0x%x after reconnecting; want the same 0x%x", lc.SessionAfter, lc.SessionBefore)
	}
}

// TestE5_ProxyCodecAgreesWithOfficialJute proves that the proxy's Jute codec
// (internal/server/jute) agrees with the official Jute classes of the server's own
// jar, which the article's proxy used. Every record the proxy reads or
// writes (juteoracle.Kinds: the request header, the create body, createTTL's
// body read as a create, the reply header, and on the server-to-server
// links the leader's QuorumPacket and a proposal's TxnHeader) is checked on
// edge cases built from its Go type, both ways: the official classes encode
// and Go decodes the same fields; Go encodes and the official classes
// decode the same fields; the two encodings are equal byte for byte. The real frames of
// testdata/jute then go to both decoders as they are, and the handshake
// frames, which the proxy forwards unread, must be exactly what the
// official ConnectRequest and ConnectResponse read. FuzzJuteAgreesWithOfficial
// in internal/server/jute does the same on fuzzed bytes. It runs beside
// the other parallel tests: it compares bytes, and times nothing.
func TestE5_ProxyCodecAgreesWithOfficialJute(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "E5")
	if harness.Backend.Kind == "" {
		claims.Skip(t, "E5 compares with the jar of the server under test, and no backend resolved: %v", harness.NoServer)
	}
	if harness.VersionErr != nil {
		claims.Skip(t, "skipped: E5 compares with the jar of the server's version, read with srvr; %v", harness.VersionErr)
	}
	o := juteoracle.Start(t, harness.Backend)
	claims.Phase(t, "oracle: %s; ZooKeeper %s on Java %s; jar %v, javac %v, JVM start %v",
		o.Jar.From, o.About.Version, o.About.Java, o.JarTime.Round(time.Millisecond), o.JavacTime.Round(time.Millisecond), o.JVMTime.Round(time.Millisecond))
	juteJar := path.Base(o.About.Sources["org.apache.jute.BinaryInputArchive"])
	for _, k := range juteoracle.Kinds {
		t.Logf("class %s from %s", k.Class, o.About.Sources[k.Class])
	}
	if harness.Backend.Kind == zkserver.External && harness.JarVersion(o) != harness.Version.Version {
		claims.Skip(t, "skipped: E5 compares with the jar of the server under test; the local jar is ZooKeeper %q and the external server answers srvr with %q: set ZK19_ZOOKEEPER_JAR to a jar of the server's version", o.About.Version, harness.Version.Version)
	}
	if harness.JarVersion(o) != harness.Version.Version {
		claims.NotShown(t, "E5", "the jar is ZooKeeper %q; the server under test answers srvr with %q; want the server's own jar", o.About.Version, harness.Version.Version)
	}

	claims.Phase(t, "Go records, both ways: official encode -> Go decode, Go encode -> official decode, encodings equal")
	records, cesu := 0, 0
	for i := range juteoracle.Kinds {
		k := &juteoracle.Kinds[i]
		for _, c := range juteoracle.Cases(k) {
			r, err := o.CheckValue(k, c.Value)
			if err != nil {
				t.Fatalf("E5 %s, case %s: %v", k.Name, c.Name, err)
			}
			records++
			if r.Note == "" {
				t.Logf("check %s %s: ok, %d bytes, same fields both ways, same bytes", k.Name, c.Name, r.Bytes)
				continue
			}
			cesu++
			t.Logf("check %s %s: ok, %d bytes, same fields both ways; %s", k.Name, c.Name, r.Bytes, r.Note)
		}
	}
	records += harness.CheckCapturedFrames(t, o)

	claims.Phase(t, "constants: opcodes and special xids")
	missing, n, err := o.CheckConstants()
	if err != nil {
		t.Fatalf("E5: %v", err)
	}
	t.Logf("check constants: ok, %d Go opcodes and xids equal the jar's; opcodes the Go table does not name: %v", n, missing)
	bytesNote := zh.Say("and every encoding is byte-for-byte the official one")
	if cesu > 0 {
		bytesNote = zh.Say("and every encoding is byte-for-byte the official one except in %d records with characters outside the BMP, which the official BinaryOutputArchive writes as CESU-8 and Go as UTF-8 (the official decoder reads Go's bytes back right, and its own as U+FFFD)", cesu)
	}
	whose := zh.Say("the server's own")
	if harness.Backend.Kind == zkserver.External {
		whose = zh.Say("a local jar of the external server's version")
	}
	claims.Evidence(t, "%d records, %d kinds, both directions, agree with org.apache.jute from %s (ZooKeeper %s, %s: srvr says %s), %s; "+
		"the handshake frames the proxy forwards unread are exactly the official ConnectRequest and ConnectResponse; %d opcodes and xids agree",
		records, len(juteoracle.Kinds), juteJar, harness.JarVersion(o), whose, harness.Version.Version, bytesNote, n)
}

// TestR7_ProxyReadsHeadersAndTheCreateRequestOnly: the proxy learns the
// target xid from the request header and the CreateRequest's path, and the
// outcome from the reply header (xid, zxid, err); it has no decoder for the
// create's response body, so recovery cannot learn the path from it. The
// first frame of each connection, the session handshake, passes unread
// (claim R7, §4 ¶4). The frame decoders are fuzzed in
// internal/server/jute, and internal/server/faultproxy's TestZKNeverDecodesCreateReplyBody
// and TestZKFirstFrameIsNeverParsed check both properties byte by byte.
//
// Here, end to end: the dropped reply belongs to the create, on A's first
// connection, with a small request xid (a handshake read as a header would
// have shifted every later frame). The path in the proxy's record is the
// prefix A's create sent, never the name the server gave the node, and
// nothing else the proxy reports contains that name's sequence suffix.
func TestR7_ProxyReadsHeadersAndTheCreateRequestOnly(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R7")
	lc := scene.LoseCreate(t, "R7", scene.NewLostReply(t, scene.JoinOpts{}))
	seen := lc.NodesWithGUID(t)
	if len(seen) != 1 {
		claims.NotShown(t, "R7", "O sees %v; want the one created node", seen)
	}
	var created string
	for name := range seen {
		created = name
	}
	report := fmt.Sprintf("%+v", lc.Drop)
	sent := lc.Parent + "/" + lc.Guid + fence.LockInfix
	claims.Evidence(t, "the proxy's record names the path %s, the prefix A sent, not the node %s the server made; whole record: %s", path.Base(lc.Drop.Path), created, report)
	if lc.Drop.Path != sent {
		claims.Refuted(t, "R7", "the proxy's record names path %q; want the prefix A's create sent, %q", lc.Drop.Path, sent)
	}
	if !jute.IsCreate(lc.Drop.Opcode) {
		claims.Refuted(t, "R7", "the dropped reply belongs to op %s; want a create", jute.OpName(lc.Drop.Opcode))
	}
	if lc.Drop.Conn != 1 {
		claims.BrokenCheck(t, "R7", "the drop happened on connection #%d; want #1 (the create's own connection)", lc.Drop.Conn)
	}
	// go-zookeeper numbers requests from 1 per session; the handshake has
	// no xid.
	if lc.Drop.Xid < 1 || lc.Drop.Xid > 10 {
		claims.Refuted(t, "R7", "target xid %d; want a small request xid", lc.Drop.Xid)
	}
	if suffix := created[strings.LastIndex(created, fence.LockInfix):]; strings.Contains(report, suffix) {
		claims.Refuted(t, "R7", "the proxy's report %s contains the created node's sequence suffix %s: it read the reply body", report, suffix)
	}
}

// TestR4_BlindRetryMakesASecondNodeAndRecoveryRefuses: retrying the same
// create after the lost reply makes a second node, because sequential
// creates are not deduplicated by name; recovery then finds two matches in
// this session and refuses, naming both and adopting neither; it deletes
// both, since they are its own session's and no hold owns them, so that
// neither blocks the queue (claim R4, §4 ¶5; §4 ¶2 forbids deleting other
// candidates, and none of another session's is touched).
func TestR4_BlindRetryMakesASecondNodeAndRecoveryRefuses(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R4")
	lc := scene.LoseCreate(t, "R4", scene.NewLostReply(t, scene.JoinOpts{}))
	scene.BlindRetry(t, lc)
	before := lc.NodesWithGUID(t)
	if len(before) != 2 {
		claims.RefutedNow(t, "R4", "%d nodes carry the GUID after the retry; want 2", len(before))
	}
	lc.A.Log.Invoke("recover guid=%s", lc.Guid)
	h, err := lc.A.Locker.Recover(scene.LockCtx(t), lc.Guid)
	lc.A.Log.Fail("%v", err)
	after := lc.NodesWithGUID(t)
	claims.Evidence(t, "after a blind retry O sees %d nodes with the GUID; Recover returned hold=%v err=%v; O then sees %d", len(before), h != nil, err, len(after))
	if h != nil || !errors.Is(err, lock.ErrAmbiguous) {
		claims.Refuted(t, "R4", "Recover returned %s, %v; want lock.ErrAmbiguous", scene.HoldOf(h), err)
	}
	for name := range before {
		if err == nil || !strings.Contains(err.Error(), name) {
			claims.Refuted(t, "R4", "the ambiguity error %q does not name %s", err, name)
		}
	}
	if len(after) != 0 {
		claims.Refuted(t, "R4", "recovery left %v; want both of A's nodes deleted: neither is adopted, no hold owns them, and they would block the queue", after)
	}
}

// TestR8_AfterExpiryTheOldNodeGivesNoCandidacy: once A's session has
// expired, its node is gone and nothing of the old acquisition counts: the
// old hold's release says the session changed (lock.ErrSessionChanged);
// in the session the client opened by itself, Recover of the old GUID
// finds no node (lock.ErrMissing); and the same Locker's next acquisition
// runs in the new session with a GUID other than the old one (claim R8,
// §4 ¶5).
//
// Dedicated server with a short tick; A holds through a client proxy with
// a short session. The proxy cuts A off until O sees the server delete A's
// node, then lets A through: A's client sees Expired and a new session.
func TestR8_AfterExpiryTheOldNodeGivesNoCandidacy(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "R8")
	s := harness.ExpiryServer(t)
	r := scene.NewScene(t, []string{s.Client})
	O, ctx := r.O, r.Ctx
	p := zkserver.ClientProxy(t, "A-proxy", s)
	a := r.Join("A", scene.JoinOpts{Via: []string{p.Addr()}, Client: []zkclient.Option{zkclient.WithSessionTimeout(harness.ExpirySessionTimeout)}})
	h := a.Acquire()
	_, _, gone, err := O.ExistsW(h.Path)
	if err != nil {
		t.Fatal(err)
	}
	claims.Phase(t, "A is cut off; its session expires on the server")
	old, mark := a.Session.SessionID(), a.Session.Mark()
	p.Cut(faultproxy.BothEnds)
	t.Cleanup(p.Heal)
	ev := tb.Receive(t, 10*harness.ExpirySessionTimeout, "R8: the deletion of A's node", gone)
	r.OLog.Ok("event %v on %s: A's node deleted by the server", ev.Type, ev.Path)
	p.Heal()
	for _, st := range []zk.State{zk.StateExpired, zk.StateHasSession} {
		if err := a.Session.WaitStateSince(mark, st, zkclient.ConnectWithin); err != nil {
			claims.NotShown(t, "R8", "%v", err)
		}
	}
	a.Log.Info("expired; the client opened session %s by itself (old 0x%x)", a.Session.SessionHex(), old)

	claims.Phase(t, "the same Locker in the new session")
	rel := h.Release(ctx)
	a.Log.Fail("release of the old hold: %v", rel)
	if !errors.Is(rel, lock.ErrSessionChanged) {
		claims.Refuted(t, "R8", "release of the old hold in the new session returned %v; want lock.ErrSessionChanged", rel)
	}
	a.Log.Invoke("recover guid=%s (the old acquisition's GUID)", h.GUID)
	hr, rerr := a.Locker.Recover(ctx, h.GUID)
	a.Log.Fail("%v", rerr)
	if hr != nil || !errors.Is(rerr, lock.ErrMissing) {
		claims.Refuted(t, "R8", "the new session's Recover of the old GUID returned %s, %v; want lock.ErrMissing (the old node went with its session)", scene.HoldOf(hr), rerr)
	}
	h2, err := a.Locker.Acquire(ctx)
	if err != nil {
		t.Fatalf("new acquisition: %v", err)
	}
	ok, st := scene.StatOf(t, O, h2.Path)
	oldLeft, _ := scene.StatOf(t, O, h.Path)
	claims.Evidence(t, "after expiry the old hold's release: %v; in the new session, Recover of the old GUID: %v; a new acquisition holds %s with GUID %s (old %s), owner 0x%x; the old node exists: %v", rel, rerr, path.Base(h2.Path), h2.GUID, h.GUID, st.EphemeralOwner, oldLeft)
	if h2.GUID == h.GUID {
		claims.Refuted(t, "R8", "the new acquisition reused GUID %s; want a new one", h.GUID)
	}
	if !ok || st.EphemeralOwner != a.Session.SessionID() || oldLeft {
		claims.Refuted(t, "R8", "new node owner 0x%x (want the new session %s); old node exists: %v", st.EphemeralOwner, a.Session.SessionHex(), oldLeft)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// releaseOutcome judges a Release that met a lost delete: it succeeded,
// A's node is gone, and B holds on its own node.
func releaseOutcome(t *testing.T, lr *scene.LostReply, ha *lock.Held, b *scene.Contender, pb *scene.Acquisition, releaseErr error, what zh.Text) {
	t.Helper()
	aLeft, _ := scene.StatOf(t, lr.O, ha.Path)
	if releaseErr != nil {
		claims.Refuted(t, "R3", "Release returned %v; want nil once the own node is known gone", releaseErr)
	}
	if aLeft {
		claims.RefutedNow(t, "R3", "A's node %s is still there after Release returned %v: a phantom holder in front of B", ha.Path, releaseErr)
	}
	hb, berr := pb.ResultOr(claims.RefutedNow)
	var bOwner int64
	if hb != nil {
		_, st := scene.StatOf(t, lr.O, hb.Path)
		bOwner = st.EphemeralOwner
	}
	claims.Evidence(t, "%s; A's Release returned %v in session 0x%x (before 0x%x); A's node is gone; B holds: %v (%v), its node owned by 0x%x", what, releaseErr, lr.SessionAfter, lr.SessionBefore, hb != nil, berr, bOwner)
	if berr != nil || bOwner != b.Session.SessionID() {
		claims.Refuted(t, "R3", "B did not hold on its own node after A's Release: %v, owner 0x%x", berr, bOwner)
	}
}

// releaseOutcomeUnknown: A's delete never reaches the server, and A stays
// cut off until its Release's context ends (scene.ReleaseCutOff). What
// Release says must match the server: A's node is still there, so success
// would make it a phantom holder. Nobody acts after that: once A is back in
// its session, the recipe deletes the node by itself (Held.Gone), and B
// holds.
func releaseOutcomeUnknown(t *testing.T) {
	c := scene.ReleaseCutOff(t, claims.RefutedNow)
	// The lost delete is the scenario: without it Release's answer says
	// nothing about R3, so it is checked first.
	if !c.ALeft || c.PB.Finished() || !c.BWaits.Waiting {
		claims.NotShown(t, "R3", "while A was cut off its node exists=%v and B finished=%v; want the node there and B waiting (the delete was lost)", c.ALeft, c.PB.Finished())
	}
	if !errors.Is(c.ReleaseErr, lock.ErrOutcomeUnknown) {
		claims.Refuted(t, "R3", "A's Release, cut off with its delete lost, returned %v; want lock.ErrOutcomeUnknown", c.ReleaseErr)
	}
	if c.SessionAfter != c.SessionBefore {
		claims.NotShown(t, "R3", "A came back in session 0x%x, not 0x%x: the node went with the old session, not by the recipe", c.SessionAfter, c.SessionBefore)
	}

	claims.Phase(t, "nobody acts: A is back in session 0x%x, and the recipe finishes its own delete", c.SessionAfter)
	select {
	case <-c.HA.Gone():
	case <-time.After(3 * harness.Within):
		claims.RefutedNow(t, "R3", "A's Gone still open %v after A was back in its session; want the recipe to finish its delete", 3*harness.Within)
	}
	if ok, _ := scene.StatOf(t, c.O, c.HA.Path); ok {
		claims.RefutedNow(t, "R3", "A's Gone closed with A's node %s still there and A's session 0x%x open: a lock nobody holds and nobody frees", path.Base(c.HA.Path), c.A.Session.SessionID())
	}
	hb, berr := c.PB.ResultOr(claims.RefutedNow)
	var bOwner int64
	if hb != nil {
		_, st := scene.StatOf(t, c.O, hb.Path)
		bOwner = st.EphemeralOwner
	}
	claims.Evidence(t, "A's delete never reached the server and A stayed cut off: Release returned %v while O saw A's node (exists=%v) and B waiting; with nobody acting and A's session 0x%x still open, A's node was gone once Gone closed, and B holds=%v on its own node (owner 0x%x, B 0x%x)", c.ReleaseErr, c.ALeft, c.A.Session.SessionID(), hb != nil, bOwner, c.B.Session.SessionID())
	if berr != nil || bOwner != c.B.Session.SessionID() {
		claims.Refuted(t, "R3", "after A's node was gone by the recipe, B: %v, owner 0x%x; want B holding its own node", berr, bOwner)
	}
}

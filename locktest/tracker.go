package locktest

// Peer scenarios taken from the recipes' own bug trackers. Each one builds
// what its thread describes with a proxy fault instead of luck, and runs it
// on every recipe, judged as the other scenarios are: one holder, on a node
// of its own session, and the truth about whether it holds.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/peer"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// peerForeignChildSortsFirst (CURATOR-43, "Acquire gets stuck in
// InterProcessMutex if there are sub-nodes in lock path"): another lock
// whose path is inside this lock's dir, as the thread's test does with
// LOCK_PATH + "/0", leaves a persistent child "0" there. It is no
// candidate: a lock must hold past it, or refuse cleanly; waiting on it is
// waiting for ever, since nothing will delete it.
func peerForeignChildSortsFirst(sc *peerScene) peerCell {
	sc.o.Invoke("create %s/0 (persistent: the dir of a lock on %s/0)", sc.dir, sc.dir)
	if _, err := sc.O.Create(sc.dir+"/0", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		sc.t.Fatalf("create %s/0: %v", sc.dir, err)
	}
	sc.o.Ok("")
	w := sc.join("W", 0)
	tw := w.acquire(0)
	src := map[string][2]string{
		// parseSeq takes "0" for sequence 0: the lowest.
		recipeGoZK: {"lock.go:109-113", "s, err := parseSeq(p)"},
		// A name without "lock-" is ordered by the whole name: "0"
		// before "0000000000".
		recipeCurator: {curatorLocks + "StandardLockInternalsDriver.java:66-74", "return str;"},
	}
	if watched := sc.settle(w, tw); watched != "" {
		if watched == "0" {
			return broke(sc.citeFrom(src), "waits on the persistent `0`, which nothing will delete: stuck")
		}
		return broke("", "waits on %s", watched)
	}
	held := func() peerCell { return kept("held past the foreign child") }
	return sc.judgeReturn(w, tw, src, held, "refused: %s", errOursHolds)
}

// peerLostLookupAfterLostCreate (go-zookeeper, samuel/go-zookeeper#229,
// "clients contending for distributed lock get into deadlock state during
// network partition failure"): W's create takes effect and its reply is
// lost; W is cut off; when it is back, the reply to the look-up that would
// find the node again (getChildren of the dir) is lost too. The session
// survives both. A lock must end up holding its own node, or give up
// without leaving it: a node of a live session that nobody will delete
// blocks the lock for every contender.
func peerLostLookupAfterLostCreate(sc *peerScene) peerCell {
	w := sc.join("W", 0)
	tw, _ := sc.loseCreateReply(w, true)
	m := faultproxy.Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: sc.dir}
	lookup := w.proxy().LoseReply(m)
	newActor(sc.t, w.who()).Info("the proxy will lose the reply to W's %s", m)
	w.proxy().Heal()
	sc.result(tw, peerCallWithin)
	lookup.Cancel()
	res := lookup.Result()
	if !res.Dropped {
		sc.t.Fatalf("W's look-up: got %+v; want the reply to its getChildren of %s lost (the scene cannot be made without it)", res, sc.dir)
	}
	mine := sc.outlives(w, w.session(), harness.Within)
	switch {
	case tw.held && len(mine) == 1 && (tw.node == "" || tw.node == mine[0]):
		sc.releaseNow(w)
		// Curator: the look-up is itself a retried call.
		return sc.curatorBecause(kept("held its own node, found again by a look-up retried"),
			curatorImps+"CreateBuilderImpl.java:1289-1303", "foundNode = findNode(children, pathAndNode.getPath(), protectedMode.protectedId());")
	case tw.held:
		return broke("", "held %s with nodes %v of its session", orUnsaid(tw.node), mine)
	case len(mine) > 0:
		return broke(sc.citeFrom(map[string][2]string{
			recipeGoZK: {"conn.go:1149-1153", "children, _, err := c.Children(rootPath)"},
		}), "failed (%s) and left its node %v in the queue, owned by its live session: the lock is stuck for everyone", brief(tw.err), mine)
	}
	return sc.oursMust(kept("gave up cleanly: %s", brief(tw.err)), tw.err, errOursHolds)
}

// peerGiveUpCleanupRequestLost (kazoo, python-zk/kazoo#732,
// "Non-blocking lock acquisition failure can leak the ephemeral lock node",
// and its fix in #760): W gives up waiting on H by its timeout, and its
// cleanup delete never reaches the server: the proxy loses the request and
// the connection with it. The session survives. W's node must not outlive
// the reconnect: a recipe that swallows the failed delete leaves a node of
// a live session, an orphan that blocks the lock once H goes.
func peerGiveUpCleanupRequestLost(sc *peerScene) peerCell {
	return sc.giveUpLosingCleanup((*faultproxy.Proxy).LoseRequest, "the request of", map[string][2]string{
		// The cleanup's failure is swallowed.
		recipeKazoo: {"recipe/lock.py:336-342", "except KazooException:  # pragma: nocover"},
	})
}

// releaseCut is how long W's release may run with W cut off: longer than
// Curator's RetryLoop takes to give up on a delete (four tries of its 2 s
// connection timeout, with backoff between them), shorter than the session.
const (
	releaseCut            = 15 * time.Second
	releaseSessionTimeout = 30 * time.Second
)

// peerReleaseWhileCutOff (CURATOR-678, "InterProcessMutex#release
// caused inconsistency between zk node and local cache if encountering zk
// connection lost"): W holds and is cut off before it releases, so its
// delete cannot reach the server; the session (30 s) outlives the cut. A
// failed release must not leave a lock that nobody holds and nobody frees:
// once W is back, the node must go, by the recipe itself or by what its
// failure lets the caller do (release again while the lock object still
// holds). Ours is owed no step: its Release finishes its own delete once W
// is back, also after its context ended (Held.Gone). A lock object that
// forgets the hold, with no way left to delete its node short of the
// session's end, breaks it: every later acquisition waits behind the node.
func peerReleaseWhileCutOff(sc *peerScene) peerCell {
	w, node, sess, mark := sc.holdThenCut(releaseSessionTimeout, "the hold is what W releases")
	px := w.proxy()
	returned, rerr := sc.releaseCutOff(w)
	believes := sc.holdsNow(w)
	_, stayed := sc.owners()[node]
	sc.o.Info("after the release: W's node %s still there: %v; the lock object says it holds: %s", node, stayed, believes)
	px.Heal()
	if !returned {
		rerr = sc.releaseReturns(w)
	}
	if err := w.reconnected(mark); err != nil {
		sc.t.Fatalf("W: %v", err)
	}
	outcome := zh.Say("release %s; then the lock object says it holds: %s", releaseSaid(returned, rerr), believes)
	if left := sc.outlives(w, sess, harness.Within); len(left) == 0 {
		return sc.nextAcquisition(w, zh.Say("%s; its node was gone once it was back", outcome), stayed, believes)
	}
	did := sc.followUpRelease(w, rerr, believes)
	if did.En == "" {
		return broke(sc.citeFrom(map[string][2]string{
			// The thread's entry goes in a finally, whatever the delete did.
			recipeCurator: {curatorLocks + "InterProcessMutex.java:152-159", "threadData.remove(currentThread);"},
		}), "%s; its node stayed %v after the reconnect, and the lock object left no way to delete it: a lock nobody holds and nobody frees", outcome, harness.Within)
	}
	if left := sc.outlives(w, sess, harness.Within); len(left) > 0 {
		return broke("", "%s; %s, and its node still stayed: a lock nobody frees", outcome, did)
	}
	return sc.nextAcquisition(w, zh.Say("%s; %s, and the node went", outcome, did), stayed, believes)
}

// releaseCutOff runs w's release while w is cut off and waits for it for
// releaseCut at most: it reports whether it returned, and its error.
func (sc *peerScene) releaseCutOff(w peerLock) (returned bool, err error) {
	sc.t.Helper()
	a := newActor(sc.t, w.who())
	a.Invoke("release (cut off)")
	rel := make(chan error, 1)
	go func() {
		said, err := w.release()
		a.Info("release said %q%s", said, errSuffix(err))
		rel <- err
	}()
	sc.pendingRelease = rel
	select {
	case err = <-rel:
		return true, err
	case <-time.After(releaseCut):
		a.Info("release still running after %v cut off", releaseCut)
		return false, nil
	}
}

// releaseReturns waits for the release releaseCutOff left running.
func (sc *peerScene) releaseReturns(w peerLock) error {
	sc.t.Helper()
	select {
	case err := <-sc.pendingRelease:
		return err
	case <-time.After(peerCallWithin):
		sc.t.Fatalf("%s's release did not return %v after the heal", w.who(), peerCallWithin)
		return nil
	}
}

// followUpRelease does what a failed release lets the caller do about a
// node that stayed: release again where the lock object still holds (or,
// for zk.Lock, which cannot be asked, keeps its path). Ours is owed no
// step: its contract is that the recipe finishes its own cleanup. It says
// what it did ("" for nothing possible).
func (sc *peerScene) followUpRelease(w peerLock, rerr error, believes zh.Text) (did zh.Text) {
	sc.t.Helper()
	a := newActor(sc.t, w.who())
	switch w.(type) {
	case *oursLock:
		return did
	case *gozkLock:
		if rerr == nil {
			return did
		}
	default:
		if !strings.HasPrefix(believes.En, "yes") {
			return did
		}
	}
	a.Invoke("release again")
	said, err := w.release()
	a.Info("%q%s", said, errSuffix(err))
	return zh.Say("a second release: %s", releaseSaid(true, err))
}

// nextAcquisition has w acquire again, once its node has gone: it must
// hold. The cell names Curator's guaranteed delete where that is what
// removed the node.
func (sc *peerScene) nextAcquisition(w peerLock, outcome zh.Text, stayed bool, believes zh.Text) peerCell {
	sc.t.Helper()
	t2 := w.acquire(0)
	if sc.result(t2, peerCallWithin); !t2.held {
		return broke("", "%s, but the next acquisition failed: %s", outcome, brief(t2.err))
	}
	sc.releaseNow(w)
	c := kept("%s, and the next acquisition held", outcome)
	if stayed && !strings.HasPrefix(believes.En, "yes") {
		// Curator forgot at once; the failed delete, a guaranteed one,
		// was queued and removed the node after the reconnect.
		c = sc.curatorBecause(c, curatorImps+"DeleteBuilderImpl.java:345-352", "client.getFailedDeleteManager().addFailedOperation(unfixedPath);")
	}
	return c
}

// releaseSaid words a release's outcome for a cell.
func releaseSaid(returned bool, err error) zh.Text {
	switch {
	case err != nil:
		return zh.Say("raised %s", brief(err))
	case !returned:
		return zh.Say("waited for the connection, then returned")
	}
	return zh.Say("returned")
}

// holdsNow is the lock object's own account of whether it holds, in the
// recipe's terms: "yes …" or "no …".
func (sc *peerScene) holdsNow(w peerLock) zh.Text {
	sc.t.Helper()
	switch l := w.(type) {
	case *oursLock:
		h := l.hold()
		if h == nil {
			return zh.Say("no (nothing held)")
		}
		select {
		case <-h.Lost():
			return zh.Say("no (Lost closed)")
		default:
			return zh.Say("yes (Lost open)")
		}
	case *driverLock:
		li, err := l.isAcquired()
		if err != nil {
			return zh.Say("unknown (%s)", brief(err))
		}
		if li.Owned != nil {
			if li.IsAcquired || *li.Owned {
				return zh.Say("yes (isAcquiredInThisProcess %v, isOwnedByCurrentThread %v)", li.IsAcquired, *li.Owned)
			}
			return zh.Say("no (isAcquiredInThisProcess false, isOwnedByCurrentThread false)")
		}
		if li.IsAcquired {
			return zh.Say("yes (is_acquired true)")
		}
		return zh.Say("no (is_acquired false)")
	case *goLock:
		if l.l.Held() {
			return zh.Say("yes (Held)")
		}
		return zh.Say("no (Held false)")
	case *gozkLock:
		return zh.Say("unknown (zk.Lock has no way to ask)")
	}
	return zh.Say("unknown")
}

// peerStaleSessionNode (CURATOR-604, "Double locking issue while using
// InterProcessMutex lock code"): W waits behind H; W is cut off, and its
// client, after a session timeout of silence, may give the session up and
// open a new one, while the server still keeps the old session and W's
// node (the proxy resumes the old session on a connection of its own and
// pings it: the window before the server cleans up, held open). Let
// through, W goes on; H goes. A lock that takes the old session's node for
// its own now holds on a node that the old session's expiry deletes: then
// a second holder, B, gets in. Clients that resume their old session (the
// server still has it) hold on a node of their own live session.
func peerStaleSessionNode(sc *peerScene) peerCell {
	holder, w, tw := sc.waiterBehindHolderFor(harness.ExpirySessionTimeout)
	own := sc.onlyNode(w)
	old := w.session()
	mark := w.mark()
	px := w.proxy()
	sess := sessionOf(sc.t, px, old)
	if window := staleWindowPings * sess.Timeout / 3; window > staleWindowWithin {
		// Only a server that grants a longer timeout than asked (the
		// external backend's own tickTime) gets here.
		sc.skip(sc.t.TB, zh.Say("skipped: the server granted W a session timeout of %v; the stale window is %d keeper pings, one every %v, %v in all, beyond the %v the scene waits: lower tickTime or minSessionTimeout", sess.Timeout, staleWindowPings, sess.Timeout/3, window, staleWindowWithin))
	}
	px.Cut(faultproxy.BothEnds)
	sc.t.Cleanup(px.Heal)
	k, err := px.KeepSession(sess)
	if err != nil {
		sc.t.Fatalf("keeping W's session %s: %v", old, err)
	}
	sc.t.Cleanup(k.Stop)
	sc.o.Info("W cut off; the proxy keeps W's session %s (and its node %s) alive on the server", old, own)
	sc.staleWindow(w, k)
	px.Heal()
	if err := w.reconnected(mark); err != nil {
		sc.t.Fatalf("W: %v", err)
	}
	now := w.session()
	sc.o.Info("W is back in session %s (was %s); the keeper: %s", now, old, orOpen(k.Why()))
	sc.remove(holder)
	sc.result(tw, peerCallWithin)
	if !tw.held {
		if left := sc.ownedBy(now); len(left) > 0 {
			return broke("", "failed (%s) and left %v in the queue", brief(tw.err), left)
		}
		return sc.oursMust(kept("no hold (%s)", brief(tw.err)), tw.err, errOursHolds)
	}
	owner := sc.owners()[own]
	if owner == now {
		sc.releaseNow(w)
		return kept("held on its node, in its resumed session %s", now)
	}
	// W holds on a node its client's session does not own: let the old
	// session go, and see whether another contender gets in.
	k.Stop()
	return sc.secondHolder(w, own, owner, old, now)
}

// secondHolder waits for the expiry of W's previous session old, whose
// node own W holds on (owner: own's owner, now: W's session), then has B
// acquire: a second holder while W's lock object still says it holds
// breaks the guarantee.
func (sc *peerScene) secondHolder(w peerLock, own, owner, old, now string) peerCell {
	sc.t.Helper()
	tb.WaitFor(sc.t, 10*harness.ExpirySessionTimeout, "the server to expire W's previous session and delete "+own, func() (bool, string) {
		_, there := sc.owners()[own]
		return !there, "still there"
	})
	sc.o.Info("W's previous session %s expired: its node %s deleted", old, own)
	b := sc.join("B", harness.ExpirySessionTimeout)
	tb := b.acquire(0)
	if watched := sc.settle(b, tb); watched != "" {
		return broke("", "held on its previous session's node %s (owner %s, its session now %s); B waits on %s", own, owner, now, watched)
	}
	sc.result(tb, harness.Within)
	believes := sc.holdsNow(w)
	if tb.held && !strings.HasPrefix(believes.En, "no") {
		sc.releaseNow(b)
		return broke(sc.citeFrom(map[string][2]string{
			// Its own name is looked up in the listing; its owner never.
			recipeCurator: {curatorLocks + "LockInternals.java:284-288", "PredicateResults    predicateResults = driver.getsTheLock(client, children, sequenceNodeName, maxLeases);"},
		}), "two holders: W held on its previous session's node %s (owner %s, its session now %s), the expiry deleted it, B then held, and W's lock object still says it holds: %s",
			own, owner, now, believes)
	}
	return broke("", "held on its previous session's node %s (owner %s, its session now %s); B: %s; W says it holds: %s", own, owner, now, heldOrErr(tb), believes)
}

// orOpen is why the keeper's connection ended, or that it is open.
func orOpen(why string) string {
	if why == "" {
		return "still holding the session"
	}
	return why
}

// heldOrErr says how an acquisition ended.
func heldOrErr(try *peerTry) zh.Text {
	if try.held {
		return zh.Say("held %s", orUnsaid(try.node))
	}
	return brief(try.err)
}

// waiterBehindHolderFor is waiterBehindHolder with W's session timeout.
func (sc *peerScene) waiterBehindHolderFor(sessionTimeout time.Duration) (holder string, w peerLock, tw *peerTry) {
	sc.t.Helper()
	holder = sc.plant(sc.r.prefix(plantGUID(1)), true, "the holder")
	w = sc.join("W", sessionTimeout)
	tw = w.acquire(0)
	sc.mustWaitOn(w, tw, holder, "the holder")
	return holder, w, tw
}

// sessionOf is the session the proxy saw the server grant, by its id as the
// watch tables print it.
func sessionOf(t zkserver.TB, px *faultproxy.Proxy, id string) faultproxy.Session {
	t.Helper()
	for _, s := range px.Sessions() {
		if fmt.Sprintf("0x%x", s.ID) == id {
			return s
		}
	}
	t.Fatalf("the proxy saw no handshake granting session %s: %+v", id, px.Sessions())
	return faultproxy.Session{}
}

// staleWindow keeps W cut off while the keeper holds W's old session: for
// nine of the keeper's pings (three session timeouts, so a client that
// gives a session up after one timeout of silence has done so), and, for a
// client that reports it, until it says the session is lost.
// The stale window of CURATOR-604's scene: the keeper holds W's old
// session on the server for nine pings (a ping every third of the session
// timeout: three session timeouts, long enough for W's client to give the
// session up), waiting at most staleWindowWithin.
const (
	staleWindowPings  = 9
	staleWindowWithin = 10 * harness.ExpirySessionTimeout
)

func (sc *peerScene) staleWindow(w peerLock, k *faultproxy.Keeper) {
	sc.t.Helper()
	tb.WaitFor(sc.t, staleWindowWithin, "nine keeper pings while W is cut off", func() (bool, string) {
		return k.Pings() >= staleWindowPings || k.Why() != "", fmt.Sprintf("%d pings", k.Pings())
	})
	if why := k.Why(); why != "" {
		sc.t.Fatalf("the keeper lost W's session while W was cut off (%d pings): %s", k.Pings(), why)
	}
	if d, ok := w.(*driverLock); ok && d.k.Hello.Recipe == recipeCurator {
		ctx, cancel := context.WithTimeout(context.Background(), 10*harness.ExpirySessionTimeout)
		defer cancel()
		if _, err := d.k.WaitEvent(ctx, "Curator's LOST", 0, func(e peer.Event) bool {
			return e.Kind == "state" && e.State == "LOST"
		}); err != nil {
			sc.t.Fatalf("W: %v", err)
		}
		newActor(sc.t, w.who()).Info("Curator said LOST: it gave its session up while the server keeps it")
	}
}

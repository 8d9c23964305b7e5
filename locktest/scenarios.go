package locktest

// The scenarios: each plays one recipe's part in one scene and returns its
// cell (a Result): every recipe on the same server, each contender through
// its own client proxy, so a fault is the same bytes on the wire for all.
// Ours (package lock) must keep every guarantee, and its cell also checks
// the exact outcome its contract names (oursMust).
//
// Sources cited for a peer are lines of go-zookeeper's module as this
// module builds it (lock.go, conn.go) and of the kazoo package the driver
// imported (recipe/lock.py); cite checks that each one holds the code
// quoted.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/peer"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/lock"
)

// peerGiveUp is the acquire timeout of the scenarios about giving up: long
// enough for a wait to begin, short enough to watch a few of them pass.
const peerGiveUp = 600 * time.Millisecond

// brief names an error in a few words: the sentinel it wraps, or the
// exception class a driver's recipe raised.
func brief(err error) zh.Text {
	if err == nil {
		return zh.Say("no error")
	}
	if ke, ok := errors.AsType[*peer.RecipeError](err); ok {
		return value(ke.Class)
	}
	for _, s := range []struct {
		err  error
		name string
	}{
		{lock.ErrLostCandidacy, "lock.ErrLostCandidacy"}, {lock.ErrSessionChanged, "lock.ErrSessionChanged"},
		{lock.ErrMissing, "lock.ErrMissing"}, {lock.ErrAmbiguous, "lock.ErrAmbiguous"},
		{fence.ErrNegativeSeq, "fence.ErrNegativeSeq"}, {fence.ErrSeqOverflow, "fence.ErrSeqOverflow"},
		{context.Canceled, "context.Canceled"}, {context.DeadlineExceeded, "context.DeadlineExceeded"},
	} {
		if errors.Is(err, s.err) {
			return value(s.name)
		}
	}
	return value(err.Error())
}

// value is a value of a cell (a node's name, an error's text): the same
// in both languages.
func value(s string) zh.Text { return zh.Text{En: s, Zh: s} }

// pyBool writes a bool as kazoo's Python prints it.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// errSuffix is ", error: <err>" for a non-nil err.
func errSuffix(err error) zh.Text {
	if err == nil {
		return zh.Text{}
	}
	return zh.Say(", error: %v", err)
}

// oursMust turns a cell of ours into broke when its contract's exact
// outcome (the error it documents) is not what happened.
func (sc *peerScene) oursMust(c peerCell, err, want error) peerCell {
	if sc.r.name == recipeOurs && c.verdict == peerKept && !errors.Is(err, want) {
		return broke("", "returned %s; want %s", brief(err), brief(want))
	}
	return c
}

// peerStrangerChild: a child that no recipe made (a persistent
// "config") is in the lock dir before A acquires. A lock must ignore it or
// refuse cleanly; go-zookeeper's parses every child as a lock node.
func peerStrangerChild(sc *peerScene) peerCell {
	sc.o.Invoke("create %s/config (persistent, not a lock node)", sc.dir)
	if _, err := sc.O.Create(sc.dir+"/config", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		sc.t.Fatalf("create config: %v", err)
	}
	sc.o.Ok("")
	a := sc.join("A", 0)
	try := a.acquire(0)
	if w := sc.settle(a, try); w != "" {
		return broke("", "waits on %s", w)
	}
	sc.result(try, harness.Within)
	if try.held {
		sc.releaseNow(a)
		// Curator takes every child for a candidate and orders a name
		// without "lock-" by the whole name: "config" sorts after every
		// suffix (CURATOR-43's scenario has one that sorts before).
		return sc.curatorBecause(kept("held with the stranger in the dir"),
			curatorLocks+"StandardLockInternalsDriver.java:66-74", "return str;")
	}
	src := ""
	if sc.r.name == recipeGoZK {
		src = sc.cite("lock.go:109-113", "s, err := parseSeq(p)")
	}
	if left := sc.ownedBy(a.session()); len(left) > 0 {
		return broke(src, "failed (%s) and left its node in the queue", brief(try.err))
	}
	return broke(src, "failed: %s", brief(try.err))
}

// peerOwnNodeDeletedWhileWaiting: W waits on H; another client deletes
// W's node; H releases. A lock must never report a hold without a node of
// its own (ours: lock.ErrLostCandidacy, claim L6's property).
func peerOwnNodeDeletedWhileWaiting(sc *peerScene) peerCell {
	h := sc.join("H", 0)
	sc.mustHold(h.acquire(0), "W waits on H")
	hNode := sc.onlyNode(h)
	w := sc.join("W", 0)
	tw := w.acquire(0)
	sc.mustWaitOn(w, tw, hNode, "H's")
	own := sc.onlyNode(w)
	sc.remove(own)
	sc.releaseNow(h)
	sc.result(tw, peerCallWithin)
	mine := sc.ownedBy(w.session())
	switch {
	case tw.held && len(mine) == 1 && mine[0] != own:
		sc.releaseNow(w)
		// Curator: its node missing from the listing raises NoNode
		// (validateOurIndex), and attemptLock starts over while the
		// retry policy allows.
		return sc.curatorBecause(kept("re-queued with a fresh node, then held"),
			curatorLocks+"LockInternals.java:228-235", "catch ( KeeperException.NoNodeException e )")
	case tw.held && sc.r.name == recipeGoZK:
		return broke(sc.cite("lock.go:100-126", "if seq == lowestSeq {"), "held with no node of its own")
	case tw.held:
		return broke("", "held, its nodes %v (%s was deleted)", mine, own)
	case len(mine) > 0:
		return broke("", "failed (%s) and left %v in the queue", brief(tw.err), mine)
	}
	return sc.oursMust(kept("refused: %s", brief(tw.err)), tw.err, lock.ErrLostCandidacy)
}

// onlyNode is the one node of the dir owned by l's session.
func (sc *peerScene) onlyNode(l peerLock) string {
	sc.t.Helper()
	mine := sc.ownedBy(l.session())
	if len(mine) != 1 {
		sc.t.Fatalf("%s: got nodes %v of its session; want exactly one", l.who(), mine)
	}
	return mine[0]
}

// peerOrderBySuffix: the lowest suffix holds, whatever the names (claim
// L2's property). O's older node has a name that sorts after every
// contender's; a recipe that ordered whole names would let W hold beside
// it.
func peerOrderBySuffix(sc *peerScene) peerCell {
	older := sc.plant(sc.r.prefix(strings.Repeat("f", 32)), true, "older, named to sort after any contender")
	w := sc.join("W", 0)
	tw := w.acquire(0)
	watched := sc.settle(w, tw)
	if own := sc.ownedBy(w.session()); len(own) == 1 && own[0] > older {
		sc.t.Fatalf("W's node %s sorts after %s: the names do not tell name order from suffix order", own[0], older)
	}
	switch {
	case watched == older:
		return sc.curatorBecause(sc.heldOnceGone(w, tw, older, value(older), kept("waited behind the older node, held once it went")), curatorSort[0], curatorSort[1])
	case watched != "":
		return broke("", "waited on %s, not on the older %s", watched, older)
	}
	sc.result(tw, harness.Within)
	if tw.held {
		sc.releaseNow(w)
		return broke("", "held at once beside the older %s: its name sorts first", older)
	}
	return broke("", "failed: %s", brief(tw.err))
}

// behindOlder has W acquire with older, a node that a lock must not jump,
// in the dir, and judges what W does: waiting behind it, or refusing
// cleanly with the error ours documents (oursErr), keeps the guarantee;
// holding beside it, or failing and leaving a node in the queue, breaks
// it. src cites the peer's code responsible for a broken outcome.
func (sc *peerScene) behindOlder(older string, src map[string][2]string, oursErr error) peerCell {
	sc.t.Helper()
	w := sc.join("W", 0)
	tw := w.acquire(0)
	switch watched := sc.settle(w, tw); {
	case watched == older:
		sc.remove(older)
		if sc.result(tw, harness.Within); tw.held {
			sc.releaseNow(w)
		}
		// Curator compares the suffixes as strings: "-000000001" and an
		// 11-digit "0…" sort before the server's 10 digits.
		return sc.curatorBecause(kept("waited behind it"), curatorSort[0], curatorSort[1])
	case watched != "":
		return broke(sc.citeFrom(src), "waited on %s, not on the older %s", watched, older)
	}
	held := func() peerCell { return broke(sc.citeFrom(src), "held beside the older node: skipped its name") }
	return sc.judgeReturn(w, tw, src, held, "refused: %s", oursErr)
}

// judgeReturn judges an acquisition that returned without waiting where the
// scenario looked: held gives the verdict on a hold; failing and leaving a
// node in the queue breaks the guarantee; refusing cleanly keeps it
// (refused formats the error), with the error ours documents (oursErr).
func (sc *peerScene) judgeReturn(w peerLock, tw *peerTry, src map[string][2]string, held func() peerCell, refused string, oursErr error) peerCell {
	sc.t.Helper()
	sc.result(tw, harness.Within)
	left := sc.ownedBy(w.session())
	switch {
	case tw.held:
		sc.releaseNow(w)
		return held()
	case len(left) > 0:
		return broke(sc.citeFrom(src), "failed (%s) and left its node in the queue", brief(tw.err))
	}
	return sc.oursMust(kept(refused, brief(tw.err)), tw.err, oursErr)
}

// peerWrappedSuffixOlder: after 2^31 creates under one parent the
// server's signed counter wraps, and %010d names the nodes "-2147483648"
// … "-000000001" before it reaches 0 again. O's node, named as the server
// names the one at -1, is older than W's; W must not hold beside it.
func peerWrappedSuffixOlder(sc *peerScene) peerCell {
	older := sc.plant(sc.r.prefix(plantGUID(1))+"-000000001", false, "as the server names the node at counter -1")
	return sc.behindOlder(older, map[string][2]string{
		// zk.Lock takes -1 for the lowest, but looks for a predecessor
		// above -1 only, finds none and watches "<dir>/".
		recipeGoZK: {"lock.go:106-135", "prevSeq := -1"},
		// Ten digits after the infix: "-000000001" has nine.
		recipeKazoo:   {"recipe/lock.py:110-114", `r"(?:{patterns})(-?\d{{10}})$"`},
		recipeCurator: curatorSort,
	}, fence.ErrNegativeSeq)
}

// peerWrappedSuffixNewer: W waits on H; O then makes a node named as
// the first one after the counter wraps past 2147483647 ("-2147483648"),
// so it is newer than W's; H goes. W must hold now: a recipe that puts the
// newer node first would let its owner hold while W's turn has come.
// Refusing a name it cannot order (ours) keeps the guarantee too.
func peerWrappedSuffixNewer(sc *peerScene) peerCell {
	holder, w, tw := sc.waiterBehindHolder()
	newer := sc.plant(sc.r.prefix(plantGUID(2))+"-2147483648", false, "newer than W's, as the server names the first node after the wrap")
	sc.remove(holder)
	src := map[string][2]string{
		recipeGoZK:  {"lock.go:106-135", "prevSeq := -1"},
		recipeKazoo: {"recipe/lock.py:316-322", "sorted(contender_matches, key=lambda m: m.groups())"},
		// "-2147483648" sorts before "0000000001" as a string.
		recipeCurator: curatorSort,
	}
	switch watched := sc.settle(w, tw); {
	case watched == newer:
		return broke(sc.citeFrom(src), "waited behind the newer node: put it first")
	case watched != "":
		return broke("", "waited on %s", watched)
	}
	held := func() peerCell {
		return sc.curatorBecause(kept("held: the newer node is behind it"), curatorSort[0], curatorSort[1])
	}
	return sc.judgeReturn(w, tw, src, held, "refused: %s (cannot order it)", fence.ErrNegativeSeq)
}

// peerOverlongSuffix: a node with the recipe's lock infix and an
// 11-digit suffix (no server makes one: the counter is a 32-bit int in
// %010d) is older than W's. Parsing it as a number, or refusing it, keeps
// the guarantee; skipping it lets W hold beside it.
func peerOverlongSuffix(sc *peerScene) peerCell {
	older := sc.plant(sc.r.prefix(plantGUID(1))+"0", true, "an 11-digit suffix: a 0, then the server's 10")
	return sc.behindOlder(older, map[string][2]string{
		recipeKazoo:   {"recipe/lock.py:110-114", `r"(?:{patterns})(-?\d{{10}})$"`},
		recipeCurator: curatorSort,
	}, fence.ErrSeqOverflow)
}

// loseCreateReply has W's proxy lose the reply to W's create under the
// dir, starts W's acquisition, and returns once the reply was dropped. With
// cut, the proxy then cuts W off at once (before the client can redial: a
// go-zookeeper client waits a second before it redials a lone server, kazoo
// backs off) and keeps it cut off until Heal; it fails the test if the
// client got through first.
func (sc *peerScene) loseCreateReply(w peerLock, cut bool) (*peerTry, faultproxy.DropResult) {
	sc.t.Helper()
	px := w.proxy()
	accepted := px.Stats().Accepted
	m := faultproxy.Match{Ops: createOps, Under: sc.dir}
	d := px.LoseReply(m)
	newActor(sc.t, w.who()).Info("the proxy will lose the reply to W's %s", m)
	tw := w.acquire(0)
	harness.FaultEnded(sc.t, d, "the end of the fault on W's create")
	if cut {
		px.Cut(faultproxy.BothEnds)
		sc.t.Cleanup(px.Heal)
	}
	res := d.Result()
	if !res.Dropped {
		sc.t.Fatalf("the reply to W's create was not lost: %+v", res)
	}
	if cut && px.Stats().Accepted != accepted {
		sc.t.Fatalf("W's client reconnected before the cut (%d connections accepted; want %d): the scene cannot be made", px.Stats().Accepted, accepted)
	}
	return tw, res
}

// peerLostCreateReply: the server creates W's node but the reply is
// lost with the connection; the session survives the reconnect. A lock
// must end up holding exactly its own node, found again by its GUID (ours:
// Recover, claims R3–R6), or give up without leaving a node behind.
func peerLostCreateReply(sc *peerScene) peerCell {
	w := sc.join("W", 0)
	tw, _ := sc.loseCreateReply(w, false)
	sc.result(tw, peerCallWithin)
	mine := sc.ownedBy(w.session())
	slices.Sort(mine)
	switch {
	case tw.held && len(mine) == 1 && (tw.node == "" || tw.node == mine[0]):
		sc.releaseNow(w)
		if left := sc.ownedBy(w.session()); len(left) > 0 {
			return broke("", "held, but release left %v", left)
		}
		// Curator: the retried create looks for its protected prefix
		// before it creates again.
		return sc.curatorBecause(kept("held its own node, found again by its GUID"),
			curatorImps+"CreateBuilderImpl.java:1199-1205", "createdPath = findProtectedNodeInForeground(path);")
	case tw.held:
		return broke("", "held %s with nodes %v of its session", orUnsaid(tw.node), mine)
	case len(mine) > 0 && sc.r.name == recipeGoZK:
		return broke(sc.cite("conn.go:1149-1153", "children, _, err := c.Children(rootPath)"),
			"failed (%s) and left its node in the queue", brief(tw.err))
	case len(mine) > 0:
		return broke("", "failed (%s) and left its node in the queue", brief(tw.err))
	}
	return sc.oursMust(kept("gave up cleanly: %s", brief(tw.err)), tw.err, errOursHolds)
}

// errOursHolds is what ours must do where giving up is not its contract.
var errOursHolds = errors.New("a hold")

// peerLostCreateReplySessionExpired: W's create takes effect, its reply
// is lost, and W is cut off until the server expires the session (and
// deletes the node). Let through again, the client opens a new session.
// Ours refuses to continue in another session (lock.ErrSessionChanged);
// a recipe that carries on keeps the guarantee if it holds only a node of
// the new session, and the cell says whether it reused the lost create's
// GUID, which the node of TestPeerForeignGUID's row could then carry.
func peerLostCreateReplySessionExpired(sc *peerScene) peerCell {
	w := sc.join("W", harness.ExpirySessionTimeout)
	old := w.session()
	_, st := statOf(sc.t, sc.O, sc.dir)
	tw, res := sc.loseCreateReply(w, true)
	tb.WaitFor(sc.t, 10*harness.ExpirySessionTimeout, "the server to expire W's session and delete the node its create made", func() (bool, string) {
		_, now := statOf(sc.t, sc.O, sc.dir)
		return now.NumChildren == 0 && now.Cversion >= st.Cversion+2, fmt.Sprintf("children %d, cversion %d (was %d)", now.NumChildren, now.Cversion, st.Cversion)
	})
	sc.o.Info("the server deleted the node W's lost create made: session %s expired", old)
	w.proxy().Heal()
	sc.result(tw, peerCallWithin)
	now := w.session()
	mine := sc.ownedBy(now)
	lost := path.Base(res.Path)
	switch {
	case tw.held && len(mine) == 1 && now != old:
		reuse := zh.Say("with a fresh GUID")
		if strings.HasPrefix(mine[0], lost) {
			reuse = zh.Say("same GUID")
		}
		sc.releaseNow(w)
		// Curator: the create's retry loop, finding no node of its
		// prefix, creates again in whatever session the client has.
		return sc.curatorBecause(kept("carried on in a new session, %s, and held", reuse),
			curatorImps+"CreateBuilderImpl.java:1207-1216", "createdPath = client.getZooKeeper().create(path, data, aclList, createMode, storingStat, ttl);")
	case tw.held:
		return broke("", "held %s in session %s (was %s), its nodes %v", orUnsaid(tw.node), now, old, mine)
	case len(mine) > 0:
		return broke("", "failed (%s) and left %v in the queue", brief(tw.err), mine)
	}
	return sc.oursMust(kept("no hold, no node left (%s)", brief(tw.err)), tw.err, lock.ErrSessionChanged)
}

// peerForeignGUID: W's create reply is lost; while W is cut off, its
// node goes and a node with the same GUID appears, owned by another
// session (O): as a node left by an earlier session that used the GUID
// would be. A lock must never adopt a node it does not own (ours: Recover
// keeps only this session's matches, claim R6).
func peerForeignGUID(sc *peerScene) peerCell {
	w := sc.join("W", 0)
	tw, res := sc.loseCreateReply(w, true)
	prefix := path.Base(res.Path)
	var own []string
	for _, k := range listChildren(sc.t, sc.O, sc.dir) {
		if strings.HasPrefix(k, prefix) {
			own = append(own, k)
		}
	}
	if len(own) != 1 {
		sc.t.Fatalf("nodes named %s…: got %v; want the one W's create made", prefix, own)
	}
	sc.remove(own[0])
	foreign := sc.plant(prefix, true, "W's GUID, session O's node")
	w.proxy().Heal()
	if sc.waitsBehind(tw, foreign) {
		return sc.gaveUpClean(w, tw, kept("did not adopt O's node: found no node of its own, created again with a fresh GUID and waits behind O's"))
	}
	sc.result(tw, peerCallWithin)
	return sc.judgeForeign(w, tw, foreign, map[string][2]string{
		recipeGoZK:  {"conn.go:1149-1159", "if g := pth[len(protectedPrefix) : len(protectedPrefix)+32]; g == guidStr {"},
		recipeKazoo: {"recipe/lock.py:326-331", "if child.startswith(self.prefix):"},
		// The owner is compared only when the session changed
		// (ProtectedMode.validateFoundNode); here it did not.
		recipeCurator: {curatorImps + "CreateBuilderImpl.java:1344-1347", "return node.startsWith(protectedPrefix);"},
	}, lock.ErrMissing)
}

// waitsBehind waits, within peerCallWithin, until tw has returned or waits
// on foreign with one candidate of its own, and reports the latter: what
// an acquisition does that knows its own create did not happen and makes
// a fresh one behind another session's node.
func (sc *peerScene) waitsBehind(tw *peerTry, foreign string) bool {
	sc.t.Helper()
	behind := false
	err := tb.WaitUntil(peerCallWithin, "the return of "+tw.who+"'s acquisition, or its wait behind "+foreign, func() (bool, string) {
		if tw.finished() {
			return true, ""
		}
		sess := tw.l.session()
		behind = len(sc.ownedBy(sess)) == 1 && slices.Equal(sc.watchedBy(sess), []string{foreign})
		return behind, sc.seen(tw)
	})
	if err != nil && sc.r.name == recipeOurs {
		panic(sceneEnd{broke("", "%v", err)})
	}
	if behind {
		newActor(sc.t, tw.who).Info("waits behind %s: %s", foreign, sc.seen(tw))
	}
	return behind
}

// gaveUpClean cancels tw, an acquisition still waiting, and returns c if
// it then returned and left no node of its session in the dir.
func (sc *peerScene) gaveUpClean(w peerLock, tw *peerTry, c peerCell) peerCell {
	sc.t.Helper()
	if !w.cancel() {
		return c
	}
	sc.result(tw, peerCallWithin)
	left := sc.ownedBy(w.session())
	if tw.held || len(left) > 0 {
		return broke("", "after it was cancelled: held %v, left %v", tw.held, left)
	}
	return c
}

// judgeForeign judges an acquisition that may have adopted foreign, a node
// of session O carrying the acquisition's GUID or prefix.
func (sc *peerScene) judgeForeign(w peerLock, tw *peerTry, foreign string, src map[string][2]string, oursErr error) peerCell {
	sc.t.Helper()
	mine := sc.ownedBy(w.session())
	switch {
	case tw.held && tw.node == foreign:
		return broke(sc.citeFrom(src), "held on session O's node, adopted by GUID")
	case tw.held && tw.node == "" && len(mine) == 0:
		// zk.Lock does not say which node it took: its Unlock deletes it.
		sc.releaseNow(w)
		if _, ok := sc.owners()[foreign]; !ok {
			return broke(sc.citeFrom(src), "held on session O's node, adopted by GUID (its Unlock deleted it)")
		}
		return broke("", "held with no node of its own")
	case tw.held && len(mine) == 1:
		sc.releaseNow(w)
		return kept("held a node of its own")
	case tw.held:
		return broke("", "held %s, its nodes %v", orUnsaid(tw.node), mine)
	case len(mine) > 0:
		return broke("", "failed (%s) and left %v in the queue", brief(tw.err), mine)
	}
	return sc.oursMust(kept("refused (%s); O's node not adopted", brief(tw.err)), tw.err, oursErr)
}

// peerReacquireAfterForeignPrefix: W acquires and releases; O then
// creates a node named with the prefix of W's first acquisition; W
// acquires again on the same lock object. O's node is an older candidate:
// W must wait behind it, never take it as its own (ours and go-zookeeper
// make a fresh GUID for every acquisition; kazoo keeps one per Lock
// object).
func peerReacquireAfterForeignPrefix(sc *peerScene) peerCell {
	w := sc.join("W", 0)
	sc.mustHold(w.acquire(0), "the first acquisition names the prefix")
	prefix := suffixless(sc.onlyNode(w))
	sc.releaseNow(w)
	foreign := sc.plant(prefix, true, "named like W's first node, session O's")
	t2 := w.acquire(0)
	switch watched := sc.settle(w, t2); {
	case watched == foreign:
		// Curator: every create is a new builder withProtection(), so a
		// new UUID.
		return sc.curatorBecause(sc.heldOnceGone(w, t2, foreign, zh.Say("O's %s", foreign), kept("fresh GUID; waited behind O's node, held once it went")),
			curatorLocks+"StandardLockInternalsDriver.java:50-54", "withProtection()")
	case watched != "":
		return broke("", "waited on %s", watched)
	}
	sc.result(t2, harness.Within)
	if _, still := sc.owners()[foreign]; still && t2.held && t2.node != foreign && len(sc.ownedBy(w.session())) == 1 {
		sc.releaseNow(w)
		return broke("", "held beside O's older node")
	}
	if k, ok := w.(*driverLock); ok && sc.r.name == recipeKazoo && t2.held && t2.node == foreign {
		// What the recipe believes once O's node goes.
		sc.remove(foreign)
		li, err := k.isAcquired()
		return broke(sc.cite("recipe/lock.py:241-245", "node = self._find_node()"),
			"held on session O's node (its old prefix); is_acquired still %v after O deleted it%s", pyBool(li.IsAcquired), errSuffix(err))
	}
	return sc.judgeForeign(w, t2, foreign, nil, errOursHolds)
}

// peerCancelWhileWaiting: W waits on H and is cancelled. A lock must
// return without a hold and delete its node (ours: the context's error).
// go-zookeeper's zk.Lock has no cancel: only closing the session ends its
// wait.
func peerCancelWhileWaiting(sc *peerScene) peerCell {
	_, w, tw := sc.waiterBehindHolder()
	a := newActor(sc.t, w.who())
	a.Invoke("cancel")
	if !w.cancel() {
		g, native := w.(*gozkLock)
		if !native {
			a.Fail("%s", sc.noCancel())
			return sc.noGiveUp()
		}
		a.Fail("zk.Lock has no cancel and no timeout: close the session instead")
		if err := g.c.CloseWait(peerCallWithin); err != nil {
			sc.t.Fatalf("%v", err)
		}
		sc.result(tw, peerCallWithin)
		return none(sc.cite("lock.go:52-55", "func (l *Lock) LockWithData(data []byte) error {"),
			"no cancel, no timeout: only closing the session ended the wait (%s)", brief(tw.err))
	}
	a.Ok("")
	sc.result(tw, harness.Within)
	left := sc.ownedBy(w.session())
	switch {
	case tw.held:
		sc.releaseNow(w)
		return broke("", "held after the cancel")
	case len(left) > 0:
		return broke("", "cancelled (%s) but left its node", brief(tw.err))
	}
	// Curator: the interrupt raises out of wait(), and the catch deletes
	// the node before rethrowing.
	return sc.curatorBecause(sc.oursMust(kept("cancelled (%s); node deleted", brief(tw.err)), tw.err, context.Canceled),
		curatorLocks+"LockInternals.java:327-331", "doDelete = true;")
}

// noGiveUp is the cell of a recipe without timeout or cancel (zk.Lock) in
// the rows about giving up.
func (sc *peerScene) noGiveUp() peerCell {
	if sc.r.name != recipeGoZK {
		return none("", "no timeout, no cancel: %s", sc.noCancel())
	}
	return none(sc.cite("lock.go:52-55", "func (l *Lock) LockWithData(data []byte) error {"), "no timeout, no cancel (see the cancel row)")
}

// peerGiveUpCleanupReplyLost: W waits on H with a timeout and gives
// up; the reply to the delete of its cleanup is lost with the connection
// (the delete itself took effect). A lock must not leave its node behind,
// and the next acquisition must work: W acquires again once H has gone.
func peerGiveUpCleanupReplyLost(sc *peerScene) peerCell {
	return sc.giveUpLosingCleanup((*faultproxy.Proxy).LoseReply, "the reply to", nil)
}

// giveUpLosingCleanup has W give up waiting on H by its timeout while
// lose, armed on W's proxy, loses W's cleanup delete or its reply (what
// says which, for the log). W's node must not outlive the reconnect (a
// recipe may delete it once it is back: the wait for that is bounded), and
// W's next acquisition must hold once H has gone. src cites a peer's code
// for a node left behind.
func (sc *peerScene) giveUpLosingCleanup(lose func(*faultproxy.Proxy, faultproxy.Match) *faultproxy.Drop, what string, src map[string][2]string) peerCell {
	sc.t.Helper()
	if sc.noCancel() != "" {
		return sc.noGiveUp()
	}
	holder := sc.plant(sc.r.prefix(plantGUID(1)), true, "the holder")
	w := sc.join("W", 0)
	m := faultproxy.Match{Ops: []int32{jute.OpDelete}, Under: sc.dir}
	d := lose(w.proxy(), m)
	newActor(sc.t, w.who()).Info("the proxy will lose %s W's %s", what, m)
	mark := w.mark()
	tw := w.acquire(peerGiveUp)
	sc.result(tw, peerCallWithin)
	// Every recipe here sends its cleanup delete before it returns: a
	// delete the proxy has not seen by now was never sent.
	if d.Result().Xid == 0 {
		d.Cancel()
		if left := sc.ownedBy(w.session()); len(left) > 0 && !tw.held {
			return broke(sc.citeFrom(src), "gave up (%s) and sent no delete: its node stayed", brief(tw.err))
		}
		sc.t.Fatalf("W sent no cleanup delete, and left no node: got held=%v, %v", tw.held, tw.err)
	}
	select {
	case <-d.Done():
	case <-time.After(harness.Within):
		d.Cancel()
		sc.t.Fatalf("W's cleanup delete: %s it was not lost within %v: %+v", what, harness.Within, d.Result())
	}
	if res := d.Result(); !res.Dropped {
		sc.t.Fatalf("%s W's cleanup delete was not lost: %+v", what, res)
	}
	if err := w.reconnected(mark); err != nil {
		sc.t.Fatalf("W: %v", err)
	}
	left := sc.outlives(w, w.session(), harness.Within)
	switch {
	case tw.held:
		return broke("", "held although it timed out")
	case len(left) > 0:
		return broke(sc.citeFrom(src), "gave up (%s) but its node stayed %v after the reconnect: an orphan of a live session, ahead of every later contender",
			brief(tw.err), harness.Within)
	}
	sc.remove(holder)
	t2 := w.acquire(0)
	sc.result(t2, peerCallWithin)
	switch {
	case !t2.held:
		return broke("", "gave up (%s); the next acquisition failed: %s", brief(tw.err), brief(t2.err))
	}
	sc.releaseNow(w)
	// Curator: a guaranteed delete, retried after the connection loss,
	// and its NoNode taken for done.
	return sc.curatorBecause(sc.oursMust(kept("gave up (%s); no node left; the next acquisition held", brief(tw.err)),
		tw.err, context.DeadlineExceeded), curatorLocks+"LockInternals.java:345-352", "client.delete().guaranteed().forPath(ourPath);")
}

// outlives returns the nodes of session sess (w's) still in the dir once
// they are all gone or bound has passed: what a recipe left behind, given
// the time to clean up after a reconnect.
func (sc *peerScene) outlives(w peerLock, sess string, bound time.Duration) []string {
	sc.t.Helper()
	var left []string
	deadline := time.Now().Add(bound)
	tb.WaitFor(sc.t, bound+harness.Within, w.who()+"'s nodes to go, or "+bound.String()+" to pass", func() (bool, string) {
		left = sc.ownedBy(sess)
		return len(left) == 0 || time.Now().After(deadline), fmt.Sprintf("nodes %v of session %s", left, sess)
	})
	if len(left) > 0 {
		newActor(sc.t, w.who()).Info("its nodes %v are still there %v after the reconnect", left, bound)
	}
	return left
}

// peerSessionExpiresWhileHolding: W holds; its proxy cuts it off until
// the server expires the session and deletes W's node; let through again,
// the client opens a new session. Does the recipe know it no longer holds?
// Ours: Lost closes and Release says the session changed.
func peerSessionExpiresWhileHolding(sc *peerScene) peerCell {
	w, node, old, mark := sc.holdThenCut(harness.ExpirySessionTimeout, "the hold is what expires")
	px := w.proxy()
	tb.WaitFor(sc.t, 10*harness.ExpirySessionTimeout, "the server to delete W's node", func() (bool, string) {
		_, ok := sc.owners()[node]
		return !ok, "still there"
	})
	sc.o.Info("W's node %s deleted by the server: session %s expired", node, old)
	px.Heal()
	if err := w.reconnected(mark); err != nil {
		sc.t.Fatalf("W: %v", err)
	}
	if now := w.session(); now == old {
		sc.t.Fatalf("W: got session %s after the expiry; want a new one", now)
	}
	return sc.knowsItLost(w)
}

// holdThenCut has W, with its session timeout, hold (why says what the
// scenario needs the hold for), then cuts W off: its proxy closes its
// connection and refuses new ones until Heal (registered at cleanup too).
// It returns W, W's node and session, and the mark to wait for W's
// reconnect from.
func (sc *peerScene) holdThenCut(sessionTimeout time.Duration, why string) (w peerLock, node, sess string, mark int) {
	sc.t.Helper()
	w = sc.join("W", sessionTimeout)
	sc.mustHold(w.acquire(0), why)
	node, sess, mark = sc.onlyNode(w), w.session(), w.mark()
	px := w.proxy()
	px.Cut(faultproxy.BothEnds)
	sc.t.Cleanup(px.Heal)
	return w, node, sess, mark
}

// knowsItLost asks the recipe, in its own terms, whether it still holds.
func (sc *peerScene) knowsItLost(w peerLock) peerCell {
	sc.t.Helper()
	a := newActor(sc.t, w.who())
	switch l := w.(type) {
	case *oursLock:
		select {
		case <-l.hold().Lost():
		case <-time.After(harness.Within):
			return broke("", "Lost still open %v after the client got a new session", harness.Within)
		}
		_, err := l.release()
		a.Info("Lost closed; Release: %v", err)
		return sc.oursMust(kept("knows: Lost closed, Release returned %s", brief(err)), err, lock.ErrSessionChanged)
	case *driverLock:
		return l.knowsItLost(sc, map[string][2]string{
			recipeKazoo: {"recipe/lock.py:348-359", "self.is_acquired = False"},
			// The lock object's state is a map of threads, which nothing
			// clears when the session goes.
			recipeCurator: {curatorLocks + "InterProcessMutex.java:117-120", "return (threadData.size() > 0);"},
		})
	case *goLock:
		if !l.l.Held() {
			return kept("knows: Held() false")
		}
		return broke("", "does not know: Held() still true with its node gone")
	case *gozkLock:
		a.Invoke("zk.Unlock (zk.Lock has no way to ask whether it holds)")
		uerr := l.l.Unlock()
		a.Info("%v", uerr)
		a.Invoke("zk.Lock again")
		lerr := l.l.Lock()
		a.Info("%v", lerr)
		if lerr == nil {
			sc.releaseNow(w)
		}
		return broke(sc.cite("lock.go:150-160", "if err := l.c.Delete(l.lockPath, -1); err != nil {"),
			"cannot tell (no way to ask); Unlock: %s; every later Lock: %s", brief(uerr), brief(lerr))
	}
	sc.t.Fatalf("no recipe %T", w)
	return peerCell{}
}

// peerTimeoutIsATotalDeadline: W acquires with a timeout behind H and
// a queue of waiters, who leave one by one: each leaving wakes W, which
// waits again on the next. A timeout that is a total deadline ends W's
// acquisition one timeout after it began, however often W woke.
func peerTimeoutIsATotalDeadline(sc *peerScene) peerCell {
	if sc.noCancel() != "" {
		return sc.noGiveUp()
	}
	sc.plant(sc.r.prefix(plantGUID(0)), true, "the holder")
	var queue []string
	for i := 1; i <= 100; i++ {
		queue = append(queue, sc.plant(sc.r.prefix(plantGUID(i)), true, "a waiter ahead of W"))
	}
	w := sc.join("W", 0)
	tw := w.acquire(peerGiveUp)
	wakeups, late := sc.keepWaking(w, tw, queue)
	sc.result(tw, peerCallWithin)
	if late > 0 {
		return broke(sc.citeFrom(map[string][2]string{recipeKazoo: {"recipe/lock.py:277-283", "self.wake_event.wait(timeout)"}}),
			"not total: still waiting at %.2fs of a %.1fs timeout (%d wake-ups); gave up at %.2fs",
			late.Seconds(), peerGiveUp.Seconds(), wakeups, tw.took.Seconds())
	}
	if tw.held {
		return broke("", "held while the holder held")
	}
	// Curator subtracts each wait from what is left.
	return sc.curatorBecause(sc.oursMust(kept("total: gave up at %.2fs of a %.1fs timeout (%d wake-ups)", tw.took.Seconds(), peerGiveUp.Seconds(), wakeups),
		tw.err, context.DeadlineExceeded), curatorLocks+"LockInternals.java:302-305", "millisToWait -= (System.currentTimeMillis() - startMillis);")
}

// keepWaking deletes W's predecessor, from the back of queue, each time W
// waits on it, until W's acquisition returns or has run twice its timeout.
// It returns the wake-ups and, when W was still waiting at twice its
// timeout, how long it had been waiting then.
func (sc *peerScene) keepWaking(w peerLock, tw *peerTry, queue []string) (wakeups int, late time.Duration) {
	sc.t.Helper()
	for i := len(queue) - 1; i >= 0; i-- {
		watched := sc.settle(w, tw)
		if watched == "" {
			return wakeups, 0
		}
		if d := time.Since(tw.began); d > 2*peerGiveUp {
			return wakeups, d
		}
		if watched != queue[i] {
			sc.t.Fatalf("W: got waiting on %s; want its predecessor %s", watched, queue[i])
		}
		sc.remove(queue[i])
		wakeups++
	}
	sc.t.Fatalf("the queue ran out after %d wake-ups, %v into W's acquisition", wakeups, time.Since(tw.began))
	return wakeups, 0
}

// peerLostChildrenReply: H holds; W's create takes effect, and the
// reply to W's next getChildren of the dir, the listing that decides
// whether W is first, is lost with the connection: the server answered,
// the client never read it. The session survives the reconnect. A recipe
// that takes the failed listing for an empty queue reports a hold while H
// holds: two holders. A lock must list again once it is back and wait on
// H (or give up cleanly, its node removed), and hold once H has released.
func peerLostChildrenReply(sc *peerScene) peerCell {
	h := sc.join("H", 0)
	sc.mustHold(h.acquire(0), "W lists the dir while H holds")
	hNode := sc.onlyNode(h)
	w := sc.join("W", 0)
	sess := w.session()
	tw := sc.loseChildrenReply(w)
	// What each recipe does with the failed listing: give up, its
	// node left behind …
	dropped := map[string][2]string{
		recipeGoZK: {"lock.go:101-104", "children, _, err := l.c.Children(l.path)"},
	}
	// … or list again once the client is back.
	relisted := map[string][2]string{
		// ConnectionLoss is one of KazooRetry's retry exceptions: the
		// retried _inner_acquire, its create tried, finds its node by
		// its prefix and lists again.
		recipeKazoo: {"recipe/lock.py:242-243", "node = self._find_node()"},
		// The listing is a foreground call in Curator's RetryLoop,
		// sent again once the client is connected.
		recipeCurator: {curatorImps + "GetChildrenBuilderImpl.java:227-229", "RetryLoop.callWithRetry"},
	}
	watched := sc.settle(w, tw)
	if now := w.session(); now != sess {
		sc.t.Fatalf("W: got session %s after the lost reply; want %s: the scene needs the session to survive the reconnect", now, sess)
	}
	switch {
	case watched == hNode:
		return sc.heldOnceReleased(h, hNode, w, tw, relisted)
	case watched != "":
		return broke("", "waited on %s, not on H's %s", watched, hNode)
	}
	sc.result(tw, harness.Within)
	if _, still := sc.owners()[hNode]; tw.held && still {
		believes := sc.holdsNow(h)
		sc.releaseNow(w)
		return broke("", "two holders at once: its listing's reply lost, W held %s (its acquisition returned after %v) while H still held %s (H's lock object: %s)",
			orUnsaid(tw.node), tw.took.Round(time.Millisecond), hNode, believes)
	}
	if tw.held {
		sc.t.Fatalf("W held and H's node %s is gone, though H has not released: the scene cannot be judged", hNode)
	}
	if left := sc.outlives(w, w.session(), harness.Within); len(left) > 0 {
		return broke(sc.citeFrom(dropped), "failed (%s) and left its node %v in the queue, owned by its live session; %s", brief(tw.err), left, sc.nextBehind(h, left))
	}
	return sc.oursMust(kept("gave up cleanly (%s), its node removed", brief(tw.err)), tw.err, errOursHolds)
}

// nextBehind has h release and acquire again with left, the nodes a failed
// waiter left behind, in the dir, and says what that acquisition does.
func (sc *peerScene) nextBehind(h peerLock, left []string) zh.Text {
	sc.t.Helper()
	sc.releaseNow(h)
	t2 := h.acquire(0)
	switch watched := sc.settle(h, t2); {
	case slices.Contains(left, watched):
		return zh.Say("H released and acquired again: it waits on W's orphan %s", watched)
	case watched != "":
		return zh.Say("H released and acquired again: it waits on %s", watched)
	}
	sc.result(t2, harness.Within)
	if t2.held {
		sc.releaseNow(h)
	}
	return zh.Say("H released and acquired again: %s", heldOrErr(t2))
}

// heldOnceReleased has H, which W's try waits behind, release, and judges
// W: it must hold its own node now, or have given up cleanly. relisted
// cites the peer's code that listed again, for a kept cell.
func (sc *peerScene) heldOnceReleased(h peerLock, hNode string, w peerLock, tw *peerTry, relisted map[string][2]string) peerCell {
	sc.t.Helper()
	sc.releaseNow(h)
	if _, still := sc.owners()[hNode]; still {
		sc.t.Fatalf("H's release left its node %s: W's turn cannot come", hNode)
	}
	sc.result(tw, harness.Within)
	mine := sc.ownedBy(w.session())
	switch {
	case tw.held && len(mine) == 1 && (tw.node == "" || tw.node == mine[0]):
		sc.releaseNow(w)
		c := kept("listed again after the reconnect, waited on H, held once H released")
		c.source = sc.citeFrom(relisted)
		return c
	case tw.held:
		return broke("", "held %s once H released, with nodes %v of its session", orUnsaid(tw.node), mine)
	}
	if left := sc.outlives(w, w.session(), harness.Within); len(left) > 0 {
		return broke("", "waited on H, then failed (%s) and left %v in the queue", brief(tw.err), left)
	}
	return sc.oursMust(kept("waited on H, then gave up cleanly (%s)", brief(tw.err)), tw.err, errOursHolds)
}

// noReplyErr is an err code no reply carries: a LoseReply for it spends
// itself on the reply to the first request its match selects, forwards
// that reply, and reports its header (zxid and err).
const noReplyErr int32 = -1 << 31 // math.MinInt32

// loseChildrenReply starts W's acquisition with W's proxy set to lose the
// reply to W's first getChildren of the dir, and returns once the reply
// was lost. The lost listing must be the one after W's create: the proxy
// notes the create's reply too (noReplyErr), and a read answered after the
// create carries a zxid no lower than the create's. A fault that did not
// take so fails the test: the observation could not be made.
func (sc *peerScene) loseChildrenReply(w peerLock) *peerTry {
	sc.t.Helper()
	px := w.proxy()
	a := newActor(sc.t, w.who())
	cm := faultproxy.Match{Ops: createOps, Under: sc.dir, Err: noReplyErr}
	create := px.LoseReply(cm)
	a.Info("the proxy will note the reply to W's create under %s (a LoseReply for err=%d, which no reply has: it forwards the reply)", cm.Under, cm.Err)
	lm := faultproxy.Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: sc.dir}
	list := px.LoseReply(lm)
	a.Info("the proxy will lose the reply to W's %s", lm)
	tw := w.acquire(0)
	res := harness.FaultEnded(sc.t, list, "the end of the fault on W's getChildren")
	create.Cancel()
	cr := create.Result()
	switch {
	case !res.Dropped:
		sc.t.Fatalf("the reply to W's getChildren of %s was not lost: %+v", sc.dir, res)
	case cr.Conn == 0 || cr.Zxid == 0 || cr.Err != 0:
		sc.t.Fatalf("W's create under %s: got %+v; want its reply seen, a success, before the lost listing", sc.dir, cr)
	case res.Zxid < cr.Zxid:
		sc.t.Fatalf("the lost listing (zxid 0x%x) was answered before W's create (zxid 0x%x): it is not the listing after the create", res.Zxid, cr.Zxid)
	}
	a.Info("the proxy lost the reply to W's %s of %s (zxid 0x%x), after W's create (zxid 0x%x)", jute.OpName(res.Op), res.Path, res.Zxid, cr.Zxid)
	return tw
}

package locktest

import (
	"testing"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// scenario is one row of the table: what it is about, where it plays, and
// its body, which judges one recipe.
type scenario struct {
	id    string  // short and stable: the row's key in the evidence lines
	test  string  // the test of package peers that runs it
	title zh.Text // what the row is about
	// parallel: the scenario runs beside others; one that asserts how long
	// something took runs alone. expiry: it needs a server whose sessions
	// expire within seconds (harness.ExpiryServer).
	parallel, expiry bool
	play             func(sc *peerScene) peerCell
}

func (s scenario) public() Scenario {
	return Scenario{ID: s.id, Title: s.title.En, TitleZh: s.title.Zh, Test: s.test}
}

// server is the server the scenario plays on, lent to t.
func (s scenario) server(t zkserver.TB) *zkserver.Server {
	t.Helper()
	if s.expiry {
		return harness.ExpiryServer(t)
	}
	return harness.SharedServer(t)
}

// scenarios are every scenario, in the order of the peer table's tests.
var scenarios = []scenario{
	{id: "stranger", test: "TestPeerStrangerChild", title: zh.Say("a child that is not a lock node (`config`) sits in the lock dir"), parallel: true, expiry: false, play: peerStrangerChild},
	{id: "own-node-deleted", test: "TestPeerOwnNodeDeletedWhileWaiting", title: zh.Say("the waiter's own node is deleted by another client while it waits"), parallel: true, expiry: false, play: peerOwnNodeDeletedWhileWaiting},
	{id: "suffix-order", test: "TestPeerOrderBySuffix", title: zh.Say("an older node whose name sorts after the waiter's (order by suffix, not by name)"), parallel: true, expiry: false, play: peerOrderBySuffix},
	{id: "wrap-older", test: "TestPeerWrappedSuffixOlder", title: zh.Say("an older node named as after the sequence counter wrapped (`…-000000001`)"), parallel: true, expiry: false, play: peerWrappedSuffixOlder},
	{id: "wrap-newer", test: "TestPeerWrappedSuffixNewer", title: zh.Say("a newer node named as after the counter wrapped (`…-2147483648`) appears while the waiter waits"), parallel: true, expiry: false, play: peerWrappedSuffixNewer},
	{id: "over-long", test: "TestPeerOverlongSuffix", title: zh.Say("an older lock-named node whose suffix has 11 digits"), parallel: true, expiry: false, play: peerOverlongSuffix},
	{id: "lost-reply", test: "TestPeerLostCreateReply", title: zh.Say("the create's reply is lost; the session survives the reconnect"), parallel: true, expiry: false, play: peerLostCreateReply},
	{id: "lost-reply-expired", test: "TestPeerLostCreateReplySessionExpired", title: zh.Say("the create's reply is lost and the session expires before the client gets back"), parallel: true, expiry: true, play: peerLostCreateReplySessionExpired},
	{id: "foreign-guid", test: "TestPeerForeignGUID", title: zh.Say("after a lost create reply, the only node with the waiter's GUID is another session's"), parallel: true, expiry: false, play: peerForeignGUID},
	{id: "reacquire-foreign", test: "TestPeerReacquireAfterForeignPrefix", title: zh.Say("a second acquisition on the same lock object, with another session's node named like the first"), parallel: true, expiry: false, play: peerReacquireAfterForeignPrefix},
	{id: "cancel", test: "TestPeerCancelWhileWaiting", title: zh.Say("the waiter is cancelled while it waits"), parallel: true, expiry: false, play: peerCancelWhileWaiting},
	{id: "cleanup-reply-lost", test: "TestPeerGiveUpCleanupReplyLost", title: zh.Say("the waiter times out and the reply to its cleanup delete is lost"), parallel: true, expiry: false, play: peerGiveUpCleanupReplyLost},
	{id: "expiry-holding", test: "TestPeerSessionExpiresWhileHolding", title: zh.Say("the session expires while the recipe holds: does it know it no longer holds?"), parallel: true, expiry: true, play: peerSessionExpiresWhileHolding},
	{id: "total-deadline", test: "TestPeerTimeoutIsATotalDeadline", title: zh.Say("the waiter's predecessor keeps changing: is the acquire timeout a total deadline?"), parallel: false, expiry: false, play: peerTimeoutIsATotalDeadline},
	{id: "lost-children-reply", test: "TestPeerLostChildrenReply", title: zh.Say("the reply to the waiter's getChildren (the listing that decides whether it is first) is lost; the session survives the reconnect"), parallel: true, expiry: false, play: peerLostChildrenReply},
	{id: "suspended-holding", test: "TestPeerSuspendedHolderKnows", title: zh.Say("knows it may have lost, while cut off: the holder's connection drops, and comes back before the session expires"), parallel: false, expiry: false, play: peerSuspendedHolderKnows},
	{id: "foreign-child-first", test: "TestPeerForeignChildSortsFirst", title: zh.Say("another lock's dir (`0`, a persistent child whose name sorts before every candidate) sits in the lock dir (CURATOR-43)"), parallel: true, expiry: false, play: peerForeignChildSortsFirst},
	{id: "lost-lookup", test: "TestPeerLostLookupAfterLostCreate", title: zh.Say("the create's reply is lost, then the reply to the look-up that would find the node again (go-zookeeper #229)"), parallel: true, expiry: false, play: peerLostLookupAfterLostCreate},
	{id: "cleanup-request-lost", test: "TestPeerGiveUpCleanupRequestLost", title: zh.Say("the waiter times out and its cleanup delete never reaches the server (kazoo #732)"), parallel: true, expiry: false, play: peerGiveUpCleanupRequestLost},
	{id: "release-cut-off", test: "TestPeerReleaseWhileCutOff", title: zh.Say("the holder releases while cut off: its delete cannot reach the server (CURATOR-678)"), parallel: true, expiry: false, play: peerReleaseWhileCutOff},
	{id: "stale-session-node", test: "TestPeerStaleSessionNode", title: zh.Say("a new session's waiter finds its previous session's node, about to be deleted, first in line (CURATOR-604)"), parallel: true, expiry: true, play: peerStaleSessionNode},
}

// TableOptions are what package peers gives Table.
type TableOptions struct {
	// Scenario is called on the scenario's test before any column runs.
	Scenario func(t *testing.T, s Scenario)
	// Result is called with each column's Result, in the column's subtest.
	Result func(t *testing.T, r Result)
	// OnSkip skips a column's subtest, saying why in English and Chinese
	// (t.Skipf if nil).
	OnSkip func(t *testing.T, why, whyZh string)
}

// Table runs scenario id for every column of this module's peer table
// (package peers): ours (package lock), go-zookeeper's zk.Lock, kazoo's
// Lock and Curator's InterProcessMutex through their drivers, the drivers
// named in ZK19_PEERS (see ParseEnv in internal/proof/peer and
// testdata/peers/PROTOCOL.md); each column is a subtest
// named after it. The columns run side by side when the scenario does
// (most of a scene is waiting for an expiry or a driver).
func Table(t *testing.T, id string, o TableOptions) {
	t.Helper()
	var s scenario
	for _, c := range scenarios {
		if c.id == id {
			s = c
		}
	}
	if s.id == "" {
		t.Fatalf("locktest.Table: got scenario %q; want one of Scenarios()", id)
	}
	if s.parallel {
		harness.Parallel(t)
	}
	srv := s.server(t)
	if o.Scenario != nil {
		o.Scenario(t, s.public())
	}
	skip := defaultSkip
	if o.OnSkip != nil {
		skip = func(t zkserver.TB, why zh.Text) { o.OnSkip(t.(*testing.T), why.En, why.Zh) }
	}
	sideBySide := harness.InParallel(t)
	for _, r := range tableRecipes(t) {
		t.Run(r.name, func(t *testing.T) {
			if sideBySide {
				t.Parallel()
			}
			res := playOne(t, s, srv, r, skip)
			if o.Result != nil {
				o.Result(t, res)
			}
		})
	}
}

package peers_test

// The peer table: every scenario of package locktest, run against every
// column (ours, go-zookeeper's zk.Lock, kazoo's Lock, Curator's
// InterProcessMutex, the drivers of ZK19_PEERS), one test a scenario. A
// column's Result is recorded as a cell of the table "How other recipes
// fare", never failed; a test fails when an observation could not be made
// (NotShown), or when ours did not keep a guarantee.
//
// A cell is one line, in one fixed shape that cmd/evidence reads:
//
//	evidence: peer <scenario> | scenario | <title>
//	evidence: peer <scenario> | <recipe> [<version>] | <kept|broke|n/a> | <outcome> | <source or ->

import (
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/locktest"
)

// peerTable runs locktest's scenario id for every column and records each
// cell.
func peerTable(t *testing.T, id string) {
	t.Helper()
	var title zh.Text
	locktest.Table(t, id, locktest.TableOptions{
		Scenario: func(t *testing.T, s locktest.Scenario) {
			title = zh.Text{En: s.Title, Zh: s.TitleZh}
			claims.Evidence(t, "peer %s | scenario | %s", s.ID, title)
		},
		Result: func(t *testing.T, r locktest.Result) { record(t, title, r) },
		OnSkip: func(t *testing.T, why, whyZh string) { claims.Skip(t, "%s", zh.Text{En: why, Zh: whyZh}) },
	})
}

// record logs a column's cell. A scenario that could not be made fails the
// test; ours must keep every guarantee: a cell of ours that did not fails
// the test.
func record(t *testing.T, title zh.Text, r locktest.Result) {
	t.Helper()
	outcome := zh.Text{En: r.Observation, Zh: r.ObservationZh}
	if r.Verdict == locktest.NotShown {
		t.Fatalf("%s: %s", r.Scenario, outcome)
	}
	recipe := strings.TrimSpace(r.Recipe + " " + r.Version)
	src := r.Source
	if src == "" {
		src = "-"
	}
	claims.Evidence(t, "peer %s | %s | %s | %s | %s", r.Scenario, recipe, string(r.Verdict), outcome.Map(oneField), oneField(src))
	if r.Recipe == "ours" && r.Verdict != locktest.Kept {
		t.Errorf("ours, scenario %s (%s): got %s: %s; want every guarantee kept", r.Scenario, title, r.Verdict, outcome)
	}
}

// oneField keeps a cell's text on one line and out of the separators.
func oneField(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "/")
}

// TestPeerStrangerChild is the peer table's row "stranger" (locktest: peerStrangerChild).
func TestPeerStrangerChild(t *testing.T) { peerTable(t, "stranger") }

// TestPeerOwnNodeDeletedWhileWaiting is the peer table's row "own-node-deleted" (locktest: peerOwnNodeDeletedWhileWaiting).
func TestPeerOwnNodeDeletedWhileWaiting(t *testing.T) { peerTable(t, "own-node-deleted") }

// TestPeerOrderBySuffix is the peer table's row "suffix-order" (locktest: peerOrderBySuffix).
func TestPeerOrderBySuffix(t *testing.T) { peerTable(t, "suffix-order") }

// TestPeerWrappedSuffixOlder is the peer table's row "wrap-older" (locktest: peerWrappedSuffixOlder).
func TestPeerWrappedSuffixOlder(t *testing.T) { peerTable(t, "wrap-older") }

// TestPeerWrappedSuffixNewer is the peer table's row "wrap-newer" (locktest: peerWrappedSuffixNewer).
func TestPeerWrappedSuffixNewer(t *testing.T) { peerTable(t, "wrap-newer") }

// TestPeerOverlongSuffix is the peer table's row "over-long" (locktest: peerOverlongSuffix).
func TestPeerOverlongSuffix(t *testing.T) { peerTable(t, "over-long") }

// TestPeerLostCreateReply is the peer table's row "lost-reply" (locktest: peerLostCreateReply).
func TestPeerLostCreateReply(t *testing.T) { peerTable(t, "lost-reply") }

// TestPeerLostCreateReplySessionExpired is the peer table's row "lost-reply-expired" (locktest: peerLostCreateReplySessionExpired).
func TestPeerLostCreateReplySessionExpired(t *testing.T) { peerTable(t, "lost-reply-expired") }

// TestPeerForeignGUID is the peer table's row "foreign-guid" (locktest: peerForeignGUID).
func TestPeerForeignGUID(t *testing.T) { peerTable(t, "foreign-guid") }

// TestPeerReacquireAfterForeignPrefix is the peer table's row "reacquire-foreign" (locktest: peerReacquireAfterForeignPrefix).
func TestPeerReacquireAfterForeignPrefix(t *testing.T) { peerTable(t, "reacquire-foreign") }

// TestPeerCancelWhileWaiting is the peer table's row "cancel" (locktest: peerCancelWhileWaiting).
func TestPeerCancelWhileWaiting(t *testing.T) { peerTable(t, "cancel") }

// TestPeerGiveUpCleanupReplyLost is the peer table's row "cleanup-reply-lost" (locktest: peerGiveUpCleanupReplyLost).
func TestPeerGiveUpCleanupReplyLost(t *testing.T) { peerTable(t, "cleanup-reply-lost") }

// TestPeerSessionExpiresWhileHolding is the peer table's row "expiry-holding" (locktest: peerSessionExpiresWhileHolding).
func TestPeerSessionExpiresWhileHolding(t *testing.T) { peerTable(t, "expiry-holding") }

// TestPeerTimeoutIsATotalDeadline is the peer table's row "total-deadline" (locktest: peerTimeoutIsATotalDeadline).
func TestPeerTimeoutIsATotalDeadline(t *testing.T) { peerTable(t, "total-deadline") }

// TestPeerLostChildrenReply is the peer table's row "lost-children-reply" (locktest: peerLostChildrenReply).
func TestPeerLostChildrenReply(t *testing.T) { peerTable(t, "lost-children-reply") }

// TestPeerSuspendedHolderKnows is the peer table's row "suspended-holding" (locktest: peerSuspendedHolderKnows).
func TestPeerSuspendedHolderKnows(t *testing.T) { peerTable(t, "suspended-holding") }

// TestPeerForeignChildSortsFirst is the peer table's row "foreign-child-first" (locktest: peerForeignChildSortsFirst).
func TestPeerForeignChildSortsFirst(t *testing.T) { peerTable(t, "foreign-child-first") }

// TestPeerLostLookupAfterLostCreate is the peer table's row "lost-lookup" (locktest: peerLostLookupAfterLostCreate).
func TestPeerLostLookupAfterLostCreate(t *testing.T) { peerTable(t, "lost-lookup") }

// TestPeerGiveUpCleanupRequestLost is the peer table's row "cleanup-request-lost" (locktest: peerGiveUpCleanupRequestLost).
func TestPeerGiveUpCleanupRequestLost(t *testing.T) { peerTable(t, "cleanup-request-lost") }

// TestPeerReleaseWhileCutOff is the peer table's row "release-cut-off" (locktest: peerReleaseWhileCutOff).
func TestPeerReleaseWhileCutOff(t *testing.T) { peerTable(t, "release-cut-off") }

// TestPeerStaleSessionNode is the peer table's row "stale-session-node" (locktest: peerStaleSessionNode).
func TestPeerStaleSessionNode(t *testing.T) { peerTable(t, "stale-session-node") }

package locktest_test

import (
	"testing"

	"github.com/zk19/zk19/locktest"
)

// zkLockColumn is the peer table's go-zookeeper column (EVIDENCE.md, "How
// other recipes fare"): zk.Lock through Recipe must read the same.
var zkLockColumn = map[string]locktest.Verdict{
	"stranger": locktest.Broken, "own-node-deleted": locktest.Broken, "suffix-order": locktest.Kept,
	"wrap-older": locktest.Broken, "wrap-newer": locktest.Broken, "over-long": locktest.Kept,
	"lost-reply": locktest.Kept, "lost-reply-expired": locktest.Kept, "foreign-guid": locktest.Broken,
	"reacquire-foreign": locktest.Kept, "cancel": locktest.NoFeature, "cleanup-reply-lost": locktest.NoFeature,
	"expiry-holding": locktest.Broken, "total-deadline": locktest.NoFeature, "lost-children-reply": locktest.Broken,
	"foreign-child-first": locktest.Broken, "lost-lookup": locktest.Broken, "cleanup-request-lost": locktest.NoFeature,
	"release-cut-off": locktest.Kept, "stale-session-node": locktest.Kept, "suspended-holding": locktest.Broken,
}

// TestZkLockThroughRecipe: every scenario, run on zk.Lock behind Recipe,
// gives the verdict of the peer table's go-zookeeper column, and none is
// left out of the run. A scenario
// broken on purpose (a fault that never takes, a judgement that always
// says kept) changes one of them.
func TestZkLockThroughRecipe(t *testing.T) {
	if got, want := len(locktest.Scenarios()), len(zkLockColumn); got != want {
		t.Fatalf("got %d scenarios; want %d, each with zk.Lock's verdict", got, want)
	}
	results := locktest.Check(t, "zk.Lock", zkLockRecipe{})
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Scenario] = true
		if want := zkLockColumn[r.Scenario]; r.Verdict != want {
			t.Errorf("scenario %s: got %s: %s; want %s", r.Scenario, r.Verdict, r.Observation, want)
		}
	}
	if len(results) != len(zkLockColumn) || len(seen) != len(zkLockColumn) {
		t.Errorf("got %d results of %d scenarios; want one result for each of the %d (Check runs every scenario)", len(results), len(seen), len(zkLockColumn))
	}
}

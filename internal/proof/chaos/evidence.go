package chaos

import (
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
)

// ChaosEvidence logs the run's decisive line and its summary table.
func ChaosEvidence(t *testing.T, plan Plan, cols []zh.Text, sums []*Summary, left zh.Text) {
	t.Helper()
	var stale int
	n := map[Counter]int{}
	refused, accepted, below := map[string]int{}, map[string]int{}, map[string]int{}
	for _, s := range sums {
		if s == nil {
			continue
		}
		stale += s.Get(StaleLate)
		for _, c := range []Counter{Overlaps, EarlierNodeGone, LaterNodeGone, TwoHolders, ReadBack, OwnGone, NotLowest} {
			n[c] += s.Get(c)
		}
		for _, r := range []string{ResMemory, ResDurable, ResPostgres, ResControl} {
			a, f := s.StaleLate(r)
			accepted[r], refused[r], below[r] = accepted[r]+a, refused[r]+f, below[r]+s.BelowMark(r)
		}
	}
	claims.Evidence(t, "seed %d, %d workers, %s, %s: %d stale-late writes (a frozen holder's, its node gone while a higher token was accepted): the fenced memory resource refused %d, the fenced durable one %d, the fenced PostgreSQL one %d, the unfenced control accepted %d; writes accepted below the resource's own mark: memory %d, durable %d, PostgreSQL %d, control %d; overlapping holds (lock's view): %d, judged on the server as %d pairs: the earlier holder's node gone (expected: its session expired, the lock passed on) %d, the later holder's own node gone %d, both nodes on the server (two holders at once) %d; holds read back on the server: %d, own node the lowest %d, own node gone %d, a candidate below it %d; %s",
		plan.Seed, ChaosWorkers, plan.Size.Text(), zh.Join(cols, zh.Say(" and ")), stale, refused[ResMemory], refused[ResDurable], refused[ResPostgres], accepted[ResControl],
		below[ResMemory], below[ResDurable], below[ResPostgres], below[ResControl], n[Overlaps],
		n[EarlierNodeGone]+n[LaterNodeGone]+n[TwoHolders], n[EarlierNodeGone], n[LaterNodeGone], n[TwoHolders],
		n[ReadBack], n[ReadBack]-n[OwnGone]-n[NotLowest], n[OwnGone], n[NotLowest], left)
	for _, row := range Table(cols, sums) {
		claims.Evidence(t, "%s", row)
	}
}

package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/zk19/zk19/fence"
)

// Ledger keeps the writes one resource accepted, with the commit number the
// resource gave each (fence.Result.Commit), so that they can be put back in
// the order the resource applied them, whatever order the workers' calls
// returned in. It is safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	accepted []Accepted
}

// Record notes who's write with tok if the resource accepted it.
func (l *Ledger) Record(who string, tok fence.Token, r fence.Result) {
	if !r.Accepted {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted = append(l.accepted, Accepted{Commit: r.Commit, Who: who, Token: tok})
}

// Accepted returns the writes recorded, in commit order.
func (l *Ledger) Accepted() []Accepted {
	l.mu.Lock()
	es := slices.Clone(l.accepted)
	l.mu.Unlock()
	slices.SortFunc(es, func(a, b Accepted) int { return cmp.Compare(a.Commit, b.Commit) })
	return es
}

// Regressions lists, in commit order, every accepted write whose token is
// below one the resource had accepted before it: what a fenced resource
// must never do, and what an unfenced one does with a stale write.
func (l *Ledger) Regressions() []string { return regressions(l.Accepted()) }

// regressions is Regressions of writes accepted, in any order.
func regressions(accepted []Accepted) []string {
	es := slices.Clone(accepted)
	slices.SortFunc(es, func(a, b Accepted) int { return cmp.Compare(a.Commit, b.Commit) })
	var out []string
	var high Accepted
	for i, e := range es {
		if i > 0 && e.Token.Compare(high.Token) < 0 {
			out = append(out, fmt.Sprintf("%s's token %v accepted as commit %d after %s's %v (commit %d)",
				e.Who, e.Token, e.Commit, high.Who, high.Token, high.Commit))
		}
		if i == 0 || e.Token.Compare(high.Token) > 0 {
			high = e
		}
	}
	return out
}

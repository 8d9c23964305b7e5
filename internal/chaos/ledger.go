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
	accepted []entry
}

type entry struct {
	commit uint64
	who    string
	tok    fence.Token
}

// Record notes who's write with tok if the resource accepted it.
func (l *Ledger) Record(who string, tok fence.Token, r fence.Result) {
	if !r.Accepted {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted = append(l.accepted, entry{commit: r.Commit, who: who, tok: tok})
}

// Regressions lists, in commit order, every accepted write whose token is
// below one the resource had accepted before it: what a fenced resource
// must never do, and what an unfenced one does with a stale write.
func (l *Ledger) Regressions() []string {
	l.mu.Lock()
	es := slices.Clone(l.accepted)
	l.mu.Unlock()
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.commit, b.commit) })
	var out []string
	var high entry
	for i, e := range es {
		if i > 0 && e.tok.Compare(high.tok) < 0 {
			out = append(out, fmt.Sprintf("%s's token %v accepted as commit %d after %s's %v (commit %d)",
				e.who, e.tok, e.commit, high.who, high.tok, high.commit))
		}
		if i == 0 || e.tok.Compare(high.tok) > 0 {
			high = e
		}
	}
	return out
}

// Holders tracks who holds the lock from the lock's own view: from the
// moment Acquire (or Recover) returns a hold to the moment its worker
// decides to release it or learns it is lost. Two holds at once are an
// overlap: the article's point is that they happen, so the caller counts
// them rather than failing. It is safe for concurrent use.
type Holders struct {
	mu  sync.Mutex
	now map[string]fence.Token
}

// Begin notes that who holds with tok, and returns the others holding at
// that moment (an overlap when there is any), as "W2 g5/7".
func (h *Holders) Begin(who string, tok fence.Token) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.now == nil {
		h.now = map[string]fence.Token{}
	}
	var others []string
	for w, t := range h.now {
		others = append(others, fmt.Sprintf("%s %v", w, t))
	}
	slices.Sort(others)
	h.now[who] = tok
	return others
}

// End notes that who's hold is over from its own view.
func (h *Holders) End(who string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.now, who)
}

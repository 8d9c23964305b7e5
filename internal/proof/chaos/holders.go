package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zk19/zk19/fence"
)

// Hold is one hold from the lock's view: who holds, with which token, on
// which node of which session, and since when.
type Hold struct {
	Who     string
	Token   fence.Token
	Node    string        // the hold's node, a full path
	Session int64         // the session the worker's Locker pinned, which created the node
	Since   time.Duration // when Acquire returned it, from the setup's start
}

// String names the hold as the worker's log does: "W2 g5/7".
func (h Hold) String() string { return fmt.Sprintf("%s %v", h.Who, h.Token) }

// Holders tracks who holds the lock from the lock's own view: from the
// moment Acquire returns a hold to the moment its worker
// decides to release it or learns it is lost. Two holds at once are an
// overlap. The article expects some: a holder frozen until its session
// expired still believes it holds after its node is gone and the next
// holder took over. Whether an overlap is that or two holders at once is
// for the server to say (Read); Holders only says who overlapped whom, and
// keeps an overlapped hold from ending while the later hold's check reads
// the server. It is safe for concurrent use.
type Holders struct {
	mu  sync.Mutex
	now map[string]*holding
}

type holding struct {
	Hold
	// pins counts the checks of later holds that read this hold's node.
	// Every Add happens under Holders.mu while the holding is in now, and
	// End removes it from now before it waits: no Add follows the Wait.
	pins sync.WaitGroup
}

// Begin notes hold and returns the others holding at that moment, in name
// order (an overlap when there is any). They stay pinned until the caller
// calls unpin: until then their End waits. So a worker cannot end its hold
// and release (delete) its node while a later hold's check reads the
// server: a node that check finds gone was removed by the server (its
// session ended), not by an overlap that was over a moment after it began.
func (h *Holders) Begin(hold Hold) (others []Hold, unpin func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.now == nil {
		h.now = map[string]*holding{}
	}
	var pinned []*holding
	for _, o := range h.now {
		o.pins.Add(1)
		pinned = append(pinned, o)
	}
	slices.SortFunc(pinned, func(a, b *holding) int { return cmp.Compare(a.Who, b.Who) })
	for _, o := range pinned {
		others = append(others, o.Hold)
	}
	h.now[hold.Who] = &holding{Hold: hold}
	return others, sync.OnceFunc(func() {
		for _, o := range pinned {
			o.pins.Done()
		}
	})
}

// End notes that who's hold is over from its own view. It returns once no
// check of a later hold pins it any more (Begin).
func (h *Holders) End(who string) {
	h.mu.Lock()
	o := h.now[who]
	delete(h.now, who)
	h.mu.Unlock()
	if o != nil {
		o.pins.Wait()
	}
}

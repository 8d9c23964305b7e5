package chaos

import (
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// lostCreates follows, in one worker's trace of the lock, each create
// whose reply was lost (it returned a connection error, so it may have
// made its node) to what the recipe made of it, and counts that in the
// summary: the node adopted in the same session (Recovered), none found
// and a create sent again, or the acquisition's end without either (the
// session changed: the worker creates again in its new one; several
// nodes of the GUID: ambiguous; anything else: undecided). Acquire
// recovers a lost create by itself, so it is the trace, not the worker's
// calls, that sees them. It is safe for concurrent use.
type lostCreates struct {
	sum     *Summary
	mu      sync.Mutex
	pending bool // a lost create whose outcome the trace has not shown yet
}

// trace is the Trace that follows the lost creates.
func (c *lostCreates) trace() *locktrace.Trace {
	return &locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			if r.Op == locktrace.OpCreate {
				c.settle(LostCreatedAgain)
			}
		},
		Reply: func(r locktrace.ReplyInfo) {
			if r.Op == locktrace.OpCreate && (errors.Is(r.Err, zk.ErrConnectionClosed) || errors.Is(r.Err, zk.ErrNoServer)) {
				c.mu.Lock()
				c.pending = true
				c.mu.Unlock()
				c.sum.Add(LostCreates, 1)
			}
		},
		Recovered: func(locktrace.NodeInfo) { c.settle(LostAdopted) },
	}
}

// settle counts the pending lost create, if any, as outcome.
func (c *lostCreates) settle(outcome Counter) {
	c.mu.Lock()
	pending := c.pending
	c.pending = false
	c.mu.Unlock()
	if pending {
		c.sum.Add(outcome, 1)
	}
}

// after settles, from what an acquisition returned, a lost create whose
// outcome its trace did not show: the session changed, several nodes of
// its GUID were found, none was found and the recipe's retries were spent
// (the worker's next acquisition creates again), or the recovery could not
// decide.
func (c *lostCreates) after(err error) {
	ce, isCreate := errors.AsType[*lock.CreateError](err)
	switch {
	case errors.Is(err, lock.ErrSessionChanged):
		c.settle(LostSessionChanged)
	case errors.Is(err, lock.ErrAmbiguous):
		c.settle(LostAmbiguous)
	case isCreate && ce.Recovery == nil:
		c.settle(LostCreatedAgain)
	default:
		c.settle(LostUndecided)
	}
}

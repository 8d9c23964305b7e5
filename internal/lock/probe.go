package lock

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Probe is the package's one test seam: a test makes one, hands it to New
// as an Option, and observes and steers the Locker's acquisitions through
// it. The hooks run on the acquiring goroutine (Trace also on a hold's Lost
// watcher); a hook that blocks blocks the acquisition. Production code
// passes no Probe.
type Probe struct {
	// BeforeWatch runs after the parent was listed and before
	// exists(pred, watch). Deleting pred here makes the list/exists race
	// happen every time (claim L8).
	BeforeWatch func(own, pred string)
	// Trace receives every step in the style of a Jepsen history: typ is
	// "invoke", "ok", "fail" or "info"; op names the step ("create",
	// "sync", "children", "exists", "wait", "event", "acquired", "lost",
	// "abort", "recovered", "delete", "release"); detail is the rest of the
	// line.
	// "info wait <path>" means the acquisition now blocks on the watch of
	// <path>.
	Trace func(typ, op, detail string)

	mu       sync.Mutex
	attempts []*waiter
}

// Attempt is one acquisition as Probe.Inspect sees it.
type Attempt struct {
	Own      string // own node name
	Pred     string // predecessor watched now or last
	Waiting  bool   // blocked on the watch of Pred
	Rounds   int    // getChildren rounds so far
	Wakeups  int    // watch events received so far
	NoNode   int    // times exists(pred, watch) found no node
	Done     bool   // the acquisition has returned
	Acquired bool   // ... as holder
	Err      error  // ... with this error
}

// Inspect returns one Attempt for every acquisition made under this probe,
// in the order they began. A finished one gives its final state. A waiting
// one first takes in any watch event already delivered to its channel, so
// after a read on the same connection has returned (which orders every
// earlier notification before it), Inspect tells for certain whether a
// notification arrived. One that is between rounds answers when it next
// blocks or returns.
func (p *Probe) Inspect(ctx context.Context) ([]Attempt, error) {
	p.mu.Lock()
	ws := append([]*waiter(nil), p.attempts...)
	p.mu.Unlock()
	out := make([]Attempt, 0, len(ws))
	for _, w := range ws {
		st, err := w.inspect(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	return out, nil
}

// waiter is an attempt's side of the probe. Without a probe it has no
// probe channel and nobody asks.
type waiter struct {
	probe   chan chan Attempt
	done    chan struct{}
	final   Attempt        // set before done closes
	pending []chan Attempt // owned by the acquiring goroutine
}

func (p *Probe) register() *waiter {
	w := &waiter{done: make(chan struct{})}
	if p == nil {
		return w
	}
	w.probe = make(chan chan Attempt)
	p.mu.Lock()
	p.attempts = append(p.attempts, w)
	p.mu.Unlock()
	return w
}

func (w *waiter) inspect(ctx context.Context) (Attempt, error) {
	reply := make(chan Attempt, 1)
	select {
	case w.probe <- reply:
	case <-w.done:
		return w.final, nil
	case <-ctx.Done():
		return Attempt{}, ctx.Err()
	}
	select {
	case st := <-reply:
		return st, nil
	case <-ctx.Done():
		return Attempt{}, ctx.Err()
	}
}

func (w *waiter) finish(st Attempt) {
	w.final = st
	close(w.done)
	for _, r := range w.pending {
		r <- st
	}
	w.pending = nil
}

// wait blocks on the watch channel, answering probes. Before answering, it
// takes in an event already delivered; the answer then waits for the next
// blocking point (or the end of the acquisition), so it describes the state
// after that event was handled.
func (w *waiter) wait(ctx context.Context, ch <-chan zk.Event, st *Attempt) (zk.Event, error) {
	st.Waiting = true
	defer func() { st.Waiting = false }()
	received := func(ev zk.Event, ok bool) zk.Event {
		st.Wakeups++
		if !ok {
			return zk.Event{Type: zk.EventNotWatching, Err: zk.ErrClosing}
		}
		return ev
	}
	for {
		if len(w.pending) > 0 {
			select {
			case ev, ok := <-ch:
				return received(ev, ok), nil
			default:
			}
			for _, r := range w.pending {
				r <- *st
			}
			w.pending = w.pending[:0]
		}
		select {
		case ev, ok := <-ch:
			return received(ev, ok), nil
		case <-ctx.Done():
			return zk.Event{}, ctx.Err()
		case r := <-w.probe:
			w.pending = append(w.pending, r)
		}
	}
}

// apply makes a *Probe an Option: New(conn, parent, probe).
func (p *Probe) apply(l *Locker) { l.probe = p }

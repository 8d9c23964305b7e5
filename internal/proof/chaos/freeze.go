package chaos

import (
	"context"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/lock"
)

// freeze is the nemesis's request that a worker stop, holding its token,
// before it writes.
type freeze struct {
	held  chan *lock.Held  // the worker's hold, once it stops
	gate  chan struct{}    // closed to let it write
	wrote chan frozenWrite // its writes, and the moment it made them
	once  sync.Once
}

// frozenWrite is what a frozen worker did once its gate opened: its
// writes, in the order of run.res, and what it saw just before them.
type frozenWrite struct {
	got []fence.Result
	at  Moment
}

func newFreeze() *freeze {
	return &freeze{held: make(chan *lock.Held, 1), gate: make(chan struct{}), wrote: make(chan frozenWrite, 1)}
}

func (f *freeze) open() { f.once.Do(func() { close(f.gate) }) }

// frozenExpiry makes the stale-late case: the worker stops once it holds
// and has its token; its connections are blackholed until the server has
// expired its session and deleted its node, and another worker has held
// and written a higher token to both fenced resources; then the partition
// heals and the frozen worker writes with its old token.
func (nm *nemesis) frozenExpiry(f Fault) bool {
	run := nm.run
	t, w := run.t, run.workers[f.Worker]
	fr := newFreeze()
	defer fr.open()
	nm.a.Invoke("freeze %s once it holds with its token; partition it until its session expires", w.name)
	w.freeze <- fr
	var h *lock.Held
	select {
	case h = <-fr.held:
	case <-time.After(chaosFaultWithin):
		select {
		case <-w.freeze:
		default:
		}
		nm.a.Info("%s did not hold within %v; the freeze is withdrawn", w.name, chaosFaultWithin)
		return false
	}
	nm.a.Ok("%s frozen holding %s with token %v", w.name, path.Base(h.Path), h.Token)
	for _, p := range w.proxies {
		p.Blackhole(faultproxy.Both)
	}
	heal := sync.OnceFunc(func() {
		for _, p := range w.proxies {
			p.Heal()
		}
	})
	defer heal()
	nm.awaitSuccessor(w, h)
	heal()
	nm.a.Invoke("heal %s's connections and open its gate: it writes with token %v", w.name, h.Token)
	fr.open()
	got := tb.Receive(t, chaosFaultWithin, "C1: "+w.name+"'s write after its gate opened", fr.wrote)
	fw := &FrozenWrite{Fault: f.N, Kind: f.Kind, Worker: w.name, Token: h.Token, Moment: got.at}
	for i, r := range run.res {
		fw.Writes = append(fw.Writes, WriteAnswer{Resource: r.name, Fenced: r.fenced, Accepted: got.got[i].Accepted, Mark: got.got[i].Mark})
	}
	run.record(Event{FrozenWrite: fw})
	if !got.at.Stale() {
		// The schedule's doing, not the fence's: the write was a holder's,
		// which every resource may accept (the Checker's RuleEarlyWrite).
		nm.a.Info("%s wrote with token %v before it was stale-late: %s; %s", w.name, h.Token, got.at, fw.Answers())
		return true
	}
	run.sum.Add(StaleLate, 1)
	nm.a.Ok("%s's stale-late write with token %v: %s", w.name, h.Token, fw.Answers())
	return true
}

// awaitSuccessor waits until the frozen holder's node is gone, as the
// observer sees it, and both fenced resources hold a token above its own.
func (nm *nemesis) awaitSuccessor(w *chaosWorker, h *lock.Held) {
	run := nm.run
	marks := make([]fence.Token, len(run.res))
	err := tb.WaitUntil(10*harness.ExpirySessionTimeout+chaosProgressWithin, w.name+"'s node to go and a higher token to reach the fenced resources", func() (bool, string) {
		exists, _, err := run.O.Exists(h.Path)
		ok := err == nil && !exists
		for i, r := range run.res {
			if r.fenced {
				_, marks[i], _, _ = r.r.Read(context.Background())
				ok = ok && marks[i].Compare(h.Token) > 0
			}
		}
		return ok, fmt.Sprintf("node exists=%v (%v), marks %v", exists, err, marks)
	})
	if err != nil {
		run.judgeSoFar()
		claims.NotShown(run.t, "C1", "the lock stalled: %s stayed frozen and partitioned, and no successor took over: %v", w.name, err)
	}
	nm.a.Ok("%s's node %s is gone (O sees no node) and the fenced resources hold %v and %v, above its %v", w.name, path.Base(h.Path), marks[0], marks[1], h.Token)
}

// momentOf looks, for the holder of h about to write, whether its node is
// gone and a higher token accepted by every fenced resource.
func (run *chaosRun) momentOf(h *lock.Held) Moment {
	m := Moment{Node: path.Base(h.Path), Above: true, Checked: true}
	exists, _, err := run.O.Exists(h.Path)
	m.Gone = err == nil && !exists
	if err != nil {
		m.Err = err.Error()
	}
	for _, r := range run.res {
		if !r.fenced {
			continue
		}
		_, mark, _, err := r.r.Read(context.Background())
		if err != nil && m.Err == "" {
			m.Err = fmt.Sprintf("read %s: %v", r.name, err)
		}
		m.Marks = append(m.Marks, mark)
		m.Above = m.Above && err == nil && mark.Compare(h.Token) > 0
	}
	return m
}

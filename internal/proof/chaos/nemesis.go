package chaos

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// nemesis injects the faults the schedule draws into a run: it loses
// replies on a worker's proxies, freezes a holder and partitions it until
// its session expires, cuts connections, restarts a server, partitions a
// leader. It records what it saw (a frozen holder's writes) in the run's
// history and judges nothing.
type nemesis struct {
	run *chaosRun
	a   claims.Actor
}

// runSchedule draws faults and injects them one at a time until the size says the
// schedule is over. After each fault it waits until the lock has moved
// on: a lock that stays stuck stops the run, not shown.
func (nm *nemesis) runSchedule() {
	run := nm.run
	t := run.t
	kinds := Kinds(run.setup.servers)
	if run.shared {
		kinds = slices.DeleteFunc(kinds, func(k Kind) bool { return k == Restart })
	}
	size := run.plan.Size
	sc := NewSchedule(run.plan.Seed, run.index, kinds, size.Later(kinds), ChaosWorkers, run.setup.servers)
	if size.Soak() {
		size = size.Share(len(ChaosSetups))
	}
	start, base := time.Now(), run.acquired.Load()
	// Let every worker in before the first fault.
	nm.awaitProgress("the start", ChaosWorkers)
	for !size.Done(sc, time.Since(start), int(run.acquired.Load()-base)) {
		f := sc.Next()
		claims.Phase(t, "fault %d, %v into the schedule: %v", f.N, time.Since(start).Round(100*time.Millisecond), f.Kind)
		effective := nm.inject(f)
		run.sum.Fault(f.Kind, effective)
		if !effective && sc.Again(f.Kind) {
			nm.a.Info("%v took no effect; drawn again later", f.Kind)
		}
		nm.awaitProgress(fmt.Sprintf("fault %d (%v)", f.N, f.Kind), 2)
	}
}

// awaitProgress waits until n more acquisitions were made.
func (nm *nemesis) awaitProgress(after string, n int) {
	run := nm.run
	run.t.Helper()
	target := run.acquired.Load() + int64(n)
	err := tb.WaitUntil(chaosProgressWithin, fmt.Sprintf("%d acquisitions after %s", n, after), func() (bool, string) {
		got := run.acquired.Load()
		return got >= target, fmt.Sprintf("%d of %d", got, target)
	})
	if err != nil {
		run.judgeSoFar()
		claims.NotShown(run.t, "C1", "the lock stalled: %v", err)
	}
}

// inject injects f and reports whether it took effect.
func (nm *nemesis) inject(f Fault) bool {
	run := nm.run
	switch f.Kind {
	case LoseCreate:
		return nm.loseReply(f, faultproxy.Match{Ops: scene.CreateOps, Under: run.root})
	case LoseDelete:
		return nm.loseReply(f, faultproxy.Match{Ops: []int32{jute.OpDelete}, Under: run.root})
	case LoseChildren:
		return nm.loseDecidingListing(f)
	case FrozenExpiry:
		return nm.frozenExpiry(f)
	case ShortCut:
		return nm.shortCut(f)
	case Restart:
		return nm.restart(f)
	case Failover:
		return nm.failover(f)
	}
	run.judgeSoFar()
	claims.NotShown(run.t, "C1", "no injection for fault kind %v", f.Kind)
	return false
}

// loseReply arms the fault on every proxy of the worker (its client is on
// one of them) and waits until one reply is lost, or withdraws it.
func (nm *nemesis) loseReply(f Fault, m faultproxy.Match) bool {
	run := nm.run
	w := run.workers[f.Worker]
	nm.a.Invoke("lose the reply to %s's %s", w.name, m)
	return nm.awaitLost(w, m, arm(w, m))
}

// arm arms the loss of a reply matching m on every proxy of w.
func arm(w *chaosWorker, m faultproxy.Match) []*faultproxy.Drop {
	drops := make([]*faultproxy.Drop, len(w.proxies))
	for i, p := range w.proxies {
		drops[i] = p.LoseReply(m)
	}
	return drops
}

// loseDecidingListing loses the reply to the listing that decides whether
// the worker is first while others are queued ahead of it: the first
// listing of its next acquisition. The loss is armed while the worker
// holds, in its own cycle (atHold), so that it is in force before its next
// request. Armed at any other moment, the worker's next listing is mostly
// the one after its predecessor's node went, when it is first anyway: a
// recipe that took a lost listing for an empty queue would hold by luck,
// and the run would not show it.
func (nm *nemesis) loseDecidingListing(f Fault) bool {
	run := nm.run
	w := run.workers[f.Worker]
	m := faultproxy.Match{Ops: []int32{jute.OpGetChildren2}, Path: run.root}
	nm.a.Invoke("once %s holds, lose the reply to its next %s: the first listing of its next acquisition", w.name, m)
	armed := make(chan []*faultproxy.Drop, 1)
	w.atHold <- func() { armed <- arm(w, m) }
	select {
	case drops := <-armed:
		return nm.awaitLost(w, m, drops)
	case <-time.After(chaosFaultWithin):
	}
	select {
	case <-w.atHold:
		nm.a.Info("%s did not hold within %v; withdrawn", w.name, chaosFaultWithin)
		return false
	default: // the worker took it just now: it arms at once
		return nm.awaitLost(w, m, tb.Receive(run.t, harness.Within, "C1: "+w.name+"'s arming of the lost listing", armed))
	}
}

// awaitLost waits until one of w's drops lost its reply, or withdraws
// them, and says so.
func (nm *nemesis) awaitLost(w *chaosWorker, m faultproxy.Match, drops []*faultproxy.Drop) bool {
	lost, timedOut := firstLost(drops)
	switch {
	case lost != nil:
		nm.a.Ok("lost the reply to %s's %s %s (xid %d, zxid %#x)", w.name, jute.OpName(lost.Op), lost.Path, lost.Xid, lost.Zxid)
	case timedOut:
		nm.a.Info("%s sent no such request within %v; withdrawn", w.name, chaosFaultWithin)
	default:
		nm.a.Info("%s's request was answered with another err code; spent without loss", w.name)
	}
	return lost != nil
}

// firstLost waits until one of drops has lost its reply, or all have ended
// without, or chaosFaultWithin has passed; then it cancels them all. It
// waits on the drops' channels, not by polling: a poll that gives up leaves
// its last check's goroutine behind, and this wait gives up in an ordinary
// run.
func firstLost(drops []*faultproxy.Drop) (lost *faultproxy.DropResult, timedOut bool) {
	ended := make(chan *faultproxy.Drop, len(drops))
	var wg sync.WaitGroup
	for _, d := range drops {
		wg.Add(1)
		go func() { defer wg.Done(); <-d.Done(); ended <- d }()
	}
	bound := time.After(chaosFaultWithin)
	for range drops {
		select {
		case d := <-ended:
			if r := d.Result(); r.Dropped {
				lost = &r
			}
		case <-bound:
			timedOut = true
		}
		if lost != nil || timedOut {
			break
		}
	}
	for _, d := range drops {
		d.Cancel()
	}
	wg.Wait()
	return lost, timedOut
}

// shortCut cuts both ends of the chosen workers' connections and heals at
// once: the clients reconnect in their sessions.
func (nm *nemesis) shortCut(f Fault) bool {
	run := nm.run
	var names []string
	open := 0
	for _, i := range f.Cut {
		w := run.workers[i]
		names = append(names, w.name)
		for _, p := range w.proxies {
			open += p.ConnCount()
		}
	}
	nm.a.Invoke("cut the connections of %s, then heal at once", strings.Join(names, " "))
	for _, i := range f.Cut {
		for _, p := range run.workers[i].proxies {
			p.Cut(faultproxy.BothEnds)
		}
	}
	for _, i := range f.Cut {
		for _, p := range run.workers[i].proxies {
			p.Heal()
		}
	}
	nm.a.Ok("%d connections cut", open)
	return open > 0
}

// restart stops a server and starts it again with its data; on three
// servers the ensemble must have a leader again.
func (nm *nemesis) restart(f Fault) bool {
	run := nm.run
	t := run.t
	s := run.servers[f.Server]
	nm.a.Invoke("restart %s", s.Label)
	t0 := time.Now()
	if err := s.TryRestart(); err != nil {
		run.judgeSoFar()
		claims.NotShown(t, "C1", "restart %s: %v", s.Label, err)
	}
	if run.cluster != nil {
		if _, err := run.cluster.Ensemble.Leader(chaosServerWithin); err != nil {
			run.judgeSoFar()
			claims.NotShown(t, "C1", "no leader after restarting %s: %v", s.Label, err)
		}
	}
	mode, _ := s.Mode()
	nm.a.Ok("%s is back as %s after %v", s.Label, mode, time.Since(t0).Round(time.Millisecond))
	return true
}

// failover blackholes every link between the leader and the other servers
// until they elect another leader, then heals: the old leader comes back
// as a follower.
func (nm *nemesis) failover(Fault) bool {
	run := nm.run
	t, c := run.t, run.cluster
	old, err := c.Ensemble.Leader(chaosServerWithin)
	if err != nil {
		run.judgeSoFar()
		claims.NotShown(t, "C1", "no leader before the failover: %v", err)
	}
	nm.a.Invoke("partition the leader %s from the other servers", old.Label)
	heal := sync.OnceFunc(c.Links.Heal)
	defer heal()
	for _, s := range c.Servers {
		if s != old {
			c.Links.Blackhole(old.ID, s.ID)
			c.Links.Blackhole(s.ID, old.ID)
		}
	}
	var next *zkserver.Server
	err = tb.WaitUntil(chaosServerWithin, "another server to lead", func() (bool, string) {
		var modes []string
		for _, s := range c.Servers {
			mode, _ := s.Mode()
			modes = append(modes, s.Label+"="+mode)
			if s != old && mode == "leader" {
				next = s
			}
		}
		return next != nil, strings.Join(modes, " ")
	})
	heal()
	if err != nil {
		run.judgeSoFar()
		claims.NotShown(t, "C1", "%v", err)
	}
	if err := old.WaitMode(chaosServerWithin, "follower"); err != nil {
		run.judgeSoFar()
		claims.NotShown(t, "C1", "%s did not come back as a follower: %v", old.Label, err)
	}
	nm.a.Ok("%s leads; %s is back as a follower", next.Label, old.Label)
	return true
}

package harness

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zklinks"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// pool lends servers to the claims that would each start their own, where
// borrowing changes nothing they prove. First the trio: a 3-server ensemble
// (trioTick, trioSyncLimit, a proxy on every server-to-server link), lent
// to the claims that need one and change nothing on it but their own data
// and link faults: S1–S3, Y1, Y3–Y6, Y8, Y9, L9, L12, R3 and the
// stale-read Example. Starting a trio costs three JVMs (and, on the
// container backend, three containers): it was a third of the servers a
// run started.
//
// A test holds its trio alone, from LeaseTrio until its cleanups end, and
// gets it in the state of a fresh one as far as any claim can see: every
// link healed, one leader and two followers at the same zxid, no session on
// the leader, nothing in the tree but /zookeeper. What differs from a
// freshly started trio is only the zxid it starts from and the servers'
// uptime; no claim that leases one reads an absolute zxid. A trio whose
// test failed, or that does not settle into that state within its kind's
// settleWithin, is stopped, not lent again. A claim whose servers are
// configured otherwise (S4's logger, Y7's five servers) starts its own.
var pool serverPool

// Kind is a configuration of servers the pool keeps: n servers (with a
// proxy on every link when n > 1), tickTime tick and syncLimit syncLimit.
type Kind struct {
	name      string
	n         int
	tick      time.Duration
	syncLimit int
}

// Tick is the kind's tickTime.
func (k Kind) Tick() time.Duration { return k.tick }

// SyncLimit is the kind's syncLimit, in ticks.
func (k Kind) SyncLimit() int { return k.syncLimit }

// Timing of the 3-server scenarios. A follower whose leader stream is held
// drops the leader after syncLimit × tickTime without bytes, and a leader
// drops a follower that has not acked a proposal for as long: every hold
// below ends well inside that window (10 s), and inside B's session timeout
// (the leader hears of B's heartbeats only through the held follower).
const (
	trioTick      = time.Second
	trioSyncLimit = 10
)

// Standalone servers are lent too: expiryKind to the claims about a
// session that runs out (expiryServer), soloKind to L3 and L7, which read
// the server's watch tables and counters and so need it to themselves.
var (
	TrioKind   = Kind{"trio", 3, trioTick, trioSyncLimit}
	expiryKind = Kind{"expiry", 1, ExpiryTick, 5}
	SoloKind   = Kind{"solo", 1, 2 * time.Second, 5}
)

// settleWithin bounds the wait, after a test, for its ensemble to settle:
// its sessions closed and every server at one zxid. A session whose close
// did not get through expires within its timeout, at most 20 ticks; past
// settleMax a new ensemble is cheaper than the wait.
func (k Kind) settleWithin() time.Duration { return min(25*k.tick, settleMax) }

const settleMax = 10 * time.Second

type serverPool struct {
	mu      sync.Mutex
	idle    map[Kind][]*pooled
	live    map[Kind]int  // ensembles of each kind, started or starting, not stopped
	changed chan struct{} // see changedLocked
	started int
	closing sync.Once
	all     []*pooled
}

// pooled is one ensemble of a kind, owned by a Scope of its own; lender
// forwards what its servers and links log to the test that holds it now.
type pooled struct {
	kind   Kind
	name   string
	scope  *zkserver.Scope
	lender *lender
	e      *zkserver.Ensemble
	links  *zklinks.Links
	leases int
}

// LeaseTrio lends t a trio from the pool, or starts one, for the rest of t;
// the trio goes back to the pool after t's other cleanups.
func LeaseTrio(t zkserver.TB) *Cluster {
	t.Helper()
	return lease(t, TrioKind)
}

// LeaseServer lends t a standalone server of kind k (its n is 1). On the
// external backend nothing is lent: t gets the user's server, shared, as
// zkserver.Start gives it to a claim that allows it.
func LeaseServer(t zkserver.TB, k Kind) *zkserver.Server {
	t.Helper()
	if Backend.Kind == zkserver.External {
		return zkserver.Start(t, zkserver.AllowExternal())
	}
	return lendTo(t, k).e.Servers[0]
}

// lease lends t an ensemble of kind k from the pool, or starts one, for
// the rest of t; it goes back to the pool after t's other cleanups.
func lease(t zkserver.TB, k Kind) *Cluster {
	t.Helper()
	p := lendTo(t, k)
	return newCluster(t, p.e, p.links)
}

// LeaseWhenFree lends t an ensemble of kind k as LeaseTrio does, but where every
// one the pool has is held by another test (or being started for one), it
// waits up to within for one to come back before it starts another: for a
// claim that only looks at an ensemble and can wait (E1), so that it costs
// no JVMs of its own.
func LeaseWhenFree(t zkserver.TB, k Kind, within time.Duration) *Cluster {
	t.Helper()
	zkserver.RequireFaults(t)
	began := time.Now()
	held, free := pool.waitIdle(k, within)
	switch {
	case !free:
		t.Logf(claims.HarnessNote+"every %s of the pool was still lent after %v (%s): this test starts one", k.name, within, held)
	case held != "":
		t.Logf(claims.HarnessNote+"waited %v for a %s of the pool (%s)", time.Since(began).Round(time.Millisecond), k.name, held)
	}
	return lease(t, k)
}

// waitIdle waits up to d until the pool has an idle ensemble of kind k or
// none at all (started or being started), and says whether it has. held
// names who held the kind's ensembles when it began to wait ("" if it did
// not have to).
func (tp *serverPool) waitIdle(k Kind, d time.Duration) (held string, free bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		tp.mu.Lock()
		if len(tp.idle[k]) > 0 || tp.live[k] == 0 {
			tp.mu.Unlock()
			return held, true
		}
		changed := tp.changedLocked()
		if held == "" {
			var names []string
			for _, p := range tp.all {
				if p.kind == k {
					names = append(names, p.name+" lent to "+p.lender.holderName())
				}
			}
			if starting := tp.live[k] - len(names); starting > 0 {
				names = append(names, fmt.Sprintf("%d being started", starting))
			}
			held = strings.Join(names, ", ")
		}
		tp.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return held, false
		}
	}
}

// changedLocked is closed when an ensemble next becomes idle or stops.
func (tp *serverPool) changedLocked() chan struct{} {
	if tp.changed == nil {
		tp.changed = make(chan struct{})
	}
	return tp.changed
}

// notifyLocked wakes every waitIdle.
func (tp *serverPool) notifyLocked() {
	if tp.changed != nil {
		close(tp.changed)
		tp.changed = nil
	}
}

// lendTo takes an idle ensemble of kind k, or starts one, and lends it to
// t until t's other cleanups have run.
func lendTo(t zkserver.TB, k Kind) *pooled {
	t.Helper()
	zkserver.RequireFaults(t)
	p := pool.take(k)
	if p == nil {
		p = pool.start(t, k)
	} else {
		p.lender.lend(t)
		t.Logf(claims.HarnessNote+"%s lent again (lease %d): %s", p.name, p.leases+1, p.state())
	}
	p.leases++
	// Registered before the test's own cleanups, so it runs after them:
	// its clients are closed and its faults healed by then.
	t.Cleanup(func() { pool.giveBack(t, p) })
	return p
}

// take returns an idle ensemble of kind k, or nil.
func (tp *serverPool) take(k Kind) *pooled {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	idle := tp.idle[k]
	if len(idle) == 0 {
		return nil
	}
	p := idle[len(idle)-1]
	tp.idle[k] = idle[:len(idle)-1]
	return p
}

// start makes a new ensemble lent to t; the pool's ensembles stop when
// TestMain's scope closes (at the end of the run, or on interrupt).
func (tp *serverPool) start(t zkserver.TB, k Kind) *pooled {
	t.Helper()
	tp.mu.Lock()
	tp.started++
	name := fmt.Sprintf("%s%d", k.name, tp.started)
	if tp.live == nil {
		tp.live = map[Kind]int{}
	}
	tp.live[k]++
	tp.mu.Unlock()
	tp.closing.Do(func() { mainScope.Cleanup(tp.closeAll) })
	p := &pooled{kind: k, name: name, scope: zkserver.NewScope(name)}
	p.lender = &lender{Scope: p.scope, t: t, making: true}
	made := false
	t.Cleanup(func() {
		if !made {
			p.lender.lend(nil)
			p.scope.Close()
			tp.mu.Lock()
			tp.live[k]--
			tp.notifyLocked()
			tp.mu.Unlock()
		}
	})
	opts := []zkserver.Option{zkserver.WithTickTime(k.tick), zkserver.WithLimits(10, k.syncLimit)}
	if k.n == 1 {
		p.e = &zkserver.Ensemble{Servers: []*zkserver.Server{zkserver.Start(p.lender, opts...)}}
	} else {
		p.e, p.links = zklinks.StartLinkedEnsemble(p.lender, k.n, opts...)
	}
	p.lender.mu.Lock()
	p.lender.making = false
	p.lender.mu.Unlock()
	made = true
	tp.mu.Lock()
	tp.all = append(tp.all, p)
	tp.mu.Unlock()
	return p
}

// giveBack settles the ensemble t held and puts it back in the pool, or stops
// it, saying which in t's log.
func (tp *serverPool) giveBack(t zkserver.TB, p *pooled) {
	why := ""
	if f, ok := t.(interface{ Failed() bool }); ok && f.Failed() {
		why = "its test failed"
	} else if err := p.settle(); err != nil {
		why = err.Error()
	}
	if why != "" {
		t.Logf(claims.HarnessNote+"%s stopped, not lent again: %s", p.name, why)
		p.lender.lend(nil)
		tp.retire(p)
		return
	}
	p.lender.lend(nil)
	tp.mu.Lock()
	if tp.idle == nil {
		tp.idle = map[Kind][]*pooled{}
	}
	tp.idle[p.kind] = append(tp.idle[p.kind], p)
	tp.notifyLocked()
	tp.mu.Unlock()
}

// settle brings the ensemble back to a fresh one's state: it removes every node
// but /zookeeper (the servers are the pool's, never a user's), then waits
// until the leader has no session and every server reports the same zxid
// and one of them leads.
func (p *pooled) settle() (err error) {
	q := zkserver.NewScope(p.name + "-settle").Quiet()
	defer q.Close()
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(zkserver.ScopeFailure); ok {
				err = errors.New(f.Msg)
				return
			}
			panic(r)
		}
	}()
	leader := p.e.Servers[0]
	if p.kind.n > 1 {
		if leader, err = p.e.Leader(Within); err != nil {
			return err
		}
	}
	c, err := zkclient.TryConnect(q, "settle", []string{leader.Client}, zkclient.Quiet())
	if err != nil {
		return err
	}
	kids, _, err := c.Children("/")
	if err != nil {
		return fmt.Errorf("list /: %w", err)
	}
	for _, k := range kids {
		if k == "zookeeper" {
			continue
		}
		if err := removeTree(c.Conn, "/"+k); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("remove /%s: %w", k, err)
		}
	}
	if err := c.CloseWait(Within); err != nil {
		return err
	}
	return tb.WaitUntil(p.kind.settleWithin(), p.name+" to settle: no session on the leader, every server at one zxid", func() (bool, string) {
		state := p.state()
		return state.settled(p.kind.n), state.String()
	})
}

// poolState is what settle waits on.
type poolState struct {
	leaders  int
	sessions int64
	zxids    []int64
	seen     []string
}

func (s poolState) settled(n int) bool {
	if s.leaders != 1 || s.sessions != 0 || len(s.zxids) != n {
		return false
	}
	for _, z := range s.zxids {
		if z != s.zxids[0] {
			return false
		}
	}
	return true
}

func (s poolState) String() string { return strings.Join(s.seen, " ") }

func (p *pooled) state() poolState {
	var st poolState
	st.sessions = -1
	for _, s := range p.e.Servers {
		v, err := s.Srvr()
		if err != nil {
			st.seen = append(st.seen, fmt.Sprintf("%s: %v", s.Label, err))
			continue
		}
		st.zxids = append(st.zxids, v.Zxid)
		st.seen = append(st.seen, fmt.Sprintf("%s %s %#x", s.Label, v.Mode, v.Zxid))
		if v.Mode != "leader" && v.Mode != "standalone" {
			continue
		}
		st.leaders++
		m, err := zkserver.FourLetter(s.Client, "mntr", 5*time.Second)
		if err != nil {
			st.seen = append(st.seen, fmt.Sprintf("mntr: %v", err))
			continue
		}
		st.sessions = parseMntr(m)["zk_global_sessions"]
		st.seen = append(st.seen, fmt.Sprintf("sessions %d", st.sessions))
	}
	return st
}

// retire stops an ensemble for good.
func (tp *serverPool) retire(p *pooled) {
	p.scope.Close()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for i, q := range tp.all {
		if q == p {
			tp.all = append(tp.all[:i], tp.all[i+1:]...)
			tp.live[p.kind]--
			break
		}
	}
	tp.notifyLocked()
}

// closeAll stops every ensemble of the pool.
func (tp *serverPool) closeAll() {
	tp.mu.Lock()
	all := tp.all
	tp.all, tp.idle, tp.live = nil, nil, nil
	tp.notifyLocked()
	tp.mu.Unlock()
	for _, p := range all {
		p.lender.lend(nil)
		p.scope.Close()
	}
}

// lender is the TB a pooled ensemble was made with. Its servers' and
// links' lines go to the test that holds it (and nowhere between tests);
// cleanups registered while the trio is made belong to its scope, and
// those registered while it is lent (a HoldCommit's release) to the test.
type lender struct {
	*zkserver.Scope
	mu     sync.Mutex
	t      zkserver.TB
	making bool
}

func (l *lender) lend(t zkserver.TB) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t = t
}

func (l *lender) holder() zkserver.TB {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t
}

// holderName names the test that holds the ensemble, for a log line.
func (l *lender) holderName() string {
	if n, ok := l.holder().(interface{ Name() string }); ok {
		return n.Name()
	}
	return "nobody"
}

// Logf writes to the holder's log under l.mu, so that no line reaches a
// test after lend(nil) returned.
func (l *lender) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t != nil {
		l.t.Helper()
		l.t.Logf(format, args...)
	}
}

func (l *lender) Cleanup(f func()) {
	l.mu.Lock()
	t, making := l.t, l.making
	l.mu.Unlock()
	if t == nil || making {
		l.Scope.Cleanup(f)
		return
	}
	t.Cleanup(f)
}

func (l *lender) Fatalf(format string, args ...any) {
	if t := l.holder(); t != nil {
		t.Helper()
		t.Fatalf(format, args...)
	}
	l.Scope.Fatalf(format, args...)
}

func (l *lender) Skipf(format string, args ...any) {
	if t := l.holder(); t != nil {
		t.Skipf(format, args...)
	}
	l.Scope.Skipf(format, args...)
}

func (l *lender) Attr(key, value string) {
	if t := l.holder(); t != nil {
		t.Attr(key, value)
	}
}

package scene

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// DeleteAs deletes p as client c, logged as actor a's operation.
func DeleteAs(t zkserver.TB, c *zkclient.Client, a claims.Actor, p string) {
	t.Helper()
	a.Invoke("delete %s", p)
	if err := c.Delete(p, -1); err != nil {
		a.Fail("%v", err)
		t.Fatalf("%s delete %s: %v", c.Name, p, err)
	}
	a.Ok("")
}

// Herd is L7's scene for n contenders: first on the recipe, where judge
// gets what each of three releases did at the step, then on the foil,
// where every waiter watches the parent's children.
func Herd(t *testing.T, srv *zkserver.Server, n int, judge func(HerdRelease)) {
	if srv.External() {
		// A user's server limits the connections from one host (60 by
		// default); N waiters and D need N+1 at once.
		if lim, err := strconv.Atoi(zkserver.Fields(srv.Word(t, "conf"))["maxClientCnxns"]); err == nil && lim != 0 && lim < n+1 {
			claims.Skip(t, "skipped: N=%d needs %d sessions from this host at once; the server's maxClientCnxns is %d: set it to 0 (no limit) or higher", n, n+1, lim)
		}
	}
	ss := []string{srv.Client}
	r := NewScene(t, ss)
	root := r.Parent
	for _, p := range []string{root + "/ours", root + "/foil"} {
		if _, err := r.O.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	ps := make([]*Contender, n)
	for i := range ps {
		ps[i] = Join(t, fmt.Sprintf("P%d", i), ss, root+"/ours", JoinOpts{Quiet: true})
	}
	claims.Phase(t, "N=%d: ours (each waiter watches its predecessor)", n)
	herdOurs(t, srv, ps, judge)
	claims.Phase(t, "N=%d: foil (every waiter watches the parent's children)", n)
	woke, fired := herdFoil(t, srv, ps, root+"/foil")
	if srv.External() {
		claims.Evidence(t, "N=%d foil release: %d waiter(s) woke (the shared server's child watch count is everyone's: not read)", n, woke)
		if woke != int64(n-1) {
			t.Errorf("L7: got foil %d wakeups; want N-1 = %d", woke, n-1)
		}
		return
	}
	claims.Evidence(t, "N=%d foil release: %d waiter(s) woke; server triggered %d child watch(es)", n, woke, fired)
	if woke != int64(n-1) || fired != int64(n-1) {
		claims.BrokenCheck(t, "L7", "got foil %d wakeups (server %d); want N-1 = %d: the control did not herd", woke, fired, n-1)
	}
}

// watchCounts is what a release did to the watches under a parent: on a
// server of the test's own, the watches it triggered (mntr, server-wide);
// on a shared server, the watches wchp lists under the parent before and
// after it.
type watchCounts struct {
	srv    *zkserver.Server
	parent string
	m      map[string]int64
	wchp   map[string][]string
}

func readWatches(t *testing.T, srv *zkserver.Server, parent string) watchCounts {
	t.Helper()
	if srv.External() {
		return watchCounts{srv: srv, parent: parent, wchp: harness.WatchTable(t, srv, "wchp", parent)}
	}
	return watchCounts{srv: srv, parent: parent, m: harness.Mntr(t, srv)}
}

// watchesFired reads, against what was read before the release of
// released, the watches the server fired, states them and returns them
// with the release's other observations in h.
func (before watchCounts) watchesFired(t *testing.T, h HerdRelease, rel release) HerdRelease {
	t.Helper()
	after := readWatches(t, before.srv, before.parent)
	if before.wchp == nil {
		h.Counted = true
		h.Deleted = after.m["zk_sum_node_deleted_watch_count"] - before.m["zk_sum_node_deleted_watch_count"]
		h.ChildWatches = after.m["zk_sum_node_children_watch_count"] - before.m["zk_sum_node_children_watch_count"]
		claims.Evidence(t, "N=%d ours release %d: %d waiter(s) woke; server triggered %d node-deleted watch(es) (the next waiter's and the releaser's own hold's), %d child watch(es)", h.N, h.R, h.Woke, h.Deleted, h.ChildWatches)
		return h
	}
	h.Gone, h.Added = watchDiff(before.wchp, after.wchp), watchDiff(after.wchp, before.wchp)
	for _, m := range []map[string][]string{h.Gone, h.Added} {
		for _, ss := range m {
			slices.Sort(ss)
		}
	}
	claims.Evidence(t, "N=%d ours release %d: %d waiter(s) woke; wchp under %s lost %v and gained %v", h.N, h.R, h.Woke, before.parent, h.Gone, h.Added)
	h.WantGone = map[string][]string{rel.node: slices.Sorted(slices.Values([]string{rel.holder, rel.next}))}
	h.WantAdded = map[string][]string{rel.nextNode: {rel.next}}
	return h
}

// HerdRelease is what one release of L7's herd did: how many waiters woke
// (Woke), the wakeups of each waiter still waiting, and the watches the
// server fired: on a server of the test's own, counted (mntr, server-wide:
// node-deleted and child watches); on a shared server, the watches wchp
// lists under the parent that went (Gone) and came (Added), beside those
// one release should move (the next waiter's and the releaser's own; the
// new holder's own).
type HerdRelease struct {
	N, R                             int
	Woke                             int64
	StillWaiting                     []Waiter
	Counted                          bool
	Deleted, ChildWatches            int64
	Gone, Added, WantGone, WantAdded map[string][]string
}

// Waiter is a waiter of the herd, P, and the times it woke.
type Waiter struct{ P, Wakeups int }

// Guarded waits until p's holds have set n watches on their own nodes: a
// hold watches its own node from the moment it is made (lock.Held.Lost),
// so the server's watch tables and counts include the holder's own watch
// once it is set.
func Guarded(t zkserver.TB, p *Contender, n int64) {
	t.Helper()
	tb.WaitFor(t, harness.Within, p.Name+"'s hold to watch its own node", func() (bool, string) {
		return p.Guards.Load() >= n, fmt.Sprintf("%d own-node watches set; last step: %s", p.Guards.Load(), p.LastStep())
	})
}

// release names a release of the herd: the released node and its holder's
// session, and the next holder's node and session.
type release struct{ node, holder, nextNode, next string }

// watchDiff returns the path -> sessions entries of a that b lacks.
func watchDiff(a, b map[string][]string) map[string][]string {
	out := map[string][]string{}
	for p, ss := range a {
		for _, s := range ss {
			if !slices.Contains(b[p], s) {
				out[p] = append(out[p], s)
			}
		}
	}
	return out
}

// herdOurs queues ps on the recipe and releases three times, handing what
// each release did to judge as soon as it is read.
func herdOurs(t *testing.T, srv *zkserver.Server, ps []*Contender, judge func(HerdRelease)) {
	n := len(ps)
	// Each acquisition and release has a bound of its own: one bound for
	// the whole herd made a release under a loaded machine fail for the
	// time that queueing 99 waiters took before it.
	holder, err := ps[0].Locker.Acquire(LockCtx(t))
	if err != nil {
		t.Fatalf("P0: %v", err)
	}
	pend := make([]*Acquisition, n)
	prev := NodeOf(holder)
	for i := 1; i < n; i++ {
		pend[i] = ps[i].AcquireInBackground().WaitsOn(prev)
		prev = pend[i].Own
	}
	events := func() (s int64) {
		for _, p := range ps {
			s += p.Events.Load()
		}
		return s
	}
	Guarded(t, ps[0], 1)
	for r := 1; r <= 3 && r < n; r++ {
		before, wBefore := readWatches(t, srv, ps[0].parent), events()
		if err := holder.Release(LockCtx(t)); err != nil {
			t.Fatalf("release: %v", err)
		}
		next, err := pend[r].Result()
		if err != nil {
			t.Fatalf("P%d: %v", r, err)
		}
		Guarded(t, ps[r], 1)
		h := HerdRelease{N: n, R: r, Woke: events() - wBefore}
		for i := r + 1; i < n; i++ {
			h.StillWaiting = append(h.StillWaiting, Waiter{P: i, Wakeups: pend[i].Settled().Wakeups})
		}
		judge(before.watchesFired(t, h, release{holder.Path, ps[r-1].Session.SessionHex(), next.Path, ps[r].Session.SessionHex()}))
		holder = next
	}
	if err := holder.Release(LockCtx(t)); err != nil {
		t.Fatalf("release: %v", err)
	}
	for i := 1; i < n; i++ {
		pend[i].Cancel()
	}
	for i := 1; i < n; i++ {
		_, _ = pend[i].Result()
	}
}

// herdFoil queues the sessions of ps under parent with a recipe that
// watches the parent's children, releases once, and returns how many
// waiters woke and how many child watches the server triggered.
func herdFoil(t *testing.T, srv *zkserver.Server, ps []*Contender, parent string) (woke, fired int64) {
	n := len(ps)
	names := make([]string, n)
	for i, p := range ps {
		pth, err := p.Session.Create(parent+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("P%d foil create: %v", i, err)
		}
		names[i] = path.Base(pth)
	}
	var foilWoke atomic.Int64
	registered := make(chan int, n)
	acquired := make(chan int, n)
	fctx, fcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { fcancel(); wg.Wait() })
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			foilWaiter(fctx, ps[i].Session, parent, names[i], func() { foilWoke.Add(1) }, registered, acquired, i)
		}(i)
	}
	for i := 1; i < n; i++ {
		tb.Receive(t, harness.Within, fmt.Sprintf("foil waiter %d of %d registered", i, n-1), registered)
	}
	var before map[string]int64
	if !srv.External() {
		before = harness.Mntr(t, srv) // server-wide: read only on a server of the test's own
	}
	if err := ps[0].Session.Delete(parent+"/"+names[0], -1); err != nil {
		t.Fatalf("foil release: %v", err)
	}
	if i := tb.Receive(t, harness.Within, "foil: a holder", acquired); i != 1 {
		t.Errorf("foil: P%d acquired; want P1", i)
	}
	tb.WaitFor(t, harness.Within, "N-1 foil waiters to wake", func() (bool, string) {
		return foilWoke.Load() >= int64(n-1), fmt.Sprintf("%d woke", foilWoke.Load())
	})
	if srv.External() {
		return foilWoke.Load(), 0
	}
	after := harness.Mntr(t, srv)
	return foilWoke.Load(), after["zk_sum_node_children_watch_count"] - before["zk_sum_node_children_watch_count"]
}

// foilWaiter is the watch-the-parent recipe: list with a child watch, hold
// when the own node has the lowest sequence, otherwise wait for any change
// of the children.
func foilWaiter(ctx context.Context, c *zkclient.Client, parent, own string, woke func(), registered, acquired chan<- int, i int) {
	first := true
	for {
		kids, _, ch, err := c.ChildrenW(parent)
		if err != nil {
			return
		}
		if lowestBySeq(kids) == own {
			acquired <- i
			return
		}
		if first {
			registered <- i
			first = false
		}
		select {
		case <-ch:
			woke()
		case <-ctx.Done():
			return
		}
	}
}

// lowestBySeq returns the lock node among kids with the smallest parsed
// sequence number.
func lowestBySeq(kids []string) string {
	low, lowSeq := "", int64(-1)
	for _, k := range kids {
		if seq, err := fence.ParseSeq(k); err == nil && (lowSeq < 0 || seq < lowSeq) {
			low, lowSeq = k, seq
		}
	}
	return low
}

// CreateReadRound is TestL9's scenario state: X on the leader, Y on the other
// follower, W on follower f.
type CreateReadRound struct {
	T          *testing.T
	C          *harness.Cluster
	F          *zkserver.Server
	Root       string
	X, Y, W    *zkclient.Client
	Xa, Ya, Wa claims.Actor
	Live       map[string]bool // candidates that exist now
	deleted    []string
}

// RequireFollower checks that the server W's session is connected to
// reports itself a follower: on the leader the claim would hold trivially.
func (r *CreateReadRound) RequireFollower() {
	r.T.Helper()
	at := r.W.Server()
	for _, s := range r.C.Servers {
		if s.Client != at {
			continue
		}
		mode, err := s.Mode()
		r.Wa.Info("connected to %s, which reports mode %s", s.Label, mode)
		if err != nil || mode != "follower" || s != r.F {
			claims.NotShown(r.T, "L9", "W's server %s reports mode %q (%v); want the follower %s", s.Label, mode, err, r.F.Label)
		}
		return
	}
	claims.NotShown(r.T, "L9", "W is connected to %s, none of the ensemble's servers", at)
}

func (r *CreateReadRound) create(c *zkclient.Client, a claims.Actor) string {
	r.T.Helper()
	a.Invoke("create %s/<guid>-lock- EPHEMERAL_SEQUENTIAL", r.Root)
	p, err := c.Create(r.Root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		a.Fail("%v", err)
		r.T.Fatalf("%s create: %v", c.Name, err)
	}
	a.Ok("%s", path.Base(p))
	return path.Base(p)
}

func (r *CreateReadRound) Round(i int, lag bool) CreateReadList {
	t := r.T
	t.Helper()
	if lag {
		r.C.HoldStream(r.F)
	}
	xn := r.create(r.X, r.Xa)
	yn := r.create(r.Y, r.Ya)
	r.Live[yn] = true
	DeleteAs(t, r.X, r.Xa, r.Root+"/"+xn)
	r.deleted = append(r.deleted, xn)
	var own string
	if lag {
		own = r.createBehind(i, yn)
	} else {
		own = r.create(r.W, r.Wa)
	}
	r.Wa.Invoke("children %s (after W's create, same session)", r.Root)
	kids, _, err := r.W.Children(r.Root)
	if err != nil {
		t.Fatalf("W children: %v", err)
	}
	r.Wa.Ok("%d children", len(kids))
	l := CreateReadList{Round: i, Own: own, Kids: kids, Live: slices.Sorted(maps.Keys(r.Live)), Deleted: slices.Clone(r.deleted)}
	r.Live[own] = true
	return l
}

// CreateReadList is what W listed in one round of L9, after its create in the same
// session: its own node, the listing, the candidates that were live before
// W's create and those deleted before it.
type CreateReadList struct {
	Round               int
	Own                 string
	Kids, Live, Deleted []string
}

// createBehind shows W's follower behind (its plain list lacks y), sends
// W's create while it is, and releases the held stream once the leader has
// answered the create into the hold. It returns W's node.
func (r *CreateReadRound) createBehind(i int, y string) string {
	t := r.T
	t.Helper()
	r.Wa.Invoke("children %s (plain read, before W's create)", r.Root)
	pre, _, err := r.W.Children(r.Root)
	if err != nil {
		t.Fatalf("W children: %v", err)
	}
	r.Wa.Ok("%d children", len(pre))
	held := harness.HeldDown(r.C.StreamProxy(r.F))
	claims.Evidence(t, "round %d: W's follower %s was behind at W's plain read: it lacked %s, created by Y before the read; the proxy held %d bytes of the leader's stream to it", i, r.F.Label, y, held)
	if slices.Contains(pre, y) || held == 0 {
		claims.NotShown(t, "L9", "the follower was not behind (y listed: %v, held bytes: %d); the round would prove nothing", slices.Contains(pre, y), held)
	}
	sp := r.C.StreamProxy(r.F)
	up0, held0 := sp.Stats().UpBytes, sp.Stats().DownHeld
	type created struct {
		p   string
		err error
	}
	done := make(chan created, 1)
	r.Wa.Invoke("create %s/<guid>-lock- EPHEMERAL_SEQUENTIAL (its follower behind)", r.Root)
	go func() {
		p, err := r.W.Create(r.Root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		done <- created{p, err}
	}()
	tb.WaitFor(t, harness.Within, "the follower to forward W's create and the leader to answer into the hold", func() (bool, string) {
		s := sp.Stats()
		return s.UpBytes > up0 && s.DownHeld > held0, fmt.Sprintf("up %d bytes (before %d), held %d (before %d)", s.UpBytes, up0, s.DownHeld, held0)
	})
	select {
	case cr := <-done:
		claims.NotShown(t, "L9", "W's create returned (%v) while its follower's stream was held", cr.err)
	default:
	}
	r.C.ReleaseStream(r.F)
	cr := tb.Receive(t, harness.Within, "the return of W's create after the release", done)
	if cr.err != nil {
		t.Fatalf("W create: %v", cr.err)
	}
	r.Wa.Ok("%s", path.Base(cr.p))
	return path.Base(cr.p)
}

// UnseenDeletionScene is TestL12's lock scene: O on the leader, W's acquisition
// through follower f.
type UnseenDeletionScene struct {
	T  *testing.T
	C  *harness.Cluster
	F  *zkserver.Server
	R  *Scene
	W  *Contender
	PW *Acquisition
}

// UnseenDeletion holds the leader's stream to f, runs del, which deletes
// node through the leader, and observes W's acquisition while f has not
// seen the deletion; then it releases the stream.
func (sc *UnseenDeletionScene) UnseenDeletion(node string, del func()) Unseen {
	t := sc.T
	t.Helper()
	events := sc.W.Events.Load()
	sc.C.HoldStream(sc.F)
	del()
	atLeader, _ := StatOf(t, sc.R.O, sc.R.Parent+"/"+node)
	sc.R.OLog.Info("%s exists on the leader: %v", node, atLeader)
	sc.W.Log.Invoke("exists %s (its own session, on %s)", node, sc.F.Label)
	atF, _, err := sc.W.Session.Exists(sc.R.Parent + "/" + node)
	if err != nil {
		t.Fatalf("W exists: %v", err)
	}
	sc.W.Log.Ok("%v", atF)
	// W's read on its own connection has returned: the wire's counts are
	// final, and await lets the recipe take in what was delivered.
	st := sc.W.Witness.await(t, sc.PW.Own)
	held := sc.C.StreamProxy(sc.F).Stats().DownHeld
	claims.Evidence(t, "%s deleted through the leader (O finds it: %v); W's follower %s still has it (W's own read finds it: %v; %d bytes of the leader's stream held); W waiting on %s: %v, returned: %v, events since the hold: %d", node, atLeader, sc.F.Label, atF, held, st.Pred, st.Waiting, st.Done, sc.W.Events.Load()-events)
	if atLeader || !atF || held == 0 {
		claims.NotShown(t, "L12", "the leader has %s: %v, W's follower has it: %v, held bytes: %d; want it deleted on the leader, not yet on the follower", node, atLeader, atF, held)
	}
	seen := Unseen{Node: node, Attempt: st, FinishedBeforeRelease: sc.PW.Finished()}
	sc.C.ReleaseStream(sc.F)
	return seen
}

// Unseen is what UnseenDeletion saw before it released the stream: where
// W's acquisition stood while its follower had not seen Node deleted, and
// whether it had returned.
type Unseen struct {
	Node                  string
	Attempt               Attempt
	FinishedBeforeRelease bool
}

// WaitsOnOrReturns waits, once the stream is released, until W's
// Acquisition waits on pred or returns, and says whether it returned; late
// judges a wait that sees neither within the bound.
func (sc *UnseenDeletionScene) WaitsOnOrReturns(pred string, late claims.Judge) (returned bool) {
	t := sc.T
	t.Helper()
	tb.WaitFor(claims.Judged(t, "L12", late), harness.Within, "W to wait on "+pred+" or return", func() (bool, string) {
		at, _ := sc.W.Witness.now(sc.PW.Own)
		return sc.PW.Finished() || at.Waiting && at.Pred == pred, fmt.Sprintf("W waiting=%v on %q, returned %v", at.Waiting, at.Pred, sc.PW.Finished())
	})
	return sc.PW.Finished()
}

// Election is L10's scene: O, who set up the election parent and the
// state the leaders keep, the candidates, and the clients of whoever leads.
type Election struct {
	*Scene       // O and the election parent
	server       *zkserver.Server
	state, ready string
	mu           sync.Mutex
	names        map[int64]string // a candidate's session -> its name
}

// NewElection makes the election parent and the state ("epoch=0 x=41", as
// an earlier leader left it) under a fresh root on s.
func NewElection(t zkserver.TB, s *zkserver.Server) *Election {
	t.Helper()
	sc := NewScene(t, []string{s.Client})
	root := sc.Parent
	el := &Election{Scene: sc, server: s, state: root + "/state", ready: root + "/ready", names: map[int64]string{}}
	el.Parent = root + "/election"
	for p, data := range map[string]string{el.Parent: "", el.state: "epoch=0 x=41"} {
		if _, err := el.O.Create(p, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	return el
}

// ElectionCandidate is a contender of the election; once it holds, it
// recovers the state and publishes ready.
type ElectionCandidate struct {
	*Contender
	el *Election
}

func (el *Election) Candidate(name string) *ElectionCandidate {
	p := el.Join(name, JoinOpts{})
	el.mu.Lock()
	el.names[p.Session.SessionID()] = name
	el.mu.Unlock()
	return &ElectionCandidate{Contender: p, el: el}
}

// BeginRecovery is the first half of p's recovery: it reads the state the
// last leader left ("epoch=N x=V") and marks it as being recovered into
// the next epoch. It returns what the state says now.
func (p *ElectionCandidate) BeginRecovery() string {
	var epoch, x int
	version := p.readState("epoch=%d x=%d", &epoch, &x)
	now := fmt.Sprintf("epoch=%d recovering from x=%d", epoch+1, x)
	p.writeState(now, version)
	return now
}

// FinishRecovery is the second half: the recovered state of the new epoch
// (the earlier leader's pending update applied), then ready, ephemeral,
// naming p. It returns the recovered state.
func (p *ElectionCandidate) FinishRecovery() string {
	t := p.el.t
	t.Helper()
	var epoch, x int
	version := p.readState("epoch=%d recovering from x=%d", &epoch, &x)
	done := fmt.Sprintf("epoch=%d x=%d", epoch, x+1)
	p.writeState(done, version)
	p.Log.Invoke("create %s ephemeral %q", p.el.ready, p.Name)
	if _, err := p.Session.Create(p.el.ready, []byte(p.Name), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("%s: publish ready: %v", p.Name, err)
	}
	p.Log.Ok("")
	return done
}

// readState reads the state, parses it with format and returns its
// version.
func (p *ElectionCandidate) readState(format string, args ...any) int32 {
	t := p.el.t
	t.Helper()
	p.Log.Invoke("get %s", p.el.state)
	data, st, err := p.Session.Get(p.el.state)
	if err != nil {
		t.Fatalf("%s: get state: %v", p.Name, err)
	}
	p.Log.Ok("%s", data)
	if _, err := fmt.Sscanf(string(data), format, args...); err != nil {
		t.Fatalf("%s: state %q is not %q: %v", p.Name, data, format, err)
	}
	return st.Version
}

func (p *ElectionCandidate) writeState(data string, version int32) {
	t := p.el.t
	t.Helper()
	p.Log.Invoke("set %s %q", p.el.state, data)
	if _, err := p.Session.Set(p.el.state, []byte(data), version); err != nil {
		t.Fatalf("%s: set state: %v", p.Name, err)
	}
	p.Log.Ok("")
}

// LeaderRule is how a client decides whom to use as the leader.
type LeaderRule func(q *ElectionClient) (leader string, err error)

// ElectionClient is a client of whoever leads: it finds the leader by its
// rule, then reads the state the leader serves.
type ElectionClient struct {
	name    string
	c       *zkclient.Client
	a       claims.Actor
	el      *Election
	rule    LeaderRule
	Waiting chan struct{} // the rule found ready absent and waits
}

func (el *Election) Client(name string, rule LeaderRule) *ElectionClient {
	return &ElectionClient{name: name, c: zkclient.Connect(el.t, name, []string{el.server.Client}), a: claims.NewActor(el.t, name), el: el, rule: rule, Waiting: make(chan struct{}, 1)}
}

// WaitForReady is the rule the article asks for: the leader is whoever
// ready names, and while ready is absent there is none to use.
func WaitForReady(q *ElectionClient) (string, error) {
	for {
		q.a.Invoke("exists %s watch", q.el.ready)
		ok, _, ev, err := q.c.ExistsW(q.el.ready)
		if err != nil {
			return "", err
		}
		if ok {
			q.a.Ok("true")
			q.a.Invoke("get %s", q.el.ready)
			name, _, err := q.c.Get(q.el.ready)
			if errors.Is(err, zk.ErrNoNode) {
				continue // gone again: wait for the next one
			}
			q.a.Ok("%s", name)
			return string(name), err
		}
		q.a.Ok("false: no leader to use yet")
		select {
		case q.Waiting <- struct{}{}:
		default:
		}
		select {
		case e := <-ev:
			q.a.Info("event %s %s", e.Type, e.Path)
		case <-q.el.Ctx.Done():
			return "", q.el.Ctx.Err()
		}
	}
}

// LowestCandidate is the control's rule: the candidate with the lowest
// sequence number is taken for the leader, whatever it has recovered.
func LowestCandidate(q *ElectionClient) (string, error) {
	q.a.Invoke("children %s", q.el.Parent)
	kids, _, err := q.c.Children(q.el.Parent)
	if err != nil {
		return "", err
	}
	low := lowestBySeq(kids)
	ok, st, err := q.c.Exists(q.el.Parent + "/" + low)
	if err != nil || !ok {
		return "", fmt.Errorf("lowest candidate %q: exists %v, %v", low, ok, err)
	}
	q.el.mu.Lock()
	name := q.el.names[st.EphemeralOwner]
	q.el.mu.Unlock()
	q.a.Ok("lowest %s, of %s", low, name)
	return name, nil
}

// Usage is whom a client used and the state it read there.
type Usage struct {
	Leader, State string
	err           error
}

// Use finds the leader by q's rule and reads the state it serves.
func (q *ElectionClient) Use() Usage {
	leader, err := q.rule(q)
	if err != nil {
		return Usage{err: err}
	}
	q.a.Invoke("get %s (served by %s)", q.el.state, leader)
	state, _, err := q.c.Get(q.el.state)
	if err != nil {
		return Usage{Leader: leader, err: err}
	}
	q.a.Ok("%s", state)
	return Usage{Leader: leader, State: string(state)}
}

// ElectionRound is what one round saw: the leader halfway through its
// recovery, the control's usage then, where Qready was meanwhile, and
// Qready's usage once the leader had published ready.
type ElectionRound struct {
	Leader, Half, Recovered string
	Control                 Usage
	WhileHalf               zh.Text // "waited for ready" or "returned"
	ReturnedEarly           bool
	Early                   Usage // Qready's usage if it returned while the leader was half recovered
	Correct                 Usage // Qready's usage, whenever it returned
}

// Round is one round of L10: p holds the lock and begins its recovery; both clients ask for the
// leader while the state is half recovered; Qready, started in the
// background, is awaited until it waits for ready or returns; then p
// finishes its recovery and publishes ready (also when Qready returned
// early, so the scene can go on), and Qready's usage is taken.
func (el *Election) Round(p *ElectionCandidate, ready, lowest *ElectionClient) ElectionRound {
	t := el.t
	t.Helper()
	r := ElectionRound{Leader: p.Name, Half: p.BeginRecovery()}
	r.Control = lowest.Use()
	if r.Control.err != nil {
		claims.NotShown(t, "L10", "%s: %v", lowest.name, r.Control.err)
	}
	done := make(harness.Returned)
	var correct Usage
	go func() {
		defer close(done)
		correct = ready.Use()
	}()
	t.Cleanup(func() { tb.Receive(t, harness.Within, ready.name+"'s use", done) })
	select {
	case <-ready.Waiting:
		r.WhileHalf = zh.Say("waited for ready")
	case <-done:
		r.WhileHalf, r.ReturnedEarly, r.Early = zh.Say("returned"), true, correct
	case <-time.After(harness.Within):
		claims.NotShown(t, "L10", "%s neither waited for ready nor returned within %v", ready.name, harness.Within)
	}
	ready.a.Info("while %s is half recovered: %s", p.Name, r.WhileHalf)
	r.Recovered = p.FinishRecovery()
	tb.ReceiveSeen(claims.Judged(t, "L10", claims.NotShown), harness.Within, ready.name+"'s use once "+p.Name+" published ready", done, func() string {
		return fmt.Sprintf("%s's use pending; while %s was half recovered it %s", ready.name, p.Name, r.WhileHalf)
	})
	if correct.err != nil {
		claims.NotShown(t, "L10", "%s: %v", ready.name, correct.err)
	}
	r.Correct = correct
	return r
}

// SetAs sets the data of p as client c, logged as actor a's operation.
func SetAs(t zkserver.TB, c *zkclient.Client, a claims.Actor, p, data string) {
	t.Helper()
	a.Invoke("set %s %q", p, data)
	if _, err := c.Set(p, []byte(data), -1); err != nil {
		a.Fail("%v", err)
		t.Fatalf("%s set %s: %v", c.Name, p, err)
	}
	a.Ok("")
}

// ShortCut cuts p's client off (its connection closed, new ones refused)
// until the client has seen the disconnection, runs during, and lets it in
// again; it returns once the client has its session back.
func ShortCut(t zkserver.TB, p *faultproxy.Proxy, who *Contender, during func()) {
	t.Helper()
	mark := who.Session.Mark()
	who.Log.Info("cut off")
	p.Cut(faultproxy.BothEnds)
	if err := who.Session.WaitStateSince(mark, zk.StateDisconnected, harness.Within); err != nil {
		p.Heal()
		t.Fatalf("%s: %v", who.Name, err)
	}
	during()
	p.Heal()
	if err := who.Session.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("%s: %v", who.Name, err)
	}
	who.Log.Info("reconnected in session %s", who.Session.SessionHex())
}

// SeqOf is a lock node's parsed sequence number, -1 for another child.
func SeqOf(name string) int64 {
	seq, err := fence.ParseSeq(name)
	if err != nil {
		return -1
	}
	return seq
}

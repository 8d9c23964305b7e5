package chaos

import (
	"context"
	"errors"
	"fmt"
	"github.com/zk19/zk19/internal/claims/zh"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/fencescene"
	"github.com/zk19/zk19/internal/harness"
	"github.com/zk19/zk19/internal/history"
	"github.com/zk19/zk19/internal/jute"
	"github.com/zk19/zk19/internal/reaper"
	"github.com/zk19/zk19/internal/scene"
	"github.com/zk19/zk19/internal/sqlite"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

const (
	// ChaosWorkers is how many workers take the lock.
	ChaosWorkers = 5
	// chaosPauseMax bounds a worker's GC pause between taking its token and
	// writing. Short pauses keep the lock busy; the long pause of the
	// stale-late case is the nemesis's freeze, not a drawn one.
	chaosPauseMax = 25 * time.Millisecond

	chaosFaultWithin    = 10 * time.Second // a fault to find its request or holder
	chaosProgressWithin = 30 * time.Second // the lock to move on after a fault
	chaosAcquireWithin  = 30 * time.Second // one acquisition, recovery included
	chaosServerWithin   = 30 * time.Second // a server to come back, a leader to be elected
	chaosStopWithin     = 30 * time.Second // the workers to end their cycles
	chaosTraceLines     = 60               // trace lines kept of one eventful cycle
)

// chaosSetup is where a chaos run runs: one server or an ensemble, both
// with a small tickTime, so that a frozen holder's session expires within
// seconds.
type chaosSetup struct {
	Name    zh.Text // its subtest's name (Name.En) and its summary's column
	servers int
}

var ChaosSetups = []chaosSetup{{zh.Say("on one server"), 1}, {zh.Say("on three servers"), 3}}

// The resources every worker writes to, in this order.
const (
	ResMemory  = "memory"
	ResDurable = "durable"
	ResControl = "control"
)

// resourceNames are the resources' names in both languages.
var resourceNames = map[string]zh.Text{
	ResMemory: zh.Say("memory"), ResDurable: zh.Say("durable"), ResControl: zh.Say("control"),
}

// resourceName is resource's name in both languages.
func resourceName(resource string) zh.Text {
	if n, ok := resourceNames[resource]; ok {
		return n
	}
	return zh.Text{En: resource, Zh: resource}
}

// Leftovers lists the harness containers, server processes and run dirs of
// this test process. A container is named without its status, which says
// for how long it has been up.
func Leftovers(t *testing.T) []string {
	t.Helper()
	left, err := reaper.Leftovers(os.Getpid())
	if err != nil {
		claims.NotShown(t, "C1", "leftovers of this process: %v", err)
	}
	for i, l := range left {
		if strings.HasPrefix(l, "container ") {
			left[i], _, _ = strings.Cut(l, " (")
		}
	}
	return left
}

// NothingLeft checks, after both setups, that no server, process, container
// or goroutine of theirs is left, and says so for the record.
func NothingLeft(t *testing.T, keep goleak.Option, live int, before []string) zh.Text {
	t.Helper()
	failed := false
	if n := zkserver.Live(); n != live {
		failed = true
		claims.BrokenCheck(t, "C1", "%d servers tracked as running after the chaos; want %d, as before it", n, live)
	}
	var extra []string
	for _, l := range Leftovers(t) {
		if !slices.Contains(before, l) {
			extra = append(extra, l)
		}
	}
	if len(extra) > 0 {
		failed = true
		claims.BrokenCheck(t, "C1", "the chaos left %v; want nothing beyond what ran before it", extra)
	}
	if err := goleak.Find(append(zkserver.LeakOptions(), keep)...); err != nil {
		failed = true
		claims.BrokenCheck(t, "C1", "goroutines left after the chaos: %v", err)
	}
	if failed {
		return zh.Say("something was left after the run (see the failures)")
	}
	return zh.Say("after the run no server process, container, server dir or goroutine of it was left")
}

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
		for _, r := range []string{ResMemory, ResDurable, ResControl} {
			a, f := s.StaleLate(r)
			accepted[r], refused[r], below[r] = accepted[r]+a, refused[r]+f, below[r]+s.BelowMark(r)
		}
	}
	claims.Evidence(t, "seed %d, %d workers, %s, %s: %d stale-late writes (a frozen holder's, its node gone while a higher token was accepted): the fenced memory resource refused %d, the fenced durable one %d, the unfenced control accepted %d; writes accepted below the resource's own mark: memory %d, durable %d, control %d; overlapping holds (lock's view): %d, judged on the server as %d pairs: the earlier holder's node gone (expected: its session expired, the lock passed on) %d, the later holder's own node gone %d, both nodes on the server (two holders at once) %d; holds read back on the server: %d, own node the lowest %d, own node gone %d, a candidate below it %d; %s",
		plan.Seed, ChaosWorkers, plan.Size.Text(), zh.Join(cols, zh.Say(" and ")), stale, refused[ResMemory], refused[ResDurable], accepted[ResControl],
		below[ResMemory], below[ResDurable], below[ResControl], n[Overlaps],
		n[EarlierNodeGone]+n[LaterNodeGone]+n[TwoHolders], n[EarlierNodeGone], n[LaterNodeGone], n[TwoHolders],
		n[ReadBack], n[ReadBack]-n[OwnGone]-n[NotLowest], n[OwnGone], n[NotLowest], left)
	for _, row := range Table(cols, sums) {
		claims.Evidence(t, "%s", row)
	}
}

// chaosResource is one resource the workers write to, with what it
// accepted (in its commit order) and, for a fenced one, its register
// history.
type chaosResource struct {
	name   string
	r      fence.Resource
	fenced bool
	ledger *Ledger
	rec    *history.Recorder
}

// span records a write in the history: an accepted write is a write; a
// refused one changed nothing and returned the value it saw, so it is a
// read of that value.
func (r *chaosResource) span(client int, value string, res fence.Result, call int64) error {
	in, out := history.Input{Op: history.Write, Value: value}, history.Output{}
	if !res.Accepted {
		in, out = history.Input{Op: history.Read}, history.Output{Value: res.Prev}
	}
	return r.rec.Span(client, in, out, call, r.rec.Now())
}

// chaosRun is one setup's run: its servers, observer, resources, workers
// and nemesis.
type chaosRun struct {
	t        *testing.T
	plan     Plan
	index    int
	setup    chaosSetup
	start    time.Time // the setup's start: holds say when they began from it
	servers  []*zkserver.Server
	cluster  *harness.Cluster // nil on one server
	shared   bool             // the server is the user's (external backend): not the harness's to restart
	O        *zkclient.Client
	root     string
	res      []*chaosResource
	sum      *Summary
	holders  Holders
	workers  []*chaosWorker
	acquired atomic.Int64
	nemesis  claims.Actor

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once

	mu        sync.Mutex
	anomalies []string
}

// anomaly notes something that breaks the run's bookkeeping (a resource's
// I/O error, an ambiguous recovery); each fails the test at the end.
func (run *chaosRun) anomaly(format string, args ...any) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.anomalies = append(run.anomalies, fmt.Sprintf(format, args...))
}

// RunChaos runs one setup, counting in sum.
func RunChaos(t *testing.T, plan Plan, index int, setup chaosSetup, sum *Summary) {
	t0 := time.Now()
	run := &chaosRun{t: t, plan: plan, index: index, setup: setup, start: t0, nemesis: claims.NewActor(t, "nemesis"), sum: sum}
	run.ctx, run.cancel = context.WithCancel(context.Background())
	t.Cleanup(run.cancel)
	run.startServers()
	// O's session is as short as the workers': go-zookeeper gives up on a
	// handshake nobody answers (a server restarting) after ten receive
	// timeouts, and those follow the session timeout.
	run.O = zkclient.Connect(t, "O", run.clientAddrs(), zkclient.WithSessionTimeout(harness.ExpirySessionTimeout))
	run.root = harness.TestRoot(t, run.O)
	run.openResources()
	for i := range ChaosWorkers {
		run.workers = append(run.workers, run.newWorker(i))
	}
	// Registered after the clients, so it runs before they close.
	t.Cleanup(run.stop)
	for _, w := range run.workers {
		run.wg.Add(1)
		go w.loop()
	}
	run.runNemesis()
	claims.Phase(t, "the schedule is over after %v: stop the workers, close their sessions, check", time.Since(t0).Round(100*time.Millisecond))
	run.stop()
	for _, w := range run.workers {
		w.a.Info("%d acquisitions in %d sessions", w.acquisitions, w.sessions)
		if err := w.c.CloseWait(harness.Within); err != nil {
			claims.BrokenCheck(t, "C1", "%s's session did not close: %v", w.name, err)
		}
	}
	run.checkNothingLeftOnServer()
	run.checkFences()
}

func (run *chaosRun) startServers() {
	t := run.t
	if harness.Backend.Kind == zkserver.External {
		run.shareUsersServer()
		return
	}
	opts := []zkserver.Option{zkserver.WithTickTime(harness.ExpiryTick)}
	if run.setup.servers == 1 {
		run.servers = []*zkserver.Server{zkserver.Start(t, opts...)}
		return
	}
	// A short syncLimit lets the followers give up on a partitioned leader
	// within about a second.
	run.cluster = harness.StartCluster(t, run.setup.servers, append(opts, zkserver.WithLimits(50, 10))...)
	run.servers = run.cluster.Servers
}

// shareUsersServer runs the one-server setup on the user's server (the
// external backend), whose sessions must expire within the bound the
// frozen holder's partition waits (harness.ExpiryServer); the workers'
// proxies are the harness's, the server is not. A setup of several
// servers skips: its leader failover needs an ensemble of the harness's
// own, with proxies on its server-to-server links.
func (run *chaosRun) shareUsersServer() {
	t := run.t
	if run.setup.servers > 1 {
		claims.Skip(t, "skipped: the setup %s needs %d servers of the harness's own, with proxies on their links for a leader failover; the external backend shares the user's %v", run.setup.Name, run.setup.servers, harness.Backend.Servers)
	}
	run.servers, run.shared = []*zkserver.Server{harness.ExpiryServer(t)}, true
	// What is left is read from the server's dump (checkNothingLeftOnServer).
	run.servers[0].RequireWords(t, "dump")
	t.Logf("on the user's server %s: the workers' proxies are the harness's, the server is not, and the schedule draws no %v", run.servers[0].Client, Restart)
}

func (run *chaosRun) clientAddrs() []string {
	var out []string
	for _, s := range run.servers {
		out = append(out, s.Client)
	}
	return out
}

func (run *chaosRun) openResources() {
	t := run.t
	// The database lives in the harness's run dir, which an interrupted run
	// removes too (t.TempDir would stay behind).
	sc := zkserver.NewScope(t.Name())
	t.Cleanup(sc.Close)
	dur, err := sqlite.Open(context.Background(), filepath.Join(sc.TempDir(), "resource.db"))
	if err != nil {
		claims.NotShown(t, "C1", "durable resource: %v", err)
	}
	for _, r := range []*chaosResource{
		{name: ResMemory, r: fence.NewMemory(), fenced: true},
		{name: ResDurable, r: dur, fenced: true},
		{name: ResControl, r: fencetest.NewUnfenced()},
	} {
		t.Cleanup(func() { _ = r.r.Close() })
		r.ledger = &Ledger{}
		if r.fenced {
			r.rec = history.NewRecorder("")
		}
		run.res = append(run.res, r)
	}
}

// stop ends the workers' loops: acquisitions waiting are cancelled, holders
// finish their cycle and release, and a frozen one is let go.
func (run *chaosRun) stop() {
	run.stopOnce.Do(func() {
		run.cancel()
		for _, w := range run.workers {
			select {
			case f := <-w.freeze:
				f.open()
			default:
			}
		}
		done := make(chan struct{})
		go func() { run.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(chaosStopWithin):
			claims.BrokenCheck(run.t, "C1", "the workers did not end their cycles within %v of the stop", chaosStopWithin)
		}
	})
}

// leftWithin bounds the wait for what the workers' sessions leave on the
// server once they are closed. A worker closed while the nemesis has just
// cut it off cannot send its closeSession: the server expires that session,
// and its nodes with it, after the negotiated timeout, up to a tick later.
// On a server with the default tickTime (2 s), a user's own among them, the
// shortest timeout is 4 s, so that is 6 s; a node or session still there
// after leftWithin has outlived any session timeout C1's workers can get.
const leftWithin = 10 * harness.ExpirySessionTimeout

// checkNothingLeftOnServer: with every worker's session closed, no lock
// node is left under the root and no session but the observer's is left
// on the server that tracks them all (the leader, or the one server).
func (run *chaosRun) checkNothingLeftOnServer() {
	t := run.t
	if err := run.O.WaitConnected(zkclient.ConnectWithin); err != nil {
		claims.NotShown(t, "C1", "the observer has no session to check with: %v", err)
	}
	err := wait.Until(leftWithin, "no lock node under "+run.root, func() (bool, string) {
		kids, _, err := run.O.Children(run.root)
		return err == nil && len(kids) == 0, fmt.Sprintf("%v %v", kids, err)
	})
	if err != nil {
		claims.Refuted(t, "C1", "lock nodes left after every worker closed: %v", err)
		run.sum.Note(rowLeft, zh.Say("lock nodes (see the failure)"))
		return
	}
	tracker := run.servers[0]
	if run.cluster != nil {
		tracker = run.cluster.Leader()
	}
	what, left := run.leftSessions()
	err = wait.Until(leftWithin, what+" in "+tracker.Label+"'s dump", func() (bool, string) {
		all, err := dumpSessions(tracker)
		all = slices.DeleteFunc(all, func(s string) bool { return !left(s) })
		return err == nil && len(all) == 0, fmt.Sprint(all, err)
	})
	if err != nil {
		claims.Refuted(t, "C1", "sessions left after every worker closed: %v", err)
		run.sum.Note(rowLeft, zh.Say("sessions (see the failure)"))
		return
	}
	t.Logf("after the workers closed: no lock node under the root and %s in %s's dump", what, tracker.Label)
	run.sum.Note(rowLeft, zh.Say("none"))
}

// leftSessions says which sessions of the server's dump the run would have
// left: every one but O's on servers of the harness's own; on the user's
// server, which others' sessions share, those the workers had.
func (run *chaosRun) leftSessions() (what string, left func(string) bool) {
	own := fmt.Sprintf("0x%x", run.O.SessionID())
	if !run.shared {
		return "no session but O's (" + own + ")", func(s string) bool { return s != own }
	}
	var ids []string
	for _, w := range run.workers {
		ids = append(ids, w.ids...)
	}
	return fmt.Sprintf("none of the workers' %d sessions", len(ids)), func(s string) bool { return slices.Contains(ids, s) }
}

// Rows the checks add to the summary table.
var (
	rowLeft      = zh.Say("left on the servers after the workers closed: lock nodes, sessions")
	rowPorcupine = zh.Say("porcupine on the fenced histories (refused writes as reads)")
)

var sessionID = regexp.MustCompile(`^\s*(0x[0-9a-f]+)\s*$`)

// dumpSessions lists the sessions the server's dump names in its session
// sets (a leader's, or a standalone server's, are every session).
func dumpSessions(s *zkserver.Server) ([]string, error) {
	answer, err := zkserver.FourLetter(s.Client, "dump", harness.Within)
	if err != nil {
		return nil, err
	}
	dump, _, _ := strings.Cut(answer, "ephemeral nodes dump")
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if m := sessionID.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out, nil
}

// failWatch is a *testing.T that remembers whether a check failed it.
type failWatch struct {
	*testing.T
	failed bool
}

func (f *failWatch) Errorf(format string, args ...any) {
	f.T.Helper()
	f.failed = true
	f.T.Errorf(format, args...)
}

// checkFences: the fenced resources accepted no token below one they had
// accepted, their histories are linearizable registers, the control did
// take a stale-late write, and nothing broke the bookkeeping.
func (run *chaosRun) checkFences() {
	t := run.t
	var verdicts []zh.Text
	for _, r := range run.res {
		regressions := r.ledger.Regressions()
		run.sum.SetBelowMark(r.name, len(regressions))
		if !r.fenced {
			t.Logf("the control accepted %d writes below a token it had accepted before: %v", len(regressions), regressions)
			continue
		}
		if len(regressions) > 0 {
			claims.Refuted(t, "C1", "the fenced %s resource accepted %d writes below a token it had accepted before; want none: %v", r.name, len(regressions), regressions)
		}
		ft := &failWatch{T: t}
		history.RequireLinearizable(ft, r.rec, "C1")
		verdicts = append(verdicts, zh.Say("%s linearizable=%v (%d ops)", resourceName(r.name), !ft.failed, len(r.rec.Operations())))
	}
	run.sum.Note(rowPorcupine, zh.Join(verdicts, zh.Say(", ")))
	if c, _ := run.sum.StaleLate(ResControl); c == 0 {
		claims.BrokenCheck(t, "C1", "the run proved nothing: no stale-late write reached the control (%s)", run.setup.Name)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, a := range run.anomalies {
		claims.BrokenCheck(t, "C1", "%s", a)
	}
}

// runNemesis draws faults and injects them one at a time until the size
// says the schedule is over. After each fault it waits until the lock has
// moved on: a lock that stays stuck fails the run.
func (run *chaosRun) runNemesis() {
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
	run.awaitProgress("the start", ChaosWorkers)
	for !size.Done(sc, time.Since(start), int(run.acquired.Load()-base)) {
		f := sc.Next()
		claims.Phase(t, "fault %d, %v into the schedule: %v", f.N, time.Since(start).Round(100*time.Millisecond), f.Kind)
		effective := run.inject(f)
		run.sum.Fault(f.Kind, effective)
		if !effective && sc.Again(f.Kind) {
			run.nemesis.Info("%v took no effect; drawn again later", f.Kind)
		}
		run.awaitProgress(fmt.Sprintf("fault %d (%v)", f.N, f.Kind), 2)
	}
}

// awaitProgress waits until n more acquisitions were made.
func (run *chaosRun) awaitProgress(after string, n int) {
	run.t.Helper()
	target := run.acquired.Load() + int64(n)
	err := wait.Until(chaosProgressWithin, fmt.Sprintf("%d acquisitions after %s", n, after), func() (bool, string) {
		got := run.acquired.Load()
		return got >= target, fmt.Sprintf("%d of %d", got, target)
	})
	if err != nil {
		claims.NotShown(run.t, "C1", "the lock stalled: %v", err)
	}
}

// inject injects f and reports whether it took effect.
func (run *chaosRun) inject(f Fault) bool {
	switch f.Kind {
	case LoseCreate:
		return run.loseReply(f, faultproxy.Match{Ops: scene.CreateOps, Under: run.root})
	case LoseDelete:
		return run.loseReply(f, faultproxy.Match{Ops: []int32{jute.OpDelete}, Under: run.root})
	case LoseChildren:
		return run.loseDecidingListing(f)
	case FrozenExpiry:
		return run.frozenExpiry(f)
	case ShortCut:
		return run.shortCut(f)
	case Restart:
		return run.restart(f)
	case Failover:
		return run.failover(f)
	}
	claims.NotShown(run.t, "C1", "no injection for fault kind %v", f.Kind)
	return false
}

// loseReply arms the fault on every proxy of the worker (its client is on
// one of them) and waits until one reply is lost, or withdraws it.
func (run *chaosRun) loseReply(f Fault, m faultproxy.Match) bool {
	w := run.workers[f.Worker]
	run.nemesis.Invoke("lose the reply to %s's %s", w.name, m)
	return run.awaitLost(w, m, arm(w, m))
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
func (run *chaosRun) loseDecidingListing(f Fault) bool {
	w := run.workers[f.Worker]
	m := faultproxy.Match{Ops: []int32{jute.OpGetChildren2}, Path: run.root}
	run.nemesis.Invoke("once %s holds, lose the reply to its next %s: the first listing of its next acquisition", w.name, m)
	armed := make(chan []*faultproxy.Drop, 1)
	w.atHold <- func() { armed <- arm(w, m) }
	select {
	case drops := <-armed:
		return run.awaitLost(w, m, drops)
	case <-time.After(chaosFaultWithin):
	}
	select {
	case <-w.atHold:
		run.nemesis.Info("%s did not hold within %v; withdrawn", w.name, chaosFaultWithin)
		return false
	default: // the worker took it just now: it arms at once
		return run.awaitLost(w, m, wait.Receive(run.t, harness.Within, "C1: "+w.name+"'s arming of the lost listing", armed))
	}
}

// awaitLost waits until one of w's drops lost its reply, or withdraws
// them, and says so.
func (run *chaosRun) awaitLost(w *chaosWorker, m faultproxy.Match, drops []*faultproxy.Drop) bool {
	lost, timedOut := firstLost(drops)
	switch {
	case lost != nil:
		run.nemesis.Ok("lost the reply to %s's %s %s (xid %d, zxid %#x)", w.name, jute.OpName(lost.Op), lost.Path, lost.Xid, lost.Zxid)
	case timedOut:
		run.nemesis.Info("%s sent no such request within %v; withdrawn", w.name, chaosFaultWithin)
	default:
		run.nemesis.Info("%s's request was answered with another err code; spent without loss", w.name)
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
	at  moment
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
func (run *chaosRun) frozenExpiry(f Fault) bool {
	t, w := run.t, run.workers[f.Worker]
	fr := newFreeze()
	defer fr.open()
	run.nemesis.Invoke("freeze %s once it holds with its token; partition it until its session expires", w.name)
	w.freeze <- fr
	var h *lock.Held
	select {
	case h = <-fr.held:
	case <-time.After(chaosFaultWithin):
		select {
		case <-w.freeze:
		default:
		}
		run.nemesis.Info("%s did not hold within %v; the freeze is withdrawn", w.name, chaosFaultWithin)
		return false
	}
	run.nemesis.Ok("%s frozen holding %s with token %v", w.name, path.Base(h.Path), h.Token)
	for _, p := range w.proxies {
		p.Blackhole(faultproxy.Both)
	}
	heal := sync.OnceFunc(func() {
		for _, p := range w.proxies {
			p.Heal()
		}
	})
	defer heal()
	run.awaitSuccessor(w, h)
	heal()
	run.nemesis.Invoke("heal %s's connections and open its gate: it writes with token %v", w.name, h.Token)
	fr.open()
	got := wait.Receive(t, chaosFaultWithin, "C1: "+w.name+"'s write after its gate opened", fr.wrote)
	if !got.at.stale() {
		run.earlyWrite(f, w, h, got)
		return true
	}
	run.sum.Add(StaleLate, 1)
	run.judgeStaleLate(w, h, got.got)
	return true
}

// earlyWrite: the frozen worker wrote before the moment that makes a write
// stale-late (its node gone and a higher token accepted), as the worker
// saw it when it wrote. That is the schedule's doing, not the fence's: the
// write was a holder's, which every resource may accept. C1's scenario did
// not come about.
func (run *chaosRun) earlyWrite(f Fault, w *chaosWorker, h *lock.Held, wr frozenWrite) {
	var parts []string
	for i, r := range run.res {
		parts = append(parts, fmt.Sprintf("%s accepted=%v", r.name, wr.got[i].Accepted))
	}
	run.nemesis.Info("%s wrote with token %v before it was stale-late: %s; %s", w.name, h.Token, wr.at, strings.Join(parts, ", "))
	claims.BrokenCheck(run.t, "C1", "the schedule (seed %d, %s, fault %d: %v on %s; replay with %s=%d) let %s write with token %v before the moment it would be stale-late: when it wrote, %s; its write was a holder's (%s), so no resource's answer to it says anything of the fence",
		run.plan.Seed, run.setup.Name, f.N, f.Kind, w.name, EnvSeed, run.plan.Seed, w.name, h.Token, wr.at, strings.Join(parts, ", "))
}

// awaitSuccessor waits until the frozen holder's node is gone, as the
// observer sees it, and both fenced resources hold a token above its own.
func (run *chaosRun) awaitSuccessor(w *chaosWorker, h *lock.Held) {
	marks := make([]fence.Token, len(run.res))
	err := wait.Until(10*harness.ExpirySessionTimeout+chaosProgressWithin, w.name+"'s node to go and a higher token to reach the fenced resources", func() (bool, string) {
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
		claims.NotShown(run.t, "C1", "the lock stalled: %s stayed frozen and partitioned, and no successor took over: %v", w.name, err)
	}
	run.nemesis.Ok("%s's node %s is gone (O sees no node) and the fenced resources hold %v and %v, above its %v", w.name, path.Base(h.Path), marks[0], marks[1], h.Token)
}

// judgeStaleLate: the fenced resources must have refused the stale-late
// write; the control takes it.
func (run *chaosRun) judgeStaleLate(w *chaosWorker, h *lock.Held, got []fence.Result) {
	var parts []string
	for i, r := range run.res {
		res := got[i]
		parts = append(parts, fmt.Sprintf("%s accepted=%v (mark %v)", r.name, res.Accepted, res.Mark))
		if r.fenced && res.Accepted {
			claims.Refuted(run.t, "C1", "the fenced %s resource accepted %s's stale-late write with token %v (its node gone, a higher token accepted before); want it refused", r.name, w.name, h.Token)
		}
	}
	run.nemesis.Ok("%s's stale-late write with token %v: %s", w.name, h.Token, strings.Join(parts, ", "))
}

// shortCut cuts both ends of the chosen workers' connections and heals at
// once: the clients reconnect in their sessions.
func (run *chaosRun) shortCut(f Fault) bool {
	var names []string
	open := 0
	for _, i := range f.Cut {
		w := run.workers[i]
		names = append(names, w.name)
		for _, p := range w.proxies {
			open += p.ConnCount()
		}
	}
	run.nemesis.Invoke("cut the connections of %s, then heal at once", strings.Join(names, " "))
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
	run.nemesis.Ok("%d connections cut", open)
	return open > 0
}

// restart stops a server and starts it again with its data; on three
// servers the ensemble must have a leader again.
func (run *chaosRun) restart(f Fault) bool {
	t := run.t
	s := run.servers[f.Server]
	run.nemesis.Invoke("restart %s", s.Label)
	t0 := time.Now()
	if err := s.TryRestart(); err != nil {
		claims.NotShown(t, "C1", "restart %s: %v", s.Label, err)
	}
	if run.cluster != nil {
		if _, err := run.cluster.Ensemble.Leader(chaosServerWithin); err != nil {
			claims.NotShown(t, "C1", "no leader after restarting %s: %v", s.Label, err)
		}
	}
	mode, _ := s.Mode()
	run.nemesis.Ok("%s is back as %s after %v", s.Label, mode, time.Since(t0).Round(time.Millisecond))
	return true
}

// failover blackholes every link between the leader and the other servers
// until they elect another leader, then heals: the old leader comes back
// as a follower.
func (run *chaosRun) failover(Fault) bool {
	t, c := run.t, run.cluster
	old, err := c.Ensemble.Leader(chaosServerWithin)
	if err != nil {
		claims.NotShown(t, "C1", "no leader before the failover: %v", err)
	}
	run.nemesis.Invoke("partition the leader %s from the other servers", old.Label)
	heal := sync.OnceFunc(c.Links.Heal)
	defer heal()
	for _, s := range c.Servers {
		if s != old {
			c.Links.Blackhole(old.ID, s.ID)
			c.Links.Blackhole(s.ID, old.ID)
		}
	}
	var next *zkserver.Server
	err = wait.Until(chaosServerWithin, "another server to lead", func() (bool, string) {
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
		claims.NotShown(t, "C1", "%v", err)
	}
	if err := old.WaitMode(chaosServerWithin, "follower"); err != nil {
		claims.NotShown(t, "C1", "%s did not come back as a follower: %v", old.Label, err)
	}
	run.nemesis.Ok("%s leads; %s is back as a follower", next.Label, old.Label)
	return true
}

// since is how long the setup has run: when a hold began, when the server
// was read.
func (run *chaosRun) since() time.Duration {
	return time.Since(run.start).Round(time.Millisecond)
}

// readBack lists the lock parent on the server after w's hold began, and
// judges the hold and every hold it overlapped from the lock's view
// (Read says why a listing taken after the hold began shows the
// server as it was then). Its own node must be the lowest candidate. An
// overlap is the one the article expects when the earlier holder's node
// is gone: the server removed it when the session expired, and the old
// holder has not learned it yet. Both nodes there is two holders at once.
//
// The observer reads on its own session, whose connections no fault of a
// worker touches (on the worker's session the listing would spend a loss
// armed for the recipe's own listing, and wait out its reconnects), and
// after a sync: a follower that lags would still list a node the leader
// deleted, and count an expected overlap as two holders. A sync is not
// enough to accuse the recipe: a leader that does not know it was deposed
// answers a sync from its own state (ZOOKEEPER-1675, the article's §2,
// claim Y2). So a listing that shows a hold the lock must not give is
// taken again after a write of O's own, which only a quorum commits (the
// article's barrier: a real update in the same session, then read), and
// that listing decides. A node gone cannot come back, so an old listing
// can only err towards "gone".
func (run *chaosRun) readBack(w *chaosWorker, hold Hold, others []Hold) {
	own := path.Base(hold.Node)
	seen, how, err := run.listParent(hold, others, false)
	if err == nil && seen.Broken() {
		w.event("info", "O listed the parent %s: a hold the lock must not give (own node listed %v, lowest %v, overlapped nodes listed %v, candidates below it %v); O writes and lists again", how, seen.Own, seen.Lowest, seen.Present, seen.Ahead)
		seen, how, err = run.listParent(hold, others, true)
	}
	if err != nil {
		w.event("info", "O could not read the hold of %s back: %v", own, err)
		run.anomaly("%s's hold of %s (%v) was not read back on the server: %v", w.name, own, hold.Token, err)
		return
	}
	run.sum.Add(ReadBack, 1)
	switch {
	case !seen.Own:
		run.sum.Add(OwnGone, 1)
		w.event("info", "O listed the parent %s: own node %s gone already (its session ended after the hold began)", how, own)
	case seen.Lowest:
		w.line("ok", "O listed the parent %s: own node %s the lowest candidate", how, own)
	default:
		run.sum.Add(NotLowest, 1)
	}
	two := false
	for i, o := range others {
		kind := seen.Overlap(i)
		run.sum.Add(kind.Counter(), 1)
		switch kind {
		case EarlierGone:
			w.event("info", "overlap with %s's hold of %s (session 0x%x, since %v): O listed the parent %s: its node gone, the overlap the article expects: its session ended and the lock passed on while %s still believes it holds (fencing refuses its late writes)", o.Who, path.Base(o.Node), o.Session, o.Since, how, o.Who)
		case LaterGone:
			w.event("info", "overlap with %s's hold of %s (session 0x%x, since %v): O listed the parent %s: its node there, this hold's own node %s gone: %s is the holder whose session ended", o.Who, path.Base(o.Node), o.Session, o.Since, how, own, w.name)
		case BothThere:
			two = true
			w.event("fail", "overlap with %s's hold of %s: O listed the parent %s: both nodes there: two holders at once", o.Who, path.Base(o.Node), how)
			claims.Refuted(run.t, "C1", "two holders at once: %s holds %s since %v into the run and %s holds %s since %v; O listed the parent %s, %v into the run, with both nodes on the server (%s; %s); got both nodes there while both hold; want the earlier holder's node gone (its session expired) before a later hold begins",
				o.Who, path.Base(o.Node), o.Since, hold.Who, own, hold.Since, how, run.since(), run.owner(o), run.owner(hold))
		}
	}
	if seen.Own && len(seen.Ahead) > 0 {
		w.event("fail", "O listed the parent %s: candidates %v below own node %s", how, seen.Ahead, own)
		if two {
			return // refuted already, for the same hold
		}
		claims.Refuted(run.t, "C1", "%s holds %s (session 0x%x) since %v into the run, and O listed the parent %s, %v into the run, with %d candidates below its node: %v; got a hold whose node is not the lowest; want the lowest candidate to hold",
			hold.Who, own, hold.Session, hold.Since, how, run.since(), len(seen.Ahead), seen.Ahead)
	}
}

// listParent lists the lock parent on O's session after a sync, or after
// a write of O's own (the lock parent's data, which nobody reads) when
// write is set, and reads the listing for hold. It says how the listing
// was taken. The request and the listing must be on one session: a new
// session may be on a server behind the old one's.
func (run *chaosRun) listParent(hold Hold, others []Hold, write bool) (Seen, string, error) {
	var mu sync.Mutex // the wait's goroutine writes, this one reads
	var kids []string
	var how string
	what := "O's sync and listing of the lock parent"
	if write {
		what = "O's write and listing of the lock parent"
	}
	err := wait.Until(chaosServerWithin, what, func() (bool, string) {
		sid := run.O.SessionID()
		h := "after a sync"
		if write {
			st, err := run.O.Set(run.root, []byte("read back "+hold.String()), -1)
			if err != nil {
				return false, "write: " + err.Error()
			}
			h = fmt.Sprintf("after its write at zxid %#x", st.Mzxid)
		} else if _, err := run.O.Sync(run.root); err != nil {
			return false, "sync: " + err.Error()
		}
		k, _, err := run.O.Children(run.root)
		if err != nil {
			return false, "children: " + err.Error()
		}
		if now := run.O.SessionID(); now != sid {
			return false, fmt.Sprintf("session 0x%x, then 0x%x", sid, now)
		}
		mu.Lock()
		kids, how = k, h
		mu.Unlock()
		return true, ""
	})
	if err != nil {
		return Seen{}, "", err
	}
	mu.Lock()
	defer mu.Unlock()
	seen, err := Read(kids, hold, others)
	return seen, how, err
}

// owner says who owns a hold's node, as O reads it now: for the record of
// two holders, whose nodes were listed.
func (run *chaosRun) owner(h Hold) string {
	ok, st, err := run.O.Exists(h.Node)
	switch {
	case err != nil:
		return fmt.Sprintf("%s's %s: owner not read (%v), its Locker's session 0x%x", h.Who, path.Base(h.Node), err, h.Session)
	case !ok:
		return fmt.Sprintf("%s's %s: gone by the time O asked for its owner, its Locker's session 0x%x", h.Who, path.Base(h.Node), h.Session)
	}
	return fmt.Sprintf("%s's %s owned by session 0x%x, %s's Locker's 0x%x", h.Who, path.Base(h.Node), st.EphemeralOwner, h.Who, h.Session)
}

// chaosWorker is one worker: its own session through its own proxies (one
// per server), a Locker on its current session, and its drawn pauses.
type chaosWorker struct {
	run     *chaosRun
	id      int
	name    string
	a       claims.Actor
	c       *zkclient.Client
	proxies []*faultproxy.Proxy
	trace   *locktrace.Trace
	l       *lock.Locker
	session int64
	pause   func() time.Duration
	freeze  chan *freeze
	atHold  chan func() // the nemesis's, run in the cycle once the worker holds

	cycles, acquisitions, sessions int
	ids                            []string // its sessions, as the server's dump writes them
	eventful                       bool
	routine                        []fence.Token // tokens of the uneventful cycles not yet reported

	mu    sync.Mutex
	lines [][2]string // the cycle's lines: kind, text
	cut   int         // lines dropped past chaosTraceLines
}

func (run *chaosRun) newWorker(i int) *chaosWorker {
	t := run.t
	w := &chaosWorker{run: run, id: i, name: fmt.Sprintf("W%d", i+1), freeze: make(chan *freeze, 1), atHold: make(chan func(), 1),
		pause: Pauses(run.plan.Seed, run.index, i, chaosPauseMax)}
	w.a = claims.NewActor(t, w.name)
	var addrs []string
	for _, s := range run.servers {
		p := zkserver.ClientProxy(t, w.name+"-"+s.Label, s)
		w.proxies = append(w.proxies, p)
		addrs = append(addrs, p.Addr())
	}
	w.c = zkclient.Connect(t, w.name, addrs, zkclient.WithSessionTimeout(harness.ExpirySessionTimeout), zkclient.Quiet())
	w.trace = locktrace.Compose(scene.RecordTrace(w.step), &locktrace.Trace{
		Reply: func(r locktrace.ReplyInfo) {
			if r.Err != nil {
				w.markEventful()
			}
		},
		Recovered: func(locktrace.NodeInfo) { w.markEventful() },
		Ended: func(i locktrace.EndInfo) {
			if i.End != locktrace.EndReleased {
				w.markEventful()
			}
		},
	})
	return w
}

// step keeps one of the lock's steps of the current cycle; only an
// eventful cycle logs them. Names under the root are long enough without
// it.
func (w *chaosWorker) step(typ, format string, args ...any) {
	w.line(typ, "%s", strings.ReplaceAll(fmt.Sprintf(format, args...), w.run.root+"/", ""))
}

// markEventful says the current cycle met a fault: a failed request, a
// lost or abandoned candidacy, or a recovery.
func (w *chaosWorker) markEventful() {
	w.mu.Lock()
	w.eventful = true
	w.mu.Unlock()
}

func (w *chaosWorker) line(typ, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lines) == chaosTraceLines {
		w.cut++
		return
	}
	w.lines = append(w.lines, [2]string{typ, fmt.Sprintf(format, args...)})
}

func (w *chaosWorker) event(typ, format string, args ...any) {
	w.mu.Lock()
	w.eventful = true
	w.mu.Unlock()
	w.line(typ, format, args...)
}

func (w *chaosWorker) loop() {
	defer w.run.wg.Done()
	for w.run.ctx.Err() == nil {
		w.cycle()
	}
	w.reportRoutine()
}

// cycle is one turn: acquire, take the token (and stop there if the
// nemesis froze the worker), pause, write, release.
func (w *chaosWorker) cycle() {
	w.cycles++
	w.mu.Lock()
	w.lines, w.cut, w.eventful = nil, 0, false
	w.mu.Unlock()
	h, err := w.acquire()
	if h == nil {
		if w.run.ctx.Err() != nil {
			return // stopped while waiting: nothing happened worth a line
		}
		w.acquireFailed(err)
		w.report(h)
		return
	}
	w.acquisitions++
	w.run.acquired.Add(1)
	w.run.sum.Add(Acquisitions, 1)
	w.line("ok", "acquire %s token %v", path.Base(h.Path), h.Token)
	hold := Hold{Who: w.name, Token: h.Token, Node: h.Path, Session: w.session, Since: w.run.since()}
	others, unpin := w.run.holders.Begin(hold)
	if len(others) > 0 {
		w.run.sum.Add(Overlaps, 1)
		var names []string
		for _, o := range others {
			names = append(names, o.String())
		}
		w.event("info", "overlap: from the lock's view %s still holds", strings.Join(names, " and "))
	}
	// Before the freeze, the pause and the writes: the overlapped holds
	// stay pinned (they cannot end and delete their nodes) until it is done.
	w.run.readBack(w, hold, others)
	unpin()
	select {
	case f := <-w.atHold:
		w.event("info", "holding: the nemesis arms a fault")
		f()
	default:
	}
	fr := w.takeFreeze(h)
	// The GC pause is the workload, not a wait for an event: the holder
	// stops with its token for a drawn time.
	select {
	case <-time.After(w.pause()):
	case <-w.run.ctx.Done():
	}
	var at moment
	if fr != nil {
		at = w.run.momentOf(h)
	}
	got := w.writeAll(h.Token, at)
	if fr != nil {
		fr.wrote <- frozenWrite{got: got, at: at}
	}
	w.run.holders.End(w.name)
	w.release(h)
	w.report(h)
}

// acquire acquires, recovering after a create whose reply was lost, on a
// Locker of the client's current session.
func (w *chaosWorker) acquire() (*lock.Held, error) {
	if w.l == nil || w.c.SessionID() != w.session {
		if err := w.relock(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(w.run.ctx, chaosAcquireWithin)
	defer cancel()
	w.line("invoke", "acquire")
	h, err := w.l.Acquire(ctx)
	if ce, ok := errors.AsType[*lock.CreateError](err); ok {
		w.event("info", "create returned no name (%v): Recover %s", ce.Err, ce.GUID)
		h, err = w.l.Recover(ctx, ce.GUID)
		switch {
		case err == nil:
			w.run.sum.Add(Recovered, 1)
		case errors.Is(err, lock.ErrMissing):
			w.run.sum.Add(RecoverMissing, 1)
		case errors.Is(err, lock.ErrAmbiguous):
			w.run.anomaly("%s: Recover(%s) found several nodes of one create: %v", w.name, ce.GUID, err)
		}
	}
	return h, err
}

// relock makes a Locker for the client's current session, once it has one.
func (w *chaosWorker) relock() error {
	if err := w.c.WaitConnected(zkclient.ConnectWithin); err != nil {
		return err
	}
	sid := w.c.SessionID()
	if w.session != 0 && sid != w.session {
		w.run.sum.Add(SessionsEnded, 1)
		w.event("info", "session 0x%x ended; a new Locker on session 0x%x", w.session, sid)
	}
	w.session, w.sessions = sid, w.sessions+1
	w.ids = append(w.ids, fmt.Sprintf("0x%x", sid))
	w.l = lock.New(w.c.Conn, w.run.root, lock.WithCzxidDomain(), lock.WithTrace(w.trace))
	return nil
}

func (w *chaosWorker) acquireFailed(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		w.run.sum.Add(GaveUp, 1)
	}
	w.event("fail", "acquire: %v", err)
	if err := w.c.WaitConnected(zkclient.ConnectWithin); err != nil {
		w.event("info", "%v", err)
	}
}

// takeFreeze stops the worker, holding, when the nemesis asked for it,
// until the nemesis opens the gate.
func (w *chaosWorker) takeFreeze(h *lock.Held) *freeze {
	select {
	case fr := <-w.freeze:
		w.event("info", "frozen with token %v", h.Token)
		fr.held <- h
		<-fr.gate
		w.line("info", "gate open")
		return fr
	default:
		return nil
	}
}

// writeAll writes a value of its own with tok to every resource, in order,
// and reads each fenced one after, all recorded. at is what a frozen
// worker saw just before (momentOf): whether the write is stale-late.
func (w *chaosWorker) writeAll(tok fence.Token, at moment) []fence.Result {
	value := fmt.Sprintf("%s#%d %v", w.name, w.cycles, tok)
	note, stale := "", at.stale()
	switch {
	case stale:
		note = " (stale-late: its node is gone, a higher token was accepted)"
	case at.checked:
		note = " (frozen, not stale-late: " + at.String() + ")"
	}
	w.line("invoke", "write %q with token %v%s", value, tok, note)
	got := make([]fence.Result, len(w.run.res))
	var parts []string
	all := true
	for i, r := range w.run.res {
		var call int64
		if r.rec != nil {
			call = r.rec.Now()
		}
		res, err := fencescene.Outcome(r.r.Write(context.Background(), tok, value))
		if err != nil {
			w.run.anomaly("%s: write to %s: %v", w.name, r.name, err)
			continue
		}
		if r.rec != nil {
			if err := r.span(w.id, value, res, call); err != nil {
				w.run.anomaly("%s: history of %s: %v", w.name, r.name, err)
			}
		}
		got[i] = res
		r.ledger.Record(w.name, tok, res)
		w.run.sum.Write(r.name, res.Accepted, stale)
		parts = append(parts, fmt.Sprintf("%s %s (mark %v)", r.name, map[bool]string{true: "accepted", false: "refused"}[res.Accepted], res.Mark))
		all = all && res.Accepted
	}
	if all {
		w.line("ok", "write: %s", strings.Join(parts, ", "))
	} else {
		w.event("fail", "write: %s", strings.Join(parts, ", "))
	}
	w.readAll()
	return got
}

// readAll reads each fenced resource, for its history.
func (w *chaosWorker) readAll() {
	for _, r := range w.run.res {
		if r.rec == nil {
			continue
		}
		call := r.rec.Now()
		v, _, _, err := r.r.Read(context.Background())
		if err != nil {
			w.run.anomaly("%s: read %s: %v", w.name, r.name, err)
			continue
		}
		if err := r.rec.Span(w.id, history.Input{Op: history.Read}, history.Output{Value: v}, call, r.rec.Now()); err != nil {
			w.run.anomaly("%s: history of %s: %v", w.name, r.name, err)
		}
	}
}

// release releases with its own bound: a stopping run still releases.
func (w *chaosWorker) release(h *lock.Held) {
	ctx, cancel := context.WithTimeout(context.Background(), chaosAcquireWithin)
	defer cancel()
	w.line("invoke", "release %s", path.Base(h.Path))
	err := h.Release(ctx)
	switch {
	case err == nil:
		w.run.sum.Add(Released, 1)
		w.line("ok", "release")
	case errors.Is(err, lock.ErrLostCandidacy), errors.Is(err, lock.ErrSessionChanged):
		w.run.sum.Add(ReleaseLost, 1)
		w.event("fail", "release: %v", err)
	default:
		w.run.sum.Add(ReleaseUnknown, 1)
		w.event("info", "release: %v", err)
	}
}

// report logs an eventful cycle in full, after the uneventful ones before
// it in one line; an uneventful cycle is only counted.
func (w *chaosWorker) report(h *lock.Held) {
	w.mu.Lock()
	lines, cut, eventful := w.lines, w.cut, w.eventful
	w.mu.Unlock()
	if !eventful {
		if h != nil {
			w.routine = append(w.routine, h.Token)
		}
		return
	}
	w.reportRoutine()
	for _, l := range lines {
		w.a.Log(l[0], "%s", l[1])
	}
	if cut > 0 {
		w.a.Info("… %d more lines of this cycle not logged", cut)
	}
}

func (w *chaosWorker) reportRoutine() {
	if n := len(w.routine); n > 0 {
		w.a.Ok("%d uneventful cycles (acquire, pause, write: all accepted, release ok), tokens %v … %v", n, w.routine[0], w.routine[n-1])
		w.routine = w.routine[:0]
	}
}

// moment is what a frozen worker sees just before it writes: whether its
// node is gone (as the observer O sees it) and whether every fenced
// resource holds a token above its own. Both only ever become true (a
// sequential node once deleted does not come back; a fenced mark never
// goes down), so what holds just before the write holds when it is made.
type moment struct {
	node    string
	gone    bool
	err     error         // of the Exists, when it failed
	marks   []fence.Token // of the fenced resources, in the order of run.res
	above   bool          // every fenced mark above the token
	checked bool
}

// stale reports whether a write made at m is stale-late.
func (m moment) stale() bool { return m.checked && m.err == nil && m.gone && m.above }

func (m moment) String() string {
	node := "its node " + m.node + " was still on the server"
	switch {
	case m.err != nil:
		node = fmt.Sprintf("whether its node %s was gone is unknown (%v)", m.node, m.err)
	case m.gone:
		node = "its node " + m.node + " was gone"
	}
	higher := "a higher token had been accepted by every fenced resource"
	if !m.above {
		higher = "no higher token had been accepted by every fenced resource"
	}
	return fmt.Sprintf("%s and %s (fenced marks %v)", node, higher, m.marks)
}

// momentOf looks, for the holder of h about to write, whether its node is
// gone and a higher token accepted by every fenced resource.
func (run *chaosRun) momentOf(h *lock.Held) moment {
	m := moment{node: path.Base(h.Path), above: true, checked: true}
	exists, _, err := run.O.Exists(h.Path)
	m.gone, m.err = err == nil && !exists, err
	for _, r := range run.res {
		if !r.fenced {
			continue
		}
		_, mark, _, err := r.r.Read(context.Background())
		if err != nil && m.err == nil {
			m.err = fmt.Errorf("read %s: %w", r.name, err)
		}
		m.marks = append(m.marks, mark)
		m.above = m.above && err == nil && mark.Compare(h.Token) > 0
	}
	return m
}

package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/server/sqldb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

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
	nemesis  *nemesis

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once

	judge     func(History) // the root's, called once (judgeSoFar or at the end)
	judgeOnce sync.Once

	mu        sync.Mutex
	events    []Event
	anomalies []string
}

// record appends an event to the run's history.
func (run *chaosRun) record(e Event) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.events = append(run.events, e)
}

// history is what the run recorded so far; ended says the run got to its
// end, and then the resources' records are in it.
func (run *chaosRun) history(ended bool) History {
	run.mu.Lock()
	defer run.mu.Unlock()
	h := History{Seed: run.plan.Seed, Setup: run.setup.Name, Ended: ended, Events: slices.Clone(run.events)}
	if !ended {
		return h
	}
	h.Anomalies = slices.Clone(run.anomalies)
	for _, r := range run.res {
		rh := ResourceHistory{Name: r.name, Fenced: r.fenced, Accepted: r.ledger.Accepted()}
		if r.rec != nil {
			rh.Initial, rh.Ops = r.rec.Initial(), registerOps(r.rec.Operations())
		}
		h.Resources = append(h.Resources, rh)
	}
	return h
}

// judgeSoFar hands the history recorded so far to the root's judge, before
// the run says that it stops short (claims.NotShown): the events seen
// until then are judged first, as they would have been had it gone on.
func (run *chaosRun) judgeSoFar() {
	run.judgeOnce.Do(func() { run.judge(run.history(false)) })
}

// anomaly notes something that breaks the run's bookkeeping (a resource's
// I/O error, an ambiguous recovery); each fails the test at the end.
func (run *chaosRun) anomaly(format string, args ...any) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.anomalies = append(run.anomalies, fmt.Sprintf(format, args...))
}

// RunChaos runs one setup, counting in sum, and hands what it recorded to
// judge, once: at its end, or, when it stops short with C1 not shown (a
// setup step failed, the lock stalled), just before it says so. The run
// judges nothing itself; judge is the root's (Checker says how).
func RunChaos(t *testing.T, plan Plan, index int, setup chaosSetup, sum *Summary, judge func(History)) {
	t0 := time.Now()
	run := &chaosRun{t: t, plan: plan, index: index, setup: setup, start: t0, sum: sum, judge: judge}
	run.nemesis = &nemesis{run: run, a: claims.NewActor(t, "nemesis")}
	run.ctx, run.cancel = context.WithCancel(context.Background())
	t.Cleanup(run.cancel)
	// A run that stops on a failure that states no verdict (a wait of the
	// harness that gave up) still has its events judged, after it.
	t.Cleanup(run.judgeSoFar)
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
	// Registered after the clients, so it runs before they close. A run
	// that got to its end has stopped already.
	t.Cleanup(func() {
		if run.stop() {
			claims.BrokenCheck(t, "C1", "the workers did not end their cycles within %v of the stop", chaosStopWithin)
		}
	})
	for _, w := range run.workers {
		run.wg.Add(1)
		go w.loop()
	}
	run.nemesis.runSchedule()
	claims.Phase(t, "the schedule is over after %v: stop the workers, close their sessions, check", time.Since(t0).Round(100*time.Millisecond))
	var closed []Unclosed
	late := run.stop()
	for _, w := range run.workers {
		w.a.Info("%d acquisitions in %d sessions", w.acquisitions, w.sessions)
		if err := w.c.CloseWait(harness.Within); err != nil {
			closed = append(closed, Unclosed{Worker: w.name, Err: err.Error()})
		}
	}
	nodes, sessions := run.leftOnServer()
	h := run.history(true)
	h.NotStopped, h.StopWithin, h.Unclosed, h.NodesLeft, h.SessionsLeft = late, chaosStopWithin, closed, nodes, sessions
	if path, err := h.save(); err != nil {
		t.Logf("the history was not saved: %v", err)
	} else if path != "" {
		t.Logf("the history is saved in %s", path)
	}
	run.judgeOnce.Do(func() { judge(h) })
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
	// What is left is read from the server's dump (leftOnServer).
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
	dur, err := sqldb.OpenSQLite(context.Background(), filepath.Join(sc.TempDir(), "resource.db"))
	if err != nil {
		claims.NotShown(t, "C1", "durable resource: %v", err)
	}
	for _, r := range []*chaosResource{
		{name: ResMemory, r: fence.NewMemory(), fenced: true},
		{name: ResDurable, r: dur, fenced: true},
		{name: ResPostgres, r: sqldb.OpenDurable(sc), fenced: true},
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
// finish their cycle and release, and a frozen one is let go. late says
// that this call stopped them and they did not end their cycles within
// chaosStopWithin (a later call does nothing and says false).
func (run *chaosRun) stop() (late bool) {
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
			late = true
		}
	})
	return late
}

// since is how long the setup has run: when a hold began, when the server
// was read.
func (run *chaosRun) since() time.Duration {
	return time.Since(run.start).Round(time.Millisecond)
}

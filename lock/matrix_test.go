package lock_test

// TestMatrix: every request the recipe sends, in every state in which it
// sends it, under every fault the proxy and the seam can make while that
// request is in flight (issue 39, item 6). The states and what each call
// must give under each fault are in matrix_cells_test.go, the faults in
// matrix_faults_test.go. A cell is a subtest named request/state/fault
// (for example children/acquire-round2/reply-lost); it runs against the
// real server on a parent, a proxy and sessions of its own, and checks,
// once the call returns and again once the hold it made (or released) is
// gone:
//   - the state was reached and the fault took, as the fault's own
//     observation shows it (a request or reply the proxy dropped, a cut
//     whose reconnect the proxy refused, a session the server closed, a
//     context ended while the call was in flight); else the cell is "not
//     shown", a failure, whatever the call did (no cell is exempt: the
//     fault of every one of the 360 takes);
//   - the error is the kind the doc's table gives for the fault;
//   - the call returned within the doc's bound: the cell's deadline plus
//     cleanupGrace, and cleanupGrace after the context ended;
//   - at most one Held is live (not released, its node there);
//   - every hold the call was not asked to release is kept (its node
//     there, its Lost open), unless the session expired;
//   - no node of the subject's sessions is left that no Held (or an
//     acquisition still running) owns;
//   - in a twin state (another session's node carries the GUID of the
//     subject's create, issue 48, item 9), the call never holds that node
//     and never deletes it.
//
// A cell records the checks it ran, by name, and the checks its row
// promises follow from the state and the fault alone (promises): a cell
// that returned before a promised check fails, naming it (issue 49, item
// 4). TestMatrixChecksItself shows that the table says so, through the
// matrix's seam (seamEnv).
//
// The cells run concurrently, matrixWorkers at a time: go test's -parallel
// defaults to GOMAXPROCS, two on the machines this runs on, and a cell
// mostly waits for a reconnect (go-zookeeper waits a second before it
// dials again). t.Run may be called from several goroutines; the parent
// waits for them all. The 370 cells take about 30 s on 2 cores, so the
// matrix runs in every go test ./lock, -short included. The table of
// cells is the test's last log block (go test -v shows it; CI runs -v):
// one line per cell with its request, state, fault, what was seen of the
// fault (none: it did not take), the outcome (held, returned, not shown,
// or FAIL: the broken invariants and the checks not run), how many of the
// promised checks ran, the error's kind, the call's time and, when the
// context ended, the time from its end to the return. Every cell runs;
// none is skipped.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

const (
	// matrixWorkers is how many cells run at once.
	matrixWorkers = 24
	// cellDeadline is the deadline of every call under test.
	cellDeadline = 20 * time.Second
	// matrixCells is the least number of cells issue 39 asks for.
	matrixCells = 150
)

// row is one line of the matrix's table.
type row struct {
	req, state, fault string
	seen              string // what was seen of the fault taking; "" when it did not take
	verdict           string // held, returned, not shown or FAIL
	outcome           string // the verdict and, after a colon, what broke and what did not run
	checks            string // the promised checks that ran, of all promised
	kind              string
	took              time.Duration
	afterEnd          time.Duration // from the context's end to the return; 0 when it did not end
}

func TestMatrix(t *testing.T) {
	seams, err := parseSeam(os.Getenv(seamEnv))
	if err != nil {
		t.Fatalf("%s: %v", seamEnv, err)
	}
	states := matrixStates()
	var specs []cellSpec
	for _, st := range states {
		for _, f := range st.faults {
			cs := cellSpec{st: st, f: f}
			cs.seam = seams[cs.name()]
			specs = append(specs, cs)
		}
	}
	if len(specs) < matrixCells {
		t.Fatalf("the matrix has %d cells; want at least %d", len(specs), matrixCells)
	}
	if len(seams) > 0 {
		t.Logf("the matrix's seam (%s) is set: %v", seamEnv, seams)
	}
	begin := time.Now()
	var mu sync.Mutex
	var rows []row
	sem := make(chan struct{}, matrixWorkers)
	var wg sync.WaitGroup
	for _, cs := range specs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := row{req: cs.st.req, state: cs.st.name, fault: cs.f.String(), verdict: verdictFail, outcome: verdictFail + ": not run"}
			ran := false
			ok := t.Run(cs.name(), func(t *testing.T) {
				ran = true
				rec := newRecord()
				defer finishCell(t, cs, rec, &r) // also when the cell stops early
				runCell(t, cs, rec, &r)
			})
			if !ran {
				return // filtered out by -run
			}
			if !ok && r.verdict != verdictFail && r.verdict != verdictNotShown {
				r.verdict, r.outcome = verdictFail, verdictFail+": after its checks (the cell's log says what)"
			}
			mu.Lock()
			rows = append(rows, r)
			mu.Unlock()
		}()
	}
	wg.Wait()
	wall := time.Since(begin)
	t.Attr("cells", fmt.Sprint(len(rows)))
	t.Attr("wall", wall.Round(time.Second).String())
	t.Logf("the matrix: %d cells (of %d) in %v, %d at a time\n%s", len(rows), len(specs), wall.Round(100*time.Millisecond), matrixWorkers, table(rows))
}

// table renders the rows sorted by request, state and fault, and then how
// many cells have each verdict.
func table(rows []row) string {
	order := map[string]int{}
	for i, f := range allFaults {
		order[f.String()] = i
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.req != b.req {
			return a.req < b.req
		}
		if a.state != b.state {
			return a.state < b.state
		}
		return order[a.fault] < order[b.fault]
	})
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "request\tstate\tfault\tfault seen\toutcome\tchecks\terror kind\ttime\tafter ctx end")
	counts := map[string]int{}
	for _, r := range rows {
		after := ""
		if r.afterEnd != 0 {
			after = r.afterEnd.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\n", r.req, r.state, r.fault, cmp.Or(r.seen, seenNone), r.outcome, r.checks, r.kind, r.took.Round(10*time.Millisecond), after)
		counts[r.verdict]++
	}
	_ = tw.Flush()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s: %d\n", k, counts[k])
	}
	return sb.String()
}

// cellSpec is one cell: a state and a fault, and what the matrix's seam
// does to it (nothing, but in TestMatrixChecksItself's run).
type cellSpec struct {
	st   *state
	f    fault
	seam seam
}

func (cs cellSpec) name() string { return cs.st.req + "/" + cs.st.name + "/" + cs.f.String() }

// heldRec is a Held made in a cell and whether the cell released it.
type heldRec struct {
	who      string
	h        *lock.Held
	released bool
}

// cell is one running cell.
type cell struct {
	t      *testing.T
	st     *state
	f      fault
	rec    *record // what the cell saw of its fault, the checks it ran, what broke
	seam   seam
	parent string
	o      *zkclient.Client // the observer's direct session
	w      *wire            // the subject's session, through its proxy
	l      *lock.Locker     // the subject's Locker, traced

	ctx        context.Context
	cancel     context.CancelFunc
	cancelOnce sync.Once
	cancelAt   atomic.Pointer[time.Time]
	cancelled  chan struct{}

	armed     atomic.Bool   // the call under test has begun
	fired     atomic.Bool   // its state was reached and the fault armed
	returned  atomic.Bool   // the call under test has returned
	faultDone chan struct{} // the fault has run its course
	faultErr  atomic.Value  // string: why the fault did not happen
	premise   atomic.Pointer[faultproxy.Drop]

	a       *lock.Held // the holder ahead, released once the fault is over
	aWho    string     // who holds a: A, or S for a hold ahead of S's own call
	aGone   bool       // a was released
	cancelB func()     // B leaves: the candidate in between (round 2)

	session0      int64                  // the subject's session when the cell began
	holdPath      atomic.Pointer[string] // callHold: the hold whose own-node watch is faulted
	guards        atomic.Int64           // watches S's holds set on their own nodes
	guardsAtFault atomic.Int64           // guards when the fault was armed

	twin twinNode // another session's node of S's GUID, in a twin state

	mu      sync.Mutex
	hist    hist
	helds   []*heldRec
	pending map[string]bool      // nodes of companion acquisitions still running
	compan  chan companionResult // the companion waiter's return
	over    bool                 // the test has ended: log nothing more
	logMu   sync.Mutex
}

type companionResult struct {
	h   *lock.Held
	err error
}

// hist is what the subject's trace has seen since the call began.
type hist struct {
	woke, waiting int
	deleteFailed  bool
	deletes       int
}

func (c *cell) logf(format string, args ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if !c.over {
		c.t.Logf(format, args...)
	}
}

// broken reports a broken invariant, naming it in the table and the
// message, and lets the cell go on to its next check.
func (c *cell) broken(invariant, format string, args ...any) {
	c.t.Helper()
	c.rec.add(&c.rec.broken, invariant)
	c.t.Errorf("%s/%s/%s: %s: %s", c.st.req, c.st.name, c.f, invariant, fmt.Sprintf(format, args...))
}

// notShown reports that the cell shows nothing about its fault (its state
// was not reached, its fault or a premise did not take): the table then
// says "not shown", and the cell fails, whatever the call did.
func (c *cell) notShown(format string, args ...any) {
	c.t.Helper()
	why := fmt.Sprintf(format, args...)
	c.rec.add(&c.rec.notShown, why)
	c.t.Errorf("%s/%s/%s: %s: %s", c.st.req, c.st.name, c.f, verdictNotShown, why)
}

// notShownNow is notShown for a cell that cannot go on.
func (c *cell) notShownNow(format string, args ...any) {
	c.t.Helper()
	c.notShown(format, args...)
	c.t.FailNow()
}

// fail is broken for a check the cell cannot go on after.
func (c *cell) fail(invariant, format string, args ...any) {
	c.t.Helper()
	c.broken(invariant, format, args...)
	c.t.FailNow()
}

func newCell(t *testing.T, cs cellSpec, rec *record) *cell {
	c := &cell{t: t, st: cs.st, f: cs.f, rec: rec, seam: cs.seam, cancelled: make(chan struct{}), faultDone: make(chan struct{}), pending: map[string]bool{}}
	t.Cleanup(func() { c.logMu.Lock(); c.over = true; c.logMu.Unlock() })
	c.parent, c.o = freshParent(t)
	opts := []lock.Option{lock.WithTrace(c.trace())}
	if c.st.parents { // a parent missing, under one that exists
		c.parent += "/lock"
		opts = append(opts, lock.WithParents())
	}
	c.w = newWire(t, "S")
	c.ctx, c.cancel = context.WithTimeout(context.Background(), cellDeadline)
	t.Cleanup(c.cancel)
	c.l = lock.New(c.w.c.Conn, c.parent, opts...)
	return c
}

// trace is the subject's Trace: one line per step, and the state machine
// that finds the cell's request.
func (c *cell) trace() *locktrace.Trace {
	return &locktrace.Trace{
		Request: func(i locktrace.RequestInfo) {
			c.logf("S invoke %s %s", i.Op, path.Base(i.Path))
			c.step(event{op: i.Op, path: i.Path, watch: i.Watch})
		},
		Reply: func(i locktrace.ReplyInfo) {
			c.logf("S %s %s: %v", i.Op, path.Base(i.Path), errOrOK(i.Err))
			if c.armed.Load() && i.Op == locktrace.OpDelete && i.Err != nil {
				c.mu.Lock()
				c.hist.deleteFailed = true
				c.mu.Unlock()
			}
		},
		Waiting: func(i locktrace.WatchInfo) {
			c.logf("S waits on %s", i.Predecessor)
			c.step(event{op: opNone, waiting: true})
		},
		Woke: func(i locktrace.WokeInfo) {
			c.logf("S woke: %v on %s", i.Event.Type, i.Predecessor)
			if c.armed.Load() {
				c.mu.Lock()
				c.hist.woke++
				c.mu.Unlock()
			}
		},
		Held:    func(i locktrace.HeldInfo) { c.logf("S holds %s", path.Base(i.Path)) },
		Guarded: func(i locktrace.NodeInfo) { c.logf("S watches its own node %s", path.Base(i.Path)); c.guards.Add(1) },
		Ended:   func(i locktrace.EndInfo) { c.logf("S %s %s: %v", i.End, path.Base(i.Path), i.Err) },
	}
}

// event is a step of the subject's trace: a request about to be sent, or
// the acquisition parking on a watch.
type event struct {
	op      locktrace.Op
	path    string
	watch   bool
	waiting bool
	n       int // the n-th Waiting, the n-th delete
}

// step runs the state's premises and, the first time the state's trigger
// matches, injects the fault.
func (c *cell) step(ev event) {
	if !c.armed.Load() {
		return
	}
	c.mu.Lock()
	switch {
	case ev.waiting:
		c.hist.waiting++
		ev.n = c.hist.waiting
	case ev.op == locktrace.OpDelete:
		c.hist.deletes++
		ev.n = c.hist.deletes
	}
	h := c.hist
	c.mu.Unlock()
	c.premises(ev)
	if hp := c.holdPath.Load(); hp != nil {
		if ev.op == locktrace.OpExists && ev.watch && ev.path == *hp && !c.fired.Swap(true) {
			c.guardsAtFault.Store(c.guards.Load())
			c.inject(ev.op, ev.path)
		}
		return
	}
	if c.st.untraced == 0 && c.st.at.matches(h, ev) && !c.fired.Swap(true) {
		c.inject(ev.op, ev.path)
	}
}

// premises are what a state needs before its request: the waiter in
// between leaves (round 2), the caller's context ends while parked
// (cleanup), the delete's reply is lost (look-again).
func (c *cell) premises(ev event) {
	st := c.st
	if ev.waiting && ev.n == 1 && st.round2 {
		c.logf("B leaves: its node goes, S wakes")
		c.cancelB()
	}
	if ev.waiting && ev.n == 1 && st.parkCancel {
		c.endCtx()
	}
	if ev.op == locktrace.OpCreate && st.untraced != 0 {
		c.holdCreateThenEnd()
	}
	if ev.op == locktrace.OpCreate && st.twin && c.twin.path == "" {
		c.makeTwin(ev.path)
	}
	if ev.waiting && ev.n == 1 && st.twin {
		c.twinLeaves()
	}
	if ev.op == locktrace.OpDelete && ev.n == 1 && st.loseDelete {
		c.logf("premise: the proxy loses the reply to S's delete of %s", path.Base(ev.path))
		c.premise.Store(c.w.px.LoseReply(c.matchOf(locktrace.OpDelete, ev.path)))
	}
}

func (c *cell) addHeld(who string, h *lock.Held) *heldRec {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &heldRec{who: who, h: h}
	c.helds = append(c.helds, r)
	return r
}

func (c *cell) markReleased(h *lock.Held) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.helds {
		if r.h == h {
			r.released = true
		}
	}
}

// holder makes the hold ahead of the subject: A, in a session of its own,
// or, in a shared state, a second Locker on the subject's *zk.Conn.
func (c *cell) holder() {
	conn := c.w.c.Conn
	if !c.st.shared {
		conn = zkclient.Connect(c.t, "A", []string{server().Client}, zkclient.Quiet()).Conn
	}
	c.a = mustAcquire(c.t, "A", lock.New(conn, c.parent))
	c.addHeld("A", c.a)
}

// releaseA releases the holder ahead (its error is not the cell's: under
// expiry a shared holder's hold went with the session).
func (c *cell) releaseA() {
	if c.a == nil || c.aGone {
		return
	}
	c.aGone = true
	c.markReleased(c.a)
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	c.logf("%s releases %s: %v", cmp.Or(c.aWho, "A"), path.Base(c.a.Path), errOrOK(c.a.Release(ctx)))
}

// between puts B's candidate behind A: a plain ephemeral sequential node
// named as the recipe names them, in a session of its own. The subject
// then waits behind B; the test deletes B's node to wake it for round 2
// (a Locker's B would leave only through the behaviours the matrix
// tests).
func (c *cell) between() {
	b := zkclient.Connect(c.t, "B", []string{server().Client}, zkclient.Quiet())
	p, err := b.Create(c.parent+"/"+uuid.NewString()+"-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		c.t.Fatalf("B create: %v", err)
	}
	c.logf("B ok %s (a candidate behind A)", path.Base(p))
	c.cancelB = func() {
		err := c.o.Delete(p, -1)
		c.logf("observer delete %s (B leaves): %v", path.Base(p), errOrOK(err))
	}
}

// companion makes a second acquisition on the subject's *zk.Conn wait
// behind the subject's node: the shared session's other acquisition.
func (c *cell) companion() {
	waiting := make(chan struct{})
	var once sync.Once
	l := lock.New(c.w.c.Conn, c.parent, lock.WithTrace(&locktrace.Trace{
		Listed: func(i locktrace.ListedInfo) {
			c.mu.Lock()
			c.pending[i.Own] = true
			c.mu.Unlock()
		},
		Waiting: func(locktrace.WatchInfo) { once.Do(func() { close(waiting) }) },
	}))
	c.compan = make(chan companionResult, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*cellDeadline)
	c.t.Cleanup(cancel)
	go func() {
		h, err := l.Acquire(ctx)
		c.mu.Lock()
		clear(c.pending)
		c.mu.Unlock()
		if h != nil {
			c.addHeld("C", h)
		}
		c.compan <- companionResult{h, err}
	}()
	tb.Receive(c.t, answerWithin, "the companion acquisition to wait behind S", waiting)
}

// finishCompanion waits for the companion's acquisition and releases its
// hold.
func (c *cell) finishCompanion() {
	if c.compan == nil {
		return
	}
	r := tb.Receive(c.t, 2*cellDeadline, "the companion acquisition to return", c.compan)
	c.logf("C Acquire: %v", errOrOK(r.err))
	if r.h != nil {
		c.markReleased(r.h)
		ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
		defer cancel()
		c.logf("C releases: %v", errOrOK(r.h.Release(ctx)))
	}
}

// result is what the call under test gave.
type result struct {
	held *lock.Held
	err  error
	took time.Duration // from the call
	end  time.Time
	gone <-chan struct{}
}

// run calls fn under the cell's context and waits for its return within
// the doc's bound: the cell's deadline plus cleanupGrace and scheduling,
// and, once the context was ended, cleanupGrace and scheduling from then.
// The holder ahead of an Acquire is released once a transient fault is
// over (the call then holds); after an expiry, a context's end or in a
// cleanup state, and ahead of a TryAcquire, it is released only after the
// call returned, which must come by itself.
func (c *cell) run(fn func(context.Context) (*lock.Held, error)) result {
	c.armed.Store(true)
	start := time.Now()
	done := make(chan result, 1)
	go func() {
		h, err := fn(c.ctx)
		c.returned.Store(true)
		done <- result{held: h, err: err, took: time.Since(start), end: time.Now()}
	}()
	handOver := c.a != nil && c.st.call == callAcquire && c.f != expired && c.f != ctxEnded && !c.st.parkCancel
	limit := time.NewTimer(cellDeadline + cleanupGrace + scheduling)
	defer limit.Stop()
	faultDone, cancelled := c.faultDone, c.cancelled
	for {
		select {
		case r := <-done:
			c.logf("S returned after %v: %v", r.took.Round(time.Millisecond), errOrOK(r.err))
			return r
		case <-faultDone:
			faultDone = nil
			if handOver {
				c.releaseA()
			}
		case <-cancelled:
			cancelled = nil
			limit.Reset(cleanupGrace + scheduling)
		case <-limit.C:
			bound := "the cell's deadline " + cellDeadline.String()
			if at := c.cancelAt.Load(); at != nil {
				bound = "the context's end"
			}
			c.fail(chkBound, "got no return within %v of %s; want the call's return by then (ctx deadline %v, cleanupGrace %v, scheduling %v)",
				time.Since(start).Round(time.Millisecond), bound, cellDeadline, cleanupGrace, scheduling)
		}
	}
}

// undo waits for the fault to run its course (a cut waits for the
// client's own reconnect to be refused, also when the call has returned)
// and then ends whatever it still holds: held replies flow again, the
// proxy accepts and passes.
func (c *cell) undo() {
	if !c.fired.Load() {
		return
	}
	select {
	case <-c.faultDone:
	case <-time.After(3 * answerWithin):
		c.fail("fault", "the fault's goroutine did not end within %v", 3*answerWithin)
	}
	c.w.px.Heal()
}

// runCell runs one cell: the state's setup and call, then the checks at
// the return and once the hold made or released is gone. Each check runs
// through c.check, which records it as run; finishCell, deferred by the
// caller, compares them with the row's promises.
func runCell(t *testing.T, cs cellSpec, rec *record, r *row) {
	c := newCell(t, cs, rec)
	c.session0 = c.w.c.SessionID()
	res := c.st.drive(c)
	rec.setHeld(res.held != nil)
	if res.held != nil {
		c.addHeld("S", res.held)
		c.check(chkToken, "", func() { c.checkToken(res.held) })
	}
	r.took = res.took
	if at := c.cancelAt.Load(); at != nil {
		r.afterEnd = res.end.Sub(*at)
	}
	r.kind = kindOf(res.err)
	c.undo()
	c.check(chkShown, "", func() { c.shown(res) })
	if c.st.twin {
		c.check(chkTwinHold, "", func() { c.checkTwinHold(res) })
		if !c.twin.left {
			c.check(chkTwinDelete, "", func() { c.twinThere(atReturn) })
		}
	}
	c.check(chkKind, "", func() { c.checkKind(res) })
	c.check(chkBound, "", func() { c.checkBound(res) })
	c.checkLiveAndOrphans(atReturn)
	if c.f != expired {
		c.check(chkKept, "", c.checkHoldsKept) // after the wait for the orphans: a cleanup's deletes are done
	}
	if res.held != nil {
		c.check(chkRelease, "", func() { res.gone = c.releaseGiven(res.held) })
	}
	if res.gone != nil {
		tb.Receive(t, 2*answerWithin, "S's Gone to close", res.gone)
		c.checkLiveAndOrphans(onceGone)
	}
	c.releaseA()
	c.finishCompanion()
	c.check(chkOrphan, allReleased, func() { c.checkNoOrphan(allReleased) })
	if c.f == expired {
		c.check(chkOutlives, "", c.checkLockerOutlivesSession)
	}
}

// checkLiveAndOrphans runs the checks of the Helds alive and of the nodes
// left at moment when.
func (c *cell) checkLiveAndOrphans(when string) {
	c.check(chkLive, when, func() { c.checkLive(when) })
	c.check(chkOrphan, when, func() { c.checkNoOrphan(when) })
}

// releaseGiven releases the hold the call gave, once the fault is undone,
// and returns its Gone.
func (c *cell) releaseGiven(h *lock.Held) <-chan struct{} {
	c.markReleased(h)
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	err := h.Release(ctx)
	c.logf("S releases what the call gave: %v", errOrOK(err))
	if err != nil {
		c.broken(chkRelease, "S's Release of the hold the call gave, after the fault was undone: got %v; want nil", err)
	}
	return h.Gone()
}

// shown is the check that the cell's fault took: the state was reached,
// the fault's own observation was recorded (c.saw), and its premises
// happened. A cell that fails it is "not shown": it would prove nothing
// about the fault. The checks that follow still run: what they find holds
// for the call as it ran (a recipe that never sends the request can still
// leave a node).
func (c *cell) shown(res result) {
	why, _ := c.faultErr.Load().(string)
	switch {
	case !c.fired.Load():
		c.notShown("the recipe never sent %s in state %s (the call returned %v)", c.st.req, c.st.name, res.err)
	case why != "":
		c.notShown("the fault %s did not happen: %s (the call returned %v)", c.f, why, res.err)
	case c.rec.seenFault() == "":
		c.notShown("the fault %s was armed but never seen to take: nothing on the wire or in the trace shows it (the call returned %v)", c.f, res.err)
	}
	if p := c.premise.Load(); p != nil && !p.Result().Dropped {
		c.notShown("the premise's lost delete reply did not happen: %s", p.Result().Reason)
	}
	if c.st.twin && c.twin.path == "" {
		c.notShown("T's node was never made: S sent no create")
	}
}

// checkKind compares the call's outcome with the doc's table.
func (c *cell) checkKind(res result) {
	w := c.st.want(c.f)
	switch {
	case w.held && (res.held == nil || res.err != nil):
		c.broken(chkKind, "got %v, %v; want a hold (a %s is transient: the recipe retries)", res.held, res.err, c.f)
	case !w.held && res.held != nil:
		c.broken(chkKind, "got a hold of %s; want %v", path.Base(res.held.Path), w)
	case !w.held && len(w.kinds) == 0 && res.err != nil:
		c.broken(chkKind, "got %v; want nil", res.err)
	}
	for _, k := range w.kinds {
		if !errors.Is(res.err, k) {
			c.broken(chkKind, "got %v (%s); want an error wrapping %v", res.err, kindOf(res.err), w)
			break
		}
	}
}

// checkBound: a call whose context ended returned within cleanupGrace
// (and scheduling) of the end.
func (c *cell) checkBound(res result) {
	if res.took > cellDeadline+cleanupGrace+scheduling {
		c.broken(chkBound, "returned after %v; want at most the deadline %v, cleanupGrace %v and scheduling %v", res.took, cellDeadline, cleanupGrace, scheduling)
	}
	if at := c.cancelAt.Load(); at != nil {
		if after := res.end.Sub(*at); after > cleanupGrace+scheduling {
			c.broken(chkBound, "returned %v after the context ended; want at most cleanupGrace %v and scheduling %v", after.Round(time.Millisecond), cleanupGrace, scheduling)
		}
	}
}

// checkLive: at most one Held of the cell is live: not released by the
// cell and its node still there.
func (c *cell) checkLive(when string) {
	var live []string
	c.eachUnreleased(chkLive, func(r *heldRec, there bool) {
		if there {
			live = append(live, r.who+":"+path.Base(r.h.Path))
		}
	})
	if len(live) > 1 {
		c.broken(chkLive, "%s: got %d live holds %v; want at most one", when, len(live), live)
	}
}

// checkHoldsKept: the call left every hold it was not asked to release
// alone (its node there, its Lost open); runCell runs it unless the
// session expired.
func (c *cell) checkHoldsKept() {
	c.eachUnreleased(chkKept, func(r *heldRec, there bool) {
		select {
		case <-r.h.Lost():
			c.broken(chkKept, "%s's hold of %s: got it lost (%v, node there: %v); want it kept", r.who, path.Base(r.h.Path), r.h.Err(), there)
		default:
			if !there {
				c.broken(chkKept, "%s's hold of %s: got its node deleted; want it kept", r.who, path.Base(r.h.Path))
			}
		}
	})
}

// eachUnreleased calls f with each Held of the cell that the cell has not
// released, and whether the observer finds its node; an observer that
// cannot tell fails the cell under invariant.
func (c *cell) eachUnreleased(invariant string, f func(r *heldRec, there bool)) {
	c.mu.Lock()
	helds := slices.Clone(c.helds)
	c.mu.Unlock()
	for _, r := range helds {
		if r.released {
			continue
		}
		ok, _, err := c.o.Exists(r.h.Path)
		if err != nil {
			c.fail(invariant, "observer exists %s: %v", r.h.Path, err)
		}
		f(r, ok)
	}
}

// orphans lists the nodes of the subject's sessions that no live Held of
// the cell and no running companion acquisition owns.
func (c *cell) orphans() ([]string, error) {
	c.mu.Lock()
	legit := map[string]bool{}
	for _, r := range c.helds {
		if !r.released {
			legit[path.Base(r.h.Path)] = true
		}
	}
	for n := range c.pending {
		legit[n] = true
	}
	c.mu.Unlock()
	var out []string
	seen := map[int64]bool{}
	for _, s := range c.w.px.Sessions() {
		if seen[s.ID] || s.ID == 0 {
			continue
		}
		seen[s.ID] = true
		owned, err := ownedBy(c.t, c.o, c.parent, s.ID)
		if err != nil {
			return nil, err
		}
		for _, n := range owned {
			if !legit[n] {
				out = append(out, fmt.Sprintf("%s (session 0x%x)", n, s.ID))
			}
		}
	}
	return out, nil
}

// checkNoOrphan waits until no node of the subject's sessions is left that
// no Held owns. The wait is bounded: a delete the recipe left to the
// background finishes once the server answers, which it does once the
// fault is undone.
func (c *cell) checkNoOrphan(when string) {
	if c.rec.isBroken(chkOrphan) {
		return // the node is still there: no need to wait for it again
	}
	var last []string
	err := tb.WaitUntil(answerWithin, "no node of S's sessions without a Held", func() (bool, string) {
		o, err := c.orphans()
		if err != nil {
			return false, err.Error()
		}
		last = o
		return len(o) == 0, fmt.Sprint(o)
	})
	if err != nil {
		c.broken(chkOrphan, "%s: got nodes of S's sessions that no Held owns, %v, still there %v after; want none", when, last, answerWithin)
	}
}

// kindOf names the kind of err for the table.
func kindOf(err error) string {
	var ce *lock.CreateError
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, lock.ErrOutcomeUnknown):
		return "outcome-unknown"
	case errors.Is(err, lock.ErrLocked):
		return "locked"
	case errors.Is(err, lock.ErrSessionChanged):
		return "session-changed"
	case errors.Is(err, lock.ErrLostCandidacy):
		return "lost-candidacy"
	case errors.Is(err, lock.ErrAmbiguous):
		return "ambiguous"
	case errors.Is(err, lock.ErrMissing):
		return "missing"
	case errors.Is(err, lock.ErrParent):
		return "parent"
	case errors.As(err, &ce):
		return "create-error(" + kindOf(ce.Err) + ")"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "ctx"
	case errors.Is(err, zk.ErrConnectionClosed):
		return "connection-closed"
	case errors.Is(err, zk.ErrNoServer):
		return "no-server"
	}
	return "other"
}

// checkToken checks the token of a hold the call gave: it names the
// lock and carries the parent's czxid (the package's default domain).
func (c *cell) checkToken(h *lock.Held) {
	_, st, err := c.o.Exists(c.parent)
	if err != nil || st == nil {
		c.broken(chkToken, "observer exists %s: %v", c.parent, err)
		return
	}
	if want := fence.NewToken(c.parent, st.Czxid, h.Token.Seq); h.Token != want {
		c.broken(chkToken, "got the hold's token %#v; want %#v: its lock, the parent's czxid as its domain", h.Token, want)
	}
}

// checkLockerOutlivesSession: after an expiry, the subject's Locker
// acquires again, in the new session, and leaves nothing behind.
func (c *cell) checkLockerOutlivesSession() {
	c.armed.Store(false) // the cell's steps and faults are over: the trace only logs
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	// The next acquisition starts once the client has its new session: one
	// that began before would span the change (ErrSessionChanged).
	if err := tb.WaitUntil(answerWithin, "S's client to have a new session", func() (bool, string) {
		sid := c.w.c.SessionID()
		return c.w.c.State() == zk.StateHasSession && sid != 0 && sid != c.session0, fmt.Sprintf("state %v, session 0x%x (0x%x before the fault)", c.w.c.State(), sid, c.session0)
	}); err != nil {
		c.broken(chkOutlives, "%v", err)
		return
	}
	h, err := c.l.Acquire(ctx)
	c.logf("S Acquire after the expiry: %v", errOrOK(err))
	if err != nil {
		c.broken(chkOutlives, "S's next Acquire after the expiry: got %v; want a hold in the new session", err)
		return
	}
	c.addHeld("S", h)
	c.markReleased(h)
	if err := h.Release(ctx); err != nil {
		c.broken(chkOutlives, "S's Release in the new session: got %v; want nil", err)
	}
	c.check(chkOrphan, newSession, func() { c.checkNoOrphan(newSession) })
}

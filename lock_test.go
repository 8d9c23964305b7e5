package zk19_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/internal/fence"
	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// The lock claims (L1-L10) and recovery after a lost create reply (R3-R6,
// R8) run the recipe in internal/lock against real servers. Timing comes
// from the recipe's hooks and from reads that order notifications, never
// from sleeping.

// lkWithin bounds every wait of these tests.
const lkWithin = 15 * time.Second

var lkHerd1000 = flag.Bool("zk19.herd1000", false, "L7: also measure N=1000 candidates (1000 sessions)")

func lkQuiet() []zkclient.Option { return []zkclient.Option{zkclient.Quiet()} }

// lkOpt configures lkJoin.
type lkOpt struct {
	quiet    bool // no session lines, no trace
	hooks    lock.Hooks
	client   []zkclient.Option
	lockOpts []lock.Option
}

type lkWait struct{ own, pred string }

// lkParty is one lock participant: its own session, a Locker pinned to that
// session, and a Jepsen-style log fed by the recipe's Trace hook.
type lkParty struct {
	name    string
	c       *zkclient.Client
	l       *lock.Locker
	waiting chan lkWait // every Hooks.Waiting call, in order
	woke    atomic.Int64

	logMu   sync.Mutex
	logOff  bool
	logf    func(string, ...any)
	servers []string
}

func (p *lkParty) log(format string, args ...any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	if !p.logOff {
		p.logf(format, args...)
	}
}

func (p *lkParty) invoke(format string, args ...any) {
	p.log("%s invoke %s", p.name, fmt.Sprintf(format, args...))
}
func (p *lkParty) ok(format string, args ...any) {
	p.log("%s ok %s", p.name, fmt.Sprintf(format, args...))
}
func (p *lkParty) info(format string, args ...any) {
	p.log("%s info %s", p.name, fmt.Sprintf(format, args...))
}
func (p *lkParty) fail(format string, args ...any) {
	p.log("%s fail %s", p.name, fmt.Sprintf(format, args...))
}

func lkJoin(t zkserver.TB, name string, servers []string, parent string, o lkOpt) *lkParty {
	t.Helper()
	copts := o.client
	if o.quiet {
		copts = append(copts, zkclient.Quiet())
	}
	c := connect(t, name, servers, copts...)
	p := &lkParty{name: name, c: c, waiting: make(chan lkWait, 4096), logf: t.Logf, servers: servers}
	if o.quiet {
		p.logOff = true
	}
	// Registered after the client: runs before the client closes, so no
	// goroutine of the recipe logs after the test has ended.
	t.Cleanup(func() { p.logMu.Lock(); p.logOff = true; p.logMu.Unlock() })
	p.l = lkLocker(t, p, parent, o)
	return p
}

// lkLocker makes a Locker on p's current session with p's hooks.
func lkLocker(t zkserver.TB, p *lkParty, parent string, o lkOpt) *lock.Locker {
	t.Helper()
	h := o.hooks
	waiting, woke, trace := h.Waiting, h.Woke, h.Trace
	h.Waiting = func(own, pred string) {
		if waiting != nil {
			waiting(own, pred)
		}
		select {
		case p.waiting <- lkWait{own, pred}:
		default:
		}
	}
	h.Woke = func(own string, ev zk.Event) {
		p.woke.Add(1)
		if woke != nil {
			woke(own, ev)
		}
	}
	h.Trace = func(op lock.Op) {
		if trace != nil {
			trace(op)
		}
		p.log("%s %s", p.name, op)
	}
	l, err := lock.New(p.c.Conn, parent, append([]lock.Option{lock.WithHooks(h)}, o.lockOpts...)...)
	if err != nil {
		t.Fatalf("%s: lock.New(%s): %v", p.name, parent, err)
	}
	return l
}

// lkPending is an acquisition running in its own goroutine.
type lkPending struct {
	p      *lkParty
	cand   *lock.Candidate
	cancel context.CancelFunc
	done   chan struct{}
	held   *lock.Held
	err    error
}

// lkStart creates p's candidate now (so its name is known) and waits for
// the lock in a goroutine. Cleanup cancels the wait, joins the goroutine
// and releases a hold.
func lkStart(t zkserver.TB, p *lkParty) *lkPending {
	t.Helper()
	cand, err := p.l.Create(context.Background(), p.l.NewGUID())
	if err != nil {
		t.Fatalf("%s: create candidate: %v", p.name, err)
	}
	return lkWaitFrom(t, p, p.l, cand)
}

func lkWaitFrom(t zkserver.TB, p *lkParty, l *lock.Locker, cand *lock.Candidate) *lkPending {
	ctx, cancel := context.WithCancel(context.Background())
	w := &lkPending{p: p, cand: cand, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.held, w.err = l.AcquireFrom(ctx, cand)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.done:
		case <-time.After(lkWithin):
			t.Logf("%s: acquisition still running %v after cancel", p.name, lkWithin)
			return
		}
		if w.held != nil {
			rctx, rcancel := context.WithTimeout(context.Background(), lkWithin)
			defer rcancel()
			_ = w.held.Release(rctx)
		}
	})
	return w
}

// result waits for the acquisition to return.
func (w *lkPending) result(t zkserver.TB, within time.Duration) (*lock.Held, error) {
	t.Helper()
	select {
	case <-w.done:
		return w.held, w.err
	case <-time.After(within):
		t.Fatalf("%s: acquisition of %s did not return within %v", w.p.name, w.cand.Name, within)
		return nil, nil
	}
}

func (w *lkPending) finished() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// lkExpectWaiting waits until p reports that it blocks on a watch of pred.
func lkExpectWaiting(t zkserver.TB, p *lkParty, pred string) error {
	t.Helper()
	timeout := time.After(lkWithin)
	for {
		select {
		case w := <-p.waiting:
			if w.pred == pred {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("%s did not wait on %s within %v", p.name, pred, lkWithin)
		}
	}
}

// lkSettle returns the state of p's one waiting acquisition, certain about
// notifications: a read on p's connection returns only after every
// notification the server queued for p before it has been handed to its
// watch channel, and Inspect makes the waiter take in what is there.
func lkSettle(t zkserver.TB, p *lkParty) lock.WaitState {
	t.Helper()
	if _, _, err := p.c.Exists("/"); err != nil {
		t.Fatalf("%s: barrier read: %v", p.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lkWithin)
	defer cancel()
	sts, err := p.l.Inspect(ctx)
	if err != nil {
		t.Fatalf("%s: inspect: %v", p.name, err)
	}
	if len(sts) != 1 {
		t.Fatalf("%s: got %d running acquisitions; want 1: %+v", p.name, len(sts), sts)
	}
	return sts[0]
}

// lkWatchTable parses wchp (path -> sessions) or wchc (session -> paths)
// into key -> values, keeping only entries whose path lies under root.
func lkWatchTable(t zkserver.TB, s *zkserver.Server, word, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	key := ""
	sc := bufio.NewScanner(strings.NewReader(s.Word(t, word)))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, "\t") {
			key = strings.TrimSpace(line)
			continue
		}
		v := strings.TrimSpace(line)
		p := key
		if word == "wchc" {
			p = v
		}
		if !strings.HasPrefix(p, root+"/") {
			continue
		}
		out[key] = append(out[key], v)
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// lkMntr reads the numeric lines of mntr.
func lkMntr(t zkserver.TB, s *zkserver.Server) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(s.Word(t, "mntr")))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

// lkWaitFor waits, bounded by lkWithin, until check reports done; an error
// from check fails at once.
func lkWaitFor(t zkserver.TB, what string, check func() (bool, error)) {
	t.Helper()
	var failed error
	waitFor(t, lkWithin, what, func() (bool, string) {
		done, err := check()
		if err != nil {
			failed = err
			return true, ""
		}
		return done, "not yet"
	})
	if failed != nil {
		t.Fatalf("waiting for %s: %v", what, failed)
	}
}

func lkHex(id int64) string { return fmt.Sprintf("0x%x", id) }

func lkExists(t *testing.T, c *zkclient.Client, p string) (bool, *zk.Stat) {
	t.Helper()
	ok, st, err := c.Exists(p)
	if err != nil {
		t.Fatalf("%s: exists %s: %v", c.Name, p, err)
	}
	return ok, st
}

func lkChildren(t *testing.T, c *zkclient.Client, p string) []string {
	t.Helper()
	kids, _, err := c.Children(p)
	if err != nil {
		t.Fatalf("%s: children %s: %v", c.Name, p, err)
	}
	sort.Strings(kids)
	return kids
}

func lkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), lkWithin)
	t.Cleanup(cancel)
	return ctx
}

// Claim L1 (section "临时顺序锁怎样判断资格"): each logical acquisition
// gets a GUID of its own and creates an EPHEMERAL_SEQUENTIAL node carrying
// it, always under the same persistent parent.
//
// One session acquires and releases three times; every hold has a new
// version-4 UUID, a name <guid>-lock-<10 digits> directly under the parent,
// and, read by a second session, an ephemeralOwner equal to the holder's
// session (so the node is ephemeral) and a growing sequence number. A
// candidate of a session that closes disappears. The recipe refuses a
// missing or ephemeral parent.
func TestL1_FreshGUIDEphemeralSequentialUnderOneParent(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L1", "临时顺序锁怎样判断资格", "every acquisition makes a fresh GUID and creates an EPHEMERAL_SEQUENTIAL node named with it under one fixed persistent parent")
	d := connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	ctx := lkCtx(t)
	a := lkJoin(t, "A", []string{s.Client}, root, lkOpt{})

	phase(t, "three acquisitions by session A, one after another")
	seen := map[string]bool{}
	last := int64(-1)
	for i := 0; i < 3; i++ {
		h, err := a.l.Acquire(ctx)
		if err != nil {
			t.Fatalf("A acquire %d: %v", i, err)
		}
		u, err := uuid.Parse(h.GUID)
		if err != nil || u.Version() != 4 {
			t.Errorf("L1 violated: got GUID %q (%v); want a version-4 UUID", h.GUID, err)
		}
		if seen[h.GUID] {
			t.Errorf("L1 violated: GUID %s used by two acquisitions", h.GUID)
		}
		seen[h.GUID] = true
		if want := fmt.Sprintf("%s%s%010d", h.GUID, fence.LockInfix, h.Seq); h.Name != want {
			t.Errorf("L1 violated: got node name %q; want %q", h.Name, want)
		}
		if path.Dir(h.Path) != root {
			t.Errorf("L1 violated: got parent %s; want %s", path.Dir(h.Path), root)
		}
		da.invoke("exists %s", h.Path)
		ok, st := lkExists(t, d, h.Path)
		da.ok("%v ephemeralOwner=%s", ok, lkHex(st.EphemeralOwner))
		if !ok || st.EphemeralOwner != a.c.SessionID() {
			t.Errorf("L1 violated: got exists=%v ephemeralOwner=%s; want true and A's session %s", ok, lkHex(st.EphemeralOwner), a.c.SessionHex())
		}
		if h.Seq <= last {
			t.Errorf("L1 violated: got sequence %d after %d; want it to grow", h.Seq, last)
		}
		last = h.Seq
		if err := h.Release(ctx); err != nil {
			t.Fatalf("A release: %v", err)
		}
	}
	da.invoke("exists %s", root)
	_, rst := lkExists(t, d, root)
	da.ok("ephemeralOwner=%s", lkHex(rst.EphemeralOwner))
	if rst.EphemeralOwner != 0 {
		t.Errorf("L1 violated: got parent ephemeralOwner %s; want 0 (persistent)", lkHex(rst.EphemeralOwner))
	}

	phase(t, "a candidate is ephemeral: it goes when its session closes")
	e := lkJoin(t, "E", []string{s.Client}, root, lkOpt{})
	he, err := e.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("E acquire: %v", err)
	}
	e.info("close session %s", e.c.SessionHex())
	e.c.Close()
	lkWaitFor(t, "E's node to go after its session closed", func() (bool, error) {
		ok, _, err := d.Exists(he.Path)
		return !ok, err
	})
	da.info("%s gone after E's session closed", he.Name)

	phase(t, "the parent must exist and be persistent")
	if _, err := lock.New(d.Conn, root+"/missing"); !errors.Is(err, lock.ErrParent) {
		t.Errorf("L1 violated: got %v for a missing parent; want lock.ErrParent", err)
	} else {
		da.info("lock.New on a missing parent: %v", err)
	}
	if _, err := d.Create(root+"/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral: %v", err)
	}
	if _, err := lock.New(d.Conn, root+"/eph"); !errors.Is(err, lock.ErrParent) {
		t.Errorf("L1 violated: got %v for an ephemeral parent; want lock.ErrParent", err)
	} else {
		da.info("lock.New on an ephemeral parent: %v", err)
	}
}

// Claim L2 (section "临时顺序锁怎样判断资格"): the queue is ordered by the
// number after the last "-lock-", parsed; whole names, which start with a
// random GUID, sort in an unrelated order.
//
// Twelve candidates with random GUIDs are created one after another; the
// server's names, ordered by parsed suffix, give back the creation order,
// and ordered as strings do not. Children without "-lock-" are ignored; a
// child with "-lock-" and a malformed suffix makes an acquisition fail with
// a clear error (and the failed acquisition removes its own node).
func TestL2_SequenceSuffixOrdersCandidates(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L2", "临时顺序锁怎样判断资格", "candidates are ordered by the 10-digit sequence suffix; whole-name order differs from creation order")
	d := connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	ctx := lkCtx(t)
	a := lkJoin(t, "A", []string{s.Client}, root, lkOpt{quiet: true})

	phase(t, "twelve candidates with random GUIDs, created in order")
	var created []string
	for i := 0; i < 12; i++ {
		c, err := a.l.Create(ctx, a.l.NewGUID())
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		created = append(created, c.Name)
	}
	kids := lkChildren(t, d, root)
	ord, err := lock.Order(kids)
	if err != nil {
		t.Fatalf("order: %v", err)
	}
	var bySeq []string
	for _, e := range ord {
		bySeq = append(bySeq, e.Name)
	}
	byName := append([]string(nil), kids...)
	sort.Strings(byName)
	pos := map[string]int{}
	for i, n := range created {
		pos[n] = i
	}
	rank := func(names []string) []int {
		var r []int
		for _, n := range names {
			r = append(r, pos[n])
		}
		return r
	}
	t.Logf("creation index in sequence order: %v", rank(bySeq))
	t.Logf("creation index in name order:     %v", rank(byName))
	if strings.Join(bySeq, ",") != strings.Join(created, ",") {
		t.Errorf("L2 violated: got sequence order %v; want creation order %v", rank(bySeq), rank(created))
	}
	if strings.Join(byName, ",") == strings.Join(created, ",") {
		t.Errorf("L2 not shown: name order equals creation order (chance 1/12!); rerun")
	}

	phase(t, "a child without %q is not a candidate; one with a malformed suffix is an error", fence.LockInfix)
	for _, n := range []string{"ready", "config"} {
		if _, err := d.Create(root+"/"+n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
	}
	ord2, err := lock.Order(lkChildren(t, d, root))
	if err != nil || len(ord2) != len(created) {
		t.Errorf("L2 violated: got %d candidates, %v, with non-lock children present; want %d, nil", len(ord2), err, len(created))
	}
	bad := root + "/intruder-lock-12"
	da.invoke("create %s persistent", bad)
	if _, err := d.Create(bad, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", bad, err)
	}
	da.ok("")
	b := lkJoin(t, "B", []string{s.Client}, root, lkOpt{})
	h, err := b.l.Acquire(ctx)
	if h != nil || !errors.Is(err, lock.ErrMalformed) || !errors.Is(err, fence.ErrShortSeq) {
		t.Errorf("L2 violated: got %v, %v with a malformed candidate present; want no hold and ErrMalformed (short suffix)", h, err)
	}
	t.Logf("B's error: %v", err)
	for _, k := range lkChildren(t, d, root) {
		if ok, st := lkExists(t, d, root+"/"+k); ok && st.EphemeralOwner == b.c.SessionID() {
			t.Errorf("the failed acquisition left its node %s behind", k)
		}
	}
}

// Claim L3 (section "临时顺序锁怎样判断资格"): the lowest candidate holds
// and each other one watches only the candidate right before it, which the
// server's own watch table shows.
//
// On a dedicated server (so the server-wide watch count is ours alone): A
// holds, B waits, C waits. wchp (path -> sessions) lists exactly A's node
// watched by B's session and B's node watched by C's session; wchc
// (session -> paths) agrees; A watches nothing. wchc/wchp list data and
// exists watches only, so the total watch count from mntr (which includes
// child watches) must be 2: nobody watches the parent's children.
func TestL3_EachWaiterWatchesOnlyItsPredecessor(t *testing.T) {
	claim(t, "L3", "临时顺序锁怎样判断资格", "the lowest suffix holds; every other candidate watches only its immediate predecessor (B->A, C->B), seen in the server's wchc/wchp")
	srv := zkserver.Start(t, zkserver.WithLabel("l3-"))
	ss := []string{srv.Client}
	ch := lkStartChain(t, ss, "L3")
	_, root, ctx, b, c, ha, pb, pc := ch.d, ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc

	phase(t, "the server's watch tables")
	sa, sb, scc := ch.a.c.SessionHex(), b.c.SessionHex(), c.c.SessionHex()
	t.Logf("sessions: A=%s B=%s C=%s", sa, sb, scc)
	wchp := lkWatchTable(t, srv, "wchp", root)
	t.Logf("wchp under %s: %v", root, wchp)
	wantP := map[string][]string{ha.Path: {sb}, pb.cand.Path: {scc}}
	if fmt.Sprint(wchp) != fmt.Sprint(wantP) {
		t.Errorf("L3 violated: got wchp %v; want %v (B->A, C->B)", wchp, wantP)
	}
	wchc := lkWatchTable(t, srv, "wchc", root)
	t.Logf("wchc under %s: %v", root, wchc)
	wantC := map[string][]string{sb: {ha.Path}, scc: {pb.cand.Path}}
	if fmt.Sprint(wchc) != fmt.Sprint(wantC) {
		t.Errorf("L3 violated: got wchc %v; want %v (A watches nothing)", wchc, wantC)
	}
	m := lkMntr(t, srv)
	t.Logf("mntr zk_watch_count=%d (data, exists and child watches of the whole server)", m["zk_watch_count"])
	if m["zk_watch_count"] != 2 {
		t.Errorf("L3 violated: got %d watches on the server; want 2 (no child watch on the parent)", m["zk_watch_count"])
	}

	phase(t, "the chain unwinds")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err := pb.result(t, lkWithin)
	if err != nil {
		t.Fatalf("B: %v", err)
	}
	if err := hb.Release(ctx); err != nil {
		t.Fatalf("B release: %v", err)
	}
	if _, err := pc.result(t, lkWithin); err != nil {
		t.Fatalf("C: %v", err)
	}
}

// lkChain is the article's A→B→C picture on servers ss: A holds, B waits
// on A, C waits on B. D is an observer with the test's root.
type lkChain struct {
	d       *zkclient.Client
	root    string
	ctx     context.Context
	a, b, c *lkParty
	ha      *lock.Held
	pb, pc  *lkPending
}

func lkStartChain(t *testing.T, ss []string, claimID string) *lkChain {
	t.Helper()
	ch := &lkChain{}
	ch.d = connect(t, "D", ss)
	ch.root = testRoot(t, ch.d)
	ch.ctx = lkCtx(t)
	ch.a = lkJoin(t, "A", ss, ch.root, lkOpt{})
	ch.b = lkJoin(t, "B", ss, ch.root, lkOpt{})
	ch.c = lkJoin(t, "C", ss, ch.root, lkOpt{})
	var err error
	if ch.ha, err = ch.a.l.Acquire(ch.ctx); err != nil {
		t.Fatalf("A: %v", err)
	}
	ch.pb = lkStart(t, ch.b)
	if err := lkExpectWaiting(t, ch.b, ch.ha.Name); err != nil {
		t.Fatalf("%s violated: %v", claimID, err)
	}
	ch.pc = lkStart(t, ch.c)
	if err := lkExpectWaiting(t, ch.c, ch.pb.cand.Name); err != nil {
		t.Fatalf("%s violated: %v", claimID, err)
	}
	return ch
}

// Claim L4 (section "临时顺序锁怎样判断资格"): deleting the holder's node
// notifies only the next candidate, which lists again and holds; the one
// after it gets no event and keeps waiting.
//
// A holds, B waits on A, C waits on B. A releases: B acquires after exactly
// one event. C's state, settled after a read on C's own connection: no
// event, still waiting on B, not holding. The server still lists C's watch
// on B, untouched.
func TestL4_DeletionWakesOnlyTheNextCandidate(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L4", "临时顺序锁怎样判断资格", "when A's node is deleted, B is notified, lists again and acquires; C gets no event and does not acquire")
	ch := lkStartChain(t, []string{s.Client}, "L4")
	_, root, ctx, _, c, ha, pb, pc := ch.d, ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc

	phase(t, "A releases")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err := pb.result(t, lkWithin)
	if err != nil {
		t.Fatalf("L4 violated: B did not acquire after A's deletion: %v", err)
	}
	if hb.Stats.Wakeups != 1 || hb.Stats.Rounds != 2 {
		t.Errorf("L4 violated: got B acquiring after %d events and %d lists; want 1 event and 2 lists", hb.Stats.Wakeups, hb.Stats.Rounds)
	}
	st := lkSettle(t, c)
	c.info("settled: events=%d waiting=%v pred=%s", st.Wakeups, st.Waiting, st.Pred)
	if st.Wakeups != 0 {
		t.Errorf("L4 violated: C got %d events after A's deletion; want 0", st.Wakeups)
	}
	if pc.finished() || !st.Waiting || st.Pred != pb.cand.Name {
		t.Errorf("L4 violated: C acquired after A's deletion or stopped waiting on B (finished=%v waiting=%v pred=%s)", pc.finished(), st.Waiting, st.Pred)
	}
	wchp := lkWatchTable(t, s, "wchp", root)
	if got := wchp[pb.cand.Path]; len(got) != 1 || got[0] != c.c.SessionHex() {
		t.Errorf("L4 violated: got watchers of B's node %v; want C's session %s", got, c.c.SessionHex())
	}

	phase(t, "B releases")
	if err := hb.Release(ctx); err != nil {
		t.Fatalf("B release: %v", err)
	}
	if _, err := pc.result(t, lkWithin); err != nil {
		t.Fatalf("C: %v", err)
	}
}

// Claim L5 (section "临时顺序锁怎样判断资格"): a watch event means "look
// again", never "you hold it": when the candidate in front gives up while
// someone further ahead still holds, the waiter wakes, lists, watches the
// new predecessor and keeps waiting.
//
// A holds, B waits on A, C waits on B. B gives up (its context is
// cancelled; it deletes its own node). C gets one event, lists again, now
// waits on A and does not hold; the server shows C's session watching A's
// node. When A releases, C holds.
func TestL5_WatchEventIsNotSuccess(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L5", "临时顺序锁怎样判断资格", "a watch event is never itself success: B gives up while A holds; C is notified, lists again, now watches A and does not acquire")
	ch := lkStartChain(t, []string{s.Client}, "L5")
	d, root, ctx, b, c, ha, pb, pc := ch.d, ch.root, ch.ctx, ch.b, ch.c, ch.ha, ch.pb, ch.pc

	phase(t, "B gives up while A holds")
	b.info("cancel")
	pb.cancel()
	if _, err := pb.result(t, lkWithin); !errors.Is(err, context.Canceled) {
		t.Fatalf("B: got %v; want context.Canceled", err)
	}
	if ok, _ := lkExists(t, d, pb.cand.Path); ok {
		t.Fatalf("B's node %s still exists after B gave up", pb.cand.Name)
	}
	if err := lkExpectWaiting(t, c, ha.Name); err != nil {
		t.Fatalf("L5 violated: %v", err)
	}
	st := lkSettle(t, c)
	c.info("settled: events=%d lists=%d waiting=%v pred=%s", st.Wakeups, st.Rounds, st.Waiting, st.Pred)
	if st.Wakeups != 1 || st.Rounds != 2 {
		t.Errorf("L5 violated: got C with %d events and %d lists; want 1 event and 2 lists", st.Wakeups, st.Rounds)
	}
	if pc.finished() || !st.Waiting || st.Pred != ha.Name {
		t.Errorf("L5 violated: C acquired on B's deletion or does not wait on A (finished=%v waiting=%v pred=%s)", pc.finished(), st.Waiting, st.Pred)
	}
	wchp := lkWatchTable(t, s, "wchp", root)
	t.Logf("wchp under %s: %v (B's old watch on A stays until A changes or B's session ends)", root, wchp)
	found := false
	for _, sess := range wchp[ha.Path] {
		found = found || sess == c.c.SessionHex()
	}
	if !found {
		t.Errorf("L5 violated: got watchers of A's node %v; want C's session %s among them", wchp[ha.Path], c.c.SessionHex())
	}

	phase(t, "A releases")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hc, err := pc.result(t, lkWithin)
	if err != nil {
		t.Fatalf("C: %v", err)
	}
	c.info("holds after %d events", hc.Stats.Wakeups)
}

// Claim L6 (section "临时顺序锁怎样判断资格"): a candidate whose own node has
// disappeared has no candidacy left; the recipe says so with an error and
// never reports that it holds the lock.
//
// Waiter: A holds, B waits on A; D deletes B's node. B only finds out at its
// next round (it watches A, not itself): settled, it still waits with no
// event. A releases; B wakes, lists, does not find itself and returns
// ErrLostCandidacy. Holder: E holds and asks for Lost(); D deletes E's node;
// Lost closes with ErrLostCandidacy and Release says the node was already
// gone.
func TestL6_OwnNodeGoneMeansLostCandidacy(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L6", "临时顺序锁怎样判断资格", "if a waiter's own node is gone it reports lost candidacy with a clear error; it never reports acquisition")
	d := connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	ctx := lkCtx(t)
	a := lkJoin(t, "A", []string{s.Client}, root, lkOpt{})
	b := lkJoin(t, "B", []string{s.Client}, root, lkOpt{})
	ha, err := a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("A: %v", err)
	}
	pb := lkStart(t, b)
	if err := lkExpectWaiting(t, b, ha.Name); err != nil {
		t.Fatalf("%v", err)
	}

	phase(t, "D deletes B's node while B waits on A")
	da.invoke("delete %s", pb.cand.Path)
	if err := d.Delete(pb.cand.Path, -1); err != nil {
		t.Fatalf("D delete: %v", err)
	}
	da.ok("")
	st := lkSettle(t, b)
	b.info("settled: events=%d waiting=%v pred=%s", st.Wakeups, st.Waiting, st.Pred)
	if pb.finished() {
		t.Fatalf("B returned before its next round: %v", pb.err)
	}

	phase(t, "A releases; B looks again")
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb, err := pb.result(t, lkWithin)
	if hb != nil {
		t.Errorf("L6 violated: B reported acquisition (%s) without its node", hb.Name)
	}
	if !errors.Is(err, lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: got %v; want lock.ErrLostCandidacy", err)
	}
	t.Logf("B's error: %v", err)
	if kids := lkChildren(t, d, root); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}

	phase(t, "a holder: D deletes E's node; Lost closes")
	e := lkJoin(t, "E", []string{s.Client}, root, lkOpt{})
	he, err := e.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("E: %v", err)
	}
	lost := he.Lost()
	// Lost sets its watch asynchronously; wait until the server has it.
	lkWaitFor(t, "the server to list E's watch on its own node", func() (bool, error) {
		w := lkWatchTable(t, s, "wchp", root)[he.Path]
		return len(w) == 1 && w[0] == e.c.SessionHex(), nil
	})
	select {
	case <-lost:
		t.Fatalf("Lost closed while E's node exists: %v", he.Err())
	default:
	}
	da.invoke("delete %s", he.Path)
	if err := d.Delete(he.Path, -1); err != nil {
		t.Fatalf("D delete: %v", err)
	}
	da.ok("")
	select {
	case <-lost:
	case <-time.After(lkWithin):
		t.Fatalf("L6 violated: E's Lost not closed %v after its node was deleted", lkWithin)
	}
	if !errors.Is(he.Err(), lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: got Lost reason %v; want lock.ErrLostCandidacy", he.Err())
	}
	if err := he.Release(ctx); !errors.Is(err, lock.ErrLostCandidacy) {
		t.Errorf("L6: got Release %v; want lock.ErrLostCandidacy (node already gone)", err)
	}
	e.info("Lost: %v", he.Err())
}

// Claim L6, the peer (section "临时顺序锁怎样判断资格"): go-zookeeper's own
// zk.Lock (v1.0.4) does not check that its node still exists, so a waiter
// whose node was deleted reports that it holds the lock once the nodes in
// front of it are gone. Ours, in the same scenario, returns
// ErrLostCandidacy.
//
// Both runs: A holds with zk.Lock; B waits with the implementation under
// test (the server shows B's watch on A's node); D deletes B's node; A
// unlocks. zk.Lock's Lock() then returns nil with no node of B's on the
// server, and its Unlock fails with "node does not exist".
func TestL6_PeerGoZookeeperLockAcquiresWithoutItsNode(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L6", "临时顺序锁怎样判断资格", "peer: go-zookeeper's zk.Lock, waiting while its node is deleted, reports acquisition; ours reports lost candidacy")
	d := connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	acl := zk.WorldACL(zk.PermAll)
	a := connect(t, "A", []string{s.Client})
	aa := newActor(t, "A")
	al := zk.NewLock(a.Conn, root, acl)
	aa.invoke("zk.Lock %s", root)
	if err := al.Lock(); err != nil {
		t.Fatalf("A zk.Lock: %v", err)
	}
	kids := lkChildren(t, d, root)
	if len(kids) != 1 {
		t.Fatalf("got children %v; want A's one node", kids)
	}
	aNode := root + "/" + kids[0]
	aa.ok("%s", kids[0])

	// waitOn waits until the server lists session sess watching A's node.
	waitOn := func(sess string) {
		t.Helper()
		lkWaitFor(t, sess+" to watch A's node", func() (bool, error) {
			for _, w := range lkWatchTable(t, s, "wchp", root)[aNode] {
				if w == sess {
					return true, nil
				}
			}
			return false, nil
		})
	}
	// deleteWaiter deletes the one node that is not A's.
	deleteWaiter := func() string {
		t.Helper()
		for _, k := range lkChildren(t, d, root) {
			if root+"/"+k != aNode {
				da.invoke("delete %s/%s", root, k)
				if err := d.Delete(root+"/"+k, -1); err != nil {
					t.Fatalf("D delete: %v", err)
				}
				da.ok("")
				return k
			}
		}
		t.Fatalf("no waiter node under %s", root)
		return ""
	}

	phase(t, "peer: B waits with go-zookeeper zk.Lock; D deletes B's node; A unlocks")
	b := connect(t, "B", []string{s.Client})
	ba := newActor(t, "B")
	bl := zk.NewLock(b.Conn, root, acl)
	bDone := make(chan error, 1)
	ba.invoke("zk.Lock %s", root)
	go func() { bDone <- bl.Lock() }()
	waitOn(b.SessionHex())
	bNode := deleteWaiter()
	aa.invoke("zk.Unlock")
	if err := al.Unlock(); err != nil {
		t.Fatalf("A unlock: %v", err)
	}
	aa.ok("")
	var bErr error
	select {
	case bErr = <-bDone:
	case <-time.After(lkWithin):
		t.Fatalf("zk.Lock did not return within %v", lkWithin)
	}
	left := lkChildren(t, d, root)
	if bErr == nil {
		ba.ok("Lock returned nil (acquired); node %s exists: %v", bNode, len(left) != 0)
		if len(left) != 0 {
			t.Errorf("peer: got children %v; want none", left)
		}
		t.Logf("anchor bug: go-zookeeper v1.0.4 zk.Lock reports acquisition while its node %s does not exist (it never checks its own node after the first list)", bNode)
		uerr := bl.Unlock()
		ba.info("zk.Unlock: %v", uerr)
		if !errors.Is(uerr, zk.ErrNoNode) {
			t.Errorf("peer: got Unlock %v; want zk.ErrNoNode", uerr)
		}
	} else {
		ba.fail("%v", bErr)
		t.Errorf("peer record changed: got zk.Lock error %v; the recorded behaviour (v1.0.4) is a nil error without a node", bErr)
	}

	phase(t, "ours: same scenario")
	aa.invoke("zk.Lock %s", root)
	if err := al.Lock(); err != nil {
		t.Fatalf("A zk.Lock: %v", err)
	}
	kids = lkChildren(t, d, root)
	aNode = root + "/" + kids[0]
	aa.ok("%s", kids[0])
	c := lkJoin(t, "C", []string{s.Client}, root, lkOpt{})
	pc := lkStart(t, c)
	if err := lkExpectWaiting(t, c, kids[0]); err != nil {
		t.Fatalf("%v", err)
	}
	waitOn(c.c.SessionHex())
	deleteWaiter()
	aa.invoke("zk.Unlock")
	if err := al.Unlock(); err != nil {
		t.Fatalf("A unlock: %v", err)
	}
	aa.ok("")
	hc, err := pc.result(t, lkWithin)
	if hc != nil || !errors.Is(err, lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: got %v, %v; want no hold and lock.ErrLostCandidacy", hc, err)
	}
	t.Logf("ours: %v", err)
}

// lkFreezer is a dialer for one client that the test can cut off: freeze
// closes the client's live connection and refuses new ones, so the server
// stops hearing from the session and expires it by itself; thaw lets the
// client reach the server again and learn that.
type lkFreezer struct {
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
}

func (f *lkFreezer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		return nil, errors.New("refused by the test (frozen)")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		f.conns = append(f.conns, c)
	}
	return c, err
}

func (f *lkFreezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
}

func (f *lkFreezer) thaw() { f.mu.Lock(); f.frozen = false; f.mu.Unlock() }

// lkExpiryTick is the dedicated server's tickTime, and lkExpirySession the
// session timeout B asks for (6 ticks): the sleep-free wait for a natural
// expiry is bounded by lkWithin.
const (
	lkExpiryTick    = 200 * time.Millisecond
	lkExpirySession = 1200 * time.Millisecond
)

// Claims L6 and R8 (sections "临时顺序锁怎样判断资格" and "create 回复丢失以后
// 怎样找回节点"): when a waiter's session expires, its candidacy is over; the
// client library quietly opens a new session, and nothing of the old
// candidacy may continue or be recovered in it; a new acquisition uses a
// new GUID.
//
// Dedicated server with a 200ms tick. A holds; B (1.2s session) waits on
// A. The test cuts B off (closes its connection and refuses new ones) until
// D sees the server delete B's node: the session expired by itself. Let
// through again, B's client learns of the expiry; B's acquisition returns
// ErrSessionChanged (wrapping zk.ErrSessionExpired), never a hold. The old
// Locker refuses Create and Recover in the new session. A new Locker on the
// new session acquires with a different GUID once A releases.
func TestL6R8_SessionExpiryEndsCandidacyAndNewAcquisitionUsesNewGUID(t *testing.T) {
	claim(t, "L6", "临时顺序锁怎样判断资格", "a waiter whose session expired reports lost candidacy (session changed), never acquisition")
	claim(t, "R8", "create 回复丢失以后怎样找回节点", "after session expiry the old node gives no candidacy; a new acquisition uses a new GUID")
	srv := zkserver.Start(t, zkserver.WithTickTime(lkExpiryTick), zkserver.WithLabel("l6x-"))
	ss := []string{srv.Client}
	d := connect(t, "D", ss)
	da := newActor(t, "D")
	root := testRoot(t, d)
	ctx := lkCtx(t)
	a := lkJoin(t, "A", ss, root, lkOpt{})
	fz := &lkFreezer{}
	b := lkJoin(t, "B", ss, root, lkOpt{client: []zkclient.Option{zkclient.WithDialer(fz.dial), zkclient.WithSessionTimeout(lkExpirySession)}})
	oldSession := b.c.SessionID()
	ha, err := a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("A: %v", err)
	}
	pb := lkStart(t, b)
	oldGUID := pb.cand.GUID
	if err := lkExpectWaiting(t, b, ha.Name); err != nil {
		t.Fatalf("%v", err)
	}

	phase(t, "B is cut off until the server expires its session (%v)", lkExpirySession)
	mark := b.c.Mark()
	b.info("cut off (connection closed, new connections refused)")
	fz.freeze()
	lkWaitFor(t, "the server to delete B's node", func() (bool, error) {
		ok, _, err := d.Exists(pb.cand.Path)
		return !ok, err
	})
	da.info("B's node %s deleted by the server: session %s expired", pb.cand.Name, lkHex(oldSession))
	if pb.finished() {
		t.Logf("B returned while cut off: %v", pb.err)
	}
	b.info("let through again")
	fz.thaw()
	hb, err := pb.result(t, lkWithin)
	if hb != nil {
		t.Errorf("L6 violated: B reported acquisition after its session expired")
	}
	if !errors.Is(err, lock.ErrSessionChanged) || !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("L6 violated: got %v; want lock.ErrSessionChanged wrapping zk.ErrSessionExpired", err)
	}
	t.Logf("B's error: %v", err)
	if err := b.c.WaitStateSince(mark, zk.StateHasSession, lkWithin); err != nil {
		t.Fatalf("B: %v", err)
	}
	newSession := b.c.SessionID()
	b.info("new session %s (old %s)", lkHex(newSession), lkHex(oldSession))
	if newSession == oldSession {
		t.Fatalf("B's session did not change")
	}

	phase(t, "the old Locker refuses to work in the new session")
	if _, err := b.l.Recover(ctx, oldGUID); !errors.Is(err, lock.ErrSessionChanged) {
		t.Errorf("R8 violated: got Recover %v in a new session; want lock.ErrSessionChanged", err)
	} else {
		b.info("Recover(%s): %v", oldGUID, err)
	}
	if _, err := b.l.Create(ctx, oldGUID); !errors.Is(err, lock.ErrSessionChanged) {
		t.Errorf("R8 violated: got Create %v in a new session; want lock.ErrSessionChanged", err)
	}
	if ok, _ := lkExists(t, d, pb.cand.Path); ok {
		t.Errorf("R8 violated: the old node %s exists", pb.cand.Path)
	}

	phase(t, "a new acquisition in the new session")
	b.l = lkLocker(t, b, root, lkOpt{})
	pb2 := lkStart(t, b)
	if pb2.cand.GUID == oldGUID {
		t.Errorf("R8 violated: the new acquisition reuses GUID %s", oldGUID)
	}
	if err := lkExpectWaiting(t, b, ha.Name); err != nil {
		t.Fatalf("%v", err)
	}
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("A release: %v", err)
	}
	hb2, err := pb2.result(t, lkWithin)
	if err != nil {
		t.Fatalf("B new acquisition: %v", err)
	}
	b.info("holds %s with GUID %s (old %s), session %s", hb2.Name, hb2.GUID, oldGUID, lkHex(hb2.Session))
	if hb2.Session != newSession {
		t.Errorf("R8: got hold in session %s; want %s", lkHex(hb2.Session), lkHex(newSession))
	}
}

// Claim L7 (section "临时顺序锁怎样判断资格"): watching the predecessor wakes
// one waiter per release; watching the parent's children wakes every
// waiter.
//
// Dedicated server (mntr counters are server-wide). N candidates, each its
// own session: one holds, N-1 wait. Ours, three releases in a row: each
// wakes exactly one waiter, counted by the waiters themselves (settled by a
// read on every waiter's connection) and by the server (the summed number
// of watches a deletion triggered: 1 node-deleted watch, 0 child watches).
// The watch-the-parent foil written below, same sessions, one release:
// N-1 waiters wake and the server triggered N-1 child watches.
func TestL7_HerdEffect(t *testing.T) {
	claim(t, "L7", "临时顺序锁怎样判断资格", "with N candidates one release wakes exactly one waiter under the predecessor recipe and N-1 under a watch-the-parent recipe")
	srv := zkserver.Start(t, zkserver.WithLabel("l7-"))
	sizes := []int{10, 100}
	if *lkHerd1000 {
		sizes = append(sizes, 1000)
	} else {
		t.Logf("N=1000 skipped (pass -zk19.herd1000 to run it)")
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) { lkHerd(t, srv, n) })
	}
}

func lkHerd(t *testing.T, srv *zkserver.Server, n int) {
	ss := []string{srv.Client}
	d := connect(t, "D", ss)
	root := testRoot(t, d)
	for _, p := range []string{root + "/ours", root + "/foil"} {
		if _, err := d.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	ctx := lkCtx(t)
	parties := make([]*lkParty, n)
	for i := range parties {
		parties[i] = lkJoin(t, fmt.Sprintf("P%d", i), ss, root+"/ours", lkOpt{quiet: true})
	}
	phase(t, "N=%d: ours (each waiter watches its predecessor)", n)
	h0, err := parties[0].l.Acquire(ctx)
	if err != nil {
		t.Fatalf("P0: %v", err)
	}
	pend := make([]*lkPending, n)
	for i := 1; i < n; i++ {
		pend[i] = lkStart(t, parties[i])
	}
	prev := h0.Name
	for i := 1; i < n; i++ {
		if err := lkExpectWaiting(t, parties[i], prev); err != nil {
			t.Fatalf("%v", err)
		}
		prev = pend[i].cand.Name
	}
	woke := func() int64 {
		var s int64
		for _, p := range parties {
			s += p.woke.Load()
		}
		return s
	}
	holder := h0
	for r := 1; r <= 3 && r < n; r++ {
		before, wBefore := lkMntr(t, srv), woke()
		if err := holder.Release(ctx); err != nil {
			t.Fatalf("release: %v", err)
		}
		next, err := pend[r].result(t, lkWithin)
		if err != nil {
			t.Fatalf("P%d: %v", r, err)
		}
		for i := r + 1; i < n; i++ {
			if st := lkSettle(t, parties[i]); st.Wakeups != 0 {
				t.Errorf("L7 violated: P%d, still waiting, has woken %d times; want 0", i, st.Wakeups)
			}
		}
		after, wAfter := lkMntr(t, srv), woke()
		del := after["zk_sum_node_deleted_watch_count"] - before["zk_sum_node_deleted_watch_count"]
		ch := after["zk_sum_node_children_watch_count"] - before["zk_sum_node_children_watch_count"]
		t.Logf("N=%d ours release %d: %d waiter(s) woke; server triggered %d node-deleted watch(es), %d child watch(es)", n, r, wAfter-wBefore, del, ch)
		if wAfter-wBefore != 1 || del != 1 || ch != 0 {
			t.Errorf("L7 violated: got %d wakeups (server: %d deleted, %d child watches) for one release; want 1 (1, 0)", wAfter-wBefore, del, ch)
		}
		holder = next
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	for i := 1; i < n; i++ {
		pend[i].cancel()
	}
	for i := 1; i < n; i++ {
		_, _ = pend[i].result(t, lkWithin)
	}

	phase(t, "N=%d: foil (every waiter watches the parent's children)", n)
	names := make([]string, n)
	for i, p := range parties {
		pth, err := p.c.Create(root+"/foil/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
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
			first := true
			for {
				kids, _, ch, err := parties[i].c.ChildrenW(root + "/foil")
				if err != nil {
					return
				}
				ord, err := lock.Order(kids)
				if err != nil || len(ord) == 0 {
					return
				}
				if ord[0].Name == names[i] {
					acquired <- i
					return
				}
				if first {
					registered <- i
					first = false
				}
				select {
				case <-ch:
					foilWoke.Add(1)
				case <-fctx.Done():
					return
				}
			}
		}(i)
	}
	for i := 1; i < n; i++ {
		select {
		case <-registered:
		case <-time.After(lkWithin):
			t.Fatalf("foil waiters not registered within %v", lkWithin)
		}
	}
	before := lkMntr(t, srv)
	if err := parties[0].c.Delete(root+"/foil/"+names[0], -1); err != nil {
		t.Fatalf("foil release: %v", err)
	}
	select {
	case i := <-acquired:
		if i != 1 {
			t.Errorf("foil: P%d acquired; want P1", i)
		}
	case <-time.After(lkWithin):
		t.Fatalf("foil: nobody acquired within %v", lkWithin)
	}
	lkWaitFor(t, "N-1 foil waiters to wake", func() (bool, error) {
		return foilWoke.Load() >= int64(n-1), nil
	})
	after := lkMntr(t, srv)
	ch := after["zk_sum_node_children_watch_count"] - before["zk_sum_node_children_watch_count"]
	t.Logf("N=%d foil release 1: %d waiter(s) woke; server triggered %d child watch(es)", n, foilWoke.Load(), ch)
	if foilWoke.Load() != int64(n-1) || ch != int64(n-1) {
		t.Errorf("L7: got foil %d wakeups (server %d); want N-1 = %d", foilWoke.Load(), ch, n-1)
	}
}

// Claim L8 (section "临时顺序锁怎样判断资格"): the predecessor can vanish
// between the list and the exists(pred, watch); exists then finds no node
// and the waiter must list again at once, since the event it would wait for
// has already been and gone.
//
// Hooks.AfterList deletes the predecessor exactly in that window, twenty
// times in a row: each time exists answers false, B lists again and holds,
// having received no watch event. No sleep: the hook makes the window every
// time. The exists on a missing node leaves a creation watch on the server
// (reported, not a claim).
func TestL8_ListExistsRace(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L8", "临时顺序锁怎样判断资格", "a hook between getChildren and exists(pred, watch) deletes the predecessor; exists returns no node and the waiter lists again at once")
	d := connect(t, "D", []string{s.Client})
	root := testRoot(t, d)
	ctx := lkCtx(t)
	var hookErr error
	var b *lkParty
	hooks := lock.Hooks{AfterList: func(own string, children []string, pred string) {
		b.info("hook after list: predecessor %s", pred)
		if err := d.Delete(root+"/"+pred, -1); err != nil {
			hookErr = err
			b.info("hook: delete %s: %v", pred, err)
			return
		}
		b.info("hook: %s deleted by D", pred)
	}}
	a := lkJoin(t, "A", []string{s.Client}, root, lkOpt{quiet: true})
	b = lkJoin(t, "B", []string{s.Client}, root, lkOpt{hooks: hooks})
	const runs = 20
	for i := 0; i < runs; i++ {
		if i == 1 {
			b.info("runs 2-%d: same steps, log muted", runs)
			b.logMu.Lock()
			b.logOff = true
			b.logMu.Unlock()
		}
		if _, err := a.l.Acquire(ctx); err != nil {
			t.Fatalf("A: %v", err)
		}
		hb, err := b.l.Acquire(ctx)
		if err != nil {
			t.Fatalf("run %d: B: %v", i, err)
		}
		if hookErr != nil {
			t.Fatalf("run %d: hook: %v", i, hookErr)
		}
		if hb.Stats.NoNode != 1 || hb.Stats.Rounds != 2 || hb.Stats.Wakeups != 0 {
			t.Errorf("L8 violated in run %d: got exists-no-node=%d lists=%d events=%d; want 1, 2, 0", i, hb.Stats.NoNode, hb.Stats.Rounds, hb.Stats.Wakeups)
		}
		if err := hb.Release(ctx); err != nil {
			t.Fatalf("B release: %v", err)
		}
	}
	t.Logf("%d of %d runs: exists found no node, B listed again and held without an event", runs, runs)
	left := lkWatchTable(t, s, "wchc", root)[b.c.SessionHex()]
	t.Logf("creation watches B's exists left on deleted names: %d (cleared when B's session ends)", len(left))
}

// Claim L9 (section "临时顺序锁怎样判断资格", "普通读可能旧..."): after its
// own successful create, a session's getChildren includes its own node and
// every smaller candidate that still exists, also on a follower; so a
// smaller candidate missing from that list really has been deleted.
//
// 3-node ensemble; W's session is connected to a follower F only. Each
// round, X (on the leader) creates x and Y (on the other follower) creates
// y, X deletes x, then W creates its candidate and lists: the list holds
// every y so far and every earlier W candidate, and no x. Where the harness
// can pause servers, F is paused while X and Y do their round (the other two
// form the quorum) and resumed right before W's create, so F is behind when
// W arrives; W's plain list before its create is recorded (it may be stale:
// that is allowed), the list after it is checked.
func TestL9_ReadYourCreateOnFollower(t *testing.T) {
	claim(t, "L9", "临时顺序锁怎样判断资格", "a same-session getChildren after a successful create includes the own node and every smaller live candidate, also on a follower")
	e := zkserver.StartEnsemble(t, 3, zkserver.WithLabel("l9-"))
	leader, err := e.Leader(lkWithin)
	if err != nil {
		t.Fatalf("%v", err)
	}
	fs := e.Followers()
	if len(fs) != 2 {
		t.Fatalf("got %d followers; want 2", len(fs))
	}
	f, other := fs[0], fs[1]
	t.Logf("leader %s, W's follower %s, other follower %s", leader.Label, f.Label, other.Label)
	x := connect(t, "X", []string{leader.Client})
	xa := newActor(t, "X")
	root := testRoot(t, x)
	y := connect(t, "Y", []string{other.Client})
	ya := newActor(t, "Y")
	w := lkJoin(t, "W", []string{f.Client}, root, lkOpt{})
	ctx := lkCtx(t)
	acl := zk.WorldACL(zk.PermAll)
	mk := func(c *zkclient.Client, a actor) string {
		a.invoke("create %s/<guid>-lock- EPHEMERAL_SEQUENTIAL", root)
		p, err := c.Create(root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, acl)
		if err != nil {
			t.Fatalf("%s create: %v", c.Name, err)
		}
		a.ok("%s", path.Base(p))
		return path.Base(p)
	}
	live := map[string]bool{}
	var deleted []string
	round := func(i int, lag bool) {
		if lag {
			w.info("pause %s (W's follower)", f.Label)
			f.Pause(t)
		}
		xn := mk(x, xa)
		live[mk(y, ya)] = true
		xa.invoke("delete %s/%s", root, xn)
		if err := x.Delete(root+"/"+xn, -1); err != nil {
			t.Fatalf("X delete: %v", err)
		}
		xa.ok("")
		deleted = append(deleted, xn)
		if lag {
			f.Resume(t)
			w.info("resume %s", f.Label)
			w.invoke("children %s (plain read, before W's create)", root)
			pre, _, err := w.c.Children(root)
			if err != nil {
				t.Fatalf("W children: %v", err)
			}
			stale := len(pre) != len(live)
			for _, k := range pre {
				stale = stale || !live[k]
			}
			w.ok("%d children; behind the leader: %v (allowed for a plain read)", len(pre), stale)
		}
		c, err := w.l.Create(ctx, w.l.NewGUID())
		if err != nil {
			t.Fatalf("W create: %v", err)
		}
		w.invoke("children %s (after W's create, same session)", root)
		kids, _, err := w.c.Children(root)
		if err != nil {
			t.Fatalf("W children: %v", err)
		}
		w.ok("%d children", len(kids))
		got := map[string]bool{}
		for _, k := range kids {
			got[k] = true
		}
		if !got[c.Name] {
			t.Errorf("L9 violated in round %d: W's list lacks its own node %s", i, c.Name)
		}
		for n := range live {
			if !got[n] {
				t.Errorf("L9 violated in round %d: W's list lacks live smaller candidate %s", i, n)
			}
		}
		for _, n := range deleted {
			if got[n] {
				t.Errorf("round %d: W's list has %s, deleted before W's create", i, n)
			}
		}
		live[c.Name] = true
	}
	phase(t, "five rounds, W's follower in step")
	for i := 1; i <= 5; i++ {
		round(i, false)
	}
	if !e.Backend.CanInjectFaults() {
		t.Logf("the %s backend cannot pause servers: lagging rounds skipped", e.Backend.Kind)
		return
	}
	phase(t, "five rounds, W's follower paused while X and Y change the parent")
	for i := 6; i <= 10; i++ {
		round(i, true)
	}
}

// Claim L10 (section "临时顺序锁怎样判断资格", last paragraph): in an election
// the lowest candidate is only a candidate; it becomes usable after it has
// recovered state and published "ready", and clients wait for "ready".
//
// Beyond Example_electionNeedsReady, a failover: L1 leads and has published
// ready; Q uses it and watches ready. L1's session ends: its candidate and
// its ephemeral ready go, Q's watch fires and Q stops using L1. L2 becomes
// the lowest and holds, but ready is absent until L2 has recovered (read
// epoch 1, written epoch 2); Q, watching ready, sees nothing until L2
// publishes it, then uses L2 and reads epoch 2.
func TestL10_ElectionNeedsReadyAcrossFailover(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L10", "临时顺序锁怎样判断资格", "lowest suffix is only candidacy: the leader recovers state and publishes ready; clients wait for ready before using it")
	q := connect(t, "Q", []string{s.Client})
	qa := newActor(t, "Q")
	root := testRoot(t, q)
	ctx := lkCtx(t)
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{root + "/election", root + "/state"} {
		if _, err := q.Create(p, []byte("epoch=0"), 0, acl); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	ready := root + "/ready"
	recoverAndPublish := func(p *lkParty, epoch int) {
		t.Helper()
		p.invoke("get %s/state", root)
		data, st, err := p.c.Get(root + "/state")
		if err != nil {
			t.Fatalf("%s get state: %v", p.name, err)
		}
		p.ok("%s", data)
		if want := fmt.Sprintf("epoch=%d", epoch-1); string(data) != want {
			t.Errorf("%s recovered %q; want %q", p.name, data, want)
		}
		p.invoke("set %s/state epoch=%d", root, epoch)
		if _, err := p.c.Set(root+"/state", []byte(fmt.Sprintf("epoch=%d", epoch)), st.Version); err != nil {
			t.Fatalf("%s set state: %v", p.name, err)
		}
		p.ok("")
		p.invoke("create %s ephemeral %q", ready, p.name)
		if _, err := p.c.Create(ready, []byte(p.name), zk.FlagEphemeral, acl); err != nil {
			t.Fatalf("%s publish ready: %v", p.name, err)
		}
		p.ok("")
	}
	// use waits for ready, then reads the leader's name and the state,
	// leaving a watch on ready.
	use := func(ev <-chan zk.Event) (string, string, <-chan zk.Event) {
		t.Helper()
		select {
		case e := <-ev:
			qa.info("event %s %s", e.Type, e.Path)
		case <-time.After(lkWithin):
			t.Fatalf("L10: Q saw no event on ready within %v", lkWithin)
		}
		qa.invoke("get %s watch", ready)
		name, _, ch, err := q.GetW(ready)
		if err != nil {
			t.Fatalf("Q get ready: %v", err)
		}
		qa.ok("%s", name)
		state, _, err := q.Get(root + "/state")
		if err != nil {
			t.Fatalf("Q get state: %v", err)
		}
		qa.info("uses %s, state %s", name, state)
		return string(name), string(state), ch
	}
	notYet := func(ev <-chan zk.Event, what string) {
		t.Helper()
		if _, _, err := q.Exists("/"); err != nil { // orders any notification before it
			t.Fatalf("Q barrier: %v", err)
		}
		select {
		case e := <-ev:
			t.Errorf("L10 violated: Q got %s on ready %s", e.Type, what)
		default:
		}
		if ok, _ := lkExists(t, q, ready); ok {
			t.Errorf("L10 violated: ready exists %s", what)
		}
	}

	phase(t, "L1 is elected, recovers, publishes ready")
	qa.invoke("exists %s watch", ready)
	ok, _, ev, err := q.ExistsW(ready)
	if err != nil || ok {
		t.Fatalf("Q exists ready: %v %v", ok, err)
	}
	qa.ok("false")
	l1 := lkJoin(t, "L1", []string{s.Client}, root+"/election", lkOpt{})
	l2 := lkJoin(t, "L2", []string{s.Client}, root+"/election", lkOpt{})
	h1, err := l1.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("L1: %v", err)
	}
	p2 := lkStart(t, l2)
	if err := lkExpectWaiting(t, l2, h1.Name); err != nil {
		t.Fatalf("%v", err)
	}
	notYet(ev, "while L1 is lowest but has not recovered")
	recoverAndPublish(l1, 1)
	name, state, ev := use(ev)
	if name != "L1" || state != "epoch=1" {
		t.Errorf("L10 violated: Q used %s with %s; want L1 with epoch=1", name, state)
	}

	phase(t, "L1's session ends: ready goes with it")
	l1.info("close session %s", l1.c.SessionHex())
	l1.c.Close()
	select {
	case e := <-ev:
		qa.info("event %s %s: stop using L1", e.Type, e.Path)
		if e.Type != zk.EventNodeDeleted {
			t.Errorf("Q: got %s; want EventNodeDeleted", e.Type)
		}
	case <-time.After(lkWithin):
		t.Fatalf("L10: Q saw no deletion of ready within %v", lkWithin)
	}
	qa.invoke("exists %s watch", ready)
	ok, _, ev, err = q.ExistsW(ready)
	if err != nil {
		t.Fatalf("Q exists ready: %v", err)
	}
	qa.ok("%v", ok)
	h2, err := p2.result(t, lkWithin)
	if err != nil {
		t.Fatalf("L2: %v", err)
	}
	l2.info("lowest now (%s)", h2.Name)
	notYet(ev, "while L2 is lowest but has not recovered")
	recoverAndPublish(l2, 2)
	name, state, _ = use(ev)
	if name != "L2" || state != "epoch=2" {
		t.Errorf("L10 violated: Q used %s with %s; want L2 with epoch=2", name, state)
	}
}

// Claims R3-R6 (section "create 回复丢失以后怎样找回节点"): after a create
// whose reply never came, the same session finds its node again by GUID and
// ephemeralOwner, and says so when it cannot name exactly one.
//
// Here the lost reply is simulated without the fault proxy: the test calls
// Locker.Create and throws the returned name away (the proxy-driven R1/R2
// run is elsewhere). R3: Recover finds exactly one node, the one a second
// session sees with the GUID and A's ephemeralOwner, and A can wait on it
// and hold. R4: a blind second create with the same GUID makes two nodes;
// Recover fails with ErrAmbiguous naming both and deletes neither. R5: no
// node: ErrMissing, and no node is created. R6: a node with the GUID owned
// by another session is not adopted (ErrMissing); when both sessions have
// one, Recover returns its own.
func TestR3toR6_RecoverByGUIDAndOwner(t *testing.T) {
	s := sharedServer(t)
	setup := func(t *testing.T) (*zkclient.Client, actor, string, *lkParty, context.Context) {
		d := connect(t, "D", []string{s.Client})
		root := testRoot(t, d)
		a := lkJoin(t, "A", []string{s.Client}, root, lkOpt{})
		return d, newActor(t, "D"), root, a, lkCtx(t)
	}
	// view is what a second session sees: children containing guid, with
	// their owners.
	view := func(t *testing.T, d *zkclient.Client, da actor, root, guid string) map[string]int64 {
		t.Helper()
		da.invoke("children %s", root)
		out := map[string]int64{}
		for _, k := range lkChildren(t, d, root) {
			if strings.Contains(k, guid) {
				if ok, st := lkExists(t, d, root+"/"+k); ok {
					out[k] = st.EphemeralOwner
				}
			}
		}
		da.ok("%d with the GUID: %v", len(out), out)
		return out
	}

	t.Run("R3_ExactlyOneOwnedMatchIsTheNode", func(t *testing.T) {
		claim(t, "R3", "create 回复丢失以后怎样找回节点", "recovery in the same session with the same GUID finds exactly one child containing the GUID owned by this session: the node the server created")
		d, da, root, a, ctx := setup(t)
		guid := a.l.NewGUID()
		if _, err := a.l.Create(ctx, guid); err != nil { // the name is discarded: "the reply was lost"
			t.Fatalf("A create: %v", err)
		}
		a.info("create's reply treated as lost; recover GUID %s", guid)
		rec, err := a.l.Recover(ctx, guid)
		if err != nil {
			t.Fatalf("R3 violated: Recover: %v", err)
		}
		v := view(t, d, da, root, guid)
		if len(v) != 1 || v[rec.Name] != a.c.SessionID() {
			t.Errorf("R3 violated: got recovered %s; D sees %v; want the same single node owned by %s", rec.Name, v, a.c.SessionHex())
		}
		h, err := a.l.AcquireFrom(ctx, rec)
		if err != nil || h.Name != rec.Name {
			t.Fatalf("R3: waiting on the recovered candidate: %v", err)
		}
		a.info("holds the recovered candidate %s", h.Name)
	})

	t.Run("R4_BlindRetryIsAmbiguous", func(t *testing.T) {
		claim(t, "R4", "create 回复丢失以后怎样找回节点", "a blind retry of the same create makes a second node; recovery sees two matches and fails with an ambiguity error, deleting nothing")
		d, da, root, a, ctx := setup(t)
		guid := a.l.NewGUID()
		for i := 0; i < 2; i++ {
			if _, err := a.l.Create(ctx, guid); err != nil {
				t.Fatalf("A create %d: %v", i, err)
			}
		}
		_, err := a.l.Recover(ctx, guid)
		var re *lock.RecoverError
		if !errors.Is(err, lock.ErrAmbiguous) || !errors.As(err, &re) || len(re.Owned) != 2 {
			t.Errorf("R4 violated: got %v; want lock.ErrAmbiguous naming 2 nodes", err)
		}
		t.Logf("A's error: %v", err)
		if v := view(t, d, da, root, guid); len(v) != 2 {
			t.Errorf("R4 violated: got %d nodes after Recover; want 2 (nothing deleted)", len(v))
		}
	})

	t.Run("R5_NoMatchIsMissing", func(t *testing.T) {
		claim(t, "R5", "create 回复丢失以后怎样找回节点", "no match: an explicit missing error; recovery never turns into a new acquisition")
		d, da, root, a, ctx := setup(t)
		guid := a.l.NewGUID()
		_, err := a.l.Recover(ctx, guid)
		if !errors.Is(err, lock.ErrMissing) {
			t.Errorf("R5 violated: got %v; want lock.ErrMissing", err)
		}
		t.Logf("A's error: %v", err)
		if kids := lkChildren(t, d, root); len(kids) != 0 {
			t.Errorf("R5 violated: Recover created %v", kids)
		}
		c, err := a.l.Create(ctx, guid)
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		da.invoke("delete %s", c.Path)
		if err := d.Delete(c.Path, -1); err != nil {
			t.Fatalf("D delete: %v", err)
		}
		da.ok("")
		if _, err := a.l.Recover(ctx, guid); !errors.Is(err, lock.ErrMissing) {
			t.Errorf("R5 violated: got %v for a created-then-deleted node; want lock.ErrMissing", err)
		}
		if kids := lkChildren(t, d, root); len(kids) != 0 {
			t.Errorf("R5 violated: Recover created %v", kids)
		}
	})

	t.Run("R6_OtherSessionsMatchIsNotAdopted", func(t *testing.T) {
		claim(t, "R6", "create 回复丢失以后怎样找回节点", "a node containing the GUID but owned by another session is not adopted")
		d, da, root, a, ctx := setup(t)
		b := lkJoin(t, "B", []string{s.Client}, root, lkOpt{})
		guid := a.l.NewGUID()
		bc, err := b.l.Create(ctx, guid)
		if err != nil {
			t.Fatalf("B create: %v", err)
		}
		_, err = a.l.Recover(ctx, guid)
		var re *lock.RecoverError
		if !errors.Is(err, lock.ErrMissing) || !errors.As(err, &re) || len(re.Foreign) != 1 {
			t.Errorf("R6 violated: got %v; want lock.ErrMissing reporting B's node as foreign", err)
		}
		t.Logf("A's error: %v", err)
		if ok, _ := lkExists(t, d, bc.Path); !ok {
			t.Errorf("R6 violated: B's node was deleted")
		}
		ac, err := a.l.Create(ctx, guid)
		if err != nil {
			t.Fatalf("A create: %v", err)
		}
		view(t, d, da, root, guid)
		rec, err := a.l.Recover(ctx, guid)
		if err != nil || rec.Name != ac.Name {
			t.Errorf("R6 violated: got %v, %v with both sessions holding the GUID; want A's own %s", rec, err, ac.Name)
		}
	})
}

// BenchmarkLockHandoff measures the time from the holder's release call to
// the next holder's return from its acquisition, ours against go-zookeeper's
// zk.Lock, on the shared server in the same run. Before each release the
// waiter's watch on the holder's node is confirmed on the server (wchp), for
// both, so the interval is the handoff alone. Reported: the median.
func BenchmarkLockHandoff(b *testing.B) {
	s := sharedServer(b)
	b.Run("ours", func(b *testing.B) {
		d := connect(b, "D", []string{s.Client}, lkQuiet()...)
		root := testRoot(b, d)
		ps := []*lkParty{
			lkJoin(b, "X", []string{s.Client}, root, lkOpt{quiet: true}),
			lkJoin(b, "Y", []string{s.Client}, root, lkOpt{quiet: true}),
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		h, err := ps[0].l.Acquire(ctx)
		if err != nil {
			b.Fatalf("%v", err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w := ps[(i+1)%2]
			type res struct {
				h  *lock.Held
				at time.Time
				e  error
			}
			got := make(chan res, 1)
			go func() { nh, err := w.l.Acquire(ctx); got <- res{nh, time.Now(), err} }()
			lkWaitWatch(b, s, root, h.Path, w.c.SessionHex())
			t0 := time.Now()
			if err := h.Release(ctx); err != nil {
				b.Fatalf("release: %v", err)
			}
			r := <-got
			if r.e != nil {
				b.Fatalf("acquire: %v", r.e)
			}
			lat = append(lat, r.at.Sub(t0))
			h = r.h
		}
		b.StopTimer()
		_ = h.Release(ctx)
		b.ReportMetric(lkMedianMicros(lat), "µs-handoff-p50")
	})
	b.Run("zkLock", func(b *testing.B) {
		d := connect(b, "D", []string{s.Client}, lkQuiet()...)
		root := testRoot(b, d)
		cs := []*zkclient.Client{connect(b, "X", []string{s.Client}, lkQuiet()...), connect(b, "Y", []string{s.Client}, lkQuiet()...)}
		ls := []*zk.Lock{zk.NewLock(cs[0].Conn, root, zk.WorldACL(zk.PermAll)), zk.NewLock(cs[1].Conn, root, zk.WorldACL(zk.PermAll))}
		if err := ls[0].Lock(); err != nil {
			b.Fatalf("%v", err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			hi, wi := i%2, (i+1)%2
			kids, _, err := d.Children(root)
			if err != nil || len(kids) != 1 {
				b.Fatalf("children: %v %v", kids, err)
			}
			got := make(chan time.Time, 1)
			errs := make(chan error, 1)
			go func() {
				if err := ls[wi].Lock(); err != nil {
					errs <- err
					return
				}
				got <- time.Now()
			}()
			lkWaitWatch(b, s, root, root+"/"+kids[0], cs[wi].SessionHex())
			t0 := time.Now()
			if err := ls[hi].Unlock(); err != nil {
				b.Fatalf("unlock: %v", err)
			}
			select {
			case at := <-got:
				lat = append(lat, at.Sub(t0))
			case err := <-errs:
				b.Fatalf("lock: %v", err)
			}
		}
		b.StopTimer()
		_ = ls[b.N%2].Unlock()
		b.ReportMetric(lkMedianMicros(lat), "µs-handoff-p50")
	})
}

// lkWaitWatch waits (bounded) until the server lists session sess as
// watching p.
func lkWaitWatch(b *testing.B, s *zkserver.Server, root, p, sess string) {
	lkWaitFor(b, sess+" to watch "+p, func() (bool, error) {
		for _, w := range lkWatchTable(b, s, "wchp", root)[p] {
			if w == sess {
				return true, nil
			}
		}
		return false, nil
	})
}

func lkMedianMicros(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}

// BenchmarkLockThroughput: acquire+release pairs per second with 4 sessions
// contending for one lock, against raw create+delete pairs of 4 sessions
// (the same two writes with no waiting), in the same run.
func BenchmarkLockThroughput(b *testing.B) {
	s := sharedServer(b)
	const workers = 4
	run := func(b *testing.B, workers int, op func(i int) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		b.ResetTimer()
		start := time.Now()
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for next.Add(1) <= int64(b.N) {
					if err := op(w); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		el := time.Since(start)
		b.StopTimer()
		select {
		case err := <-errs:
			b.Fatalf("%v", err)
		default:
		}
		b.ReportMetric(float64(b.N)/el.Seconds(), "pairs/s")
	}
	b.Run("lock", func(b *testing.B) {
		d := connect(b, "D", []string{s.Client}, lkQuiet()...)
		root := testRoot(b, d)
		var ps []*lkParty
		for w := 0; w < workers; w++ {
			ps = append(ps, lkJoin(b, fmt.Sprintf("W%d", w), []string{s.Client}, root, lkOpt{quiet: true}))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		run(b, workers, func(w int) error {
			h, err := ps[w].l.Acquire(ctx)
			if err != nil {
				return err
			}
			return h.Release(ctx)
		})
	})
	// go-zookeeper's zk.Lock under the same contention, for comparison.
	b.Run("zkLock", func(b *testing.B) {
		d := connect(b, "D", []string{s.Client}, lkQuiet()...)
		root := testRoot(b, d)
		var ls []*zk.Lock
		for w := 0; w < workers; w++ {
			c := connect(b, fmt.Sprintf("W%d", w), []string{s.Client}, lkQuiet()...)
			ls = append(ls, zk.NewLock(c.Conn, root, zk.WorldACL(zk.PermAll)))
		}
		run(b, workers, func(w int) error {
			if err := ls[w].Lock(); err != nil {
				return err
			}
			return ls[w].Unlock()
		})
	})
	// Raw create+delete pairs: from as many sessions in parallel, and from
	// one session (a lock serializes its holders, so one handoff at a time
	// is its natural baseline).
	raw := func(b *testing.B, workers int) {
		d := connect(b, "D", []string{s.Client}, lkQuiet()...)
		root := testRoot(b, d)
		var cs []*zkclient.Client
		for w := 0; w < workers; w++ {
			cs = append(cs, connect(b, fmt.Sprintf("W%d", w), []string{s.Client}, lkQuiet()...))
		}
		run(b, workers, func(w int) error {
			p, err := cs[w].Create(root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				return err
			}
			return cs[w].Delete(p, -1)
		})
	}
	b.Run("raw", func(b *testing.B) { raw(b, workers) })
	b.Run("raw-one-session", func(b *testing.B) { raw(b, 1) })
}

// Claim L2 (section "临时顺序锁怎样判断资格"), peer comparison: candidates are
// the children named like lock nodes, ordered by their parsed suffix; any
// other child of the parent is not a candidate. go-zookeeper's zk.Lock
// parses every child and fails on the first one that is not a lock node,
// and on that failure it leaves its own node behind, in front of every
// later candidate. Ours ignores the stranger, holds, and after a failure of
// its own (see TestL2_SequenceSuffixOrdersCandidates) leaves nothing.
func TestL2_PeerGoZookeeperLockFailsOnAStrangerAndLeavesItsNode(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L2", "临时顺序锁怎样判断资格", "peer: a child that is not a lock node breaks go-zookeeper's zk.Lock and strands its node; ours ignores it")
	d := connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	da.invoke("create %s/config (not a lock node)", root)
	if _, err := d.Create(root+"/config", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}
	da.ok("")

	phase(t, "peer: go-zookeeper zk.Lock")
	a := connect(t, "A", []string{s.Client})
	aa := newActor(t, "A")
	aa.invoke("zk.Lock %s", root)
	err := zk.NewLock(a.Conn, root, zk.WorldACL(zk.PermAll)).Lock()
	aa.fail("%v", err)
	var stranded []string
	for _, k := range lkChildren(t, d, root) {
		if ok, st := lkExists(t, d, root+"/"+k); ok && st.EphemeralOwner == a.SessionID() {
			stranded = append(stranded, k)
		}
	}
	t.Logf("anchor's bug: zk.Lock failed on the stranger (%v) and left its node %v in the queue", err, stranded)
	if err == nil || len(stranded) != 1 {
		t.Errorf("peer observation changed: zk.Lock returned %v and left %v; recorded behaviour was an error and one stranded node", err, stranded)
	}
	if len(stranded) == 1 {
		da.invoke("delete %s/%s (the stranded node)", root, stranded[0])
		if err := d.Delete(root+"/"+stranded[0], -1); err != nil {
			t.Fatalf("delete: %v", err)
		}
		da.ok("")
	}

	phase(t, "ours, with the same stranger")
	b := lkJoin(t, "B", []string{s.Client}, root, lkOpt{})
	h, err := b.l.Acquire(lkCtx(t))
	if err != nil {
		t.Fatalf("L2 violated: ours failed on a child that is not a lock node: %v", err)
	}
	b.ok("holds %s; the stranger is not a candidate", h.Name)
	if err := h.Release(lkCtx(t)); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// Claim L6 (section "临时顺序锁怎样判断资格"), peer comparison: once a holder's
// node is gone (its session expired, or another client deleted it), the
// hold is over. go-zookeeper's zk.Lock cannot get out of that state: Unlock
// fails with ErrNoNode and keeps the stale path, so every later Lock on the
// same instance returns ErrDeadlock. Ours reports lost candidacy at Release
// and acquires again with a fresh candidate.
func TestL6_PeerGoZookeeperUnlockAfterNodeLossDeadlocks(t *testing.T) {
	s := sharedServer(t)
	claim(t, "L6", "临时顺序锁怎样判断资格", "peer: after its node is gone, go-zookeeper's zk.Lock is stuck on ErrDeadlock; ours reports lost candidacy and can acquire again")
	d := connect(t, "D", []string{s.Client})
	da := newActor(t, "D")
	root := testRoot(t, d)
	deleteAll := func(owner int64) {
		t.Helper()
		for _, k := range lkChildren(t, d, root) {
			if ok, st := lkExists(t, d, root+"/"+k); ok && st.EphemeralOwner == owner {
				da.invoke("delete %s/%s (as the server does at expiry)", root, k)
				if err := d.Delete(root+"/"+k, -1); err != nil {
					t.Fatalf("delete: %v", err)
				}
				da.ok("")
			}
		}
	}

	phase(t, "peer: go-zookeeper zk.Lock")
	a := connect(t, "A", []string{s.Client})
	aa := newActor(t, "A")
	al := zk.NewLock(a.Conn, root, zk.WorldACL(zk.PermAll))
	if err := al.Lock(); err != nil {
		t.Fatalf("zk.Lock: %v", err)
	}
	aa.ok("zk.Lock holds")
	deleteAll(a.SessionID())
	aa.invoke("zk.Unlock")
	uerr := al.Unlock()
	aa.fail("%v", uerr)
	aa.invoke("zk.Lock again")
	lerr := al.Lock()
	aa.fail("%v", lerr)
	t.Logf("anchor's bug: Unlock after node loss returned %v; the next Lock returned %v", uerr, lerr)
	if !errors.Is(uerr, zk.ErrNoNode) || !errors.Is(lerr, zk.ErrDeadlock) {
		t.Errorf("peer observation changed: got Unlock %v, Lock %v; recorded behaviour was ErrNoNode then ErrDeadlock", uerr, lerr)
	}

	phase(t, "ours")
	b := lkJoin(t, "B", []string{s.Client}, root, lkOpt{})
	ctx := lkCtx(t)
	h, err := b.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	deleteAll(b.c.SessionID())
	rerr := h.Release(ctx)
	b.fail("release: %v", rerr)
	if !errors.Is(rerr, lock.ErrLostCandidacy) {
		t.Errorf("L6 violated: release after node loss returned %v; want ErrLostCandidacy", rerr)
	}
	h2, err := b.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("L6 violated: ours cannot acquire again after a lost hold: %v", err)
	}
	b.ok("holds again with a fresh candidate %s", h2.Name)
	if h2.GUID == h.GUID {
		t.Errorf("L6: the new acquisition reused GUID %s; want a fresh one", h.GUID)
	}
	_ = h2.Release(ctx)
}

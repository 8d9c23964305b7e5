package fencescene

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/sqldb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

// ResourceKinds are the fenced resources every claim about the resource
// runs against: one in memory, one durable in SQLite (issue 12), and one
// durable in PostgreSQL (internal/server/sqldb: a real server of the test
// binary, a fresh database each).
var ResourceKinds = []string{"memory", "durable", "postgres"}

// KindText is a resource kind as a proof states it, in both languages
// ("memory": 内存, for 内存资源).
func KindText(kind string) zh.Text { return kindTexts[kind] }

var kindTexts = map[string]zh.Text{"memory": zh.Say("memory"), "durable": zh.Say("durable"), "service-table": zh.Say("service-table"), "unfenced": zh.Say("unfenced"), "postgres": zh.Say("postgres")}

// FencedResource is a fenced resource with the call some claims need
// beside the fence: a request id checked with the token (F12).
type FencedResource interface {
	fence.Resource
	WriteOnce(ctx context.Context, tok fence.Token, id, value string) (fence.Result, error)
}

// ClearMark is the wrong reset of the mark (T4), on res as openResource
// opened it: fencetest clears fence's own resources, and the durable one
// is inside sqlite's wrapper.
func ClearMark(ctx context.Context, res FencedResource) error {
	switch r := res.(type) {
	case *fence.Memory:
		return fencetest.ClearMark(ctx, r)
	case *sqldb.SQLiteDurable:
		return fencetest.ClearMark(ctx, r.Durable)
	case *PostgresDurable:
		return fencetest.ClearMark(ctx, r.Durable)
	}
	return fmt.Errorf("clear the mark of %T; want a *fence.Memory or a *sqldb.SQLiteDurable", res)
}

// OpenResource opens an empty fenced resource of kind with opts (a
// Trace), closed at cleanup.
func OpenResource(t zkserver.TB, kind string, opts ...fence.Option) FencedResource {
	t.Helper()
	var res FencedResource
	switch kind {
	case "memory":
		res = fence.NewMemory(opts...)
	case "durable":
		d, err := sqldb.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "resource.db"), opts...)
		if err != nil {
			t.Fatalf("open the durable resource: %v", err)
		}
		res = d
	case "postgres":
		res = OpenPostgres(t, opts...)
	default:
		t.Fatalf("no fenced resource of kind %q", kind)
	}
	t.Cleanup(func() { _ = res.Close() })
	return res
}

// OnEachResource runs f once on each fenced resource, in a subtest worded
// as the claim: "the memory resource " + does.
func OnEachResource(t *testing.T, does string, f func(t *testing.T, kind string, res FencedResource)) {
	t.Helper()
	for _, kind := range ResourceKinds {
		t.Run("the "+kind+" resource "+does, func(t *testing.T) { f(t, kind, OpenResource(t, kind)) })
	}
}

// Outcome holds a write's two results to the fence's contract, a refusal
// is an error: it gives the Result and nil for an accepted write, a
// duplicate, or a refusal (a fence.Refused error with Accepted false), and
// an error for anything else, a refusal with a nil error included.
func Outcome(r fence.Result, err error) (fence.Result, error) {
	switch {
	case err == nil && !r.Accepted && !r.Duplicate:
		return r, fmt.Errorf("the write was refused (mark %v) with a nil error; want a refusal to be an error (fence.ErrStale)", r.Mark)
	case err != nil && fence.Refused(err) && r.Accepted:
		return r, fmt.Errorf("the write was accepted and refused: %w", err)
	case err != nil && !fence.Refused(err):
		return r, err
	}
	return r, nil
}

// WriteAs is one write of who's, logged as its operation. A rejection is
// a result; an error stops the scenario.
func WriteAs(t zkserver.TB, who claims.Actor, res fence.Resource, tok fence.Token, value string) fence.Result {
	t.Helper()
	who.Invoke("write %q with token %v", value, tok)
	r, err := Outcome(res.Write(context.Background(), tok, value))
	if err != nil {
		who.Fail("%v", err)
		t.Fatalf("%s: write %q: %v", who.Name, value, err)
	}
	logWrite(who, tok, r)
	return r
}

func logWrite(who claims.Actor, tok fence.Token, r fence.Result) {
	if r.Accepted {
		who.Ok("accepted over %q; mark %v, commit %d", r.Prev, r.Mark, r.Commit)
	} else {
		who.Fail("rejected: mark %v is above token %v; value stays %q", r.Mark, tok, r.Prev)
	}
}

// ReadAs is who's read of the resource's value and mark, logged as its
// operation; an error stops the scenario.
func ReadAs(t zkserver.TB, who claims.Actor, res fence.Resource) (value string, mark fence.Token, marked bool) {
	t.Helper()
	who.Invoke("read the value and the mark")
	value, mark, marked = ReadResource(t, res)
	who.Ok("%q with mark %v (set: %v)", value, mark, marked)
	return value, mark, marked
}

// ReadResource reads the resource's value and mark or stops the scenario.
func ReadResource(t zkserver.TB, res fence.Resource) (value string, mark fence.Token, marked bool) {
	t.Helper()
	value, mark, marked, err := res.Read(context.Background())
	if err != nil {
		t.Fatalf("read the resource: %v", err)
	}
	return value, mark, marked
}

// FencingCast is the lock Scene of the fencing scenarios, on a server with a
// small tickTime: O observes directly, A talks through a proxy that can
// blackhole it (so its session can expire naturally), B talks directly.
type FencingCast struct {
	*scene.Scene
	srv   *zkserver.Server
	proxy *faultproxy.Proxy
	A, B  *scene.Contender
}

// NewFencingCast sets the fencing scene up: the expiry server, O, A behind
// its proxy with the short session timeout, and B.
func NewFencingCast(t zkserver.TB) *FencingCast {
	t.Helper()
	s := harness.ExpiryServer(t)
	fc := &FencingCast{Scene: scene.NewScene(t, []string{s.Client}), srv: s}
	fc.proxy = zkserver.ClientProxy(t, "A-proxy", s)
	fc.A = fc.Join("A", scene.JoinOpts{Via: []string{fc.proxy.Addr()}, Client: []zkclient.Option{zkclient.WithSessionTimeout(harness.ExpirySessionTimeout)}})
	fc.B = fc.Join("B", scene.JoinOpts{})
	return fc
}

// ExpireA cuts A off behind its proxy (a blackhole: no close, no forced
// expiry) and waits until O sees the server delete A's node: A's session
// ran out on the server's clock, and A has not been told.
func (fc *FencingCast) ExpireA(t zkserver.TB, node string) {
	t.Helper()
	_, _, gone, err := fc.O.ExistsW(node)
	if err != nil {
		t.Fatalf("O: exists %s: %v", path.Base(node), err)
	}
	fc.cutA(t)
	select {
	case ev := <-gone:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("O: got %v on A's node; want its deletion", ev.Type)
		}
		t.Logf("O: A's node %s deleted by the server: A's session expired", path.Base(node))
	case <-time.After(10 * harness.ExpirySessionTimeout):
		t.Fatalf("A's session did not expire within %v of the blackhole", 10*harness.ExpirySessionTimeout)
	}
}

// cutA blackholes A's connection both ways until the heal (at cleanup at
// the latest): no close, no forced expiry.
func (fc *FencingCast) cutA(t zkserver.TB) {
	fc.proxy.Blackhole(faultproxy.Both)
	t.Cleanup(fc.proxy.Heal)
	fc.A.Log.Info("connection blackholed: no close, no forced expiry")
}

// HeldOnceAExpires cuts A off and returns the hold B's waiting acquisition
// gets: the server must expire A's session on its own clock and delete A's
// node, and B learn it from that deletion (claim id fails otherwise).
func (fc *FencingCast) HeldOnceAExpires(t zkserver.TB, id string, waitingB *scene.Acquisition) *lock.Held {
	t.Helper()
	fc.cutA(t)
	waitingB.WaitReturn(claims.Judged(t, id, claims.NotShown), 10*harness.ExpirySessionTimeout, "the return of B's acquisition after A's blackhole")
	if waitingB.Err != nil {
		claims.NotShown(t, id, "B acquire: %v", waitingB.Err)
	}
	fc.B.Log.Ok("holds with token %v after the server deleted A's node", waitingB.Held.Token)
	return waitingB.Held
}

// WriteEach is who's write of value with tok to each resource in turn.
func WriteEach(t zkserver.TB, who claims.Actor, tok fence.Token, value string, rs ...fence.Resource) []fence.Result {
	t.Helper()
	out := make([]fence.Result, len(rs))
	for i, r := range rs {
		out[i] = WriteAs(t, who, r, tok, value)
	}
	return out
}

// WaitHoldWatching waits until A's hold watches its own node on the
// server, so that the blackhole that follows cuts a hold that is armed.
func (fc *FencingCast) WaitHoldWatching(t zkserver.TB, held *lock.Held) {
	t.Helper()
	scene.WaitWatching(t, fc.srv, fc.Parent, held.Path, fc.A.Session.SessionHex())
	fc.A.Log.Info("hold armed: watching its own node %s", path.Base(held.Path))
}

// HealA ends A's blackhole: A reaches the server again, and only now can
// its client learn what the server decided while it was cut off.
func (fc *FencingCast) HealA() {
	fc.proxy.Heal()
	fc.A.Log.Info("connection healed")
}

// Fired says whether ch has been closed (or has a value) now, without
// waiting: a hold's Lost channel read at one moment of the story.
func Fired[T any](ch <-chan T) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// ReleaseOnceLost waits, up to zkclient.ConnectWithin, for who's hold to
// report itself lost, and returns what Release then says; nil when the
// hold never reported itself lost within the bound (logged).
func ReleaseOnceLost(t zkserver.TB, who *scene.Contender, held *lock.Held) error {
	t.Helper()
	select {
	case <-held.Lost():
		err := held.Release(context.Background())
		who.Log.Info("hold reports itself lost; Release says why: %v", err)
		return err
	case <-time.After(zkclient.ConnectWithin):
		who.Log.Info("hold did not report itself lost within %v", zkclient.ConnectWithin)
		return nil
	}
}

// LateWorker is A's worker parked on a gate with its token.
type LateWorker struct {
	who   claims.Actor
	tok   fence.Token
	value string
	gate  parking
	res   chan []fence.Result
	err   chan error
}

// ParkWorker starts A's worker: it waits on a gate, then writes value with
// tok to each resource in turn. Cleanup opens the gate and waits for it.
func ParkWorker(t zkserver.TB, tok fence.Token, value string, rs ...fence.Resource) *LateWorker {
	w := &LateWorker{who: claims.NewActor(t, "A"), tok: tok, value: value, gate: make(parking), res: make(chan []fence.Result, 1), err: make(chan error, 1)}
	var wg sync.WaitGroup
	wg.Go(func() {
		<-w.gate
		out := make([]fence.Result, len(rs))
		for i, r := range rs {
			var err error
			if out[i], err = Outcome(r.Write(context.Background(), tok, value)); err != nil {
				w.err <- err
				return
			}
		}
		w.res <- out
	})
	t.Cleanup(func() {
		w.gate.open()
		wg.Wait()
	})
	w.who.Info("worker parked with token %v", tok)
	return w
}

// parking is where a worker waits before its write: open lets it go, and
// opening it again (the test's, then its cleanup's) is harmless.
type parking chan struct{}

func (g parking) open() {
	select {
	case <-g:
	default:
		close(g)
	}
}

// Resume opens the gate and returns what each resource answered the
// worker's write.
func (w *LateWorker) Resume(t zkserver.TB) []fence.Result {
	t.Helper()
	w.who.Invoke("write %q with token %v (the worker resumes)", w.value, w.tok)
	w.gate.open()
	select {
	case out := <-w.res:
		for _, r := range out {
			logWrite(w.who, w.tok, r)
		}
		return out
	case err := <-w.err:
		t.Fatalf("A's worker: write %q: %v", w.value, err)
	case <-time.After(harness.Within):
		t.Fatalf("A's worker did not write within %v", harness.Within)
	}
	return nil
}

// AskingWorker is A's worker when it asks ZooKeeper before it writes: it
// checks that its lock node exists, parks on a gate (the pause between the
// answer and the write, where a GC pause or a slow disk would be) and then
// writes with its token, whatever happened meanwhile.
type AskingWorker struct {
	who    claims.Actor
	tok    fence.Token
	value  string
	self   int64      // the session the worker's hold belongs to
	answer chan error // nil: the node exists and this session owns it
	gate   parking
	wrote  chan fence.Result
	failed chan error
}

// StartAskingWorker starts p's worker for its hold of node. Cleanup opens
// the gate and waits for the worker.
func StartAskingWorker(t zkserver.TB, p *scene.Contender, node string, res fence.Resource, tok fence.Token, value string) *AskingWorker {
	t.Helper()
	w := &AskingWorker{who: p.Log, tok: tok, value: value, self: p.Session.SessionID(), answer: make(chan error, 1), gate: make(parking), wrote: make(chan fence.Result, 1), failed: make(chan error, 1)}
	p.Log.Invoke("exists %s (do I still hold the lock?)", path.Base(node))
	var wg sync.WaitGroup
	wg.Go(func() {
		ok, st, err := p.Session.Exists(node)
		switch {
		case err != nil:
		case !ok:
			err = fmt.Errorf("%s does not exist", path.Base(node))
		case st.EphemeralOwner != w.self:
			err = fmt.Errorf("%s is owned by 0x%x, not by this session 0x%x", path.Base(node), st.EphemeralOwner, w.self)
		}
		w.answer <- err
		<-w.gate
		r, err := Outcome(res.Write(context.Background(), tok, value))
		if err != nil {
			w.failed <- err
			return
		}
		w.wrote <- r
	})
	t.Cleanup(func() { w.gate.open(); wg.Wait() })
	return w
}

// Asked waits for ZooKeeper's answer and reports whether the node exists
// and is owned by the worker's session; the worker is then parked.
func (w *AskingWorker) Asked(t zkserver.TB) bool {
	t.Helper()
	select {
	case err := <-w.answer:
		if err != nil {
			w.who.Fail("%v", err)
			return false
		}
		w.who.Ok("true, owned by this session 0x%x; the worker pauses before its write", w.self)
		return true
	case <-time.After(harness.Within):
		t.Fatalf("%s: no answer to exists within %v", w.who.Name, harness.Within)
		return false
	}
}

// Resume opens the gate and waits for the worker's write.
func (w *AskingWorker) Resume(t zkserver.TB) fence.Result {
	t.Helper()
	w.who.Invoke("write %q with token %v (resumed after its check)", w.value, w.tok)
	w.gate.open()
	select {
	case r := <-w.wrote:
		logWrite(w.who, w.tok, r)
		return r
	case err := <-w.failed:
		t.Fatalf("%s: write %q: %v", w.who.Name, w.value, err)
	case <-time.After(harness.Within):
		t.Fatalf("%s: the worker did not write within %v", w.who.Name, harness.Within)
	}
	return fence.Result{}
}

// AcceptedWrite is one accepted write of a concurrent run.
type AcceptedWrite struct {
	Commit uint64
	Tok    fence.Token
	Value  string
	Mark   fence.Token // the mark its Result gave back
}

// WriteRun is a concurrent run on one resource: writers with tokens, and
// readers beside them that read the value and the mark back.
type WriteRun struct {
	mu       sync.Mutex
	Accepted []AcceptedWrite // in commit order once the run is over
	Writes   int
	Reads    int
	BadReads int      // reads whose value was not written with the mark read with it
	FirstBad *BadRead // the first of them
}

// BadRead is a read that found a value beside a mark it was not written
// with: Tok is the token the value was written with, if Written says it
// was written by a write of the run.
type BadRead struct {
	Value   string
	Written bool
	Tok     fence.Token
	Mark    fence.Token
}

// ValueOf is the value writer w's i-th write stores with tok. The token is
// in it, so that a reader can tell which token wrote what it reads.
func ValueOf(w, i int, tok fence.Token) string {
	return fmt.Sprintf("w%d.%d@%d/%d", w, i, tok.Domain, tok.Seq)
}

// tokenIn is the token valueOf put into value.
func tokenIn(value string) (fence.Token, bool) {
	var tok fence.Token
	_, rest, ok := strings.Cut(value, "@")
	if !ok {
		return tok, false
	}
	_, err := fmt.Sscanf(rest, "%d/%d", &tok.Domain, &tok.Seq)
	return tok, err == nil
}

// WriteConcurrently has writers goroutines write per times each, and
// readers goroutines read the value and the mark until the writers are
// done. A shared ticket counter plays the lock service: tickets increase,
// but taking one and writing with it is not one step, so writes arrive a
// little out of order; one write in eight is a stale holder's, some
// tickets behind. onAccept, if set, sees every accepted token. A write or
// read that fails stops the proof: claim id is not shown.
func WriteConcurrently(t *testing.T, id string, res fence.Resource, writers, per, readers int, onAccept func(fence.Token)) *WriteRun {
	t.Helper()
	run := &WriteRun{}
	var (
		tickets atomic.Int64
		wg, rwg sync.WaitGroup
		done    = make(chan struct{})
		errs    = make(chan error, writers+readers)
	)
	for range readers {
		rwg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := run.read(res); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewSource(int64(w)))
			for i := range per {
				tok := fence.Token{Domain: 1, Seq: tickets.Add(1)}
				if rng.Intn(8) == 0 {
					tok.Seq = max(0, tok.Seq-1-rng.Int63n(20))
				}
				value := ValueOf(w, i, tok)
				r, err := Outcome(res.Write(context.Background(), tok, value))
				if err != nil {
					errs <- fmt.Errorf("write %q: %w", value, err)
					return
				}
				run.wrote(AcceptedWrite{r.Commit, tok, value, r.Mark}, r.Accepted)
				if r.Accepted && onAccept != nil {
					onAccept(tok)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	close(errs)
	for err := range errs {
		claims.NotShown(t, id, "%v", err)
	}
	sort.Slice(run.Accepted, func(i, j int) bool { return run.Accepted[i].Commit < run.Accepted[j].Commit })
	return run
}

// wrote records one write of the run.
func (run *WriteRun) wrote(w AcceptedWrite, accepted bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.Writes++
	if accepted {
		run.Accepted = append(run.Accepted, w)
	}
}

// Add records an accepted write made beside the run, once it is over.
func (run *WriteRun) Add(w AcceptedWrite) {
	run.wrote(w, true)
	sort.Slice(run.Accepted, func(i, j int) bool { return run.Accepted[i].Commit < run.Accepted[j].Commit })
}

// read reads the value and the mark once and records a value that was not
// written with the mark it was read with: a resource that stores the value
// and moves the mark in one step never shows one without the other.
func (run *WriteRun) read(res fence.Resource) error {
	value, mark, marked, err := res.Read(context.Background())
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	run.Reads++
	if tok, ok := tokenIn(value); marked && (!ok || tok != mark) {
		if run.BadReads++; run.FirstBad == nil {
			run.FirstBad = &BadRead{Value: value, Written: ok, Tok: tok, Mark: mark}
		}
	}
	return nil
}

// HeldGap holds the gap of a compare-then-write control open once: the
// first write to pass the compare waits between its compare and its write
// until another writer's larger token has been accepted. No timing decides
// it.
type HeldGap struct {
	once, raisedOnce sync.Once
	held             atomic.Pointer[fence.Token]
	Opened, raised   chan struct{}
}

func NewHeldGap() *HeldGap {
	return &HeldGap{Opened: make(chan struct{}), raised: make(chan struct{})}
}

func (g *HeldGap) Between(d fence.Decision) {
	if !d.Admitted {
		return
	}
	tok, first := d.Token, false
	g.once.Do(func() { first = true; g.held.Store(&tok); close(g.Opened) })
	if !first {
		return
	}
	select {
	case <-g.raised:
	case <-time.After(harness.Within):
	}
}

func (g *HeldGap) Accepted(tok fence.Token) {
	if h := g.held.Load(); h != nil && tok.Compare(*h) > 0 {
		g.raisedOnce.Do(func() { close(g.raised) })
	}
}

// SeqOnly is a token as a resource that knows no domain sees it: the
// lock and the sequence number.
func SeqOnly(tok fence.Token) fence.Token { return fence.Token{Lock: tok.Lock, Seq: tok.Seq} }

// WipedParent is T5's lock parent, the same path in both incarnations.
const WipedParent = "/locks"

// HoldOnFreshServer is what one incarnation of T5's server goes through,
// in the same order each time: an observer's session, a holder's session,
// the lock parent, the holder's acquisition with the parent's czxid as its
// domain.
func HoldOnFreshServer(t *testing.T, s *zkserver.Server, observer, holder string) (*zkclient.Client, *scene.Contender, fence.Token) {
	t.Helper()
	o := zkclient.Connect(t, observer, []string{s.Client})
	p := scene.Join(t, holder, []string{s.Client}, WipedParent, scene.JoinOpts{Lock: []lock.Option{lock.WithCzxidDomain()}})
	oa := claims.NewActor(t, observer)
	oa.Invoke("create %s", WipedParent)
	if _, err := o.Create(WipedParent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		claims.NotShown(t, "T5", "%s: create %s: got %v; want it created on a server that starts empty", observer, WipedParent, err)
	}
	_, st := scene.StatOf(t, o, WipedParent)
	oa.Ok("czxid 0x%x", st.Czxid)
	tok := p.Acquire().Token
	p.Log.Ok("holds with token %v (its domain is the parent's czxid)", tok)
	return o, p, tok
}

// ServerZxid is the last zxid the server reports.
func ServerZxid(t *testing.T, s *zkserver.Server) int64 {
	t.Helper()
	st, err := s.Srvr()
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	return st.Zxid
}

// WritesAcrossTheWipe is T5's writes: A writes with its token while it
// holds, B with its own after the wipe, then A's worker writes late.
func WritesAcrossTheWipe(t *testing.T, res fence.Resource, tokA, tokB fence.Token) (bWrite, late fence.Result, value string) {
	t.Helper()
	pa, pb := claims.NewActor(t, "A"), claims.NewActor(t, "B")
	WriteAs(t, pa, res, tokA, "A-first")
	bWrite = WriteAs(t, pb, res, tokB, "new-owner")
	late = WriteAs(t, pa, res, tokA, "stale-late")
	value, _, _ = ReadResource(t, res)
	return bWrite, late, value
}

// OpenEach opens an empty fenced resource of each kind (ResourceKinds, in
// that order) with opts; each is closed at cleanup.
func OpenEach(t zkserver.TB, opts ...fence.Option) []fence.Resource {
	t.Helper()
	out := make([]fence.Resource, len(ResourceKinds))
	for i, kind := range ResourceKinds {
		out[i] = OpenResource(t, kind, opts...)
	}
	return out
}

// Reopen closes a resource that keeps what it stored and opens it again
// from there, as a restart does; the reopened one is closed at cleanup.
// It returns false for a resource that keeps nothing across a restart (the
// one in memory).
func Reopen(t zkserver.TB, res fence.Resource) (fence.Resource, bool) {
	t.Helper()
	if p, ok := res.(*PostgresDurable); ok {
		return p.reopen(t), true
	}
	d, ok := res.(*sqldb.SQLiteDurable)
	if !ok {
		return nil, false
	}
	if err := d.Close(); err != nil {
		t.Fatalf("close the durable resource: %v", err)
	}
	again, err := sqldb.OpenSQLite(context.Background(), d.Path())
	if err != nil {
		t.Fatalf("reopen the durable resource %s: %v", d.Path(), err)
	}
	t.Cleanup(func() { _ = again.Close() })
	return again, true
}

// PostgresDurable is the durable resource on PostgreSQL: a fence.Durable
// on a fresh database of the test binary's server (internal/server/sqldb),
// with its own connection pool, which Close closes too.
type PostgresDurable struct {
	*fence.Durable
	dsn string
	db  *sql.DB
}

// OpenPostgres opens a PostgresDurable with opts on a fresh database,
// closed at cleanup.
func OpenPostgres(t zkserver.TB, opts ...fence.Option) *PostgresDurable {
	t.Helper()
	srv := sqldb.Shared(t)
	return openPostgres(t, srv.DSN(srv.NewDatabase(t)), opts...)
}

func openPostgres(t zkserver.TB, dsn string, opts ...fence.Option) *PostgresDurable {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open the PostgreSQL resource: %v", err)
	}
	d, err := fence.NewDurable(context.Background(), db, opts...)
	if err != nil {
		_ = db.Close()
		t.Fatalf("open the PostgreSQL resource: %v", err)
	}
	p := &PostgresDurable{Durable: d, dsn: dsn, db: db}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Close closes the resource and its connections; the database stays.
func (p *PostgresDurable) Close() error {
	return errors.Join(p.Durable.Close(), p.db.Close())
}

// reopen closes p and opens the resource again on the same database, with
// connections of its own, as a service restarted beside its database.
func (p *PostgresDurable) reopen(t zkserver.TB) *PostgresDurable {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Fatalf("close the PostgreSQL resource: %v", err)
	}
	return openPostgres(t, p.dsn)
}

// LockWaits counts the sessions of p's database that wait for a lock in
// the server now, read on a connection of their own (pg_stat_activity).
func (p *PostgresDurable) LockWaits(ctx context.Context) (int, error) {
	var n int
	err := p.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
	return n, err
}

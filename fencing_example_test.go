package zk19_test

// The fencing claims (F1–F12, article §5 "资源接受新 token 后拒绝旧写"), the
// token domains (T1–T5, §6 "顺序号只在明确的锁域内比较") and exercise 2 (X2).
// Every claim about the resource runs against both fenced resources, the
// one in memory and the durable one in SQLite, in subtests named for what
// the claim says of them.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/sqlite"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
	"github.com/zk19/zk19/lock"
)

// resourceKinds are the fenced resources every claim about the resource
// runs against: one in memory, one durable in SQLite (issue 12).
var resourceKinds = []string{"memory", "durable"}

// fencedResource is a fenced resource with the call some claims need
// beside the fence: a request id checked with the token (F12).
type fencedResource interface {
	fence.Resource
	WriteOnce(ctx context.Context, tok fence.Token, id, value string) (fence.Result, error)
}

// clearMark is the wrong reset of the mark (T4), on res as openResource
// opened it: fencetest clears fence's own resources, and the durable one
// is inside sqlite's wrapper.
func clearMark(ctx context.Context, res fencedResource) error {
	switch r := res.(type) {
	case *fence.Memory:
		return fencetest.ClearMark(ctx, r)
	case *sqlite.Durable:
		return fencetest.ClearMark(ctx, r.Durable)
	}
	return fmt.Errorf("clear the mark of %T; want a *fence.Memory or a *sqlite.Durable", res)
}

// openResource opens an empty fenced resource of kind with opts (a
// Trace), closed at cleanup.
func openResource(t zkserver.TB, kind string, opts ...fence.Option) fencedResource {
	t.Helper()
	var res fencedResource
	switch kind {
	case "memory":
		res = fence.NewMemory(opts...)
	case "durable":
		d, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "resource.db"), opts...)
		if err != nil {
			t.Fatalf("open the durable resource: %v", err)
		}
		res = d
	default:
		t.Fatalf("no fenced resource of kind %q", kind)
	}
	t.Cleanup(func() { _ = res.Close() })
	return res
}

// onEachResource runs f once on each fenced resource, in a subtest worded
// as the claim: "the memory resource " + does.
func onEachResource(t *testing.T, does string, f func(t *testing.T, kind string, res fencedResource)) {
	t.Helper()
	for _, kind := range resourceKinds {
		t.Run("the "+kind+" resource "+does, func(t *testing.T) { f(t, kind, openResource(t, kind)) })
	}
}

// writeAs is one write of who's, logged as its operation. A rejection is
// a result; an error stops the scenario.
func writeAs(t zkserver.TB, who actor, res fence.Resource, tok fence.Token, value string) fence.Result {
	t.Helper()
	who.invoke("write %q with token %v", value, tok)
	r, err := res.Write(context.Background(), tok, value)
	if err != nil {
		who.fail("%v", err)
		t.Fatalf("%s: write %q: %v", who.name, value, err)
	}
	logWrite(who, tok, r)
	return r
}

func logWrite(who actor, tok fence.Token, r fence.Result) {
	if r.Accepted {
		who.ok("accepted over %q; mark %v, commit %d", r.Prev, r.Mark, r.Commit)
	} else {
		who.fail("rejected: mark %v is above token %v; value stays %q", r.Mark, tok, r.Prev)
	}
}

// readResource reads the resource's value and mark or stops the scenario.
func readResource(t zkserver.TB, res fence.Resource) (value string, mark fence.Token, marked bool) {
	t.Helper()
	value, mark, marked, err := res.Read(context.Background())
	if err != nil {
		t.Fatalf("read the resource: %v", err)
	}
	return value, mark, marked
}

// fencingStory is the article's §5 story (claims F1–F4, F8, F10), run
// against a fenced resource and, side by side, the unfenced control: every
// write goes to both.
type fencingStory struct {
	tokenA, tokenB     fence.Token
	fenced, unfenced   storySide
	aSawExpiredAtB     bool  // A had seen Expired when B acquired (F10)
	aExpiredAfterHeal  bool  // A saw Expired once it could reach the server again
	aLostAtB           bool  // A's Held.Lost() had fired when B acquired
	aLostAfterHeal     error // A's Release once its hold reported itself lost after the heal (nil: it did not)
	deletionBeforeHeal bool
	elapsed            time.Duration
}

// storySide is what one resource answered in the story.
type storySide struct {
	first              fence.Result // A's write while it held: the mark is A's token
	markBeforeWindow   fence.Token  // the mark just before A's write in the window (F2)
	markedBeforeWindow bool
	window             fence.Result // A's write after its expiry, before B's write (F2)
	b, late            fence.Result // B's "new-owner"; A's worker's "stale-late" after its gate opens
	final              string
}

// fencingCast is the cast of the fencing scenarios on a server with a
// small tickTime: O observes directly, A talks through a proxy that can
// blackhole it (so its session can expire naturally), B talks directly.
type fencingCast struct {
	srv   *zkserver.Server
	root  string
	proxy *faultproxy.Proxy
	O     *zkclient.Client
	a, b  *contender
}

func newFencingCast(t zkserver.TB) *fencingCast {
	t.Helper()
	s := expiryServer(t)
	fc := &fencingCast{srv: s}
	fc.O = zkclient.Connect(t, "O", []string{s.Client})
	fc.root = testRoot(t, fc.O)
	fc.proxy = zkserver.ClientProxy(t, "A-proxy", s)
	fc.a = join(t, "A", []string{fc.proxy.Addr()}, fc.root, joinOpts{client: []zkclient.Option{zkclient.WithSessionTimeout(expirySessionTimeout)}})
	fc.b = join(t, "B", []string{s.Client}, fc.root, joinOpts{})
	return fc
}

// expireA cuts A off behind its proxy (a blackhole: no close, no forced
// expiry) and waits until O sees the server delete A's node: A's session
// ran out on the server's clock, and A has not been told.
func (fc *fencingCast) expireA(t zkserver.TB, node string) {
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
	case <-time.After(10 * expirySessionTimeout):
		t.Fatalf("A's session did not expire within %v of the blackhole", 10*expirySessionTimeout)
	}
}

// cutA blackholes A's connection both ways until the heal (at cleanup at
// the latest): no close, no forced expiry.
func (fc *fencingCast) cutA(t zkserver.TB) {
	fc.proxy.Blackhole(faultproxy.Both)
	t.Cleanup(fc.proxy.Heal)
	fc.a.a.info("connection blackholed: no close, no forced expiry")
}

// heldOnceAExpires cuts A off and returns the hold B's waiting acquisition
// gets: the server must expire A's session on its own clock and delete A's
// node, and B learn it from that deletion (claim id fails otherwise).
func (fc *fencingCast) heldOnceAExpires(t zkserver.TB, id string, waitingB *acquisition) *lock.Held {
	t.Helper()
	fc.cutA(t)
	wait.ReceiveSeen(judged(t, id, notShown), 10*expirySessionTimeout, "the return of B's acquisition after A's blackhole", waitingB.done, waitingB.seen)
	if waitingB.err != nil {
		notShown(t, id, "B acquire: %v", waitingB.err)
	}
	fc.b.a.ok("holds with token %v after the server deleted A's node", waitingB.held.Token)
	return waitingB.held
}

// writeEach is who's write of value with tok to each resource in turn.
func writeEach(t zkserver.TB, who actor, tok fence.Token, value string, rs ...fence.Resource) []fence.Result {
	t.Helper()
	out := make([]fence.Result, len(rs))
	for i, r := range rs {
		out[i] = writeAs(t, who, r, tok, value)
	}
	return out
}

// runFencingStory: A holds with token 0 and writes once with it, so the
// fenced resource's mark is A's token; A's worker then parks on a gate
// before its next write; A's session expires naturally behind a blackholed
// proxy; B, waiting on A's node, learns of the deletion and holds with
// token 1; in that window A's token still writes; B writes "new-owner";
// the gate opens and A's worker writes "stale-late" with token 0. Every
// write goes to res and to an unfenced control beside it. The steps are
// Example_s5aFencingSequence's.
func runFencingStory(t zkserver.TB, res fence.Resource) fencingStory {
	t.Helper()
	ctx := context.Background()
	start0 := time.Now()
	var st fencingStory
	fc := newFencingCast(t)
	unfenced := fencetest.NewUnfenced()
	phase(t, "A holds and writes once with its token; its worker keeps the token and parks on a gate")
	hA := fc.a.acquire()
	st.tokenA = hA.Token
	first := writeEach(t, fc.a.a, st.tokenA, "A-first", res, unfenced)
	st.fenced.first, st.unfenced.first = first[0], first[1]
	lostA := hA.Lost()
	waitWatching(t, fc.srv, fc.root, hA.Path, fc.a.c.SessionHex())
	fc.a.a.info("hold armed: watching its own node %s", path.Base(hA.Path))
	late := parkWorker(t, st.tokenA, "stale-late", res, unfenced)

	phase(t, "B waits on A's node")
	pB := fc.b.acquireInBackground().waitsOn(nodeOf(hA))

	phase(t, "A's connection is blackholed: no forced expiry, no close; the session runs out")
	mark := fc.a.c.Mark()
	st.tokenB = fc.heldOnceAExpires(t, "F1", pB).Token
	st.aSawExpiredAtB = fc.a.c.Seen(zk.StateExpired)
	select {
	case <-lostA:
		st.aLostAtB = true
	default:
	}
	fc.a.a.info("A's hold reports itself lost when B acquired: %v", st.aLostAtB)
	fc.a.a.info("A's own view when B acquired: session states %v; expired seen: %v", fc.a.c.States()[mark:], st.aSawExpiredAtB)
	ok, _, err := fc.O.Exists(hA.Path)
	st.deletionBeforeHeal = err == nil && !ok
	t.Logf("O: A's node %s exists: %v (%v)", path.Base(hA.Path), ok, err)

	for i, r := range []fence.Resource{res, unfenced} {
		side := []*storySide{&st.fenced, &st.unfenced}[i]
		_, side.markBeforeWindow, side.markedBeforeWindow = readResource(t, r)
	}
	phase(t, "the window: A has expired and B has not written yet")
	window := writeEach(t, fc.a.a, st.tokenA, "A-in-window", res, unfenced)
	phase(t, "B writes with its token")
	byB := writeEach(t, fc.b.a, st.tokenB, "new-owner", res, unfenced)
	phase(t, "the gate opens: A's worker writes with its old token")
	lateW := late.resume(t)
	st.fenced.window, st.fenced.b, st.fenced.late = window[0], byB[0], lateW[0]
	st.unfenced.window, st.unfenced.b, st.unfenced.late = window[1], byB[1], lateW[1]
	st.fenced.final, _, _ = readResource(t, res)
	st.unfenced.final, _, _ = readResource(t, unfenced)
	t.Logf("values: fenced %q, unfenced %q", st.fenced.final, st.unfenced.final)

	phase(t, "heal A's connection: only now can A learn that its session expired")
	fc.proxy.Heal()
	st.aExpiredAfterHeal = fc.a.c.WaitStateSince(mark, zk.StateExpired, zkclient.ConnectWithin) == nil
	fc.a.a.info("session expired seen after heal: %v", st.aExpiredAfterHeal)
	select {
	case <-lostA:
		st.aLostAfterHeal = hA.Release(ctx)
		fc.a.a.info("A's hold reports itself lost after the heal; Release says why: %v", st.aLostAfterHeal)
	case <-time.After(zkclient.ConnectWithin):
		fc.a.a.info("A's hold never reported itself lost after the heal")
	}
	st.elapsed = time.Since(start0)
	return st
}

// lateWorker is A's worker parked on a gate with its token.
type lateWorker struct {
	who   actor
	tok   fence.Token
	value string
	gate  chan struct{}
	res   chan []fence.Result
	err   chan error
}

// parkWorker starts A's worker: it waits on a gate, then writes value with
// tok to each resource in turn. Cleanup opens the gate and waits for it.
func parkWorker(t zkserver.TB, tok fence.Token, value string, rs ...fence.Resource) *lateWorker {
	w := &lateWorker{who: newActor(t, "A"), tok: tok, value: value, gate: make(chan struct{}), res: make(chan []fence.Result, 1), err: make(chan error, 1)}
	var wg sync.WaitGroup
	wg.Go(func() {
		<-w.gate
		out := make([]fence.Result, len(rs))
		for i, r := range rs {
			var err error
			if out[i], err = r.Write(context.Background(), tok, value); err != nil {
				w.err <- err
				return
			}
		}
		w.res <- out
	})
	t.Cleanup(func() {
		w.open()
		wg.Wait()
	})
	w.who.info("worker parked with token %v", tok)
	return w
}

func (w *lateWorker) open() {
	select {
	case <-w.gate:
	default:
		close(w.gate)
	}
}

// resume opens the gate and returns what each resource answered the
// worker's write.
func (w *lateWorker) resume(t zkserver.TB) []fence.Result {
	t.Helper()
	w.who.invoke("write %q with token %v (the worker resumes)", w.value, w.tok)
	w.open()
	select {
	case out := <-w.res:
		for _, r := range out {
			logWrite(w.who, w.tok, r)
		}
		return out
	case err := <-w.err:
		t.Fatalf("A's worker: write %q: %v", w.value, err)
	case <-time.After(within):
		t.Fatalf("A's worker did not write within %v", within)
	}
	return nil
}

// askingWorker is A's worker when it asks ZooKeeper before it writes: it
// checks that its lock node exists, parks on a gate (the pause between the
// answer and the write, where a GC pause or a slow disk would be) and then
// writes with its token, whatever happened meanwhile.
type askingWorker struct {
	who    actor
	tok    fence.Token
	value  string
	self   int64      // the session the worker's hold belongs to
	answer chan error // nil: the node exists and this session owns it
	gate   chan struct{}
	wrote  chan fence.Result
	failed chan error
}

// startAskingWorker starts p's worker for its hold of node. Cleanup opens
// the gate and waits for the worker.
func startAskingWorker(t zkserver.TB, p *contender, node string, res fence.Resource, tok fence.Token, value string) *askingWorker {
	t.Helper()
	w := &askingWorker{who: p.a, tok: tok, value: value, self: p.c.SessionID(), answer: make(chan error, 1), gate: make(chan struct{}), wrote: make(chan fence.Result, 1), failed: make(chan error, 1)}
	p.a.invoke("exists %s (do I still hold the lock?)", path.Base(node))
	var wg sync.WaitGroup
	wg.Go(func() {
		ok, st, err := p.c.Exists(node)
		switch {
		case err != nil:
		case !ok:
			err = fmt.Errorf("%s does not exist", path.Base(node))
		case st.EphemeralOwner != w.self:
			err = fmt.Errorf("%s is owned by 0x%x, not by this session 0x%x", path.Base(node), st.EphemeralOwner, w.self)
		}
		w.answer <- err
		<-w.gate
		r, err := res.Write(context.Background(), tok, value)
		if err != nil {
			w.failed <- err
			return
		}
		w.wrote <- r
	})
	t.Cleanup(func() { w.open(); wg.Wait() })
	return w
}

func (w *askingWorker) open() {
	select {
	case <-w.gate:
	default:
		close(w.gate)
	}
}

// asked waits for ZooKeeper's answer and reports whether the node exists
// and is owned by the worker's session; the worker is then parked.
func (w *askingWorker) asked(t zkserver.TB) bool {
	t.Helper()
	select {
	case err := <-w.answer:
		if err != nil {
			w.who.fail("%v", err)
			return false
		}
		w.who.ok("true, owned by this session 0x%x; the worker pauses before its write", w.self)
		return true
	case <-time.After(within):
		t.Fatalf("%s: no answer to exists within %v", w.who.name, within)
		return false
	}
}

// resume opens the gate and waits for the worker's write.
func (w *askingWorker) resume(t zkserver.TB) fence.Result {
	t.Helper()
	w.who.invoke("write %q with token %v (resumed after its check)", w.value, w.tok)
	w.open()
	select {
	case r := <-w.wrote:
		logWrite(w.who, w.tok, r)
		return r
	case err := <-w.failed:
		t.Fatalf("%s: write %q: %v", w.who.name, w.value, err)
	case <-time.After(within):
		t.Fatalf("%s: the worker did not write within %v", w.who.name, within)
	}
	return fence.Result{}
}

// TestF1toF3_FencedResourceRejectsTheLateHolder runs the article's fencing
// story (Example_s5aFencingSequence's steps) against the fenced resource in
// memory and the durable SQLite one (claims F1 §5 ¶1, F2 §5 ¶6, F3 §5 ¶2).
// F1: A held token 0; its session expired naturally (blackholed, never
// closed or force-expired); B learned it from the deletion and held token
// 1. F2: A had written once with token 0, so the mark was A's token; in the
// window before B's write, token 0 was still accepted from that state. F3:
// after B wrote "new-owner" with token 1, A's late "stale-late" with token
// 0 was rejected.
func TestF1toF3_FencedResourceRejectsTheLateHolder(t *testing.T) {
	parallel(t)
	for _, id := range []string{"F1", "F2", "F3"} {
		claim(t, id)
	}
	onEachResource(t, "still takes token 0 until token 1 arrives, then rejects the late holder", func(t *testing.T, kind string, res fencedResource) {
		st := runFencingStory(t, res)
		f := st.fenced
		evidence(t, "%s resource: A token %v, B token %v; A's node deleted before the heal: %v", kind, st.tokenA, st.tokenB, st.deletionBeforeHeal)
		evidence(t, "%s resource: the mark before the window write was %v (A's first write accepted=%v); A's token %v in the window accepted=%v over %q", kind, f.markBeforeWindow, f.first.Accepted, st.tokenA, f.window.Accepted, f.window.Prev)
		evidence(t, "%s resource: B's write with %v accepted=%v; A's late write with %v accepted=%v; value %q", kind, st.tokenB, f.b.Accepted, st.tokenA, f.late.Accepted, f.final)
		if st.tokenA.Seq != 0 || st.tokenB.Seq != 1 {
			refuted(t, "F1", "tokens A=%v B=%v; want sequence 0 and 1", st.tokenA, st.tokenB)
		}
		if !st.deletionBeforeHeal {
			refuted(t, "F1", "A's node was not deleted by the server while A was blackholed")
		}
		if !f.first.Accepted || !f.markedBeforeWindow || f.markBeforeWindow != st.tokenA {
			brokenCheck(t, "F2", "before the window the resource's mark was %v (set: %v); want A's token %v from A's first write", f.markBeforeWindow, f.markedBeforeWindow, st.tokenA)
		}
		if !f.window.Accepted || f.window.Prev != "A-first" {
			refuted(t, "F2", "in the window A's token %v got accepted=%v over %q (mark %v); want accepted over \"A-first\": the mark is A's own token and cannot know of B yet", st.tokenA, f.window.Accepted, f.window.Prev, f.window.Mark)
		}
		if !f.b.Accepted {
			refuted(t, "F3", "B's write with token %v was rejected", st.tokenB)
		}
		if f.late.Accepted || f.final != "new-owner" {
			refuted(t, "F3", "A's late write accepted=%v, final value %q; want rejected and \"new-owner\"", f.late.Accepted, f.final)
		}
		t.Logf("F1 scenario wall time: %v", st.elapsed.Round(time.Millisecond))
	})
}

// TestF4_UnfencedResourceTakesTheLateWrite is the control (claim F4, §5 ¶4):
// the same story, whose every write also goes to a resource that checks
// nothing, ends there with A's "stale-late" over B's "new-owner", while the
// fenced resource beside it keeps "new-owner".
func TestF4_UnfencedResourceTakesTheLateWrite(t *testing.T) {
	parallel(t)
	claim(t, "F4")
	st := runFencingStory(t, fence.NewMemory())
	u := st.unfenced
	evidence(t, "unfenced resource: B's write with %v accepted=%v; A's late write with token %v accepted=%v over %q; value %q (the fenced one beside it: accepted=%v, value %q)", st.tokenB, u.b.Accepted, st.tokenA, u.late.Accepted, u.late.Prev, u.final, st.fenced.late.Accepted, st.fenced.final)
	if !u.b.Accepted || !u.late.Accepted || u.late.Prev != "new-owner" || u.final != "stale-late" {
		refuted(t, "F4", "unfenced: B's write accepted=%v, then A's late write accepted=%v over %q, final %q; want both accepted and \"stale-late\" over \"new-owner\"", u.b.Accepted, u.late.Accepted, u.late.Prev, u.final)
	}
	if st.fenced.late.Accepted || st.fenced.final != "new-owner" {
		brokenCheck(t, "F4", "the fenced resource beside the control took A's late write (accepted=%v, value %q); want it refused: the story did not run as the article's", st.fenced.late.Accepted, st.fenced.final)
	}
}

// TestF5_CheckThenWriteLosesTheRace: asking ZooKeeper "do I still hold the
// lock?" and then writing is not fencing (claim F5, §5 ¶3). A's worker asks
// (its node exists: yes) and is parked on a gate between the answer and
// its write; A's session expires, B acquires and writes, and only then
// does the gate open: A's checked write lands on the unfenced resource over
// B's accepted write.
func TestF5_CheckThenWriteLosesTheRace(t *testing.T) {
	parallel(t)
	claim(t, "F5")
	fc := newFencingCast(t)
	res := fencetest.NewUnfenced()
	phase(t, "A holds; its worker asks ZooKeeper before it writes and parks after the answer")
	hA := fc.a.acquire()
	worker := startAskingWorker(t, fc.a, hA.Path, res, hA.Token, "A-after-check")
	if !worker.asked(t) {
		notShown(t, "F5", "A's check says it does not hold; want its node to exist: A holds")
	}
	phase(t, "while A's worker is parked, A's session expires and B acquires and writes")
	fc.expireA(t, hA.Path)
	hB := fc.b.acquire()
	fc.b.a.ok("holds with token %v", hB.Token)
	rb := writeAs(t, fc.b.a, res, hB.Token, "new-owner")
	if !rb.Accepted {
		notShown(t, "F5", "B's write with token %v was rejected; want accepted", hB.Token)
	}
	phase(t, "the gate opens: A's worker writes after its check")
	ra := worker.resume(t)
	v, _, _ := readResource(t, res)
	evidence(t, "A's check said its node exists; after A's expiry B's write with %v was accepted; then A's checked write with %v accepted=%v over %q; value %q", hB.Token, hA.Token, ra.Accepted, ra.Prev, v)
	if !ra.Accepted || ra.Prev != "new-owner" || v != "A-after-check" {
		refuted(t, "F5", "A's checked write accepted=%v over %q, final %q; want it accepted over B's \"new-owner\" and the value \"A-after-check\": the check did not protect B", ra.Accepted, ra.Prev, v)
	}
}

// acceptedWrite is one accepted write of a concurrent run.
type acceptedWrite struct {
	commit uint64
	tok    fence.Token
	value  string
	mark   fence.Token // the mark its Result gave back
}

// writeRun is a concurrent run on one resource: writers with tokens, and
// readers beside them that read the value and the mark back.
type writeRun struct {
	mu       sync.Mutex
	accepted []acceptedWrite // in commit order once the run is over
	writes   int
	reads    int
	badRead  string // the first read whose value was not written with the mark read with it
	badReads int
}

// valueOf is the value writer w's i-th write stores with tok. The token is
// in it, so that a reader can tell which token wrote what it reads.
func valueOf(w, i int, tok fence.Token) string {
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

// writeConcurrently has writers goroutines write per times each, and
// readers goroutines read the value and the mark until the writers are
// done. A shared ticket counter plays the lock service: tickets increase,
// but taking one and writing with it is not one step, so writes arrive a
// little out of order; one write in eight is a stale holder's, some
// tickets behind. onAccept, if set, sees every accepted token. A write or
// read that fails stops the proof: claim id is not shown.
func writeConcurrently(t *testing.T, id string, res fence.Resource, writers, per, readers int, onAccept func(fence.Token)) *writeRun {
	t.Helper()
	run := &writeRun{}
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
				value := valueOf(w, i, tok)
				r, err := res.Write(context.Background(), tok, value)
				if err != nil {
					errs <- fmt.Errorf("write %q: %w", value, err)
					return
				}
				run.wrote(acceptedWrite{r.Commit, tok, value, r.Mark}, r.Accepted)
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
		notShown(t, id, "%v", err)
	}
	sort.Slice(run.accepted, func(i, j int) bool { return run.accepted[i].commit < run.accepted[j].commit })
	return run
}

// wrote records one write of the run.
func (run *writeRun) wrote(w acceptedWrite, accepted bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.writes++
	if accepted {
		run.accepted = append(run.accepted, w)
	}
}

// add records an accepted write made beside the run, once it is over.
func (run *writeRun) add(w acceptedWrite) {
	run.wrote(w, true)
	sort.Slice(run.accepted, func(i, j int) bool { return run.accepted[i].commit < run.accepted[j].commit })
}

// read reads the value and the mark once and records a value that was not
// written with the mark it was read with: a resource that stores the value
// and moves the mark in one step never shows one without the other.
func (run *writeRun) read(res fence.Resource) error {
	value, mark, marked, err := res.Read(context.Background())
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	run.reads++
	if tok, ok := tokenIn(value); marked && (!ok || tok != mark) {
		if run.badReads++; run.badRead == "" {
			wrote := "written by no write of the run"
			if ok {
				wrote = fmt.Sprintf("written with token %v", tok)
			}
			run.badRead = fmt.Sprintf("a reader got value %q (%s) with mark %v; want the value written with the mark", value, wrote, mark)
		}
	}
	return nil
}

// notAtomic reads the resource's value and mark once the run is over and
// returns why the run shows that the compare and the write are not one
// step, or "": in commit order the accepted writes are numbered 1..n, each
// token is not below the mark at its commit and became the mark; no reader
// saw a value beside a mark it was not written with; and the resource ends
// with the value of the write with the largest accepted token, and that
// token as its mark.
func (run *writeRun) notAtomic(t zkserver.TB, res fence.Resource) string {
	t.Helper()
	acc := run.accepted
	if len(acc) == 0 {
		return "got no write accepted; want some, to judge"
	}
	for i, w := range acc {
		if w.commit != uint64(i+1) {
			return fmt.Sprintf("got commit %d as the %d-th accepted write; want commits numbered 1..%d, one per accepted write", w.commit, i+1, len(acc))
		}
	}
	if bad := belowTheMark(acc); bad != "" {
		return bad
	}
	for _, w := range acc {
		if w.mark != w.tok {
			return fmt.Sprintf("got commit %d accepting token %v and giving back mark %v; want its own token as the mark", w.commit, w.tok, w.mark)
		}
	}
	if run.badRead != "" {
		return fmt.Sprintf("%s (%d of %d reads so)", run.badRead, run.badReads, run.reads)
	}
	value, mark, marked := readResource(t, res)
	last := acc[len(acc)-1]
	largest := slices.MaxFunc(acc, func(a, b acceptedWrite) int { return a.tok.Compare(b.tok) }).tok
	if !marked || value != last.value || mark != largest {
		return fmt.Sprintf("after the run got value %q with mark %v (set: %v); want %q, the value of commit %d, the last write with the largest accepted token %v, and that token as the mark", value, mark, marked, last.value, last.commit, largest)
	}
	return ""
}

// belowTheMark returns the first accepted write whose token is below the
// mark an earlier commit had set, or "" when there is none.
func belowTheMark(accepted []acceptedWrite) string {
	var mark fence.Token
	for i, w := range accepted {
		if i > 0 && w.tok.Compare(mark) < 0 {
			return fmt.Sprintf("got commit %d accepting token %v after an earlier commit had raised the mark to %v; want no token below the mark accepted", w.commit, w.tok, mark)
		}
		if i == 0 || w.tok.Compare(mark) > 0 {
			mark = w.tok
		}
	}
	return ""
}

// heldGap holds the gap of a compare-then-write control open once: the
// first write to pass the compare waits between its compare and its write
// until another writer's larger token has been accepted. No timing decides
// it.
type heldGap struct {
	once, raisedOnce sync.Once
	held             atomic.Pointer[fence.Token]
	opened, raised   chan struct{}
}

func newHeldGap() *heldGap {
	return &heldGap{opened: make(chan struct{}), raised: make(chan struct{})}
}

func (g *heldGap) between(d fence.Decision) {
	if !d.Admitted {
		return
	}
	tok, first := d.Token, false
	g.once.Do(func() { first = true; g.held.Store(&tok); close(g.opened) })
	if !first {
		return
	}
	select {
	case <-g.raised:
	case <-time.After(within):
	}
}

func (g *heldGap) accepted(tok fence.Token) {
	if h := g.held.Load(); h != nil && tok.Compare(*h) > 0 {
		g.raisedOnce.Do(func() { close(g.raised) })
	}
}

// TestF6_CompareAndWriteIsOneAtomicStep: a fenced resource compares the
// token with the mark and writes in one critical section (claim F6, §5 ¶2;
// the critical-section flowchart, walked by Example_s5bCriticalSection).
//
// Shown deterministically first, on the memory and the durable resource:
// B's write is held inside at its decision (fence.Trace.Decided, after the
// compare, before the write) and A's late write starts. A's write must be
// found parked in the resource's Write (read from the Go runtime's stacks),
// not at a decision of its own; once B is let go, A's compare must find B's
// token as the mark and refuse. The same run against the control that
// compares and writes in two steps finds A inside beside B, every time.
// Then a reader instead of A: parked in the resource's Read while B is
// inside, it must, once B is let go, read B's value with B's token as the
// mark. A resource that moves the mark in one step and stores the value in
// another lets the waiting reader in between (database/sql hands the
// released connection to the request that waits), and it reads the new
// mark beside the old value.
//
// A gap a resource opens after its decision and closes at once (it lets
// its section go and takes it back for the write) lasts nanoseconds, and
// the writer that let go takes the section straight back (Go's mutex
// favours it over a woken waiter; the durable writer keeps its connection):
// no held run sees another writer in it. So the resources' source is read
// as well, following every call the write makes into the package,
// transitively: the memory resource's compare and write sit in one lock
// section, the durable one's decision and UPDATE in one transaction, with
// no statement outside it. The same reading catches the control, a copy of
// the memory resource that lets its section go in a helper, a copy of the
// durable resource split after its decision and one that stores the value
// after its transaction.
//
// Then, as a statistical check (CI runs it under -race): many goroutines
// write with mixed tokens while others read the value and the mark back. In
// commit order the accepted tokens never decrease and each became the
// mark; every read finds the value written with the mark beside it; the
// resource ends with the value of the write with the largest accepted
// token and that token as its mark. The same check catches the control once
// its gap is held open while another writer's larger token goes in.
func TestF6_CompareAndWriteIsOneAtomicStep(t *testing.T) {
	claim(t, "F6")
	for _, kind := range resourceKinds {
		t.Run("the "+kind+" resource keeps a second writer out while one is between its compare and its write", func(t *testing.T) {
			cs := newCriticalSection(t, "F6")
			il := interleave(cs, openResource(t, kind, fence.WithTrace(cs.trace())))
			evidence(t, "%s resource: while B's write with %v was held at its decision (mark %v), A's with %v was %v; A's compare then found mark %v, admitted: %v; value %q", kind, il.tokB, il.bInside.Mark, il.tokA, il.a, il.aDecision.Mark, il.aDecision.Admitted, il.value)
			if why := il.notAtomic(); why != "" {
				refuted(t, "F6", "on the %s resource: %s", kind, why)
			}
		})
	}
	for _, kind := range resourceKinds {
		t.Run("the "+kind+" resource gives a reader that waited while a write was inside that write's value with its token as the mark", func(t *testing.T) {
			cs := newCriticalSection(t, "F6")
			res := openResource(t, kind, fence.WithTrace(cs.trace()))
			tokA, tokB := fence.Token{Seq: 0}, fence.Token{Seq: 1}
			writeAs(t, newActor(t, "A"), res, tokA, "A-first")
			b := cs.write(res, newActor(t, "B"), tokB, "new-owner")
			b.entered()
			r := cs.read(res, newActor(t, "R"), b)
			byB := b.finish(nil)
			value, mark, marked := r.result()
			evidence(t, "%s resource: a read parked while B's write with %v was inside got %q with mark %v once B's write returned accepted=%v", kind, tokB, value, mark, byB.Accepted)
			if !byB.Accepted || value != "new-owner" || mark != tokB || !marked {
				refuted(t, "F6", "on the %s resource: B's write accepted=%v; the read that waited for it got %q with mark %v (set: %v); want B's \"new-owner\" with B's token %v as the mark: the value and the mark were not stored in one step", kind, byB.Accepted, value, mark, marked, tokB)
			}
		})
	}
	t.Run("the memory resource's source compares and writes in one lock section, following its calls, where the control's does not", func(t *testing.T) {
		control, err := sectionInSource(filepath.Join("fence", "fencetest"), "CheckThenWrite.Write", nil)
		if err != nil {
			notShown(t, "F6", "reading the control's source: %v", err)
		}
		src, err := readSource(filepath.Join("fence", "resource.go"))
		if err != nil {
			notShown(t, "F6", "reading the memory resource's source: %v", err)
		}
		// The second control: a copy whose write stores through a helper
		// that lets the section go and takes it back first, so the gap is
		// not in the body of any method the write names.
		apply := regexp.MustCompile(`(?m)^(\s*)s\.apply\(tok, value\)$`)
		helper := apply.ReplaceAllString(string(src), "${1}s.applyAfterAGap(tok, value)") +
			"\nfunc (s *state) applyAfterAGap(tok Token, value string) {\n\ts.mu.Unlock()\n\ts.mu.Lock()\n\ts.apply(tok, value)\n}\n"
		inHelper, err := sectionInSource("fence", "Memory.Write", map[string]string{"resource.go": helper})
		if err != nil || !apply.MatchString(string(src)) {
			notShown(t, "F6", "the copy of the memory resource with a gap in a helper: %v (changed: %v)", err, apply.MatchString(string(src)))
		}
		var found []sourceFinding
		for _, fn := range []string{"Memory.Write", "Memory.WriteOnce"} {
			why, err := sectionInSource("fence", fn, nil)
			if err != nil {
				notShown(t, "F6", "reading the memory resource's source: %v", err)
			}
			found = append(found, sourceFinding{fn, why})
		}
		sourceVerdict(t, "memory", "lock section", found, []sourceFinding{{"the compare-then-write control's Write", control}, {"a copy that lets the section go in a helper", inHelper}})
	})
	t.Run("the durable resource's source compares and writes in one transaction, following its calls, where changed copies do not", func(t *testing.T) {
		src, err := readSource(filepath.Join("fence", "durable.go"))
		if err != nil {
			notShown(t, "F6", "reading the durable resource's source: %v", err)
		}
		why, err := transactionInSource(string(src))
		if err != nil {
			notShown(t, "F6", "reading the durable resource's source: %v", err)
		}
		// The controls: the same source with its transaction ended and
		// begun again right after the decision, and with the value stored
		// again in a statement of its own once the transaction is over.
		var controls []sourceFinding
		for _, c := range []struct{ name, pattern, insert string }{
			{"a copy split after the decision", `(?m)^(\s*)d\.trace\.decided\(.*\)$`,
				"$0\n${1}_, _ = conn.ExecContext(ctx, \"COMMIT\")\n${1}_, _ = conn.ExecContext(ctx, \"BEGIN IMMEDIATE\")"},
			{"a copy that stores the value after its transaction", `(?m)^(\s*)res\.Commit = commits$`,
				"$0\n${1}_, _ = d.db.ExecContext(ctx, `UPDATE resource SET value = ?1 WHERE id = 1`, value)"},
		} {
			changed := regexp.MustCompile(c.pattern).ReplaceAllString(string(src), c.insert)
			control, err := transactionInSource(changed)
			if err != nil || changed == string(src) {
				notShown(t, "F6", "%s of the durable resource's source: %v (changed: %v)", c.name, err, changed != string(src))
			}
			controls = append(controls, sourceFinding{c.name, control})
		}
		sourceVerdict(t, "durable", "transaction", []sourceFinding{{"Durable.Write and WriteOnce", why}}, controls)
	})
	t.Run("the same run finds two writers inside the control that compares, then writes in a second step", func(t *testing.T) {
		cs := newCriticalSection(t, "F6")
		il := interleave(cs, fencetest.NewCheckThenWrite(cs.trace()))
		why := il.notAtomic()
		evidence(t, "compare-then-write control: while B's write was held between its compare and its write, A's was %v; the proof finds: %s", il.a, why)
		if !il.a.inside || why == "" {
			brokenCheck(t, "F6", "against the compare-then-write control A's write was %v and the proof found %q; want A inside beside B, caught", il.a, why)
		}
	})
	onEachResource(t, "keeps value and mark together among many writers and readers", func(t *testing.T, kind string, res fencedResource) {
		writers, per, readers := 16, 100, 2
		if kind == "durable" {
			per = 5 // each durable commit syncs the disk
		}
		run := writeConcurrently(t, "F6", res, writers, per, readers, nil)
		if len(run.accepted) < run.writes/10 {
			notShown(t, "F6", "the %s resource accepted %d of %d writes; want a tenth at least, or the run exercises no race", kind, len(run.accepted), run.writes)
		}
		if why := run.notAtomic(t, res); why != "" {
			refutedNow(t, "F6", "the %s resource: %s", kind, why)
		}
		evidence(t, "%s resource: %d writers × %d writes beside %d readers: %d accepted, tokens non-decreasing in commit order, each the mark after its commit; %d reads each found the value written with the mark; the last value is the largest accepted token's, that token the mark", kind, writers, per, readers, len(run.accepted), run.reads)
	})
	t.Run("the many-writers check catches the control once its gap is held open", func(t *testing.T) {
		gap := newHeldGap()
		res := fencetest.NewCheckThenWrite(&fence.Trace{Decided: gap.between})
		stale := fence.Token{Domain: 1, Seq: 0}
		staleValue := valueOf(-1, 0, stale)
		first := make(chan fence.Result, 1)
		go func() {
			r, err := res.Write(context.Background(), stale, staleValue)
			if err != nil {
				t.Error(err)
			}
			first <- r
		}()
		select {
		case <-gap.opened:
		case <-time.After(within):
			notShown(t, "F6", "the first write did not reach the control's gap within %v", within)
		}
		run := writeConcurrently(t, "F6", res, 16, 100, 2, gap.accepted)
		select {
		case r := <-first:
			if r.Accepted {
				run.add(acceptedWrite{r.Commit, stale, staleValue, r.Mark})
			}
		case <-time.After(within):
			notShown(t, "F6", "the write held in the gap did not return within %v", within)
		}
		why := run.notAtomic(t, res)
		evidence(t, "compare-then-write control, %d accepted, the first write's gap held open until a larger token went in: the check finds %q", len(run.accepted), why)
		if why == "" {
			brokenCheck(t, "F6", "the compare-then-write control passed the check; want the write of token %v held in its gap caught below the mark", stale)
		}
	})
}

// sourceFinding is what F6's source check found in one write: why its
// compare and its write are not one step, or "".
type sourceFinding struct{ name, why string }

// sourceVerdict records in one observation what F6's source check found
// in the writes of the resource of kind and in its controls, each of which
// must be caught, and states the verdict.
func sourceVerdict(t *testing.T, kind, section string, found, controls []sourceFinding) {
	t.Helper()
	var seen []string
	for _, f := range found {
		why := f.why
		if why == "" {
			why = "compare and write in one " + section
		}
		seen = append(seen, f.name+": "+why)
	}
	for _, c := range controls {
		seen = append(seen, c.name+": "+c.why)
	}
	evidence(t, "%s resource's source: %s", kind, strings.Join(seen, "; "))
	for _, c := range controls {
		if c.why == "" {
			brokenCheck(t, "F6", "the source check passed %s; want its gap found", c.name)
		}
	}
	for _, f := range found {
		if f.why != "" {
			refuted(t, "F6", "on the %s resource, %s: got %s; want its compare and its write in one %s", kind, f.name, f.why, section)
			return // the first write that breaks it is the verdict; the observation names the rest
		}
	}
}

// TestF7_EqualTokenIsAccepted: the current holder may keep writing with its
// token (claim F7, §5 ¶5).
func TestF7_EqualTokenIsAccepted(t *testing.T) {
	claim(t, "F7")
	onEachResource(t, "accepts a second write with the token of its mark", func(t *testing.T, kind string, res fencedResource) {
		a := newActor(t, "A")
		tok := fence.Token{Seq: 1}
		r1 := writeAs(t, a, res, tok, "first")
		r2 := writeAs(t, a, res, tok, "second")
		evidence(t, "%s resource: two writes with the same token %v: accepted=%v, %v", kind, tok, r1.Accepted, r2.Accepted)
		if !r1.Accepted || !r2.Accepted {
			refuted(t, "F7", "the %s resource: writes with the same token accepted=%v,%v; want both", kind, r1.Accepted, r2.Accepted)
		}
	})
}

// TestF8_DurableResourceKeepsMarkAndValueAcrossRestart: the SQLite resource
// keeps the mark and the value in one transaction, so after the fencing
// story and a close and reopen it still holds "new-owner" and still
// rejects token 0 (claim F8, §5 ¶5; beyond the article, whose memory model
// left durability unverified).
func TestF8_DurableResourceKeepsMarkAndValueAcrossRestart(t *testing.T) {
	parallel(t)
	claim(t, "F8")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "resource.db")
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() }) // also when the story skips; Close is idempotent
	st := runFencingStory(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("resource closed; reopening %s", filepath.Base(path))
	d2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	v, mark, _ := readResource(t, d2)
	r := writeAs(t, newActor(t, "A"), d2, st.tokenA, "stale-after-restart")
	evidence(t, "after reopen: value %q mark %v; token %v accepted=%v", v, mark, st.tokenA, r.Accepted)
	if v != "new-owner" || mark != st.tokenB || r.Accepted {
		refuted(t, "F8", "after restart value %q mark %v, token 0 accepted=%v; want \"new-owner\", %v, rejected", v, mark, r.Accepted, st.tokenB)
	}
}

// TestF9_ForgedLargerTokenIsAccepted: fencing orders honest holders; it does
// not authenticate them. Any caller that sends a larger number is accepted
// (claim F9, §5 ¶5). This test documents the limit; it is not a bug to fix
// here.
func TestF9_ForgedLargerTokenIsAccepted(t *testing.T) {
	claim(t, "F9")
	onEachResource(t, "accepts a forged larger token", func(t *testing.T, kind string, res fencedResource) {
		writeAs(t, newActor(t, "B"), res, fence.Token{Seq: 1}, "new-owner")
		r := writeAs(t, newActor(t, "M"), res, fence.Token{Seq: 999}, "forged")
		evidence(t, "%s resource: forged token g0/999 accepted=%v after the mark g0/1: fencing is not authentication", kind, r.Accepted)
		if !r.Accepted {
			refuted(t, "F9", "the %s resource: a forged larger token was rejected; want accepted (the resource cannot tell forgery)", kind)
		}
	})
}

// TestF10_ServerCleanupAndExpiredEventAreTwoObservations: the server's
// deletion of A's node (seen by B) and A's own Expired event are separate
// observations; A sees Expired only when it reaches the server again, after
// the blackhole heals (claim F10, §7 ¶2). A's
// hold, which watches its own node, likewise reports itself lost only after
// the heal, and its Release then says the session changed: until then A's
// worker has no local signal that its token is stale.
func TestF10_ServerCleanupAndExpiredEventAreTwoObservations(t *testing.T) {
	parallel(t)
	claim(t, "F10")
	st := runFencingStory(t, fence.NewMemory())
	evidence(t, "B acquired after the server deleted A's node; A had seen Expired then: %v, its hold lost then: %v; after the heal A saw Expired: %v and its Release returned %v", st.aSawExpiredAtB, st.aLostAtB, st.aExpiredAfterHeal, st.aLostAfterHeal)
	if st.aSawExpiredAtB {
		refuted(t, "F10", "A had already seen Expired when B acquired; want it only after the heal")
	}
	if !st.aExpiredAfterHeal {
		refuted(t, "F10", "A never saw Expired after the heal")
	}
	if st.aLostAtB {
		refuted(t, "F10", "A's hold reported itself lost while A could not reach the server; want it to learn only after the heal")
	}
	if !errors.Is(st.aLostAfterHeal, lock.ErrSessionChanged) {
		refuted(t, "F10", "after the heal A's hold gave %v; want a lost hold because the session expired (lock.ErrSessionChanged)", st.aLostAfterHeal)
	}
}

// TestF11_CompareThenWriteInTwoStepsAcceptsAStaleWrite: the compare must be
// atomic with the write (claim F11, §5 ¶3). A has written with token 0, so
// the mark is A's own token. B's write with token 1 is held between its
// compare and its write (fence.Trace.Decided) and A's late write with token
// 0 starts. A control resource that compares in one step and writes in a
// second lets A's compare in beside B's (its mark is still 0: A passes);
// B writes, then A's stale value lands over B's: a write below the mark at
// its commit point. The fenced resources, in memory and durable, under the
// same interleaving, keep A's write parked outside until B's has been
// written, and then refuse it.
func TestF11_CompareThenWriteInTwoStepsAcceptsAStaleWrite(t *testing.T) {
	claim(t, "F11")
	t.Run("the control that compares, then writes in a second step, accepts A's stale write", func(t *testing.T) {
		cs := newCriticalSection(t, "F11")
		il := interleave(cs, fencetest.NewCheckThenWrite(cs.trace()))
		evidence(t, "compare-then-write control: while B's token %v was held between its compare and its write, A's token %v was %v; B accepted=%v at commit %d; A's then accepted=%v at commit %d over %q; value %q, mark %v", il.tokB, il.tokA, il.a, il.b.Accepted, il.b.Commit, il.late.Accepted, il.late.Commit, il.late.Prev, il.value, il.mark)
		if !il.a.inside || !il.b.Accepted || !il.late.Accepted || il.late.Prev != "new-owner" || il.value != "stale-late" || il.mark != il.tokB {
			refuted(t, "F11", "A's write was %v; B accepted=%v, then A's stale write accepted=%v over %q, value %q, mark %v; want A inside beside B, B's write accepted and A's token %v accepted over it below the mark %v", il.a, il.b.Accepted, il.late.Accepted, il.late.Prev, il.value, il.mark, il.tokA, il.tokB)
		}
	})
	for _, kind := range resourceKinds {
		t.Run("the "+kind+" resource, under the same interleaving, refuses A's stale write", func(t *testing.T) {
			cs := newCriticalSection(t, "F11")
			il := interleave(cs, openResource(t, kind, fence.WithTrace(cs.trace())))
			evidence(t, "%s resource: while B's token %v was held at its decision, A's token %v was %v; B accepted=%v; A's then accepted=%v against mark %v; value %q, mark %v", kind, il.tokB, il.tokA, il.a, il.b.Accepted, il.late.Accepted, il.aDecision.Mark, il.value, il.mark)
			if il.a.inside || !il.b.Accepted || il.late.Accepted || il.value != "new-owner" {
				refuted(t, "F11", "on the %s resource: A's write was %v; B accepted=%v, A's stale write accepted=%v, value %q; want A kept out, B accepted, A refused, \"new-owner\"", kind, il.a, il.b.Accepted, il.late.Accepted, il.value)
			}
		})
	}
}

// TestF12_EqualTokenAppliesARetryTwice: fencing does not deduplicate (claim
// F12, §5 ¶5). A's request r-1 is applied, its answer is lost, and A sends
// it again with the same token: an equal token is accepted, so the request
// is applied a second time, as a second commit.
func TestF12_EqualTokenAppliesARetryTwice(t *testing.T) {
	claim(t, "F12")
	onEachResource(t, "applies a retried request twice when only the token is checked", func(t *testing.T, kind string, res fencedResource) {
		a := newActor(t, "A")
		tok := fence.Token{Seq: 3}
		first := writeAs(t, a, res, tok, "r-1: debit 10")
		a.info("the answer to r-1 is lost; A sends r-1 again with the same token")
		retry := writeAs(t, a, res, tok, "r-1: debit 10")
		evidence(t, "%s resource: request r-1 with token %v sent twice: accepted=%v at commit %d, then accepted=%v at commit %d", kind, tok, first.Accepted, first.Commit, retry.Accepted, retry.Commit)
		if !first.Accepted || !retry.Accepted || retry.Commit != first.Commit+1 {
			refuted(t, "F12", "the %s resource: r-1 sent twice gave accepted=%v (commit %d), accepted=%v (commit %d); want two commits", kind, first.Accepted, first.Commit, retry.Accepted, retry.Commit)
		}
	})
}

// TestF12_RequestIDInTheSameTransactionAppliesOnce: a request id looked up
// and recorded in the same transaction as the token check and the value
// applies a retried request once (claim F12, §5 ¶5), in memory and in the
// durable resource.
func TestF12_RequestIDInTheSameTransactionAppliesOnce(t *testing.T) {
	claim(t, "F12")
	onEachResource(t, "applies a retried request once when its id is checked in the same transaction", func(t *testing.T, kind string, res fencedResource) {
		a := newActor(t, "A")
		tok := fence.Token{Seq: 3}
		ctx := context.Background()
		a.invoke("write r-1 with token %v", tok)
		first, err := res.WriteOnce(ctx, tok, "r-1", "r-1: debit 10")
		if err != nil {
			notShown(t, "F12", "write r-1: %v", err)
		}
		a.ok("accepted=%v commit %d", first.Accepted, first.Commit)
		a.info("the answer to r-1 is lost; A sends r-1 again with the same token")
		a.invoke("write r-1 with token %v", tok)
		retry, err := res.WriteOnce(ctx, tok, "r-1", "r-1: debit 10")
		if err != nil {
			notShown(t, "F12", "retry r-1: %v", err)
		}
		a.ok("accepted=%v duplicate=%v commit %d", retry.Accepted, retry.Duplicate, retry.Commit)
		evidence(t, "%s resource: request r-1 with token %v sent twice with its id: accepted=%v at commit %d, then duplicate=%v, accepted=%v, still commit %d", kind, tok, first.Accepted, first.Commit, retry.Duplicate, retry.Accepted, retry.Commit)
		if !first.Accepted || retry.Accepted || !retry.Duplicate || retry.Commit != first.Commit {
			refuted(t, "F12", "the %s resource: r-1 sent twice with its id gave accepted=%v (commit %d), then accepted=%v duplicate=%v (commit %d); want one commit and the retry a duplicate", kind, first.Accepted, first.Commit, retry.Accepted, retry.Duplicate, retry.Commit)
		}
	})
}

// TestT1_MalformedSuffixesAreRejected: the token is the sequence suffix of a
// lock node's name; negative, overflowing, non-numeric, short (fewer than
// the 10 digits ZooKeeper writes) and missing suffixes are refused with a
// clear error (claim T1, §6 ¶1).
func TestT1_MalformedSuffixesAreRejected(t *testing.T) {
	claim(t, "T1")
	for name, want := range map[string]error{
		"g-lock--000000001":  fence.ErrNegativeSeq,
		"g-lock-2147483648":  fence.ErrSeqOverflow,
		"g-lock-99999999999": fence.ErrSeqOverflow,
		"g-lock-00000000x1":  fence.ErrNotNumeric,
		"g-lock-":            fence.ErrNoSuffix,
		"g-0000000001":       fence.ErrNoSuffix,
		"g-lock-7":           fence.ErrShortSeq,
		"g-lock-000000007":   fence.ErrShortSeq,
	} {
		_, err := fence.ParseSeq(name)
		t.Logf("%-20q -> %v", name, err)
		if !errors.Is(err, want) {
			refuted(t, "T1", "%q gave %v; want %v", name, err, want)
		}
	}
	v, err := fence.ParseSeq("g-lock-2147483647")
	evidence(t, "negative, overflowing, non-numeric, short and missing suffixes rejected with their errors; the largest suffix parses to %d (%v)", v, err)
	if err != nil || v != 2147483647 {
		refuted(t, "T1", "the largest suffix gave %d, %v; want 2147483647", v, err)
	}
}

// TestT2_RecreatedParentRestartsNumbering: deleting and recreating the lock
// parent restarts the sequence at 0, so a resource that kept the old
// domain's mark rejects every new holder; a token that carries the parent's
// czxid as its domain, compared first, is accepted (claim T2, §6 ¶2).
//
// The two czxids a run gets are whatever the server counted to, most often
// of one width, where comparing domains as numbers and as text agree. So
// the domain comparison is proven first with domains the test chooses,
// where the two disagree or where int64 ends: 9 then 10, math.MaxInt64-1
// then math.MaxInt64, -1 then 0 and math.MinInt64 then math.MinInt64+1
// (fence.Token's doc puts no bound on Domain, an int64: a generation the
// operator assigns may start anywhere).
func TestT2_RecreatedParentRestartsNumbering(t *testing.T) {
	claim(t, "T2")
	for _, d := range []struct {
		name   string
		lo, hi int64
	}{
		{"9 before 10", 9, 10},
		{"math.MaxInt64-1 before math.MaxInt64", math.MaxInt64 - 1, math.MaxInt64},
		{"-1 before 0", -1, 0},
		{"math.MinInt64 before math.MinInt64+1", math.MinInt64, math.MinInt64 + 1},
	} {
		onEachResource(t, "orders domain "+d.name+" whatever the sequence", func(t *testing.T, kind string, res fencedResource) {
			// The old domain's mark has the largest sequence a lock node
			// can carry, the new holder the first.
			old, next := fence.Token{Domain: d.lo, Seq: math.MaxInt32}, fence.Token{Domain: d.hi, Seq: 0}
			A, B := newActor(t, "A"), newActor(t, "B")
			writeAs(t, A, res, old, "old-domain")
			nb := writeAs(t, B, res, next, "new-domain")
			late := writeAs(t, A, res, old, "old-domain-late")
			value, mark, _ := readResource(t, res)
			evidence(t, "%s resource: after mark %v, the new domain's %v accepted=%v; the old domain's %v then accepted=%v; value %q, mark %v", kind, old, next, nb.Accepted, old, late.Accepted, value, mark)
			if !nb.Accepted || late.Accepted || value != "new-domain" || mark != next {
				refuted(t, "T2", "the %s resource, domain %s: got the new holder %v accepted=%v over mark %v, then the old %v accepted=%v, value %q, mark %v; want the new accepted, the old refused, \"new-domain\" with mark %v", kind, d.name, next, nb.Accepted, old, old, late.Accepted, value, mark, next)
			}
		})
	}
	ctx := context.Background()
	s := sharedServer(t)
	A := zkclient.Connect(t, "A", []string{s.Client})
	root := testRoot(t, A)
	parent := root + "/locks"
	acquireSeqs := func(n int) []fence.Token {
		if _, err := A.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		l := lock.New(A.Conn, parent, lock.WithCzxidDomain())
		var out []fence.Token
		for i := 0; i < n; i++ {
			h, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h.Token)
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	oldDomain := acquireSeqs(3)
	if err := A.Delete(parent, -1); err != nil {
		t.Fatal(err)
	}
	t.Logf("parent %s deleted and recreated", parent)
	newDomain := acquireSeqs(1)
	evidence(t, "tokens before the parent was recreated: %v; after: %v", oldDomain, newDomain)
	if newDomain[0].Seq != 0 {
		refutedNow(t, "T2", "the recreated parent numbered the first candidate %d; want 0", newDomain[0].Seq)
	}
	oldMark, newHolder := oldDomain[2], newDomain[0]
	onEachResource(t, "that kept the old domain's mark and compares sequences only rejects every new holder", func(t *testing.T, kind string, res fencedResource) {
		writeAs(t, newActor(t, "A"), res, seqOnly(oldMark), "old-domain")
		r := writeAs(t, newActor(t, "B"), res, seqOnly(newHolder), "new-domain")
		evidence(t, "%s resource, sequences only: new holder seq %d after the old mark seq %d accepted=%v", kind, newHolder.Seq, oldMark.Seq, r.Accepted)
		if r.Accepted {
			refuted(t, "T2", "the %s resource: new holder seq %d accepted over old mark seq %d; want rejected", kind, newHolder.Seq, oldMark.Seq)
		}
	})
	onEachResource(t, "that compares the parent's czxid first accepts the new domain", func(t *testing.T, kind string, res fencedResource) {
		writeAs(t, newActor(t, "A"), res, oldMark, "old-domain")
		r := writeAs(t, newActor(t, "B"), res, newHolder, "new-domain")
		evidence(t, "%s resource, czxid first: new holder %v after the old mark %v accepted=%v", kind, newHolder, oldMark, r.Accepted)
		if newHolder.Domain <= oldMark.Domain || !r.Accepted {
			refuted(t, "T2", "the %s resource: new token %v vs old mark %v accepted=%v; want a larger domain, accepted", kind, newHolder, oldMark, r.Accepted)
		}
	})
}

// seqOnly is a token as a resource that knows no domain sees it.
func seqOnly(tok fence.Token) fence.Token { return fence.Token{Seq: tok.Seq} }

// TestT3_CzxidIsNotAUniqueToken: a node's creation zxid cannot serve as a
// unique token, because every create inside one multi transaction gets the
// same czxid (claim T3, §6 ¶3). Two creates in one multi,
// then a third on its own: the first two share czxid, the third differs.
func TestT3_CzxidIsNotAUniqueToken(t *testing.T) {
	s := sharedServer(t)
	claim(t, "T3")
	a := zkclient.Connect(t, "A", []string{s.Client})
	root := testRoot(t, a)
	pa := newActor(t, "A")
	acl := zk.WorldACL(zk.PermAll)
	pa.invoke("multi [create %s/one, create %s/two]", root, root)
	if _, err := a.Multi(
		&zk.CreateRequest{Path: root + "/one", Acl: acl},
		&zk.CreateRequest{Path: root + "/two", Acl: acl},
	); err != nil {
		t.Fatalf("multi: %v", err)
	}
	pa.ok("")
	pa.invoke("create %s/three", root)
	if _, err := a.Create(root+"/three", nil, 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	pa.ok("")
	czxid := map[string]int64{}
	for _, n := range []string{"one", "two", "three"} {
		_, st, err := a.Get(root + "/" + n)
		if err != nil {
			t.Fatalf("get %s: %v", n, err)
		}
		czxid[n] = st.Czxid
	}
	evidence(t, "czxid of the two creates in one multi: 0x%x and 0x%x; of the create on its own: 0x%x", czxid["one"], czxid["two"], czxid["three"])
	if czxid["one"] != czxid["two"] {
		refuted(t, "T3", "the two creates of one multi got czxid 0x%x and 0x%x; want equal", czxid["one"], czxid["two"])
	}
	if czxid["three"] == czxid["one"] {
		brokenCheck(t, "T3", "a separate create got the multi's czxid 0x%x; want a new one", czxid["three"])
	}
}

// TestT4_ResetMarkLetsTheOldHolderIn: clearing the high-water mark is not a
// domain rule (claim T4, §6 ¶2). Real acquisitions on a real server: two
// holders come and go, A holds with token 2 and writes; A's worker keeps
// the token. The operator deletes the lock parent (A's node with it) and
// creates it again; B holds with token 0 of the new parent. A resource
// that compares sequences only and clears its mark when the parent is
// recreated accepts B, and then A's late write with token 2 again, over
// B's. A resource that compares the parent's czxid (lock.WithCzxidDomain)
// first, and clears nothing, accepts B and refuses A.
func TestT4_ResetMarkLetsTheOldHolderIn(t *testing.T) {
	claim(t, "T4")
	s := sharedServer(t)
	O := zkclient.Connect(t, "O", []string{s.Client})
	oa := newActor(t, "O")
	parent := testRoot(t, O) + "/locks"
	createParent := func() {
		oa.invoke("create %s", parent)
		if _, err := O.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", parent, err)
		}
		_, st := statOf(t, O, parent)
		oa.ok("czxid 0x%x", st.Czxid)
	}
	domainOpts := joinOpts{lock: []lock.Option{lock.WithCzxidDomain()}}
	phase(t, "the first parent: two holders come and go, then A holds")
	createParent()
	a := join(t, "A", []string{s.Client}, parent, domainOpts)
	for range 2 {
		if err := a.acquire().Release(lockCtx(t)); err != nil {
			t.Fatalf("A: release: %v", err)
		}
	}
	tokA := a.acquire().Token
	a.a.info("A's worker keeps token %v and pauses", tokA)
	phase(t, "the operator deletes the lock parent, A's node with it, and creates it again")
	oa.invoke("delete %s and everything below it", parent)
	if err := deleteTree(O.Conn, parent); err != nil {
		t.Fatalf("delete %s: %v", parent, err)
	}
	oa.ok("")
	createParent()
	b := join(t, "B", []string{s.Client}, parent, domainOpts)
	hb := b.acquire()
	tokB := hb.Token
	evidence(t, "A held %v under the first parent; B holds %v under the recreated one", tokA, tokB)
	if tokB.Seq != 0 || tokA.Seq != 2 || tokB.Domain <= tokA.Domain {
		notShown(t, "T4", "A %v, B %v; want A sequence 2, B sequence 0 and a larger czxid for B", tokA, tokB)
	}
	onEachResource(t, "that clears its mark when the parent is recreated accepts the old holder's late write again", func(t *testing.T, kind string, res fencedResource) {
		pa, pb := newActor(t, "A"), newActor(t, "B")
		writeAs(t, pa, res, seqOnly(tokA), "A-first")
		oa := newActor(t, "O")
		oa.invoke("clear the resource's mark: the parent was recreated")
		if err := clearMark(context.Background(), res); err != nil {
			t.Fatalf("clear the mark: %v", err)
		}
		oa.ok("")
		bw := writeAs(t, pb, res, seqOnly(tokB), "new-owner")
		late := writeAs(t, pa, res, seqOnly(tokA), "stale-late")
		v, _, _ := readResource(t, res)
		evidence(t, "%s resource, mark cleared, sequences only: B's seq %d accepted=%v; then A's late seq %d accepted=%v over %q; value %q", kind, tokB.Seq, bw.Accepted, tokA.Seq, late.Accepted, late.Prev, v)
		if !bw.Accepted || !late.Accepted || v != "stale-late" {
			refuted(t, "T4", "the %s resource: after clearing the mark B accepted=%v, A's late write accepted=%v, value %q; want both accepted and A's \"stale-late\" over B's write", kind, bw.Accepted, late.Accepted, v)
		}
	})
	onEachResource(t, "that compares the parent's czxid first refuses the old holder's late write", func(t *testing.T, kind string, res fencedResource) {
		pa, pb := newActor(t, "A"), newActor(t, "B")
		writeAs(t, pa, res, tokA, "A-first")
		bw := writeAs(t, pb, res, tokB, "new-owner")
		late := writeAs(t, pa, res, tokA, "stale-late")
		v, _, _ := readResource(t, res)
		evidence(t, "%s resource, czxid first, nothing cleared: B's %v accepted=%v; then A's late %v accepted=%v; value %q", kind, tokB, bw.Accepted, tokA, late.Accepted, v)
		if !bw.Accepted || late.Accepted || v != "new-owner" {
			refuted(t, "T4", "the %s resource: B's %v accepted=%v, A's late %v accepted=%v, value %q; want B accepted, A refused, \"new-owner\"", kind, tokB, bw.Accepted, tokA, late.Accepted, v)
		}
	})
	phase(t, "B releases; A's Locker, made under the first parent, acquires under the new one")
	if err := hb.Release(lockCtx(t)); err != nil {
		t.Fatalf("B: release: %v", err)
	}
	again := a.acquire().Token
	evidence(t, "A's Locker, made under the first parent, now holds %v; B held %v", again, tokB)
	if again.Domain != tokB.Domain {
		refuted(t, "T4", "A's long-lived Locker holds %v under the recreated parent; want the new parent's czxid 0x%x as its domain", again, tokB.Domain)
	}
}

// t5Parent is T5's lock parent, the same path in both incarnations.
const t5Parent = "/locks"

// holdOnFreshServer is what one incarnation of T5's server goes through,
// in the same order each time: an observer's session, a holder's session,
// the lock parent, the holder's acquisition with the parent's czxid as its
// domain.
func holdOnFreshServer(t *testing.T, s *zkserver.Server, observer, holder string) (*zkclient.Client, *contender, fence.Token) {
	t.Helper()
	o := zkclient.Connect(t, observer, []string{s.Client})
	p := join(t, holder, []string{s.Client}, t5Parent, joinOpts{lock: []lock.Option{lock.WithCzxidDomain()}})
	oa := newActor(t, observer)
	oa.invoke("create %s", t5Parent)
	if _, err := o.Create(t5Parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		notShown(t, "T5", "%s: create %s: got %v; want it created on a server that starts empty", observer, t5Parent, err)
	}
	_, st := statOf(t, o, t5Parent)
	oa.ok("czxid 0x%x", st.Czxid)
	tok := p.acquire().Token
	p.a.ok("holds with token %v (its domain is the parent's czxid)", tok)
	return o, p, tok
}

// serverZxid is the last zxid the server reports.
func serverZxid(t *testing.T, s *zkserver.Server) int64 {
	t.Helper()
	st, err := s.Srvr()
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	return st.Zxid
}

// TestT5_WipedEnsembleRestartsNumberingAndZxids: replacing the ensemble
// changes the domain (claim T5, §6 ¶3; beyond the article). A holds under
// /locks with the parent's czxid as its domain, and its worker keeps the
// token. The server's data is wiped and it starts again, as a replaced
// ensemble would; its zxids count from the start, the same steps create
// /locks again, and B holds there. The parent's czxid repeats or goes
// back, so a resource that trusts it as the domain cannot order A and B:
// it refuses B, or it takes A's late write after B's. What survives is a
// generation outside ZooKeeper's numbering, assigned by the operator and
// raised at every change of the domain (here: per incarnation), compared
// first.
func TestT5_WipedEnsembleRestartsNumberingAndZxids(t *testing.T) {
	parallel(t)
	zkserver.RequireFaults(t)
	claim(t, "T5")
	s := zkserver.Start(t)
	phase(t, "the first incarnation: A holds under %s; its worker keeps the token", t5Parent)
	o1, a, tokA := holdOnFreshServer(t, s, "O1", "A")
	phase(t, "the old ensemble's clients go with it; the server's data is wiped and it starts again")
	for _, c := range []*zkclient.Client{a.c, o1} {
		if err := c.CloseWait(within); err != nil {
			t.Fatalf("close %s: %v", c.Name, err)
		}
	}
	before := serverZxid(t, s)
	s.RestartWiped(t)
	after := serverZxid(t, s)
	t.Logf("server zxid before the wipe 0x%x, after it 0x%x", before, after)
	phase(t, "the second incarnation: the same steps, and B holds under %s", t5Parent)
	_, _, tokB := holdOnFreshServer(t, s, "O2", "B")
	evidence(t, "server zxid 0x%x before the wipe, 0x%x after it; the parent's czxid 0x%x, then 0x%x; A's token %v, B's token %v", before, after, tokA.Domain, tokB.Domain, tokA, tokB)
	if after >= before || tokB.Domain > tokA.Domain || tokB.Seq != 0 {
		refutedNow(t, "T5", "zxid 0x%x after the wipe (0x%x before), czxid 0x%x after (0x%x before), B's sequence %d; want zxids from the start, a czxid that repeats or goes back, sequence 0", after, before, tokB.Domain, tokA.Domain, tokB.Seq)
	}
	onEachResource(t, "that trusts the parent's czxid as the domain no longer orders the old holder before the new", func(t *testing.T, kind string, res fencedResource) {
		bw, late, v := t5Writes(t, res, tokA, tokB)
		evidence(t, "%s resource trusting czxid: B's %v accepted=%v; A's late %v accepted=%v; value %q", kind, tokB, bw.Accepted, tokA, late.Accepted, v)
		if bw.Accepted && !late.Accepted {
			refuted(t, "T5", "the %s resource: with czxid 0x%x after the wipe and 0x%x before, B's %v was accepted and A's late %v refused; want the czxid domain to fail one of them", kind, tokB.Domain, tokA.Domain, tokB, tokA)
		}
	})
	onEachResource(t, "that compares a generation the operator assigns per incarnation first refuses the old holder", func(t *testing.T, kind string, res fencedResource) {
		oldTok, newTok := fence.Token{Domain: 1, Seq: tokA.Seq}, fence.Token{Domain: 2, Seq: tokB.Seq}
		bw, late, v := t5Writes(t, res, oldTok, newTok)
		evidence(t, "%s resource, operator's generation first: B's %v accepted=%v; A's late %v accepted=%v; value %q", kind, newTok, bw.Accepted, oldTok, late.Accepted, v)
		if !bw.Accepted || late.Accepted || v != "new-owner" {
			refuted(t, "T5", "the %s resource: B's %v accepted=%v, A's late %v accepted=%v, value %q; want B accepted, A refused, \"new-owner\"", kind, newTok, bw.Accepted, oldTok, late.Accepted, v)
		}
	})
}

// t5Writes: A writes with its token while it holds, B with its own after
// the wipe, then A's worker writes late.
func t5Writes(t *testing.T, res fence.Resource, tokA, tokB fence.Token) (bWrite, late fence.Result, value string) {
	t.Helper()
	pa, pb := newActor(t, "A"), newActor(t, "B")
	writeAs(t, pa, res, tokA, "A-first")
	bWrite = writeAs(t, pb, res, tokB, "new-owner")
	late = writeAs(t, pa, res, tokA, "stale-late")
	value, _, _ = readResource(t, res)
	return bWrite, late, value
}

// Example_s8bX2ExpiryIsNotRejection is exercise 2 of the article as it is put
// (claim X2, §8 ¶4). A holds token 0 and has written with it, so the
// resource's high-water mark is A's token 0. Before its next write A asks
// ZooKeeper whether it still holds: its node exists. A's worker then
// pauses; meanwhile A's session expires and B acquires token 1. A's write
// arrives before any of B's: the resource, whose mark is still A's token
// 0, accepts it over A's own earlier value. Only once B's token 1 has been
// accepted is token 0 refused. Neither the mark alone nor the question to
// ZooKeeper stopped the late write; the guarantee begins when the resource
// accepts the new token.
func Example_s8bX2ExpiryIsNotRejection() {
	sc := exampleScope()
	defer endExample(sc)
	claim(sc, "X2")
	cast := newFencingCast(sc) // O observes; A talks through a proxy that can cut it off; B talks directly
	res := fence.NewMemory()

	holdA := cast.a.acquire()
	writeAs(sc, cast.a.a, res, holdA.Token, "A-first")
	_, first, _ := readResource(sc, res)
	fmt.Printf("A holds token %d and has written with it; the resource's mark is token %d\n", holdA.Token.Seq, first.Seq)

	worker := startAskingWorker(sc, cast.a, holdA.Path, res, holdA.Token, "A-after-check")
	fmt.Println("A asks ZooKeeper whether its lock node exists and is its own:", worker.asked(sc))

	cast.expireA(sc, holdA.Path)
	holdB := cast.b.acquire()
	fmt.Printf("A pauses; its session expires; B holds token %d\n", holdB.Token.Seq)
	value, mark, _ := readResource(sc, res)
	fmt.Printf("the resource still holds %q with mark token %d\n", value, mark.Seq)

	late := worker.resume(sc)
	fmt.Printf("A resumes: its write with token %d is accepted: %v\n", holdA.Token.Seq, late.Accepted)

	b := writeAs(sc, cast.b.a, res, holdB.Token, "new-owner")
	fmt.Printf("B's write with token %d: accepted %v\n", holdB.Token.Seq, b.Accepted)
	again := writeAs(sc, cast.a.a, res, holdA.Token, "A-again")
	fmt.Printf("A's next write with token %d: accepted %v\n", holdA.Token.Seq, again.Accepted)
	evidence(sc, "mark %v before the expiry; A's check answered that it holds; after B acquired %v the resource still held %q with mark %v, and A's write with %v was accepted=%v over %q; after B's write accepted=%v, A's token refused: %v", first, holdB.Token, value, mark, holdA.Token, late.Accepted, late.Prev, b.Accepted, !again.Accepted)
	// Output:
	// A holds token 0 and has written with it; the resource's mark is token 0
	// A asks ZooKeeper whether its lock node exists and is its own: true
	// A pauses; its session expires; B holds token 1
	// the resource still holds "A-first" with mark token 0
	// A resumes: its write with token 0 is accepted: true
	// B's write with token 1: accepted true
	// A's next write with token 0: accepted false
}

// Example_s5aFencingSequence walks the article's fencing sequence diagram
// (claims F1, F2, F3 and F4, §5; the diagram is ¶3), with a fenced resource and an unfenced
// one side by side: every write goes to both.
//
// A holds token 0 and writes with it; its worker keeps the token and
// pauses. A's traffic is blackholed, never closed: the server expires A's
// session on its own clock and deletes A's node; B, waiting on that node,
// is told, lists again and holds token 1, while A's own client has seen
// nothing. Until token 1 reaches the resource, the fenced mark is A's own
// token, and token 0 still writes. B writes "new-owner"; A's worker
// resumes and writes "stale-late" with token 0: the fenced resource refuses
// it and keeps "new-owner", the unfenced one takes it.
// TestF1toF3_FencedResourceRejectsTheLateHolder and
// TestF4_UnfencedResourceTakesTheLateWrite run the same steps and assert
// on them.
func Example_s5aFencingSequence() {
	sc := exampleScope()
	defer endExample(sc)
	for _, id := range []string{"F1", "F2", "F3", "F4"} {
		claim(sc, id)
	}
	cast := newFencingCast(sc) // O observes; A reaches the server through a proxy that can cut it off; B directly
	A, B := cast.a, cast.b
	fenced, unfenced := fence.NewMemory(), fencetest.NewUnfenced()

	heldA := A.acquire()
	first := writeEach(sc, A.a, heldA.Token, "A-first", fenced, unfenced)
	fmt.Printf("A holds token %v; A-first accepted: fenced %v, unfenced %v\n", heldA.Token, first[0].Accepted, first[1].Accepted)
	worker := parkWorker(sc, heldA.Token, "stale-late", fenced, unfenced)

	waitingB := B.acquireInBackground().waitsOn(nodeOf(heldA))
	heldB := cast.heldOnceAExpires(sc, "F1", waitingB)
	nodeA, _, err := cast.O.Exists(heldA.Path)
	if err != nil {
		sc.Fatalf("O: exists: %v", err)
	}
	fmt.Printf("A blackholed: A's node exists %v; A's client saw Expired %v; B holds token %v\n", nodeA, A.c.Seen(zk.StateExpired), heldB.Token)

	_, mark, _ := readResource(sc, fenced)
	window := writeEach(sc, A.a, heldA.Token, "A-in-window", fenced, unfenced)
	fmt.Printf("fenced mark %v before B writes: A's token %v accepted %v\n", mark, heldA.Token, window[0].Accepted)

	byB := writeEach(sc, B.a, heldB.Token, "new-owner", fenced, unfenced)
	fmt.Printf("B writes new-owner with %v: fenced accepted %v (mark %v), unfenced accepted %v\n", heldB.Token, byB[0].Accepted, byB[0].Mark, byB[1].Accepted)

	late := worker.resume(sc)
	fmt.Printf("A's worker resumes, stale-late with %v: fenced accepted %v, unfenced accepted %v\n", heldA.Token, late[0].Accepted, late[1].Accepted)
	keptF, _, _ := readResource(sc, fenced)
	keptU, _, _ := readResource(sc, unfenced)
	fmt.Printf("values: fenced %q, unfenced %q\n", keptF, keptU)
	// Output:
	// A holds token g0/0; A-first accepted: fenced true, unfenced true
	// A blackholed: A's node exists false; A's client saw Expired false; B holds token g0/1
	// fenced mark g0/0 before B writes: A's token g0/0 accepted true
	// B writes new-owner with g0/1: fenced accepted true (mark g0/1), unfenced accepted true
	// A's worker resumes, stale-late with g0/0: fenced accepted false, unfenced accepted true
	// values: fenced "new-owner", unfenced "stale-late"
}

// Example_s5bCriticalSection walks the article's critical-section flowchart
// (claims F6 and F11, §5; the flowchart is ¶5): a write with a token of the lock domain enters
// the resource's critical section; there its token is compared with the
// mark; a token below it is refused and changes nothing; any other is
// written and raises the mark; then the section ends.
//
// A and B take their tokens from the lock: A holds first (token 0), writes
// and releases; B holds (token 1). B's write is held inside the section at
// its decision (fence.Trace.Decided) while A's late write with token 0
// arrives. The fenced resource keeps A parked outside (its goroutine, read
// from the Go runtime, waits for the section's mutex); B's write ends the
// section; A's compare then finds B's token and refuses. The control that
// compares and writes in two steps lets A's compare in beside B's, and A's
// stale write lands over B's. TestF6_CompareAndWriteIsOneAtomicStep and
// TestF11_CompareThenWriteInTwoStepsAcceptsAStaleWrite run the same
// interleaving on the memory and the durable resource and assert on it.
func Example_s5bCriticalSection() {
	sc := exampleScope()
	defer endExample(sc)
	claim(sc, "F6")
	claim(sc, "F11")
	room := exampleRoom(sc) // the shared server, a lock parent, an observer
	A, B := room.join("A", joinOpts{}), room.join("B", joinOpts{})
	heldA := A.acquire()
	if err := heldA.Release(room.ctx); err != nil {
		sc.Fatalf("A: release: %v", err)
	}
	heldB := B.acquire()
	fmt.Printf("A held token %v and released; B holds token %v\n", heldA.Token, heldB.Token)

	section := newCriticalSection(sc, "F6")
	fenced := fence.NewMemory(fence.WithTrace(section.trace()))
	control := fencetest.NewCheckThenWrite(section.trace())
	for _, r := range []struct {
		name string
		res  fence.Resource
	}{{"fenced", fenced}, {"control", control}} {
		writeAs(sc, A.a, r.res, heldA.Token, "A-first")
		byB := section.write(r.res, B.a, heldB.Token, "new-owner")
		inB := byB.entered()
		fmt.Printf("%s: B inside; token %v below mark %v? %v\n", r.name, inB.Token, inB.Mark, !inB.Admitted)
		lateA := section.write(r.res, A.a, heldA.Token, "stale-late")
		fmt.Printf("%s: A's write meanwhile: %v\n", r.name, lateA.whereabouts(byB))
		b := byB.finish(lateA)
		fmt.Printf("%s: B's section ends; accepted %v, mark %v\n", r.name, b.Accepted, b.Mark)
		a := lateA.finish(nil)
		value, _, _ := readResource(sc, r.res)
		fmt.Printf("%s: A's token %v below mark %v? %v; accepted %v; value %q\n", r.name, lateA.decision.Token, lateA.decision.Mark, !lateA.decision.Admitted, a.Accepted, value)
	}
	// Output:
	// A held token g0/0 and released; B holds token g0/1
	// fenced: B inside; token g0/1 below mark g0/0? false
	// fenced: A's write meanwhile: parked in sync.(*Mutex).Lock in fence.(*Memory).Write
	// fenced: B's section ends; accepted true, mark g0/1
	// fenced: A's token g0/0 below mark g0/1? true; accepted false; value "new-owner"
	// control: B inside; token g0/1 below mark g0/0? false
	// control: A's write meanwhile: inside too: token g0/0 against mark g0/0, admitted: true
	// control: B's section ends; accepted true, mark g0/1
	// control: A's token g0/0 below mark g0/0? false; accepted true; value "stale-late"
}

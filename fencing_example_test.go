package zk19_test

// The fencing claims (F1–F10, article §5 "资源接受新 token 后拒绝旧写"), the
// token domains (T1–T3, §6 "顺序号只在明确的锁域内比较") and exercise 2 (X2).

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/fence"
	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// fencingStory is the article's §5 story (claims F1–F4, F8, F10), run
// against one resource.
type fencingStory struct {
	tokenA, tokenB     fence.Token
	windowWrite        fence.Result // A's write after its expiry, before B's write (F2)
	bWrite, lateWrite  fence.Result // B's "new-owner"; A's "stale-late" after the gate opens
	final              string
	aSawExpiredAtB     bool  // A had seen Expired when B acquired (F10)
	aExpiredAfterHeal  bool  // A saw Expired once it could reach the server again
	aLostAtB           bool  // A's Held.Lost() had fired when B acquired
	aLostAfterHeal     error // A's Release once its hold reported itself lost after the heal (nil: it did not)
	deletionBeforeHeal bool
	elapsed            time.Duration
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
	s := zkserver.Start(t, zkserver.WithTickTime(expiryTick))
	fc := &fencingCast{srv: s}
	fc.O = zkclient.Connect(t, "O", []string{s.Client})
	fc.root = testRoot(t, fc.O)
	fc.proxy = clientProxy(t, "A-proxy", s)
	fc.a = join(t, "A", []string{fc.proxy.Addr()}, fc.root, joinOpts{client: []zkclient.Option{zkclient.WithSessionTimeout(expirySessionTimeout)}})
	fc.b = join(t, "B", []string{s.Client}, fc.root, joinOpts{})
	return fc
}

// runFencingStory: A holds with token 0 and its worker parks on a gate
// before writing; A's session expires naturally behind a blackholed proxy;
// B, waiting on A's node, learns of the deletion and holds with token 1; in
// that window A's token still writes; B writes "new-owner"; the gate opens
// and A's worker writes "stale-late" with token 0.
func runFencingStory(t zkserver.TB, res fence.Resource) fencingStory {
	t.Helper()
	ctx := context.Background()
	start0 := time.Now()
	var st fencingStory
	fc := newFencingCast(t)
	phase(t, "A holds; its worker takes the token and parks on a gate")
	hA, err := fc.a.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("A acquire: %v", err)
	}
	st.tokenA = hA.Token
	lostA := hA.Lost()
	waitWatching(t, fc.srv, fc.root, hA.Path, fc.a.c.SessionHex())
	fc.a.a.info("hold armed: watching its own node %s", path.Base(hA.Path))
	late := parkWorker(t, res, st.tokenA)

	phase(t, "B waits on A's node")
	pB := start(t, fc.b)
	if err := expectWaiting(fc.b, path.Base(hA.Path)); err != nil {
		t.Fatalf("%v", err)
	}

	phase(t, "A's connection is blackholed: no forced expiry, no close; the session runs out")
	mark := fc.a.c.Mark()
	fc.proxy.Blackhole(faultproxy.Both)
	t.Cleanup(fc.proxy.Heal)
	select {
	case <-pB.done:
	case <-time.After(10 * expirySessionTimeout):
		t.Fatalf("F1: B did not acquire within %v of A's blackhole", 10*expirySessionTimeout)
	}
	if pB.err != nil {
		t.Fatalf("F1: B acquire: %v", pB.err)
	}
	st.tokenB = pB.held.Token
	fc.b.a.ok("holds with token %v after the server deleted A's node", st.tokenB)
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

	storyWrites(t, res, &st, late)

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
	gate chan struct{}
	res  chan fence.Result
	err  chan error
}

// parkWorker starts A's worker: it waits on a gate, then writes
// "stale-late" with tok. Cleanup opens the gate and waits for it.
func parkWorker(t zkserver.TB, res fence.Resource, tok fence.Token) *lateWorker {
	w := &lateWorker{gate: make(chan struct{}), res: make(chan fence.Result, 1), err: make(chan error, 1)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-w.gate
		r, err := res.Write(context.Background(), tok, "stale-late")
		w.res <- r
		w.err <- err
	}()
	t.Cleanup(func() {
		select {
		case <-w.gate:
		default:
			close(w.gate)
		}
		wg.Wait()
	})
	newActor(t, "A").info("worker parked with token %v", tok)
	return w
}

// storyWrites: A's write in the window, B's write, then the gate opens and
// A's worker writes late.
func storyWrites(t zkserver.TB, res fence.Resource, st *fencingStory, late *lateWorker) {
	t.Helper()
	ctx := context.Background()
	pa, pb := newActor(t, "A"), newActor(t, "B")
	var err error
	phase(t, "the window: A has expired and B has not written yet")
	pa.invoke("write token %v %q", st.tokenA, "A-in-window")
	if st.windowWrite, err = res.Write(ctx, st.tokenA, "A-in-window"); err != nil {
		t.Fatalf("write: %v", err)
	}
	pa.ok("accepted=%v mark=%v", st.windowWrite.Accepted, st.windowWrite.Mark)

	phase(t, "B writes with its token")
	pb.invoke("write token %v %q", st.tokenB, "new-owner")
	if st.bWrite, err = res.Write(ctx, st.tokenB, "new-owner"); err != nil {
		t.Fatalf("write: %v", err)
	}
	pb.ok("accepted=%v mark=%v", st.bWrite.Accepted, st.bWrite.Mark)

	phase(t, "the gate opens: A's worker writes with its old token")
	pa.invoke("write token %v %q (late)", st.tokenA, "stale-late")
	close(late.gate)
	select {
	case st.lateWrite = <-late.res:
		if err := <-late.err; err != nil {
			t.Fatalf("late write: %v", err)
		}
	case <-time.After(within):
		t.Fatalf("A's worker did not write within %v", within)
	}
	if st.lateWrite.Accepted {
		pa.ok("accepted=true mark=%v", st.lateWrite.Mark)
	} else {
		pa.fail("rejected: mark %v > token %v", st.lateWrite.Mark, st.tokenA)
	}
	if st.final, _, _, err = res.Read(ctx); err != nil {
		t.Fatalf("read: %v", err)
	}
	t.Logf("resource value: %q", st.final)
}

// TestF1toF3_FencedResourceRejectsTheLateHolder runs the article's fencing
// story against the in-memory fenced resource and the durable SQLite one
// (claims F1 §5 ¶1, F2 §5 ¶6, F3 §5 ¶2). F1: A held token 0; its session
// expired naturally (blackholed, never closed or force-expired); B learned
// it from the deletion and held token 1. F2: in the window before B's write,
// token 0 was still accepted. F3: after B wrote "new-owner" with token 1,
// A's late "stale-late" with token 0 was rejected.
func TestF1toF3_FencedResourceRejectsTheLateHolder(t *testing.T) {
	zkserver.RequireFaults(t)
	for _, id := range []string{"F1", "F2", "F3"} {
		claim(t, id)
	}
	for _, kind := range []string{"memory", "durable"} {
		t.Run("on the "+kind+" resource", func(t *testing.T) {
			var res fence.Resource = fence.NewMemory()
			if kind == "durable" {
				d, err := fence.OpenDurable(context.Background(), filepath.Join(t.TempDir(), "resource.db"))
				if err != nil {
					t.Fatal(err)
				}
				res = d
			}
			t.Cleanup(func() { _ = res.Close() })
			st := runFencingStory(t, res)
			evidence(t, "%s resource: A token %v, B token %v; A's node deleted before the heal: %v; window write accepted=%v; B's write accepted=%v; late write accepted=%v; value %q", kind, st.tokenA, st.tokenB, st.deletionBeforeHeal, st.windowWrite.Accepted, st.bWrite.Accepted, st.lateWrite.Accepted, st.final)
			if st.tokenA.Seq != 0 || st.tokenB.Seq != 1 {
				t.Errorf("F1 violated: tokens A=%v B=%v; want sequence 0 and 1", st.tokenA, st.tokenB)
			}
			if !st.deletionBeforeHeal {
				t.Errorf("F1 violated: A's node was not deleted by the server while A was blackholed")
			}
			if !st.windowWrite.Accepted {
				t.Errorf("F2 violated: in the window A's token %v was rejected (mark %v); want accepted: the mark cannot know of B yet", st.tokenA, st.windowWrite.Mark)
			}
			if !st.bWrite.Accepted {
				t.Errorf("F3 violated: B's write with token %v was rejected", st.tokenB)
			}
			if st.lateWrite.Accepted || st.final != "new-owner" {
				t.Errorf("F3 violated: A's late write accepted=%v, final value %q; want rejected and \"new-owner\"", st.lateWrite.Accepted, st.final)
			}
			t.Logf("F1 scenario wall time: %v", st.elapsed.Round(time.Millisecond))
		})
	}
}

// TestF4_UnfencedResourceTakesTheLateWrite is the control (claim F4, §5 ¶4):
// the same story against a resource that checks nothing ends with A's
// "stale-late" overwriting B's "new-owner".
func TestF4_UnfencedResourceTakesTheLateWrite(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F4")
	st := runFencingStory(t, fence.NewUnfenced())
	evidence(t, "unfenced resource: A's late write with token %v accepted=%v; value %q", st.tokenA, st.lateWrite.Accepted, st.final)
	if !st.lateWrite.Accepted || st.final != "stale-late" {
		t.Errorf("F4 violated: unfenced late write accepted=%v, final %q; want accepted and \"stale-late\"", st.lateWrite.Accepted, st.final)
	}
}

// TestF5_CheckThenWriteLosesTheRace: asking ZooKeeper "do I still hold the
// lock?" and then writing is not fencing (claim F5, §5 ¶3): A checks (yes), is
// paused, expires, B acquires and writes, and A's write still lands on an
// unfenced resource.
func TestF5_CheckThenWriteLosesTheRace(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F5")
	ctx := context.Background()
	fc := newFencingCast(t)
	res := fence.NewUnfenced()
	hA, err := fc.a.l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fc.a.a.invoke("exists %s (do I still hold it?)", hA.Path)
	still, _, err := fc.a.c.Exists(hA.Path)
	if err != nil || !still {
		t.Fatalf("A's check: %v %v", still, err)
	}
	fc.a.a.ok("true; A is paused before its write")
	_, _, gone, err := fc.O.ExistsW(hA.Path)
	if err != nil {
		t.Fatal(err)
	}
	fc.proxy.Blackhole(faultproxy.Both)
	t.Cleanup(fc.proxy.Heal)
	select {
	case <-gone:
		t.Logf("O: A's node deleted by the server (session expired)")
	case <-time.After(10 * expirySessionTimeout):
		t.Fatal("A's session did not expire")
	}
	hB, err := fc.b.l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fc.b.a.ok("holds %v", hB.Token)
	rb, _ := res.Write(ctx, hB.Token, "new-owner")
	fc.b.a.ok("write new-owner accepted=%v", rb.Accepted)
	fc.a.a.invoke("write (resumed after its check)")
	ra, _ := res.Write(ctx, hA.Token, "A-after-check")
	fc.a.a.ok("accepted=%v", ra.Accepted)
	v, _, _, _ := res.Read(ctx)
	evidence(t, "A's check said it held; after its expiry B's write accepted=%v, then A's checked write accepted=%v; value %q", rb.Accepted, ra.Accepted, v)
	if !rb.Accepted || v != "A-after-check" {
		t.Errorf("F5 violated: got B's write accepted=%v, final %q; want B's write accepted and then overwritten by A's checked write (\"A-after-check\"): the check did not protect B", rb.Accepted, v)
	}
	if err := hB.Release(ctx); err != nil {
		t.Fatalf("B release: %v", err)
	}
}

// TestF6_CompareAndWriteIsOneAtomicStep: many goroutines write with mixed
// tokens; in commit order the accepted tokens never decrease, so no write
// below the mark at its commit point was accepted (claim F6, §5 ¶2). Run it
// under -race.
func TestF6_CompareAndWriteIsOneAtomicStep(t *testing.T) {
	claim(t, "F6")
	for _, kind := range []string{"memory", "durable"} {
		t.Run("on the "+kind+" resource", func(t *testing.T) {
			var res fence.Resource = fence.NewMemory()
			writers, per := 16, 100
			if kind == "durable" {
				d, err := fence.OpenDurable(context.Background(), filepath.Join(t.TempDir(), "f6.db"))
				if err != nil {
					t.Fatal(err)
				}
				res, per = d, 5 // each durable commit syncs the disk
			}
			t.Cleanup(func() { _ = res.Close() })
			type acc struct {
				commit uint64
				tok    fence.Token
			}
			var mu sync.Mutex
			var accepted []acc
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rng := rand.New(rand.NewSource(int64(w)))
					for i := 0; i < per; i++ {
						tok := fence.Token{Seq: int64(rng.Intn(50))}
						r, err := res.Write(context.Background(), tok, fmt.Sprintf("w%d-%d", w, i))
						if err != nil {
							t.Error(err)
							return
						}
						if r.Accepted {
							mu.Lock()
							accepted = append(accepted, acc{r.Commit, tok})
							mu.Unlock()
						}
					}
				}(w)
			}
			wg.Wait()
			sort.Slice(accepted, func(i, j int) bool { return accepted[i].commit < accepted[j].commit })
			for i := 1; i < len(accepted); i++ {
				if accepted[i].tok.Compare(accepted[i-1].tok) < 0 {
					t.Fatalf("F6 violated: commit %d accepted token %v after commit %d had raised the mark to %v", accepted[i].commit, accepted[i].tok, accepted[i-1].commit, accepted[i-1].tok)
				}
			}
			evidence(t, "%d writers × %d writes: %d accepted, tokens non-decreasing in commit order", writers, per, len(accepted))
		})
	}
}

// TestF7_EqualTokenIsAccepted: the current holder may keep writing with its
// token (claim F7, §5 ¶5).
func TestF7_EqualTokenIsAccepted(t *testing.T) {
	claim(t, "F7")
	res := fence.NewMemory()
	ctx := context.Background()
	tok := fence.Token{Seq: 1}
	r1, _ := res.Write(ctx, tok, "first")
	r2, _ := res.Write(ctx, tok, "second")
	evidence(t, "two writes with the same token %v: accepted=%v, %v", tok, r1.Accepted, r2.Accepted)
	if !r1.Accepted || !r2.Accepted {
		t.Errorf("F7 violated: writes with the same token accepted=%v,%v; want both", r1.Accepted, r2.Accepted)
	}
}

// TestF8_DurableResourceKeepsMarkAndValueAcrossRestart: the SQLite resource
// keeps the mark and the value in one transaction, so after the fencing
// story and a close and reopen it still holds "new-owner" and still
// rejects token 0 (claim F8, §5 ¶5; beyond the article, whose memory model
// left durability unverified).
func TestF8_DurableResourceKeepsMarkAndValueAcrossRestart(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F8")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "resource.db")
	d, err := fence.OpenDurable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st := runFencingStory(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("resource closed; reopening %s", filepath.Base(path))
	d2, err := fence.OpenDurable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	v, mark, _, err := d2.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d2.Write(ctx, st.tokenA, "stale-after-restart")
	if err != nil {
		t.Fatal(err)
	}
	evidence(t, "after reopen: value %q mark %v; token %v accepted=%v", v, mark, st.tokenA, r.Accepted)
	if v != "new-owner" || mark != st.tokenB || r.Accepted {
		t.Errorf("F8 violated: after restart value %q mark %v, token 0 accepted=%v; want \"new-owner\", %v, rejected", v, mark, r.Accepted, st.tokenB)
	}
}

// TestF9_ForgedLargerTokenIsAccepted: fencing orders honest holders; it does
// not authenticate them. Any caller that sends a larger number is accepted
// (claim F9, §5 ¶5). This test documents the limit; it is not a bug to fix
// here.
func TestF9_ForgedLargerTokenIsAccepted(t *testing.T) {
	claim(t, "F9")
	res := fence.NewMemory()
	ctx := context.Background()
	_, _ = res.Write(ctx, fence.Token{Seq: 1}, "new-owner")
	r, _ := res.Write(ctx, fence.Token{Seq: 999}, "forged")
	evidence(t, "forged token g0/999 accepted=%v after the mark g0/1: fencing is not authentication", r.Accepted)
	if !r.Accepted {
		t.Errorf("F9 refuted: a forged larger token was rejected; want accepted (the resource cannot tell forgery)")
	}
}

// TestF10_ServerCleanupAndExpiredEventAreTwoObservations: the server's
// deletion of A's node (seen by B) and A's own Expired event are separate
// observations; A sees Expired only when it reaches the server again, after
// the blackhole heals (claim F10, §7 ¶2). A's
// hold, which watches its own node, likewise reports itself lost only after
// the heal, and its Release then says the session changed: until then A's
// worker has no local signal that its token is stale.
func TestF10_ServerCleanupAndExpiredEventAreTwoObservations(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F10")
	st := runFencingStory(t, fence.NewMemory())
	evidence(t, "B acquired after the server deleted A's node; A had seen Expired then: %v, its hold lost then: %v; after the heal A saw Expired: %v and its Release returned %v", st.aSawExpiredAtB, st.aLostAtB, st.aExpiredAfterHeal, st.aLostAfterHeal)
	if st.aSawExpiredAtB {
		t.Errorf("F10 violated: A had already seen Expired when B acquired; want it only after the heal")
	}
	if !st.aExpiredAfterHeal {
		t.Errorf("F10 violated: A never saw Expired after the heal")
	}
	if st.aLostAtB {
		t.Errorf("F10 violated: A's hold reported itself lost while A could not reach the server; want it to learn only after the heal")
	}
	if !errors.Is(st.aLostAfterHeal, lock.ErrSessionChanged) {
		t.Errorf("F10 violated: after the heal A's hold gave %v; want a lost hold because the session expired (lock.ErrSessionChanged)", st.aLostAfterHeal)
	}
}

// TestT1_MalformedSuffixesAreRejected: the token is the sequence suffix of a
// lock node's name; negative, overflowing, non-numeric and missing suffixes
// are refused with a clear error (claim T1, §6 ¶1).
func TestT1_MalformedSuffixesAreRejected(t *testing.T) {
	claim(t, "T1")
	for name, want := range map[string]error{
		"g-lock--000000001":  fence.ErrNegativeSeq,
		"g-lock-2147483648":  fence.ErrSeqOverflow,
		"g-lock-99999999999": fence.ErrSeqOverflow,
		"g-lock-00000000x1":  fence.ErrNotNumeric,
		"g-lock-":            fence.ErrNoSuffix,
		"g-0000000001":       fence.ErrNoSuffix,
	} {
		_, err := fence.ParseSeq(name)
		t.Logf("%-20q -> %v", name, err)
		if !errors.Is(err, want) {
			t.Errorf("T1 violated: %q gave %v; want %v", name, err, want)
		}
	}
	v, err := fence.ParseSeq("g-lock-2147483647")
	evidence(t, "negative, overflowing, non-numeric and missing suffixes rejected with their errors; the largest suffix parses to %d (%v)", v, err)
	if err != nil || v != 2147483647 {
		t.Errorf("T1: the largest suffix gave %d, %v; want 2147483647", v, err)
	}
}

// TestT2_RecreatedParentRestartsNumbering: deleting and recreating the lock
// parent restarts the sequence at 0, so a resource that kept the old
// domain's mark rejects every new holder; a token that carries the parent's
// czxid as its domain, compared first, is accepted (claim T2, §6 ¶2).
func TestT2_RecreatedParentRestartsNumbering(t *testing.T) {
	claim(t, "T2")
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
		t.Fatalf("T2 refuted: the recreated parent numbered the first candidate %d; want 0", newDomain[0].Seq)
	}
	seqOnly := func(tk fence.Token) fence.Token { return fence.Token{Seq: tk.Seq} }
	t.Run("a mark from the old domain rejects every new holder when only sequences are compared", func(t *testing.T) {
		res := fence.NewMemory()
		_, _ = res.Write(ctx, seqOnly(oldDomain[2]), "old-domain")
		r, _ := res.Write(ctx, seqOnly(newDomain[0]), "new-domain")
		if r.Accepted {
			t.Errorf("T2 violated: new holder seq %d accepted over old mark seq %d; want rejected", newDomain[0].Seq, oldDomain[2].Seq)
		}
	})
	t.Run("comparing the parent's czxid first accepts the new domain", func(t *testing.T) {
		res := fence.NewMemory()
		_, _ = res.Write(ctx, oldDomain[2], "old-domain")
		r, _ := res.Write(ctx, newDomain[0], "new-domain")
		if newDomain[0].Domain <= oldDomain[2].Domain || !r.Accepted {
			t.Errorf("T2 violated: new token %v vs old mark %v accepted=%v; want a larger domain, accepted", newDomain[0], oldDomain[2], r.Accepted)
		}
	})
}

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
		t.Errorf("T3 refuted: the two creates of one multi got czxid 0x%x and 0x%x; want equal", czxid["one"], czxid["two"])
	}
	if czxid["three"] == czxid["one"] {
		t.Errorf("T3 check broken: a separate create got the multi's czxid 0x%x; want a new one", czxid["three"])
	}
}

// Example_x2ExpiryIsNotRejection is exercise 2 of the article (claim X2,
// §8 ¶4): before B's token 1 reaches the resource, its mark is still A's
// token 0, so it cannot reject A; the window is shown on the fencing story,
// where A's token 0 still writes after B holds and before B writes.
func Example_x2ExpiryIsNotRejection() {
	runExample("Example_x2ExpiryIsNotRejection", func(sc *zkserver.Scope) {
		st := runFencingStory(sc, fence.NewMemory())
		fmt.Println("A expired, B holds, B has not written:")
		fmt.Println("  resource accepts A's token 0:", st.windowWrite.Accepted)
		fmt.Println("after B's token 1 was accepted:")
		fmt.Println("  resource accepts A's token 0:", st.lateWrite.Accepted)
		fmt.Println("  value:", st.final)
	})
	// Output:
	// A expired, B holds, B has not written:
	//   resource accepts A's token 0: true
	// after B's token 1 was accepted:
	//   resource accepts A's token 0: false
	//   value: new-owner
}

package zk19_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
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

// Natural expiry needs a short session: with tickTime 100 ms the server
// accepts sessions of 200 ms to 2 s. A's session is fenceSessionTimeout;
// the claims in this file are about what happens when it runs out.
const (
	fenceTick           = 100 * time.Millisecond
	fenceSessionTimeout = time.Second
)

// fencingStory is the article's §5 story (claims F1–F4, F8, F10), run
// against one resource.
type fencingStory struct {
	tokenA, tokenB     fence.Token
	windowWrite        fence.Result // A's write after its expiry, before B's write (F2)
	bWrite, lateWrite  fence.Result // B's "new-owner"; A's "stale-late" after the gate opens
	final              string
	aSawExpiredAtB     bool // A had seen Expired when B acquired (F10)
	aExpiredAfterHeal  bool
	aLostAtB           bool  // A's Held.Lost() had fired when B acquired
	aLostAfterHeal     error // why A's hold reported itself lost after the heal (nil: it did not)
	deletionBeforeHeal bool
	elapsed            time.Duration
}

// fencingCast is the cast of the fencing scenarios on a server with a
// small tickTime: O observes directly, A talks through a proxy that can
// blackhole it (so its session can expire naturally), B talks directly.
type fencingCast struct {
	srv     *zkserver.Server
	root    string
	proxy   *faultproxy.Proxy
	O, A, B *zkclient.Client
	pa, pb  actor
}

func newFencingCast(t zkserver.TB) *fencingCast {
	t.Helper()
	s := zkserver.Start(t, zkserver.WithTickTime(fenceTick))
	fc := &fencingCast{srv: s, pa: newActor(t, "A"), pb: newActor(t, "B")}
	fc.O = connect(t, "O", []string{s.Client})
	fc.root = testRoot(t, fc.O)
	fc.proxy = clientProxy(t, "A-proxy", s)
	fc.A = connect(t, "A", []string{fc.proxy.Addr()}, zkclient.WithSessionTimeout(fenceSessionTimeout))
	fc.B = connect(t, "B", []string{s.Client})
	return fc
}

// lockTrace logs a recipe's steps as an actor's record lines.
func lockTrace(a actor) lock.Hooks {
	return lock.Hooks{Trace: func(op lock.Op) { a.t.Logf("%s %s", a.name, op) }}
}

// runFencingStory: A holds with token 0 and its worker parks on a gate
// before writing; A's session expires naturally behind a blackholed proxy;
// B, waiting on A's node, learns of the deletion and holds with token 1; in
// that window A's token still writes; B writes "new-owner"; the gate opens
// and A's worker writes "stale-late" with token 0.
func runFencingStory(t zkserver.TB, res fence.Resource) fencingStory {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	var st fencingStory
	fc := newFencingCast(t)
	O, A, B, root, p, pa, pb := fc.O, fc.A, fc.B, fc.root, fc.proxy, fc.pa, fc.pb
	la, err := lock.New(A.Conn, root, lock.WithHooks(lockTrace(pa)))
	if err != nil {
		t.Fatalf("%v", err)
	}
	bWaiting := make(chan string, 1)
	hb := lockTrace(pb)
	hb.Waiting = func(own, pred string) {
		select {
		case bWaiting <- pred:
		default:
		}
	}
	lb, err := lock.New(B.Conn, root, lock.WithHooks(hb))
	if err != nil {
		t.Fatalf("%v", err)
	}

	phase(t, "A holds; its worker takes the token and parks on a gate")
	hA, err := la.Acquire(ctx)
	if err != nil {
		t.Fatalf("A acquire: %v", err)
	}
	st.tokenA = hA.Token
	lostA := hA.Lost()
	waitFor(t, waitWithin, "A's hold to watch its own node", func() (bool, string) {
		w := lkWatchTable(t, fc.srv, "wchp", root)[hA.Path]
		return len(w) == 1 && w[0] == A.SessionHex(), fmt.Sprintf("watchers of A's node: %v", w)
	})
	pa.info("hold armed: watching its own node %s", hA.Name)
	gate := make(chan struct{})
	late := make(chan fence.Result, 1)
	lateErr := make(chan error, 1)
	var worker sync.WaitGroup
	worker.Add(1)
	go func() {
		defer worker.Done()
		<-gate
		r, err := res.Write(ctx, st.tokenA, "stale-late")
		late <- r
		lateErr <- err
	}()
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
		worker.Wait()
	})
	pa.info("worker parked with token %v", st.tokenA)

	phase(t, "B waits on A's node")
	type acq struct {
		h   *lock.Held
		err error
		at  time.Time
	}
	bDone := make(chan acq, 1)
	go func() {
		h, err := lb.Acquire(ctx)
		bDone <- acq{h, err, time.Now()}
	}()
	select {
	case pred := <-bWaiting:
		pb.info("waiting on %s", pred)
	case <-time.After(waitWithin):
		t.Fatalf("B did not start waiting within %v", waitWithin)
	}

	phase(t, "A's connection is blackholed: no forced expiry, no close; the session runs out")
	mark := A.Mark()
	p.Blackhole(faultproxy.Both)
	t.Cleanup(p.Heal)
	var b acq
	select {
	case b = <-bDone:
	case <-time.After(10 * fenceSessionTimeout):
		t.Fatalf("F1: B did not acquire within %v of A's blackhole", 10*fenceSessionTimeout)
	}
	if b.err != nil {
		t.Fatalf("F1: B acquire: %v", b.err)
	}
	t.Cleanup(func() { _ = b.h.Release(context.Background()) })
	st.tokenB = b.h.Token
	pb.ok("holds with token %v after the server deleted A's node", st.tokenB)
	st.aSawExpiredAtB = A.Seen(zk.StateExpired)
	select {
	case <-lostA:
		st.aLostAtB = true
	default:
	}
	pa.info("A's hold reports itself lost when B acquired: %v", st.aLostAtB)
	pa.info("A's own view when B acquired: session states %v; expired seen: %v", A.States()[mark:], st.aSawExpiredAtB)
	ok, _, err := O.Exists(hA.Path)
	st.deletionBeforeHeal = err == nil && !ok
	t.Logf("O: A's node %s exists: %v (%v)", hA.Name, ok, err)

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
	close(gate)
	select {
	case st.lateWrite = <-late:
		if err := <-lateErr; err != nil {
			t.Fatalf("late write: %v", err)
		}
	case <-time.After(waitWithin):
		t.Fatalf("A's worker did not write within %v", waitWithin)
	}
	if st.lateWrite.Accepted {
		pa.ok("accepted=true mark=%v", st.lateWrite.Mark)
	} else {
		pa.fail("rejected: mark %v > token %v", st.lateWrite.Mark, st.tokenA)
	}
	st.final, _, _, err = res.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	t.Logf("resource value: %q", st.final)

	phase(t, "heal A's connection: only now can A learn that its session expired")
	p.Heal()
	st.aExpiredAfterHeal = A.WaitStateSince(mark, zk.StateExpired, zkclient.ConnectWithin) == nil
	pa.info("session expired seen after heal: %v", st.aExpiredAfterHeal)
	select {
	case <-lostA:
		st.aLostAfterHeal = hA.Err()
		pa.info("A's hold reports itself lost after the heal: %v", st.aLostAfterHeal)
	case <-time.After(zkclient.ConnectWithin):
		pa.info("A's hold never reported itself lost after the heal")
	}
	st.elapsed = time.Since(start)
	return st
}

// TestF1toF3_FencedResourceRejectsTheLateHolder runs the article's fencing
// story against the in-memory fenced resource and the durable SQLite one
// (claims F1, F2, F3, §5 "资源接受新 token 后拒绝旧写"). F1: A held token 0; its
// session expired naturally (blackholed, never closed or force-expired); B
// learned it from the deletion and held token 1. F2: in the window before
// B's write, token 0 was still accepted. F3: after B wrote "new-owner" with
// token 1, A's late "stale-late" with token 0 was rejected.
func TestF1toF3_FencedResourceRejectsTheLateHolder(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F1 F2 F3", "§5 fencing at the resource", "natural expiry hands the lock to B; the window still accepts A; after B's write A's late write is rejected")
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

// TestF4_UnfencedResourceTakesTheLateWrite is the control (claim F4, §5):
// the same story against a resource that checks nothing ends with A's
// "stale-late" overwriting B's "new-owner".
func TestF4_UnfencedResourceTakesTheLateWrite(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F4", "§5", "an unfenced resource accepts the late write")
	res := fence.NewUnfenced()
	st := runFencingStory(t, res)
	if !st.lateWrite.Accepted || st.final != "stale-late" {
		t.Errorf("F4 violated: unfenced late write accepted=%v, final %q; want accepted and \"stale-late\"", st.lateWrite.Accepted, st.final)
	}
}

// TestF5_CheckThenWriteLosesTheRace: asking ZooKeeper "do I still hold the
// lock?" and then writing is not fencing (claim F5, §5): A checks (yes), is
// paused, expires, B acquires and writes, and A's write still lands on an
// unfenced resource.
func TestF5_CheckThenWriteLosesTheRace(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F5", "§5", "check-then-write leaves a window: A's checked write overwrites B's")
	ctx := context.Background()
	fc := newFencingCast(t)
	O, A, B, root, p, pa, pb := fc.O, fc.A, fc.B, fc.root, fc.proxy, fc.pa, fc.pb
	la, _ := lock.New(A.Conn, root)
	lb, _ := lock.New(B.Conn, root)
	res := fence.NewUnfenced()
	hA, err := la.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pa.invoke("exists %s (do I still hold it?)", hA.Path)
	still, _, err := A.Exists(hA.Path)
	if err != nil || !still {
		t.Fatalf("A's check: %v %v", still, err)
	}
	pa.ok("true; A is paused before its write")
	_, _, gone, err := O.ExistsW(hA.Path)
	if err != nil {
		t.Fatal(err)
	}
	p.Blackhole(faultproxy.Both)
	t.Cleanup(p.Heal)
	select {
	case <-gone:
		t.Logf("O: A's node deleted by the server (session expired)")
	case <-time.After(10 * fenceSessionTimeout):
		t.Fatal("A's session did not expire")
	}
	hB, err := lb.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hB.Release(ctx)
	pb.ok("holds %v", hB.Token)
	r, _ := res.Write(ctx, hB.Token, "new-owner")
	pb.ok("write new-owner accepted=%v", r.Accepted)
	pa.invoke("write (resumed after its check)")
	r, _ = res.Write(ctx, hA.Token, "A-after-check")
	pa.ok("accepted=%v", r.Accepted)
	v, _, _, _ := res.Read(ctx)
	if v != "A-after-check" {
		t.Errorf("F5 violated: got final %q; want A's checked write to win (\"A-after-check\"): the check did not protect B", v)
	}
}

// TestF6_CompareAndWriteIsOneAtomicStep: many goroutines write with mixed
// tokens; in commit order the accepted tokens never decrease, so no write
// below the mark at its commit point was accepted (claim F6, §5). Run it
// under -race.
func TestF6_CompareAndWriteIsOneAtomicStep(t *testing.T) {
	claim(t, "F6", "§5", "compare-and-write is atomic: no accepted write is below the mark at its commit point")
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
			t.Logf("%d writers × %d writes: %d accepted, tokens non-decreasing in commit order", writers, per, len(accepted))
		})
	}
}

// TestF7_EqualTokenIsAccepted: the current holder may keep writing with its
// token (claim F7, §5).
func TestF7_EqualTokenIsAccepted(t *testing.T) {
	claim(t, "F7", "§5", "an equal token is accepted")
	res := fence.NewMemory()
	ctx := context.Background()
	tok := fence.Token{Seq: 1}
	r1, _ := res.Write(ctx, tok, "first")
	r2, _ := res.Write(ctx, tok, "second")
	if !r1.Accepted || !r2.Accepted {
		t.Errorf("F7 violated: writes with the same token accepted=%v,%v; want both", r1.Accepted, r2.Accepted)
	}
}

// TestF8_DurableResourceKeepsMarkAndValueAcrossRestart: the SQLite resource
// keeps the mark and the value in one transaction, so after the fencing
// story and a close and reopen it still holds "new-owner" and still
// rejects token 0 (claim F8 (beyond), §5: the article's memory model left
// durability unverified).
func TestF8_DurableResourceKeepsMarkAndValueAcrossRestart(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F8", "§5", "a durable resource keeps mark and value across a restart")
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
	t.Logf("after reopen: value %q mark %v; token %v accepted=%v", v, mark, st.tokenA, r.Accepted)
	if v != "new-owner" || mark != st.tokenB || r.Accepted {
		t.Errorf("F8 violated: after restart value %q mark %v, token 0 accepted=%v; want \"new-owner\", %v, rejected", v, mark, r.Accepted, st.tokenB)
	}
}

// TestF9_ForgedLargerTokenIsAccepted: fencing orders honest holders; it does
// not authenticate them. Any caller that sends a larger number is accepted
// (claim F9, §5). This test documents the limit; it is not a bug to fix here.
func TestF9_ForgedLargerTokenIsAccepted(t *testing.T) {
	claim(t, "F9", "§5", "fencing is not authentication: a forged larger token is accepted")
	res := fence.NewMemory()
	ctx := context.Background()
	_, _ = res.Write(ctx, fence.Token{Seq: 1}, "new-owner")
	r, _ := res.Write(ctx, fence.Token{Seq: 999}, "forged")
	t.Logf("forged token g0/999 accepted=%v: fencing is not authentication", r.Accepted)
	if !r.Accepted {
		t.Errorf("F9 refuted: a forged larger token was rejected; want accepted (the resource cannot tell forgery)")
	}
}

// TestF10_ServerCleanupAndExpiredEventAreTwoObservations: the server's
// deletion of A's node (seen by B) and A's own Expired event are separate
// observations; A sees Expired only when it reaches the server again, after
// the blackhole heals (claim F10, §5). A's hold, which watches its own node,
// likewise reports itself lost only after the heal: until then A's worker
// has no local signal that its token is stale.
func TestF10_ServerCleanupAndExpiredEventAreTwoObservations(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "F10", "§5", "B sees the server's cleanup first; A sees Expired only after reconnecting")
	st := runFencingStory(t, fence.NewMemory())
	t.Logf("order: B acquired after the server deleted A's node (A had seen Expired: %v); A saw Expired after heal: %v", st.aSawExpiredAtB, st.aExpiredAfterHeal)
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
		t.Errorf("F10 violated: after the heal A's hold reported %v; want a lost hold because the session expired (ErrSessionChanged)", st.aLostAfterHeal)
	}
}

// TestT1_MalformedSuffixesAreRejected: the token is the sequence suffix of a
// lock node's name; negative, overflowing, non-numeric and missing suffixes
// are refused with a clear error (claim T1, §6 "顺序号只在明确的锁域内比较").
func TestT1_MalformedSuffixesAreRejected(t *testing.T) {
	claim(t, "T1", "§6 token domains", "malformed sequence suffixes are rejected")
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
	if v, err := fence.ParseSeq("g-lock-2147483647"); err != nil || v != 2147483647 {
		t.Errorf("T1: the largest suffix gave %d, %v; want 2147483647", v, err)
	}
}

// TestT2_RecreatedParentRestartsNumbering: deleting and recreating the lock
// parent restarts the sequence at 0, so a resource that kept the old
// domain's mark rejects every new holder; a token that carries the parent's
// czxid as its domain, compared first, is accepted (claim T2, §6).
func TestT2_RecreatedParentRestartsNumbering(t *testing.T) {
	claim(t, "T2", "§6", "a recreated parent restarts numbering; the domain generation must be compared first")
	ctx := context.Background()
	s := sharedServer(t)
	A := connect(t, "A", []string{s.Client})
	root := testRoot(t, A)
	parent := root + "/locks"
	acquireSeqs := func(n int) []fence.Token {
		if _, err := A.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		l, err := lock.New(A.Conn, parent, lock.WithCzxidDomain())
		if err != nil {
			t.Fatal(err)
		}
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
	t.Logf("tokens before: %v; after: %v", oldDomain, newDomain)
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

// Example_x2ExpiryIsNotRejection is exercise 2 of the article (claim X2):
// before B's token 1 reaches the resource, its mark is still A's token 0,
// so it cannot reject A; and asking ZooKeeper before writing leaves a race
// (here: A's check passes, A pauses, A expires, and its write still lands).
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

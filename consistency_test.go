package zk19_test

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/history"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// Timing of the 3-server scenarios. A follower whose leader stream is held
// drops the leader after syncLimit × tickTime without bytes, and a leader
// drops a follower that has not acked a proposal for as long: every hold
// below ends well inside that window (10 s), and inside B's session timeout
// (the leader hears of B's heartbeats only through the held follower).
const (
	trioTick      = time.Second
	trioSyncLimit = 10
)

// trio is a 3-server ensemble with a proxy on every server-to-server link.
// A is connected to one follower (fresh); B to the other (lagging, once its
// leader stream is held).
type trio struct {
	t zkserver.TB
	*cluster
	leader, fresh, lagging *zkserver.Server
	A, B                   *zkclient.Client
	pa, pb                 actor
	rec                    *history.Recorder
}

const (
	xPath       = "/x"
	barrierPath = "/barrier"
)

func newTrio(t zkserver.TB, opts ...zkserver.Option) *trio {
	t.Helper()
	c := startCluster(t, 3, append([]zkserver.Option{zkserver.WithTickTime(trioTick), zkserver.WithLimits(10, trioSyncLimit)}, opts...)...)
	fs := c.Followers()
	if len(fs) != 2 {
		t.Fatalf("got %d followers; want 2", len(fs))
	}
	tr := &trio{t: t, cluster: c, leader: c.Leader(), fresh: fs[0], lagging: fs[1], rec: history.NewRecorder("0")}
	tr.A = zkclient.Connect(t, "A", []string{tr.fresh.Client})
	tr.B = zkclient.Connect(t, "B", []string{tr.lagging.Client})
	tr.pa, tr.pb = newActor(t, "A"), newActor(t, "B")
	t.Logf("A is connected to %s; B to %s (the lagging one once held)", tr.fresh.Label, tr.lagging.Label)
	if _, err := tr.A.Create(xPath, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", xPath, err)
	}
	// /barrier is the node B's write barriers update (Y3, Y5, Y6).
	if _, err := tr.A.Create(barrierPath, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", barrierPath, err)
	}
	// B's follower has /x = "0" before any fault: sync, then read.
	if _, err := tr.B.Sync(xPath); err != nil {
		t.Fatalf("B sync: %v", err)
	}
	if v := tr.get(tr.B, tr.pb, 2); v != "0" {
		t.Fatalf("setup: B read %q; want \"0\"", v)
	}
	return tr
}

// in returns the trio with t as the test that logs and fails (for subtests).
func (tr *trio) in(t zkserver.TB) *trio {
	c := *tr
	c.t, c.pa, c.pb = t, newActor(t, "A"), newActor(t, "B")
	return &c
}

// lagBehind holds the leader's stream to B's follower and lets A write v:
// the write commits without B's follower.
func (tr *trio) lagBehind(v string) {
	tr.t.Helper()
	tr.holdLeaderStream()
	tr.set(tr.A, tr.pa, 1, v)
}

// catchUp releases the stream and waits until B reads v.
func (tr *trio) catchUp(v string) {
	tr.t.Helper()
	tr.release()
	wait.For(tr.t, within, "B's follower to apply x="+v, func() (bool, string) {
		b, _, err := tr.B.Get(xPath)
		return err == nil && string(b) == v, fmt.Sprintf("%q %v", b, err)
	})
}

// get reads /x as client id (1 = A, 2 = B, 3 = C) and records the read.
func (tr *trio) get(c *zkclient.Client, a actor, id int) string {
	tr.t.Helper()
	a.invoke("get %s", xPath)
	call := tr.rec.Invoke(id, history.Read, "")
	b, _, err := c.Get(xPath)
	if err != nil {
		call.Info()
		a.fail("get: %v", err)
		tr.t.Fatalf("get %s: %v", xPath, err)
	}
	call.Ok(string(b))
	a.ok("%q", b)
	return string(b)
}

// set writes /x and records the write.
func (tr *trio) set(c *zkclient.Client, a actor, id int, v string) {
	tr.t.Helper()
	a.invoke("set %s %q", xPath, v)
	call := tr.rec.Invoke(id, history.Write, v)
	if _, err := c.Set(xPath, []byte(v), -1); err != nil {
		call.Info()
		a.info("set: %v (outcome unknown)", err)
		tr.t.Fatalf("set %s: %v", xPath, err)
	}
	call.Ok(v)
	a.ok("")
}

// quorumLink is the proxy B's follower dials to reach the leader.
func (tr *trio) quorumLink() *faultproxy.Proxy { return tr.StreamProxy(tr.lagging) }

// holdLeaderStream makes B's follower lag: everything the leader sends it is
// kept by the proxy (the cluster heals at cleanup).
func (tr *trio) holdLeaderStream() { tr.t.Helper(); tr.HoldStream(tr.lagging) }

func (tr *trio) release() { tr.t.Helper(); tr.ReleaseStream(tr.lagging) }

// waitLeaderAnswered waits until the lagging follower has forwarded a
// request to the leader (bytes up beyond up0) and the leader has sent it
// something since (held bytes beyond held0): the answer, if any, is in the
// proxy's buffer and cannot have reached the follower.
func (tr *trio) waitLeaderAnswered(up0, held0 int64) {
	tr.t.Helper()
	p := tr.quorumLink()
	wait.For(tr.t, within, "the follower to forward the request and the leader to answer into the hold", func() (bool, string) {
		s := p.Stats()
		return s.UpBytes > up0 && s.DownHeld > held0, fmt.Sprintf("up %d bytes (before %d), held down %d bytes (before %d)", s.UpBytes, up0, s.DownHeld, held0)
	})
	s := p.Stats()
	tr.t.Logf("nemesis observes: follower forwarded %d bytes to the leader; %d bytes from the leader are held", s.UpBytes-up0, s.DownHeld)
}

// staleRead is the S1 scenario, shared by the Test and the Example.
type staleReadResult struct {
	readWhileHeld string
	heldWhenRead  int64 // bytes the proxy held when B's read returned
	readAfter     string
	stale, caught *history.Recorder
	// recorded is a second round recorded end to end, with no interval
	// assembled by the test: A writes "2", B reads after catching up.
	recorded *history.Recorder
}

func runStaleRead(t zkserver.TB) staleReadResult {
	t.Helper()
	tr := newTrio(t)
	var r staleReadResult
	phase(t, "the leader's stream to B's follower is held")
	tr.holdLeaderStream()
	phase(t, "A writes x=1 through the other follower; the write commits without B's follower")
	tr.set(tr.A, tr.pa, 1, "1")
	notify := make(chan string, 1)
	tr.pa.invoke("tell B over a channel: x=1 is written")
	notify <- "x=1 written"
	tr.pa.ok("")
	msg := <-notify
	tr.pb.info("received %q", msg)
	phase(t, "B reads x on its follower while the link is still held")
	r.readWhileHeld = tr.get(tr.B, tr.pb, 2)
	r.heldWhenRead = tr.quorumLink().Stats().DownHeld
	evidence(t, "B read %q on %s after A's acknowledged write of \"1\"; the proxy still held %d bytes of the leader's stream to it when the read returned", r.readWhileHeld, tr.lagging.Label, r.heldWhenRead)
	r.stale = tr.rec
	phase(t, "release; B reads again after its follower caught up")
	tr.catchUp("1")
	caught := history.NewRecorder("0")
	for _, op := range tr.rec.Operations() {
		if op.ClientId == 1 { // A's write; B's stale read is left out
			_ = caught.Span(op.ClientId, op.Input.(history.Input), op.Output.(history.Output), op.Call, op.Return)
		}
	}
	call := tr.rec.Now()
	r.readAfter = tr.get(tr.B, tr.pb, 2)
	_ = caught.Span(2, history.Input{Op: history.Read}, history.Output{Value: r.readAfter}, call, tr.rec.Now())
	r.caught = caught
	r.recorded = history.NewRecorder(r.readAfter)
	tr.rec = r.recorded
	tr.set(tr.A, tr.pa, 1, "2")
	tr.catchUp("2")
	tr.get(tr.B, tr.pb, 2)
	return r
}

// requireLagAtRead fails the claim unless the follower really lagged while
// B read: bytes only accumulate in the proxy while the stream is held and
// leave all at once on release, so bytes still held after the read returned
// were held during it. Without this, a stream released before the read
// could let the claim pass by the luck of a slow follower.
func requireLagAtRead(t zkserver.TB, id string, r staleReadResult) {
	t.Helper()
	if r.heldWhenRead <= 0 {
		t.Fatalf("%s not shown: got %d bytes held from the leader when B's read returned; want > 0 (the follower was not lagging at the read)", id, r.heldWhenRead)
	}
}

// TestS1_PlainReadOnLaggingFollowerIsStale: after A's write has succeeded
// and A has told B so through a channel, B's plain getData on a follower
// that has not yet received the commit returns the old value (claim S1,
// article §1 "更新有统一顺序，普通读仍可能陈旧"). The follower lags because the
// proxy holds the leader's stream to it; the write commits with the leader
// and the other follower.
func TestS1_PlainReadOnLaggingFollowerIsStale(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "S1")
	r := runStaleRead(t)
	requireLagAtRead(t, "S1", r)
	if r.readWhileHeld != "0" {
		t.Errorf("S1 refuted: B read %q on the lagging follower after A's write; want the old value \"0\"", r.readWhileHeld)
	}
	if r.readAfter != "1" {
		t.Errorf("S1 check broken: after release B read %q; want \"1\"", r.readAfter)
	}
}

// TestS2_StaleHistoryIsNotLinearizable: as a single read/write register, the
// S1 history is not linearizable, and the same history with B's read taken
// after the follower caught up is (claim S2, article §1). Porcupine gives
// both verdicts.
func TestS2_StaleHistoryIsNotLinearizable(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "S2")
	r := runStaleRead(t)
	requireLagAtRead(t, "S2", r)
	t.Run("the stale history is not linearizable", func(t *testing.T) {
		requireHistory(t, "S2", "the history with B's stale read", r.stale, false)
	})
	t.Run("the history with B reading after catch-up is linearizable", func(t *testing.T) {
		requireHistory(t, "S2", "the history with B reading after catch-up", r.caught, true)
	})
	t.Run("a history recorded end to end with B reading after catch-up is linearizable", func(t *testing.T) {
		requireHistory(t, "S2", "the second round, recorded end to end", r.recorded, true)
	})
}

// TestS3_FollowerAnswersReadsFromItsOwnCopy: the lagging follower answers
// getData from its local copy while its link from the leader is still held:
// the read is not forwarded to the leader, unlike an update (claim S3,
// article §1, FinalRequestProcessor). The proof: B's read returned while
// the proxy still held the leader's bytes, and no byte went up from B's
// follower to the leader for it.
func TestS3_FollowerAnswersReadsFromItsOwnCopy(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "S3")
	tr := newTrio(t)
	tr.holdLeaderStream()
	tr.set(tr.A, tr.pa, 1, "1")
	p := tr.quorumLink()
	before := p.Stats()
	v := tr.get(tr.B, tr.pb, 2)
	after := p.Stats()
	evidence(t, "B's read returned %q while %d bytes of the leader's stream were held; %d bytes went up to the leader during it", v, after.DownHeld, after.UpBytes-before.UpBytes)
	if v != "0" {
		t.Errorf("S3 refuted: B's read returned %q; want the follower's own \"0\"", v)
	}
	if after.DownHeld == 0 {
		t.Errorf("S3 check broken: the proxy held nothing from the leader; want the write's proposal held")
	}
	if after.UpBytes != before.UpBytes {
		t.Errorf("S3 refuted: B's follower sent %d bytes to the leader during a plain read; want 0", after.UpBytes-before.UpBytes)
	}
	tr.release()
}

// barrierResult is what a blocking operation on the lagging follower did.
type barrierResult struct {
	doneBeforeRelease bool
	err               error
	readAfter         string
}

// blockedUntilRelease runs op (as B, on the lagging follower, while the
// leader's stream is held and after A's write of "1"), shows that op has
// reached the leader and is still pending, releases, and reads.
func (tr *trio) blockedUntilRelease(what string, op func() error) barrierResult {
	tr.t.Helper()
	p := tr.quorumLink()
	s0 := p.Stats()
	done := make(chan error, 1)
	tr.pb.invoke("%s", what)
	go func() { done <- op() }()
	var r barrierResult
	// Either the leader has answered into the hold while op is pending, or
	// op returned first: then the claim is refuted at once, not at the
	// wait's bound.
	wait.For(tr.t, within, "the follower to forward "+what+" and the leader to answer into the hold, or "+what+" to return", func() (bool, string) {
		select {
		case r.err = <-done:
			r.doneBeforeRelease = true
			return true, ""
		default:
		}
		s := p.Stats()
		return s.UpBytes > s0.UpBytes && s.DownHeld > s0.DownHeld, fmt.Sprintf("up %d bytes (before %d), held down %d bytes (before %d)", s.UpBytes, s0.UpBytes, s.DownHeld, s0.DownHeld)
	})
	if r.doneBeforeRelease {
		tr.pb.ok("%s returned while the leader's stream was held (%v)", what, r.err)
	} else {
		tr.t.Logf("nemesis observes: %s forwarded to the leader; %d bytes from the leader are held", what, p.Stats().DownHeld)
		tr.pb.info("%s still pending while the leader's stream is held", what)
	}
	tr.release()
	if !r.doneBeforeRelease {
		select {
		case r.err = <-done:
		case <-time.After(within):
			tr.t.Fatalf("%s did not return within %v after release", what, within)
		}
		if r.err != nil {
			tr.pb.fail("%s: %v", what, r.err)
		} else {
			tr.pb.ok("%s returned after release", what)
		}
	}
	r.readAfter = tr.get(tr.B, tr.pb, 2)
	return r
}

// TestY1_SyncWaitsForTheLeaderStream: with a current, healthy leader, sync
// on the lagging follower does not return while the leader's stream to it is
// held, and the read after it returns the new value (claim Y1, article §2
// "sync 的边界不能省略"). The test does not guess a window: it waits until the
// follower has forwarded the sync and the leader has answered into the
// proxy's buffer, then checks that sync is still pending.
func TestY1_SyncWaitsForTheLeaderStream(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y1")
	requireWaitsForTheStream(t, "Y1", "sync "+xPath, func(tr *trio) error { _, err := tr.B.Sync(xPath); return err })
}

// TestY3_WriteBarrierGivesItsProgress: a successful real update by B's own
// session (a write barrier on another node) does not return before B's
// follower has applied it, and it comes after A's write in the leader's
// stream, so the read after it sees x=1 (claim Y3, article §2).
func TestY3_WriteBarrierGivesItsProgress(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y3")
	requireWaitsForTheStream(t, "Y3", "set /barrier (write barrier)", func(tr *trio) error {
		_, err := tr.B.Set(barrierPath, []byte("b"), -1)
		return err
	})
}

// requireWaitsForTheStream is Y1's and Y3's proof: with the leader's stream
// to B's follower held and A's write of "1" committed, B's op (sync or a
// write barrier) stays pending until the release, succeeds, and the read
// after it sees "1".
func requireWaitsForTheStream(t *testing.T, id, what string, op func(*trio) error) {
	t.Helper()
	tr := newTrio(t)
	tr.holdLeaderStream()
	tr.set(tr.A, tr.pa, 1, "1")
	r := tr.blockedUntilRelease(what, func() error { return op(tr) })
	evidence(t, "%s returned before the release: %v; its error: %v; read after it: %q", what, r.doneBeforeRelease, r.err, r.readAfter)
	if r.doneBeforeRelease {
		t.Errorf("%s refuted: %s returned (%v) while the leader's stream was held; want it pending", id, what, r.err)
	}
	if r.err != nil {
		t.Errorf("%s: %s failed: %v", id, what, r.err)
	}
	if r.readAfter != "1" {
		t.Errorf("%s refuted: the read after %s returned %q; want \"1\"", id, what, r.readAfter)
	}
}

// consLine returns the lagging follower's cons line for session sid.
func consFor(s *zkserver.Server, sid int64) (string, error) {
	a, err := zkserver.FourLetter(s.Client, "cons", 2*time.Second)
	if err != nil {
		return "", err
	}
	needle := fmt.Sprintf("sid=0x%x", sid)
	for _, l := range strings.Split(a, "\n") {
		if strings.Contains(l, needle) {
			return strings.TrimSpace(l), nil
		}
	}
	return "", fmt.Errorf("no connection with %s in cons", needle)
}

// consField reads name=value from a cons line.
func consField(line, name string) string {
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == '(' || r == ')' }) {
		if k, v, ok := strings.Cut(f, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// TestY4_ExistsAndHeartbeatsDoNotAdvance: neither exists nor the session's
// heartbeats move a lagging follower forward: the read after them is still
// old (claim Y4, article §2). The follower itself says how many requests of
// B's it has handled (cons: recved, lop=PING), so "several heartbeats" is
// counted, not guessed. A failed conditional update is recorded as what the
// server really does with it: a failed set still becomes an error
// transaction with its own zxid, so it travels the commit chain and, like a
// barrier, waits for the held stream. That is an implementation fact, not a
// documented guarantee.
func TestY4_ExistsAndHeartbeatsDoNotAdvance(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y4")
	trio := newTrio(t)
	t.Run("exists does not advance the follower", func(t *testing.T) {
		tr := trio.in(t)
		tr.lagBehind("1")
		tr.pb.invoke("exists %s", xPath)
		ok, _, err := tr.B.Exists(xPath)
		if err != nil {
			t.Fatalf("exists: %v", err)
		}
		tr.pb.ok("%v", ok)
		v := tr.get(tr.B, tr.pb, 2)
		evidence(t, "after exists returned %v, B read %q (A had written \"1\")", ok, v)
		if v != "0" {
			t.Errorf("Y4 refuted: after exists B read %q; want \"0\"", v)
		}
		tr.catchUp("1")
	})
	t.Run("heartbeats do not advance the follower", func(t *testing.T) {
		tr := trio.in(t)
		tr.lagBehind("2")
		line, err := consFor(tr.lagging, tr.B.SessionID())
		if err != nil {
			t.Fatal(err)
		}
		recv0, _ := strconv.Atoi(consField(line, "recved"))
		const heartbeats = 2 // one every third of B's session timeout: several of the server's ticks
		wait.For(t, 2*within, fmt.Sprintf("%d heartbeats from B at its follower", heartbeats), func() (bool, string) {
			l, err := consFor(tr.lagging, tr.B.SessionID())
			n, _ := strconv.Atoi(consField(l, "recved"))
			return err == nil && n >= recv0+heartbeats && consField(l, "lop") == "PING", fmt.Sprintf("%s %v", l, err)
		})
		l, _ := consFor(tr.lagging, tr.B.SessionID())
		t.Logf("B's follower after the heartbeats: %s", l)
		v := tr.get(tr.B, tr.pb, 2)
		evidence(t, "after %d heartbeats counted at B's follower, B read %q (A had written \"2\")", heartbeats, v)
		if v != "1" {
			t.Errorf("Y4 refuted: after %d heartbeats B read %q; want the stale \"1\"", heartbeats, v)
		}
		tr.catchUp("2")
	})
	t.Run("a failed conditional set is recorded as the server handles it", func(t *testing.T) {
		tr := trio.in(t)
		tr.lagBehind("3")
		z0, err := tr.leader.Srvr()
		if err != nil {
			t.Fatal(err)
		}
		r := tr.blockedUntilRelease("set /x \"9\" version 99 (wrong version)", func() error {
			_, err := tr.B.Set(xPath, []byte("9"), 99)
			return err
		})
		z1, err := tr.leader.Srvr()
		if err != nil {
			t.Fatal(err)
		}
		consumed := z1.Zxid > z0.Zxid
		observed := fmt.Sprintf("on %s a failed set (err=%v) moved the leader's zxid 0x%x -> 0x%x; pending while held: %v; read after it: %q",
			z1.Version, r.err, z0.Zxid, z1.Zxid, !r.doneBeforeRelease, r.readAfter)
		if consumed {
			// The article says a failed conditional check cannot stand in for
			// a barrier; here it did act as one. Not a documented guarantee:
			// the article's sentence holds as "not guaranteed".
			differs(t, "%s: the failed update passed the commit chain and acted as a barrier", observed)
		} else {
			evidence(t, "%s: the failed update did not advance the follower", observed)
		}
		if r.err != zk.ErrBadVersion {
			t.Errorf("Y4: got %v; want zk.ErrBadVersion", r.err)
		}
		// What was observed must hang together: an error transaction that
		// consumed a zxid waits for the stream and makes the read fresh; one
		// that did not is answered at once and the read stays stale.
		if consumed != !r.doneBeforeRelease || consumed != (r.readAfter == "3") {
			t.Errorf("Y4: inconsistent observation: consumed a zxid %v, pending while held %v, read after %q", consumed, !r.doneBeforeRelease, r.readAfter)
		}
	})
}

// TestY5_CompositeReadIntervalMustIncludeTheBarrier: when a barrier and a
// read are treated as one composite read, its interval must start at the
// barrier's call: C's write can complete after B's barrier and before B's
// getData, which then returns the older value (claim Y5, article §2). The
// composite interval is linearizable; the inner getData interval alone is not.
func TestY5_CompositeReadIntervalMustIncludeTheBarrier(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y5")
	tr := newTrio(t)
	tr.set(tr.A, tr.pa, 1, "1")
	phase(t, "B's composite read: barrier, then getData")
	composite := tr.rec.Invoke(2, history.Read, "") // recorded live: barrier's call to getData's return
	barrierStart := composite.Start()
	tr.pb.invoke("set /barrier (composite read begins)")
	if _, err := tr.B.Set("/barrier", []byte("b"), -1); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	tr.pb.ok("barrier")
	phase(t, "after B's barrier and before B's getData, C's write x=2 completes")
	tr.holdLeaderStream()
	tr.set(tr.A, newActor(t, "C"), 3, "2")
	readStart := tr.rec.Now()
	tr.pb.invoke("get %s", xPath)
	b, _, err := tr.B.Get(xPath)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	readEnd := tr.rec.Now()
	tr.pb.ok("%q", b)
	tr.release()
	evidence(t, "C's write of \"2\" completed after B's barrier and before B's getData, which returned %q", b)
	if string(b) != "1" {
		t.Fatalf("Y5 setup broken: B read %q; want the older \"1\"", b)
	}
	composite.Ok(string(b))
	var base []porcupine.Operation // every operation but the live composite read
	for _, op := range tr.rec.Operations() {
		if op.ClientId != 2 || op.Call != barrierStart {
			base = append(base, op)
		}
	}
	build := func(call int64) *history.Recorder {
		r := history.NewRecorder("0")
		for _, op := range base {
			_ = r.Span(op.ClientId, op.Input.(history.Input), op.Output.(history.Output), op.Call, op.Return)
		}
		_ = r.Span(2, history.Input{Op: history.Read}, history.Output{Value: string(b)}, call, readEnd)
		return r
	}
	t.Run("the composite interval from the barrier's call is linearizable", func(t *testing.T) {
		requireHistory(t, "Y5", "the history with the composite read from the barrier's call", build(barrierStart), true)
	})
	t.Run("the same composite read, recorded live, is linearizable", func(t *testing.T) {
		requireHistory(t, "Y5", "the history recorded live, with the composite read", tr.rec, true)
	})
	t.Run("the inner getData interval alone is not linearizable", func(t *testing.T) {
		requireHistory(t, "Y5", "the history with only the inner getData interval", build(readStart), false)
	})
}

// TestY6_OneBarrierDoesNotMakeLaterReadsFresh: a barrier gives progress only
// up to itself; hold the stream again, let A write, and B's next plain read
// is stale again (claim Y6, article §2).
func TestY6_OneBarrierDoesNotMakeLaterReadsFresh(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y6")
	tr := newTrio(t)
	tr.set(tr.A, tr.pa, 1, "1")
	tr.pb.invoke("set /barrier")
	if _, err := tr.B.Set("/barrier", []byte("b"), -1); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	tr.pb.ok("")
	if v := tr.get(tr.B, tr.pb, 2); v != "1" {
		t.Fatalf("Y6 setup: after the barrier B read %q; want \"1\"", v)
	}
	phase(t, "hold again; A writes x=2")
	tr.holdLeaderStream()
	tr.set(tr.A, tr.pa, 1, "2")
	v := tr.get(tr.B, tr.pb, 2)
	evidence(t, "after one barrier had made B fresh, A wrote \"2\"; B's later plain read returned %q", v)
	tr.release()
	if v != "1" {
		t.Errorf("Y6 refuted: B's later plain read returned %q; want the stale \"1\"", v)
	}
}

// Timing of the ZOOKEEPER-1675 window: the old leader keeps believing it
// leads until its followers on the other side have not acked for about
// syncLimit × tickTime (5 s here); the scenario needs about 2 s of it.
const (
	y2Tick      = time.Second
	y2SyncLimit = 5
)

type windowResult struct {
	oldLeaderLedBefore bool   // the old leader reported leader after the new one committed x=1
	syncErr            error  // B's sync on the old follower
	read               string // B's read after sync
	oldLeaderLedAfter  bool   // the old leader still reported leader after B's read
	electedIn          time.Duration
	openFor            time.Duration // from the cut until the old leader stepped down (0 if not measured)
	rec                *history.Recorder
}

// runZK1675Window is the Y2 scenario, shared by the Test and the Example.
// measureClose waits for the old leader to step down and reports when.
func runZK1675Window(t zkserver.TB, measureClose bool) windowResult {
	t.Helper()
	e := startCluster(t, 5, zkserver.WithTickTime(y2Tick), zkserver.WithLimits(10, y2SyncLimit))
	old := e.Leader()
	oldFollower := e.Followers()[0]
	var newSide []*zkserver.Server
	for _, s := range e.Servers {
		if s != old && s != oldFollower {
			newSide = append(newSide, s)
		}
	}
	t.Logf("roles: old leader %s, old follower %s, new side %v", old.Label, oldFollower.Label, ids(newSide...))
	rec := history.NewRecorder("0")
	setup := zkclient.Connect(t, "S", []string{old.Client})
	if _, err := setup.Create(xPath, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", xPath, err)
	}
	want, _ := old.Srvr()
	wait.For(t, within, "every server to apply x=0", func() (bool, string) {
		var seen []string
		ok := true
		for _, s := range e.Servers {
			st, err := s.Srvr()
			ok = ok && err == nil && st.Zxid >= want.Zxid
			seen = append(seen, fmt.Sprintf("%s=0x%x", s.Label, st.Zxid))
		}
		return ok, strings.Join(seen, " ")
	})
	B := zkclient.Connect(t, "B", []string{oldFollower.Client})
	pb, pc := newActor(t, "B"), newActor(t, "C")

	phase(t, "asymmetric partition: {%s, %s} | %v", old.Label, oldFollower.Label, ids(newSide...))
	cut := time.Now()
	e.links.PartitionAsym(ids(old, oldFollower), ids(newSide...))
	var newLeader *zkserver.Server
	wait.For(t, 2*within, "the new side to elect a leader", func() (bool, string) {
		var seen []string
		for _, s := range newSide {
			m, err := s.Mode()
			if m == "leader" {
				newLeader = s
				return true, ""
			}
			seen = append(seen, fmt.Sprintf("%s=%s%v", s.Label, m, errOrEmpty(err)))
		}
		return false, strings.Join(seen, " ")
	})
	r := windowResult{electedIn: time.Since(cut), rec: rec}
	t.Logf("new leader %s elected %v after the cut", newLeader.Label, r.electedIn.Round(time.Millisecond))

	phase(t, "the new majority commits x=1")
	C := zkclient.Connect(t, "C", []string{newLeader.Client})
	pc.invoke("set %s \"1\"", xPath)
	w := rec.Invoke(3, history.Write, "1")
	if _, err := C.Set(xPath, []byte("1"), -1); err != nil {
		w.Info()
		t.Fatalf("C set: %v", err)
	}
	w.Ok("1")
	pc.ok("")

	m, err := old.Mode()
	r.oldLeaderLedBefore = m == "leader"
	t.Logf("old leader %s reports mode %q (%v) %v after the cut: the window is %s", old.Label, m, errOrEmpty(err), time.Since(cut).Round(time.Millisecond), map[bool]string{true: "open", false: "closed"}[r.oldLeaderLedBefore])

	phase(t, "B, on the old follower, calls sync and then reads")
	pb.invoke("sync %s", xPath)
	rd := rec.Invoke(2, history.Read, "") // the composite read starts at sync's call
	if _, err := B.Sync(xPath); err != nil {
		r.syncErr = err
		rd.Info()
		pb.fail("sync: %v", err)
		m, _ := old.Mode()
		r.oldLeaderLedAfter = m == "leader"
		return r
	}
	pb.ok("sync")
	pb.invoke("get %s", xPath)
	b, _, err := B.Get(xPath)
	if err != nil {
		rd.Info()
		t.Fatalf("B get: %v", err)
	}
	rd.Ok(string(b))
	r.read = string(b)
	pb.ok("%q", b)
	m, err = old.Mode()
	r.oldLeaderLedAfter = m == "leader"
	evidence(t, "B's sync on %s succeeded and B read %q after the new majority committed \"1\"; the old leader %s reported mode %q%s before and at the read, %v after the cut",
		oldFollower.Label, r.read, old.Label, m, errOrEmpty(err), time.Since(cut).Round(time.Millisecond))
	if measureClose {
		wait.For(t, 4*within, "the old leader to step down", func() (bool, string) {
			m, err := old.Mode()
			return m != "leader", fmt.Sprintf("mode %q %v", m, errOrEmpty(err))
		})
		r.openFor = time.Since(cut)
		t.Logf("the old leader stepped down %v after the cut (syncLimit × tickTime = %v)", r.openFor.Round(time.Millisecond), y2SyncLimit*y2Tick)
	}
	return r
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}

// TestY2_SyncInTheZK1675WindowReadsStale reproduces ZOOKEEPER-1675 on five
// real servers (claim Y2, article §2 "sync 的边界不能省略"). The old leader and
// one follower are cut off from the other three, asymmetrically: the three
// see their connections close and elect a new leader at once, while the old
// leader's ends stay open and silent, so it keeps leading for about
// syncLimit × tickTime. The new majority commits x=1. The test first checks
// that the old leader still reports leader (the window is proven open, not
// guessed); then B, a client of the old follower, gets a successful sync and
// reads x=0. Porcupine: the history is not linearizable.
func TestY2_SyncInTheZK1675WindowReadsStale(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y2")
	r := runZK1675Window(t, true)
	if !r.oldLeaderLedBefore || !r.oldLeaderLedAfter {
		t.Fatalf("Y2 not shown: the window was not open (old leader reported leader before the read: %v, after it: %v); observed: elected in %v, window open for %v",
			r.oldLeaderLedBefore, r.oldLeaderLedAfter, r.electedIn, r.openFor)
	}
	if r.syncErr != nil {
		t.Fatalf("Y2 refuted on this server: sync on the old follower failed inside the window: %v", r.syncErr)
	}
	if r.read != "0" {
		t.Errorf("Y2 refuted on this server: after a successful sync B read %q; want the old \"0\"", r.read)
	}
	requireHistory(t, "Y2", "the history of the window", r.rec, false)
}

// Example_staleReadFromLaggingFollower is the article's first diagram come
// true on a 3-server ensemble (claims S1 and S2, §1): A's write succeeds, A
// tells B, and B's plain read on a lagging follower still returns the old
// value; as a register history that is not linearizable. The operations and
// faults are logged to standard error.
func Example_staleReadFromLaggingFollower() {
	runExample("Example_staleReadFromLaggingFollower", func(sc *zkserver.Scope) {
		r := runStaleRead(sc)
		v, _, _ := history.Check(context.Background(), r.stale.Operations(), "0", 10*time.Second)
		fmt.Println("A: set x=1 ok; told B")
		fmt.Println("B's follower lagged at the read:", r.heldWhenRead > 0)
		fmt.Println("B reads x on its lagging follower:", r.readWhileHeld)
		fmt.Println("linearizable:", v == history.Linearizable)
		fmt.Println("B reads x after the follower caught up:", r.readAfter)
	})
	// Output:
	// A: set x=1 ok; told B
	// B's follower lagged at the read: true
	// B reads x on its lagging follower: 0
	// linearizable: false
	// B reads x after the follower caught up: 1
}

// Example_syncInZK1675Window is the article's ZOOKEEPER-1675 diagram come
// true on five servers (claim Y2, §2): while the old leader still leads its
// side of an asymmetric partition, sync on the old follower succeeds and the
// read after it misses the new majority's write.
func Example_syncInZK1675Window() {
	runExample("Example_syncInZK1675Window", func(sc *zkserver.Scope) {
		r := runZK1675Window(sc, false)
		v, _, _ := history.Check(context.Background(), r.rec.Operations(), "0", 10*time.Second)
		fmt.Println("new majority: set x=1 ok")
		fmt.Println("old leader still leads:", r.oldLeaderLedBefore && r.oldLeaderLedAfter)
		fmt.Println("sync on the old follower ok:", r.syncErr == nil)
		fmt.Println("read after sync:", r.read)
		fmt.Println("linearizable:", v == history.Linearizable)
	})
	// Output:
	// new majority: set x=1 ok
	// old leader still leads: true
	// sync on the old follower ok: true
	// read after sync: 0
	// linearizable: false
}

// TestY8_BarrierIsNoSnapshotAcrossPaths: a barrier gives B a lower bound
// for its next read, not a snapshot: reading /a and then /b, B can straddle
// another session's multi that changed both, and B's pair of values is a
// state the tree never had (claim Y8, article §2, last paragraph). The
// multi makes both changes one transaction, so the only states of (a, b)
// are ("0","0") before it and ("1","1") after it; B's pair is checked
// against them and against the zxids of what it read.
func TestY8_BarrierIsNoSnapshotAcrossPaths(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y8")
	tr := newTrio(t)
	for _, p := range []string{"/a", "/b"} {
		if _, err := tr.A.Create(p, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	phase(t, "B's barrier, then B reads /a")
	tr.pb.invoke("set /barrier")
	if _, err := tr.B.Set(barrierPath, []byte("b"), -1); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	tr.pb.ok("")
	a, aStat := readAs(t, tr.B, tr.pb, "/a")
	phase(t, "A changes /a and /b in one multi")
	tr.pa.invoke("multi [set /a \"1\", set /b \"1\"]")
	res, err := tr.A.Multi(&zk.SetDataRequest{Path: "/a", Data: []byte("1"), Version: -1}, &zk.SetDataRequest{Path: "/b", Data: []byte("1"), Version: -1})
	if err != nil {
		t.Fatalf("multi: %v", err)
	}
	multiZxid := res[0].Stat.Mzxid
	tr.pa.ok("zxid 0x%x", multiZxid)
	phase(t, "B reads /b (after a sync, so its follower has the multi)")
	if _, err := tr.B.Sync("/b"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	b, bStat := readAs(t, tr.B, tr.pb, "/b")
	evidence(t, "B read (a=%q at mzxid 0x%x, b=%q at mzxid 0x%x) across A's multi of zxid 0x%x; the tree only ever held (\"0\",\"0\") and (\"1\",\"1\")",
		a, aStat.Mzxid, b, bStat.Mzxid, multiZxid)
	if existed := a == b; existed {
		t.Errorf("Y8 refuted: got B's pair (a=%q, b=%q), a state that existed; want a pair that never existed", a, b)
	}
	if aStat.Mzxid >= multiZxid || bStat.Mzxid != multiZxid {
		t.Errorf("Y8 check broken: got a at mzxid 0x%x and b at 0x%x; want a before and b at the multi's 0x%x", aStat.Mzxid, bStat.Mzxid, multiZxid)
	}
}

// readAs reads path as the actor and returns the value and its stat.
func readAs(t zkserver.TB, c *zkclient.Client, a actor, path string) (string, *zk.Stat) {
	t.Helper()
	a.invoke("get %s", path)
	v, st, err := c.Get(path)
	if err != nil {
		a.fail("%v", err)
		t.Fatalf("get %s: %v", path, err)
	}
	a.ok("%q", v)
	return string(v), st
}

// Timing of Y7: the held acknowledgements must not make the leader drop
// those followers (syncLimit × tickTime = 10 s) while the test looks.
const (
	y7Tick      = time.Second
	y7SyncLimit = 10
)

// TestY7_SyncQueuesBehindAnOutstandingProposal: the leader answers a sync at
// once only when no proposal is outstanding; otherwise it parks the sync
// behind the last proposal and answers when that commits (claim Y7, article
// §2, Leader.processSync). On five servers the acknowledgements of three
// followers are held, so A's write is proposed but cannot reach a quorum of
// three. First, as a control, B's sync from the fifth server returns while
// nothing is outstanding. Then A writes, and B syncs again: the leader itself
// reports the parked sync (mntr zk_pending_syncs), B's sync has not
// returned, and it returns only after the acknowledgements are released and
// the write commits; B's read after it sees the write.
func TestY7_SyncQueuesBehindAnOutstandingProposal(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "Y7")
	c := startCluster(t, 5, zkserver.WithTickTime(y7Tick), zkserver.WithLimits(10, y7SyncLimit))
	leader, fs := c.Leader(), c.Followers()
	if len(fs) != 4 {
		t.Fatalf("got %d followers; want 4", len(fs))
	}
	silent, syncer := fs[:3], fs[3]
	A := zkclient.Connect(t, "A", []string{leader.Client})
	B := zkclient.Connect(t, "B", []string{syncer.Client})
	pa, pb := newActor(t, "A"), newActor(t, "B")
	if _, err := A.Create(xPath, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", xPath, err)
	}

	phase(t, "hold the acknowledgements of %v: the leader and %s are two of the five, one short of a quorum", labels(silent), syncer.Label)
	for _, f := range silent {
		c.links.Hold(f.ID, leader.ID)
	}
	phase(t, "control: nothing is outstanding, so the leader answers B's sync at once")
	syncAs(t, B, pb, within)

	phase(t, "A's write is proposed and cannot commit")
	pa.invoke("set %s \"1\"", xPath)
	written := make(chan error, 1)
	go func() { _, err := A.Set(xPath, []byte("1"), -1); written <- err }()
	wait.For(t, within, "the three silent followers to acknowledge into the hold", func() (bool, string) {
		var held []string
		ok := true
		for _, f := range silent {
			n := c.links.Proxy(zkserver.QuorumPort, f.ID, leader.ID).Stats().UpHeld
			ok = ok && n > 0
			held = append(held, fmt.Sprintf("%s=%d", f.Label, n))
		}
		return ok, "bytes held up: " + strings.Join(held, " ")
	})

	phase(t, "B syncs from %s while the write is outstanding", syncer.Label)
	pb.invoke("sync %s", xPath)
	synced := make(chan error, 1)
	go func() { _, err := B.Sync(xPath); synced <- err }()
	var early error
	wait.For(t, within, "the leader to park B's sync, or B's sync to return", func() (bool, string) {
		select {
		case err := <-synced:
			early = fmt.Errorf("sync returned (err %v) while the write was outstanding", err)
			return true, ""
		default:
		}
		n := mntr(t, leader)["zk_pending_syncs"]
		return n >= 1, fmt.Sprintf("leader zk_pending_syncs=%d", n)
	})
	if early != nil {
		t.Fatalf("Y7 refuted: %v", early)
	}
	select {
	case err := <-written:
		t.Fatalf("Y7 check broken: A's write returned (%v) without a quorum", err)
	default:
	}
	evidence(t, "with A's write outstanding, leader %s reports zk_pending_syncs=%d and B's sync has not returned", leader.Label, mntr(t, leader)["zk_pending_syncs"])
	pb.info("sync pending")

	phase(t, "release the acknowledgements: the write commits, then the sync returns")
	for _, f := range silent {
		c.links.Release(f.ID, leader.ID)
	}
	for name, ch := range map[string]chan error{"A's write": written, "B's sync": synced} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case <-time.After(within):
			t.Fatalf("Y7: %s did not return within %v of the release", name, within)
		}
	}
	pa.ok("")
	pb.ok("sync")
	v, _ := readAs(t, B, pb, xPath)
	evidence(t, "after the release B's sync returned and B read %q", v)
	if v != "1" {
		t.Errorf("Y7 refuted: the read after the parked sync returned %q; want \"1\"", v)
	}
}

// syncAs runs a sync as the actor and fails unless it returns within d.
func syncAs(t zkserver.TB, c *zkclient.Client, a actor, d time.Duration) {
	t.Helper()
	a.invoke("sync %s", xPath)
	done := make(chan error, 1)
	go func() { _, err := c.Sync(xPath); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			a.fail("%v", err)
			t.Fatalf("sync: %v", err)
		}
		a.ok("sync")
	case <-time.After(d):
		t.Fatalf("sync did not return within %v", d)
	}
}

// TestS4_SessionOrderAndNoGoingBack: ZooKeeper orders one session's requests
// and never lets the session see the past, although plain reads of two
// sessions are not ordered in real time (claim S4, article §1, second
// paragraph).
//   - On a lagging follower, B's write and then B's read: the write cannot
//     commit while the leader's stream to B's follower is held, and B's read,
//     sent after it, waits behind it and returns B's own value, while C's
//     plain read on the same follower, sent after B's, returns the old one.
//   - B, having seen zxid z, is moved to a follower whose last zxid is below
//     z: that server refuses the session (its own log says so) until it has
//     caught up, so B's read never returns the older state.
func TestS4_SessionOrderAndNoGoingBack(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "S4")
	// The server says why it turns a session away at INFO.
	tr := newTrio(t, zkserver.WithLogger("org.apache.zookeeper.server.ZooKeeperServer", "info"))
	t.Run("a session reads its own write on a lagging follower", func(t *testing.T) {
		readYourWrite(tr.in(t))
	})
	t.Run("a server behind the session's last zxid refuses it", func(t *testing.T) {
		noGoingBack(tr.in(t))
	})
}

// readYourWrite is the first half of S4: B pipelines set and get through its
// own proxy to the lagging follower; C reads there too.
func readYourWrite(tr *trio) {
	t := tr.t
	t.Helper()
	p := zkserver.ClientProxy(t, "B-proxy", tr.lagging)
	B := zkclient.Connect(t, "B2", []string{p.Addr()})
	C := zkclient.Connect(t, "C", []string{tr.lagging.Client})
	pb, pc := newActor(t, "B2"), newActor(t, "C")
	tr.holdLeaderStream()
	type reply struct {
		v   string
		st  *zk.Stat
		err error
	}
	wrote, read := make(chan reply, 1), make(chan reply, 1)
	u0, q := p.Stats().UpBytes, tr.quorumLink().Stats()
	pb.invoke("set %s \"7\"", xPath)
	go func() { st, err := B.Set(xPath, []byte("7"), -1); wrote <- reply{"7", st, err} }()
	tr.waitLeaderAnswered(q.UpBytes, q.DownHeld)
	u1 := p.Stats().UpBytes
	if u1 <= u0 {
		t.Fatalf("S4 check broken: got %d bytes up through B's proxy after the set; want more than %d", u1, u0)
	}
	pb.invoke("get %s", xPath)
	go func() { v, st, err := B.Get(xPath); read <- reply{string(v), st, err} }()
	wait.For(t, within, "B's get to reach its follower", func() (bool, string) {
		n := p.Stats().UpBytes
		return n > u1, fmt.Sprintf("%d bytes up (after the set: %d)", n, u1)
	})
	c, _ := readAs(t, C, pc, xPath)
	select {
	case r := <-read:
		t.Fatalf("S4 refuted: B's read returned %q (%v) before B's own write committed", r.v, r.err)
	default:
	}
	pb.info("set and get pending while C, on the same follower, read %q", c)
	tr.release()
	w, r := <-wrote, <-read
	if w.err != nil || r.err != nil {
		t.Fatalf("after release: set %v, get %v", w.err, r.err)
	}
	pb.ok("set: mzxid 0x%x", w.st.Mzxid)
	pb.ok("get: %q mzxid 0x%x", r.v, r.st.Mzxid)
	evidence(t, "on the lagging follower C read %q while B's get, sent after B's set, returned B's own %q at the set's zxid 0x%x", c, r.v, r.st.Mzxid)
	if c == "7" {
		t.Fatalf("S4 check broken: C read %q; want the follower's older value", c)
	}
	if r.v != "7" || r.st.Mzxid != w.st.Mzxid {
		t.Fatalf("S4 refuted: got B's read %q at mzxid 0x%x; want its own \"7\" at 0x%x", r.v, r.st.Mzxid, w.st.Mzxid)
	}
}

// mover dials whichever server it points at (with no target, the address
// the client asked for); moveTo closes the connections it gave out, so the
// client dials again and lands on the new server, and redirect leaves them
// open, so only the client's next dial lands there.
type mover struct {
	mu     sync.Mutex
	target string
	dials  map[string]int
	conns  []net.Conn
}

func (m *mover) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	m.mu.Lock()
	target := cmp.Or(m.target, addr)
	m.dials[target]++
	m.mu.Unlock()
	c, err := net.DialTimeout(network, target, timeout)
	if err == nil {
		m.mu.Lock()
		m.conns = append(m.conns, c)
		m.mu.Unlock()
	}
	return c, err
}

func (m *mover) moveTo(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.target = addr
	for _, c := range m.conns {
		_ = c.Close()
	}
	m.conns = nil
}

func (m *mover) redirect(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.target = addr
}

func (m *mover) dialsTo(addr string) int { m.mu.Lock(); defer m.mu.Unlock(); return m.dials[addr] }

// noGoingBack is the second half of S4.
func noGoingBack(tr *trio) {
	t := tr.t
	t.Helper()
	m := &mover{target: tr.fresh.Client, dials: map[string]int{}}
	B := zkclient.Connect(t, "B3", []string{tr.fresh.Client}, zkclient.WithDialer(m.dial))
	pb := newActor(t, "B3")
	tr.holdLeaderStream()
	pb.invoke("set %s \"8\" (through %s)", xPath, tr.fresh.Label)
	st, err := B.Set(xPath, []byte("8"), -1)
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	pb.ok("zxid 0x%x", st.Mzxid)
	behind, err := tr.lagging.Srvr()
	if err != nil {
		t.Fatalf("srvr %s: %v", tr.lagging.Label, err)
	}
	if behind.Zxid >= st.Mzxid {
		t.Fatalf("S4 check broken: %s is at zxid 0x%x; want it behind B's 0x%x", tr.lagging.Label, behind.Zxid, st.Mzxid)
	}
	phase(t, "B, having seen 0x%x, is moved to %s, whose last zxid is 0x%x", st.Mzxid, tr.lagging.Label, behind.Zxid)
	const refusal = "Refusing session" // 3.9 adds the session id: "Refusing session(0x…) request"
	tr.lagging.WatchLog(refusal)
	mark := B.Mark()
	m.moveTo(tr.lagging.Client)
	sid := B.SessionID()
	pb.invoke("get %s (on %s)", xPath, tr.lagging.Label)
	type reply struct {
		v   string
		err error
	}
	read := make(chan reply, 1)
	go func() { v, _, err := B.Get(xPath); read <- reply{string(v), err} }()
	wait.For(t, 2*within, "S4: B to be turned away by "+tr.lagging.Label+" twice", func() (bool, string) {
		n := m.dialsTo(tr.lagging.Client)
		return n >= 2, fmt.Sprintf("%d dials to %s; states since the move %v", n, tr.lagging.Label, B.States()[mark:])
	})
	if slices.Contains(B.States()[mark:], zk.StateHasSession) {
		t.Fatalf("S4 refuted: %s gave B a session although it was behind (states since the move %v)", tr.lagging.Label, B.States()[mark:])
	}
	// While refused, B may get an error, never an older value.
	select {
	case r := <-read:
		if r.err == nil {
			t.Fatalf("S4 refuted: B read %q on %s while it was behind B's zxid", r.v, tr.lagging.Label)
		}
		pb.fail("get: %v", r.err)
	default:
		pb.info("get pending")
	}
	said, err := tr.lagging.WaitLog(within, refusal)
	if err != nil {
		t.Fatalf("S4 refuted: %v", err)
	}
	evidence(t, "after %d dials to %s, B has no session there (states since the move %v); the server logged: %s", m.dialsTo(tr.lagging.Client), tr.lagging.Label, B.States()[mark:], said)
	if want := fmt.Sprintf("seen zxid 0x%x", st.Mzxid); !strings.Contains(said, want) {
		t.Fatalf("S4 check broken: got the server's line %q; want it to name B's zxid (%q)", said, want)
	}
	tr.release()
	if err := B.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("B after the release: %v", err)
	}
	v, _ := readAs(t, B, pb, xPath)
	evidence(t, "after %s caught up B has its session 0x%x again (was 0x%x) and read %q", tr.lagging.Label, B.SessionID(), sid, v)
	if B.SessionID() != sid || v != "8" {
		t.Fatalf("S4 refuted: got session 0x%x reading %q after the move; want the same session 0x%x reading its own \"8\"", B.SessionID(), v, sid)
	}
}

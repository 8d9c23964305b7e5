package zk19_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/faultproxy"
	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// lostCreate is the article's §4 experiment: A's create of a lock candidate
// reaches the server, the proxy drops its successful reply and closes A's
// connection, and A reconnects in the same session.
type lostCreate struct {
	root          string
	proxy         *faultproxy.Proxy
	A, O          *zkclient.Client // A through the proxy; O, an observer, direct
	locker        *lock.Locker
	guid          string
	createErr     error
	drop          faultproxy.DropResult
	before, after int64 // A's session id before the create and after reconnecting
}

func runLostCreate(t zkserver.TB) *lostCreate {
	t.Helper()
	s := sharedServer(t)
	lc := &lostCreate{}
	lc.O = connect(t, "O", []string{s.Client})
	lc.root = testRoot(t, lc.O)
	lc.proxy = clientProxy(t, "A-proxy", s)
	lc.A = connect(t, "A", []string{lc.proxy.Addr()})
	l, err := lock.New(lc.A.Conn, lc.root)
	if err != nil {
		t.Fatalf("locker: %v", err)
	}
	lc.locker = l
	pa := newActor(t, "A")
	lc.before = lc.A.SessionID()
	lc.guid = l.NewGUID()

	phase(t, "the proxy will drop the successful reply of A's create under %s", lc.root)
	d := lc.proxy.DropReply(faultproxy.MatchCreateUnder(lc.root))
	mark := lc.A.Mark()
	pa.invoke("create %s EPHEMERAL_SEQUENTIAL (session 0x%x)", l.Prefix(lc.guid), lc.before)
	_, lc.createErr = l.Create(context.Background(), lc.guid)
	select {
	case <-d.Done():
	case <-time.After(waitWithin):
		t.Fatalf("R1: the proxy's drop did not finish within %v", waitWithin)
	}
	lc.drop = d.Result()
	if lc.createErr != nil {
		pa.info("connection lost: %v (reply dropped, xid=%d)", lc.createErr, lc.drop.Xid)
	} else {
		pa.ok("create returned a path although the reply was dropped")
	}
	phase(t, "A reconnects through the proxy")
	if err := lc.A.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("R2: %v", err)
	}
	lc.after = lc.A.SessionID()
	pa.info("reconnected: session 0x%x (before the create 0x%x)", lc.after, lc.before)
	return lc
}

// observed lists, as the observer sees them directly on the server, the
// children of root that carry guid, with their owners.
func (lc *lostCreate) observed(t zkserver.TB) map[string]int64 {
	t.Helper()
	kids, _, err := lc.O.Children(lc.root)
	if err != nil {
		t.Fatalf("O children: %v", err)
	}
	out := map[string]int64{}
	for _, k := range kids {
		if !strings.Contains(k, lc.guid) {
			continue
		}
		_, st, err := lc.O.Exists(lc.root + "/" + k)
		if err == nil && st != nil {
			out[k] = st.EphemeralOwner
		}
	}
	t.Logf("O sees %d node(s) with the GUID: %v", len(out), out)
	return out
}

// TestR1_ProxyDropsTheSuccessfulCreateReply: the create reaches the server
// and succeeds; the proxy recognises the reply by xid with err=0, discards it
// and closes A's connection; A's call returns a connection-loss error while
// the node exists on the server (claim R1, article §4 "create 回复丢失以后怎样找回节点").
func TestR1_ProxyDropsTheSuccessfulCreateReply(t *testing.T) {
	claim(t, "R1", "§4 a lost create reply", "the create succeeds on the server, its reply is dropped, and the client sees a connection loss")
	lc := runLostCreate(t)
	t.Logf("evidence: target xid=%d op=%d zxid=%#x err=%d dropped=%v; client error: %v", lc.drop.Xid, lc.drop.Op, lc.drop.Zxid, lc.drop.Err, lc.drop.Dropped, lc.createErr)
	if !lc.drop.Dropped || lc.drop.Err != 0 || lc.drop.Xid <= 0 {
		t.Errorf("R1 violated: got drop result %+v; want a dropped reply with err=0 and a positive xid", lc.drop)
	}
	if !errors.Is(lc.createErr, zk.ErrConnectionClosed) {
		t.Errorf("R1 violated: create returned %v; want a connection-loss error (zk.ErrConnectionClosed)", lc.createErr)
	}
	if n := len(lc.observed(t)); n != 1 {
		t.Errorf("R1 violated: the server holds %d nodes with A's GUID; want 1 (the create succeeded)", n)
	}
}

// TestR2_SessionSurvivesTheLostReply: A reconnects through the proxy and its
// session id is unchanged (claim R2, article §4).
func TestR2_SessionSurvivesTheLostReply(t *testing.T) {
	claim(t, "R2", "§4", "the client reconnects and keeps its session id")
	lc := runLostCreate(t)
	t.Logf("session before 0x%x, after 0x%x; proxy accepted %d connections", lc.before, lc.after, lc.proxy.Stats().Accepted)
	if lc.after != lc.before || lc.after == 0 {
		t.Errorf("R2 violated: session 0x%x after reconnecting; want the same 0x%x", lc.after, lc.before)
	}
	if got := lc.proxy.Stats().Accepted; got < 2 {
		t.Errorf("R2 check broken: the proxy accepted %d connections; want a reconnection (>= 2)", got)
	}
}

// TestR3_RecoverFindsExactlyTheServersNode: recovery in the same session with
// the same GUID lists the parent and keeps the one child that carries the
// GUID and is owned by this session: it is the node the server created, as a
// second client sees it directly (claim R3, article §4). The proxy never read
// the reply's path, so the answer cannot come from the fault injector.
func TestR3_RecoverFindsExactlyTheServersNode(t *testing.T) {
	claim(t, "R3", "§4", "recovery by GUID and ephemeralOwner finds exactly the node the server created")
	lc := runLostCreate(t)
	pa := newActor(t, "A")
	pa.invoke("recover guid=%s", lc.guid)
	c, err := lc.locker.Recover(context.Background(), lc.guid)
	if err != nil {
		pa.fail("%v", err)
		t.Fatalf("R3 violated: recover: %v", err)
	}
	pa.ok("%s", c.Name)
	seen := lc.observed(t)
	if len(seen) != 1 {
		t.Fatalf("R3: the observer sees %d nodes with the GUID; want 1", len(seen))
	}
	for name, owner := range seen {
		if name != c.Name || owner != lc.after {
			t.Errorf("R3 violated: recovered %s; the server has %s owned by 0x%x; want the same node owned by A's session 0x%x", c.Name, name, owner, lc.after)
		}
	}
	h, err := lc.locker.AcquireFrom(context.Background(), c)
	if err != nil {
		t.Fatalf("R3: acquire with the recovered candidate: %v", err)
	}
	pa.ok("holds with the recovered candidate, token %v", h.Token)
	if err := h.Release(context.Background()); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestR4_BlindRetryMakesASecondNodeAndRecoveryRefuses: retrying the same
// create after the lost reply makes a second node, because sequential
// creates are not deduplicated by name; recovery then finds two matches in
// this session and fails with an ambiguity error, deleting nothing (claim R4,
// article §4).
func TestR4_BlindRetryMakesASecondNodeAndRecoveryRefuses(t *testing.T) {
	claim(t, "R4", "§4", "a blind retry makes a second node; recovery refuses the ambiguity and deletes nothing")
	lc := runLostCreate(t)
	pa := newActor(t, "A")
	pa.invoke("create %s again (blind retry)", lc.locker.Prefix(lc.guid))
	c2, err := lc.locker.Create(context.Background(), lc.guid)
	if err != nil {
		t.Fatalf("retry create: %v", err)
	}
	pa.ok("%s", c2.Name)
	if n := len(lc.observed(t)); n != 2 {
		t.Fatalf("R4 violated: %d nodes carry the GUID after the retry; want 2", n)
	}
	pa.invoke("recover guid=%s", lc.guid)
	_, err = lc.locker.Recover(context.Background(), lc.guid)
	pa.fail("%v", err)
	var re *lock.RecoverError
	if !errors.Is(err, lock.ErrAmbiguous) || !errors.As(err, &re) || len(re.Owned) != 2 {
		t.Errorf("R4 violated: recover returned %v; want ErrAmbiguous listing both nodes", err)
	}
	if n := len(lc.observed(t)); n != 2 {
		t.Errorf("R4 violated: recovery left %d nodes; want both still there", n)
	}
}

// TestR5_NoMatchIsMissingNotANewAcquisition: with no node carrying the GUID,
// recovery reports "missing" and creates nothing (claim R5, article §4).
func TestR5_NoMatchIsMissingNotANewAcquisition(t *testing.T) {
	claim(t, "R5", "§4", "no match is an explicit missing error; recovery never becomes a new acquisition")
	s := sharedServer(t)
	A := connect(t, "A", []string{s.Client})
	root := testRoot(t, A)
	l, err := lock.New(A.Conn, root)
	if err != nil {
		t.Fatal(err)
	}
	guid := l.NewGUID()
	pa := newActor(t, "A")
	pa.invoke("recover guid=%s (never created)", guid)
	_, err = l.Recover(context.Background(), guid)
	pa.fail("%v", err)
	if !errors.Is(err, lock.ErrMissing) {
		t.Errorf("R5 violated: got %v; want ErrMissing", err)
	}
	kids, _, _ := A.Children(root)
	if len(kids) != 0 {
		t.Errorf("R5 violated: recovery left children %v; want none created", kids)
	}
}

// TestR6_ANodeOfAnotherSessionIsNotAdopted: a node that carries the GUID but
// is owned by another session is not recovered (claim R6, article §4).
func TestR6_ANodeOfAnotherSessionIsNotAdopted(t *testing.T) {
	claim(t, "R6", "§4", "a GUID match owned by another session is not adopted")
	s := sharedServer(t)
	A := connect(t, "A", []string{s.Client})
	B := connect(t, "B", []string{s.Client})
	root := testRoot(t, A)
	la, err := lock.New(A.Conn, root)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := lock.New(B.Conn, root)
	if err != nil {
		t.Fatal(err)
	}
	guid := la.NewGUID()
	pb, pa := newActor(t, "B"), newActor(t, "A")
	pb.invoke("create %s (B's session 0x%x, A's GUID)", lb.Prefix(guid), B.SessionID())
	cb, err := lb.Create(context.Background(), guid)
	if err != nil {
		t.Fatal(err)
	}
	pb.ok("%s", cb.Name)
	pa.invoke("recover guid=%s (A's session 0x%x)", guid, A.SessionID())
	got, err := la.Recover(context.Background(), guid)
	pa.fail("%v", err)
	var re *lock.RecoverError
	if got != nil || !errors.Is(err, lock.ErrMissing) || !errors.As(err, &re) || len(re.Foreign) != 1 {
		t.Errorf("R6 violated: recover returned %v, %v; want ErrMissing with B's node listed as foreign", got, err)
	}
}

// TestR7_ProxyReadsHeadersAndTheCreateRequestOnly: the proxy learns the
// target xid from the request header and the CreateRequest's path, and the
// outcome from the reply header (xid, zxid, err); it has no decoder for the
// create's response body, so recovery cannot learn the path from it. The
// first frame of each connection, the session handshake, passes unread: the
// drop's xid is the create's, not a value read from a handshake (claim R7,
// article §4). The frame decoders themselves are fuzzed in internal/jute,
// and internal/faultproxy's TestZKNeverDecodesCreateReplyBody and
// TestZKFirstFrameIsNeverParsed check both properties byte by byte.
func TestR7_ProxyReadsHeadersAndTheCreateRequestOnly(t *testing.T) {
	claim(t, "R7", "§4", "the proxy decodes only headers and the CreateRequest, and passes each connection's handshake unread")
	lc := runLostCreate(t)
	if lc.drop.Op != 1 && lc.drop.Op != 15 { // create or create2
		t.Errorf("R7 violated: the dropped reply belongs to op %d; want a create", lc.drop.Op)
	}
	if lc.drop.Conn != 1 {
		t.Errorf("R7: the drop happened on connection #%d; want #1 (the create's own connection)", lc.drop.Conn)
	}
	// go-zookeeper numbers requests from 1 per session; the handshake has no
	// xid. A proxy that read the handshake as a header would have matched
	// garbage or shifted every later frame.
	if lc.drop.Xid < 1 || lc.drop.Xid > 10 {
		t.Errorf("R7 violated: target xid %d; want a small request xid", lc.drop.Xid)
	}
	t.Logf("the drop result carries xid=%d op=%d zxid=%#x err=%d and no path", lc.drop.Xid, lc.drop.Op, lc.drop.Zxid, lc.drop.Err)
}

// testSessionTimeout is the session timeout asked for where a claim is
// about natural expiry; the server's tickTime lets it be this short.
const testSessionTimeout = time.Second

// TestR8_AfterExpiryTheOldNodeGivesNoCandidacy: once A's session has expired,
// its node is gone and the old candidate gives no candidacy: the pinned
// locker refuses to recover in the new session the client opened by itself,
// and a new acquisition uses a new GUID (claim R8, article §4).
func TestR8_AfterExpiryTheOldNodeGivesNoCandidacy(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "R8", "§4", "after session expiry the old node gives no candidacy; a new acquisition uses a new GUID")
	s := zkserver.Start(t, zkserver.WithTickTime(100*time.Millisecond))
	O := connect(t, "O", []string{s.Client})
	root := testRoot(t, O)
	p := clientProxy(t, "A-proxy", s)
	A := connect(t, "A", []string{p.Addr()}, zkclient.WithSessionTimeout(testSessionTimeout))
	l, err := lock.New(A.Conn, root)
	if err != nil {
		t.Fatal(err)
	}
	pa, po := newActor(t, "A"), newActor(t, "O")
	guid := l.NewGUID()
	c, err := l.Create(context.Background(), guid)
	if err != nil {
		t.Fatal(err)
	}
	pa.ok("created %s in session 0x%x", c.Name, A.SessionID())
	_, _, gone, err := O.ExistsW(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	phase(t, "A's traffic is blackholed; its session expires on the server")
	p.Blackhole(faultproxy.Both)
	t.Cleanup(p.Heal)
	select {
	case ev := <-gone:
		po.ok("event %v on %s: A's node deleted by the server", ev.Type, ev.Path)
	case <-time.After(10 * testSessionTimeout):
		t.Fatalf("R8: A's node was not deleted within %v", 10*testSessionTimeout)
	}
	old := A.SessionID()
	mark := A.Mark()
	p.Heal()
	if err := A.WaitStateSince(mark, zk.StateExpired, zkclient.ConnectWithin); err != nil {
		t.Fatalf("R8: %v", err)
	}
	if err := A.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin); err != nil {
		t.Fatalf("R8: %v", err)
	}
	pa.info("expired; the client opened session 0x%x by itself (old 0x%x)", A.SessionID(), old)
	_, err = l.Recover(context.Background(), guid)
	pa.fail("recover in the new session: %v", err)
	if !errors.Is(err, lock.ErrSessionChanged) {
		t.Errorf("R8 violated: recover after expiry returned %v; want ErrSessionChanged", err)
	}
	if _, err := l.AcquireFrom(context.Background(), c); err == nil {
		t.Errorf("R8 violated: the expired candidate acquired; want an error")
	} else {
		pa.fail("acquire with the old candidate: %v", err)
	}
	l2, err := lock.New(A.Conn, root)
	if err != nil {
		t.Fatal(err)
	}
	h, err := l2.Acquire(context.Background())
	if err != nil {
		t.Fatalf("new acquisition: %v", err)
	}
	pa.ok("new acquisition %s", h.Name)
	if h.GUID == guid {
		t.Errorf("R8 violated: the new acquisition reused GUID %s; want a new one", guid)
	}
	_ = h.Release(context.Background())
}

// Example_x1RetryAfterConnectionLoss is exercise 1 of the article: after a
// create whose reply was lost, retrying with the same prefix gets a larger
// sequence number, but the first create still exists; recovery must check
// the session and ephemeralOwner and handle zero and many matches (claim X1).
func Example_x1RetryAfterConnectionLoss() {
	runExample("Example_x1RetryAfterConnectionLoss", func(sc *zkserver.Scope) {
		lc := runLostCreate(sc)
		first, err := lc.locker.Recover(context.Background(), lc.guid)
		fmt.Println("create returned connection loss:", errors.Is(lc.createErr, zk.ErrConnectionClosed))
		fmt.Println("same session after reconnect:", lc.after == lc.before)
		fmt.Println("recover finds exactly one node:", err == nil && first != nil)
		second, err := lc.locker.Create(context.Background(), lc.guid)
		if err != nil {
			panic(err)
		}
		fmt.Println("retry gets a larger sequence number:", second.Seq > first.Seq)
		fmt.Println("first create still exists:", len(lc.observed(sc)) == 2)
		_, err = lc.locker.Recover(context.Background(), lc.guid)
		fmt.Println("recover now refuses as ambiguous:", errors.Is(err, lock.ErrAmbiguous))
		_, err = lc.locker.Recover(context.Background(), lc.locker.NewGUID())
		fmt.Println("recover of an unknown GUID is missing:", errors.Is(err, lock.ErrMissing))
	})
	// Output:
	// create returned connection loss: true
	// same session after reconnect: true
	// recover finds exactly one node: true
	// retry gets a larger sequence number: true
	// first create still exists: true
	// recover now refuses as ambiguous: true
	// recover of an unknown GUID is missing: true
}

// BenchmarkProxyOverhead measures getData through the client proxy against
// getData direct, in one run: median latency added and throughput ratio.
func BenchmarkProxyOverhead(b *testing.B) {
	s := sharedServer(b)
	p, err := faultproxy.New(s.Client, faultproxy.WithZooKeeperFrames())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	direct := zkclient.Connect(b, "direct", []string{s.Client}, zkclient.Quiet())
	proxied := zkclient.Connect(b, "proxied", []string{p.Addr()}, zkclient.Quiet())
	measure := func(c *zkclient.Client, n int) (median time.Duration, perSec float64) {
		lat := make([]time.Duration, n)
		start := time.Now()
		for i := range lat {
			t0 := time.Now()
			if _, _, err := c.Get("/"); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}
		total := time.Since(start)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return lat[n/2], float64(n) / total.Seconds()
	}
	n := max(b.N, 200)
	b.ResetTimer()
	dm, dr := measure(direct, n)
	pm, pr := measure(proxied, n)
	b.ReportMetric(float64(dm.Microseconds()), "µs-median-direct")
	b.ReportMetric(float64(pm.Microseconds()), "µs-median-proxied")
	b.ReportMetric(float64((pm - dm).Microseconds()), "µs-added")
	b.ReportMetric(pr/dr, "throughput-ratio")
}

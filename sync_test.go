package zk19_test

// §2 of the article (sync 的边界不能省略): what sync does and does not give.
// The ZOOKEEPER-1675 window first, as Example_s2SyncInZK1675Window; then
// Y1 to Y9, in the order the article states them: sync waits for the
// leader's stream, a write barrier gives its progress and costs a replicated
// write, heartbeats and exists do not advance a follower, and one barrier
// makes no snapshot across paths or later reads.

import (
	"fmt"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/proof/replicas"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Example_s2SyncInZK1675Window is the article's ZOOKEEPER-1675 flowchart
// (§2 ¶3's diagram) run on five real servers; it proves claim Y2 (§2 ¶2,
// sentence 1).
//
// The steps: the old leader and one old follower are cut off from the
// other three, asymmetrically (see ZK1675.Cut); the three elect a new
// leader and C commits x=1 on their side, while the old leader still
// reports leading (the window is seen open, not guessed). B, on the old
// follower, calls sync: the old leader answers it at once, and B's read
// after it returns x=0. Porcupine rejects the history, with sync and read
// as one composite read. Last, unprinted, how long the window stayed open:
// the time from the cut until the old leader steps down.
//
// The Example judges Y2 itself: not shown when the window was not open
// around B's sync and read (the old leader did not report leading, or C's
// write did not commit), refuted when the sync fails inside it, B reads
// x=1 or porcupine accepts the history. Every printed line is what the run
// observed; each call and fault is logged.
func Example_s2SyncInZK1675Window() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "Y2")
	w := replicas.NewZK1675(sc) // five servers, a proxy on every link, x=0 everywhere; B on a follower of the leader
	old, B := w.Old, w.B
	oldMode, bMode := w.Mode(old), w.Mode(w.OldFollower)
	if oldMode != "leader" || bMode != "follower" {
		claims.NotShown(sc, "Y2", "before the cut the old leader reports %s and B's server %s; want leader and follower", oldMode, bMode)
	}
	fmt.Println("before the cut: old leader is", oldMode, "| B's server is", bMode)

	w.Cut() // {old leader, B's server} | the other three
	N := w.NewLeader()
	fmt.Println("the other three elected a server that is", w.Mode(N))
	C := w.History.Join(sc, "C", 3, N)
	version := C.Set("1")
	if version != 1 {
		claims.NotShown(sc, "Y2", "C's write of x=1 gave version %d; want 1", version)
	}
	fmt.Println("C: set x=1 on the new side, version", version)

	before := w.Mode(old)
	if before != "leader" {
		claims.NotShown(sc, "Y2", "the window was not open: the old leader reported %q before B's sync; want leader", before)
	}
	fmt.Println("the old leader still reports", before)
	err := B.Sync()
	if err != nil {
		claims.RefutedNow(sc, "Y2", "sync on the old follower failed inside the window: %v", err)
	}
	fmt.Println("B: sync on the old follower, error:", err)
	read := B.Get()
	after := w.Mode(old)
	claims.Evidence(sc, "B's sync on %s succeeded and B read %q after the new majority committed \"1\"; the old leader %s reported mode %q before and %q after the read, %v after the cut",
		w.OldFollower.Label, read, old.Label, before, after, w.SinceCut())
	if after != "leader" {
		claims.NotShown(sc, "Y2", "the window closed during B's sync and read: the old leader reported %q after the read; want leader", after)
	}
	if read != "0" {
		claims.RefutedNow(sc, "Y2", "after a successful sync B read %q; want the old \"0\"", read)
	}
	fmt.Println("B: get x ->", read)
	fmt.Println("the old leader still reports", after)
	verdict := w.History.Verdict(sc, "Y2")
	claims.Evidence(sc, "porcupine: the history of the window, with sync and read as one composite read, is %v (%d operations)", verdict, len(w.History.Rec.Operations()))
	if verdict != history.NotLinearizable {
		claims.RefutedNow(sc, "Y2", "porcupine: got %v for the history of the window; want not linearizable", verdict)
	}
	fmt.Println("porcupine:", verdict)
	w.WaitStepDown()
	// Output:
	// before the cut: old leader is leader | B's server is follower
	// the other three elected a server that is leader
	// C: set x=1 on the new side, version 1
	// the old leader still reports leader
	// B: sync on the old follower, error: <nil>
	// B: get x -> 0
	// the old leader still reports leader
	// porcupine: not linearizable
}

// TestY1_SyncWaitsForTheLeaderStream: with a current, healthy leader, sync
// on the lagging follower does not return while the leader's stream to it is
// held, and the read after it returns the new value (claim Y1, article §2
// "sync 的边界不能省略"). The test does not guess a window: it waits until the
// follower has forwarded the sync and the leader has answered into the
// proxy's buffer, then checks that sync is still pending.
func TestY1_SyncWaitsForTheLeaderStream(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it), on which sync waits for the held stream"))
	claims.Open(t, "Y1")
	requireWaitsForTheStream(t, "Y1", zh.Say("sync %s", replicas.XPath), func(tr *replicas.Trio) error { _, err := tr.B.Conn.Sync(replicas.XPath); return err })
}

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
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("five servers of its own, with followers' acknowledgements held on their links to the leader"))
	claims.Open(t, "Y7")
	c := harness.StartCluster(t, 5, zkserver.WithTickTime(replicas.HeldAcksTick), zkserver.WithLimits(10, replicas.HeldAcksSyncLimit))
	leader, fs := c.Leader(), c.Followers()
	if len(fs) != 4 {
		t.Fatalf("got %d followers; want 4", len(fs))
	}
	silent, syncer := fs[:3], fs[3]
	A := zkclient.Connect(t, "A", []string{leader.Client})
	B := zkclient.Connect(t, "B", []string{syncer.Client})
	pa, pb := claims.NewActor(t, "A"), claims.NewActor(t, "B")
	if _, err := A.Create(replicas.XPath, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", replicas.XPath, err)
	}

	claims.Phase(t, "hold the acknowledgements of %v: the leader and %s are two of the five, one short of a quorum", harness.Labels(silent), syncer.Label)
	for _, f := range silent {
		c.Links.Hold(f.ID, leader.ID)
	}
	claims.Phase(t, "control: nothing is outstanding, so the leader answers B's sync at once")
	replicas.SyncAs(t, B, pb, harness.Within)

	claims.Phase(t, "A's write is proposed and cannot commit")
	// Bytes held on the followers' links say nothing of A's write: their
	// pings are held too. The leader counts a proposal once it has put it
	// among the outstanding ones and sent it, so its count passing the one
	// read before the write is the write outstanding.
	proposals := harness.Mntr(t, leader)["zk_proposal_count"]
	pa.Invoke("set %s \"1\"", replicas.XPath)
	written := make(chan error, 1)
	go func() { _, err := A.Set(replicas.XPath, []byte("1"), -1); written <- err }()
	tb.WaitFor(t, harness.Within, "the leader to propose A's write", func() (bool, string) {
		n := harness.Mntr(t, leader)["zk_proposal_count"]
		return n > proposals, fmt.Sprintf("leader zk_proposal_count=%d (%d before the write)", n, proposals)
	})

	claims.Phase(t, "B syncs from %s while the write is outstanding", syncer.Label)
	pb.Invoke("sync %s", replicas.XPath)
	synced := make(chan error, 1)
	go func() { _, err := B.Sync(replicas.XPath); synced <- err }()
	var early error
	tb.WaitFor(t, harness.Within, "the leader to park B's sync, or B's sync to return", func() (bool, string) {
		select {
		case err := <-synced:
			early = fmt.Errorf("sync returned (err %v) while the write was outstanding", err)
			return true, ""
		default:
		}
		n := harness.Mntr(t, leader)["zk_pending_syncs"]
		return n >= 1, fmt.Sprintf("leader zk_pending_syncs=%d", n)
	})
	// A write that returned had a quorum: the acknowledgements were not
	// held, and a sync returning early then says nothing about Y7.
	select {
	case err := <-written:
		claims.NotShown(t, "Y7", "A's write returned (%v) without a quorum", err)
	default:
	}
	if early != nil {
		claims.RefutedNow(t, "Y7", "%v", early)
	}
	claims.Evidence(t, "with A's write outstanding, leader %s reports zk_pending_syncs=%d and B's sync has not returned", leader.Label, harness.Mntr(t, leader)["zk_pending_syncs"])
	pb.Info("sync pending")

	claims.Phase(t, "release the acknowledgements: the write commits, then the sync returns")
	for _, f := range silent {
		c.Links.Release(f.ID, leader.ID)
	}
	for name, ch := range map[string]chan error{"A's write": written, "B's sync": synced} {
		if err := tb.Receive(t, harness.Within, "Y7: the return of "+name+" after the release", ch); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	pa.Ok("")
	pb.Ok("sync")
	v, _ := replicas.ReadAs(t, B, pb, replicas.XPath)
	claims.Evidence(t, "after the release B's sync returned and B read %q", v)
	if v != "1" {
		claims.Refuted(t, "Y7", "the read after the parked sync returned %q; want \"1\"", v)
	}
}

// TestY3_WriteBarrierGivesItsProgress: a successful real update by B's own
// session (a write barrier on another node) does not return before B's
// follower has applied it, and it comes after A's write in the leader's
// stream, so the read after it sees x=1 (claim Y3, article §2).
func TestY3_WriteBarrierGivesItsProgress(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it), on which a write barrier waits for the held stream"))
	claims.Open(t, "Y3")
	requireWaitsForTheStream(t, "Y3", zh.Say("set %s (write barrier)", replicas.BarrierPath), func(tr *replicas.Trio) error {
		_, err := tr.B.Conn.Set(replicas.BarrierPath, []byte("b"), -1)
		return err
	})
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
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it), which exists and heartbeats leave behind"))
	claims.Open(t, "Y4")
	trio := replicas.NewTrio(t)
	t.Run("exists does not advance the follower", func(t *testing.T) {
		tr := trio.In(t)
		tr.LagBehind("1")
		tr.B.Log.Invoke("exists %s", replicas.XPath)
		ok, _, err := tr.B.Exists(replicas.XPath)
		if err != nil {
			t.Fatalf("exists: %v", err)
		}
		tr.B.Log.Ok("%v", ok)
		v := tr.B.Get()
		claims.Evidence(t, "after exists returned %v, B read %q (A had written \"1\")", ok, v)
		if v != "0" {
			claims.Refuted(t, "Y4", "after exists B read %q; want \"0\"", v)
		}
		tr.CatchUp("1")
	})
	t.Run("heartbeats do not advance the follower", func(t *testing.T) {
		tr := trio.In(t)
		tr.LagBehind("2")
		line, err := replicas.ConsFor(tr.Lagging, tr.B.SessionID())
		if err != nil {
			t.Fatal(err)
		}
		recv0, _ := strconv.Atoi(replicas.ConsField(line, "recved"))
		const heartbeats = 2 // one every third of B's session timeout: several of the server's ticks
		tb.WaitFor(t, 2*harness.Within, fmt.Sprintf("%d heartbeats from B at its follower", heartbeats), func() (bool, string) {
			l, err := replicas.ConsFor(tr.Lagging, tr.B.SessionID())
			n, _ := strconv.Atoi(replicas.ConsField(l, "recved"))
			return err == nil && n >= recv0+heartbeats && replicas.ConsField(l, "lop") == "PING", fmt.Sprintf("%s %v", l, err)
		})
		l, _ := replicas.ConsFor(tr.Lagging, tr.B.SessionID())
		t.Logf("B's follower after the heartbeats: %s", l)
		v := tr.B.Get()
		claims.Evidence(t, "after %d heartbeats counted at B's follower, B read %q (A had written \"2\")", heartbeats, v)
		if v != "1" {
			claims.Refuted(t, "Y4", "after %d heartbeats B read %q; want the stale \"1\"", heartbeats, v)
		}
		tr.CatchUp("2")
	})
	t.Run("a failed conditional set is recorded as the server handles it", func(t *testing.T) {
		tr := trio.In(t)
		tr.LagBehind("3")
		z0, err := tr.LeaderServer.Srvr()
		if err != nil {
			t.Fatal(err)
		}
		r := tr.BlockedUntilRelease("set /x \"9\" version 99 (wrong version)", func() error {
			_, err := tr.B.Conn.Set(replicas.XPath, []byte("9"), 99)
			return err
		})
		z1, err := tr.LeaderServer.Srvr()
		if err != nil {
			t.Fatal(err)
		}
		consumed := z1.Zxid > z0.Zxid
		observed := zh.Say("on %s a failed set (err=%v) moved the leader's zxid 0x%x -> 0x%x; pending while held: %v; read after it: %q",
			z1.Version, r.Err, z0.Zxid, z1.Zxid, !r.DoneBeforeRelease, r.ReadAfter)
		if consumed {
			// The article says a failed conditional check cannot stand in for
			// a barrier; here it did act as one. Not a documented guarantee:
			// the article's sentence holds as "not guaranteed".
			claims.Differs(t, "%s: the failed update passed the commit chain and acted as a barrier", observed)
		} else {
			claims.Evidence(t, "%s: the failed update did not advance the follower", observed)
		}
		if r.Err != zk.ErrBadVersion {
			claims.BrokenCheck(t, "Y4", "got %v; want zk.ErrBadVersion (the set was to fail its version check)", r.Err)
		}
		// What was observed must hang together: an error transaction that
		// consumed a zxid waits for the stream and makes the read fresh; one
		// that did not is answered at once and the read stays stale.
		if consumed != !r.DoneBeforeRelease || consumed != (r.ReadAfter == "3") {
			claims.BrokenCheck(t, "Y4", "inconsistent observation: consumed a zxid %v, pending while held %v, read after %q", consumed, !r.DoneBeforeRelease, r.ReadAfter)
		}
	})
}

// TestY9_WriteBarrierCostsAReplicatedWrite: the progress a write barrier
// gives (Y3) is paid for with a replicated write (claim Y9, §2 ¶4). On a
// 3-server ensemble with link proxies and no fault, B, on a follower,
// reads /x three ways, interleaved: a plain get, sync then get, and a set
// of /barrier then get. What each cost is measured from outside the
// client: every server's zxid (srvr) advances by one per set and by none
// for the syncs and gets; the proxy on B's follower's link to the leader
// sees no byte during a plain get, the forwarded sync and the leader's
// answer during sync, and more during set (the forwarded request and the
// ack up; the proposal and the commit down). The medians of the three
// times are reported, and ordered: get < sync+get < set+get. A sync that
// never reached the leader would leave the link silent. The rounds are
// measured through the one client checked to be on that follower, and the
// follower must have received their requests in its session (cons).
func TestY9_WriteBarrierCostsAReplicatedWrite(t *testing.T) {
	harness.RequireFaults(t, zh.Say("three servers of its own and a proxy counting the bytes on a follower's link to the leader"))
	claims.Open(t, "Y9")
	tr := replicas.NewTrio(t)
	link := tr.QuorumLink()
	// b is the one client measured: the one checked to be on the follower
	// whose link the proxy counts, before and after the rounds, and the one
	// every operation is given.
	b := tr.B.Client
	get := func(c *zkclient.Client) error { _, _, err := c.Get(replicas.XPath); return err }
	kinds := []*replicas.BarrierKind{
		{Name: "get", Op: get},
		{Name: "sync+get", Op: func(c *zkclient.Client) error {
			if _, err := c.Sync(replicas.XPath); err != nil {
				return err
			}
			return get(c)
		}},
		{Name: "set+get", Op: func(c *zkclient.Client) error {
			if _, err := c.Set(replicas.BarrierPath, []byte("b"), -1); err != nil {
				return err
			}
			return get(c)
		}},
	}
	// The link counted is B's follower's: B must be that follower's client,
	// or the link's counts say nothing of B's reads.
	if why := replicas.OnServer(b, tr.Lagging, tr.Servers); why != "" {
		claims.NotShown(t, "Y9", "B is not on the follower whose link the proxy counts: %s", why)
	}
	sid := b.SessionID()
	// What the follower received in b's session, before and after: the
	// rounds' requests must be among it, or they were measured elsewhere.
	recved := func(when string) int {
		n, err := replicas.Recved(tr.Lagging, sid)
		if err != nil {
			claims.NotShown(t, "Y9", "%s the rounds, what %s received in B's session 0x%x: %v", when, tr.Lagging.Label, sid, err)
		}
		return n
	}
	recv0 := recved("before")
	base := replicas.SameZxid(t, tr.Servers, "every server to report the same zxid before the rounds", 0)
	claims.Phase(t, "B reads /x on %s three ways, interleaved, up to %d rounds within %v", tr.Lagging.Label, replicas.BarrierRounds, replicas.BarrierWithin)
	deadline := time.Now().Add(replicas.BarrierWithin)
	rounds := 0
	for ; rounds < replicas.BarrierRounds && time.Now().Before(deadline); rounds++ {
		if rounds == 1 {
			tr.B.Log.Info("rounds 2-%d: the same three operations in rotated order, log muted", replicas.BarrierRounds)
		}
		for j := range kinds {
			k := kinds[(rounds+j)%len(kinds)]
			if rounds == 0 {
				tr.B.Log.Invoke("%s", k.Name)
			}
			s0, t0 := link.Stats(), time.Now()
			err := k.Op(b)
			took, s1 := time.Since(t0), link.Stats()
			if err != nil {
				tr.B.Log.Fail("%s: %v", k.Name, err)
				claims.NotShown(t, "Y9", "B's %s failed: %v", k.Name, err)
			}
			k.Took, k.Up, k.Down = append(k.Took, took), append(k.Up, s1.UpBytes-s0.UpBytes), append(k.Down, s1.DownBytes-s0.DownBytes)
			if rounds == 0 {
				tr.B.Log.Ok("%s in %v; the follower's link carried %d bytes up, %d down meanwhile", k.Name, took, k.Up[0], k.Down[0])
			}
		}
	}
	if rounds < replicas.BarrierMinRounds {
		claims.NotShown(t, "Y9", "%d rounds within %v; want at least %d for medians", rounds, replicas.BarrierWithin, replicas.BarrierMinRounds)
	}
	if why := replicas.OnServer(b, tr.Lagging, tr.Servers); why != "" || b.SessionID() != sid {
		claims.NotShown(t, "Y9", "B left the follower whose link the proxy counts during the rounds (session 0x%x, then 0x%x): %s", sid, b.SessionID(), why)
	}
	// get, sync and get, set and get: five requests a round.
	if got, want := recved("after")-recv0, y9Requests*rounds; got < want {
		claims.NotShown(t, "Y9", "%s received %d packets in B's session 0x%x over %d rounds; want at least %d (%d requests a round): the operations timed went through another server", tr.Lagging.Label, got, sid, rounds, want, y9Requests)
	}
	after := replicas.SameZxid(t, tr.Servers, fmt.Sprintf("every server to apply the %d barriers", rounds), base+int64(rounds))
	if after != base+int64(rounds) {
		claims.Refuted(t, "Y9", "every server's zxid went from %#x to %#x over %d set barriers, %d syncs and %d gets; want +%d, one replicated write per barrier", base, after, rounds, rounds, 2*rounds, rounds)
	}
	get0, sync0, set0 := kinds[0], kinds[1], kinds[2]
	var parts []zh.Text
	for _, k := range kinds {
		parts = append(parts, zh.Say("%s %.0f µs (link: %d bytes up, %d down)", k.Name, harness.MedianMicros(k.Took), replicas.MedianOf(k.Up), replicas.MedianOf(k.Down)))
	}
	claims.Evidence(t, "%d rounds by %s's client in session 0x%x on %s (%s), the follower whose link was counted: medians %s; every server's zxid went from %#x to %#x: +%d for %d set barriers, none for %d syncs and %d gets", rounds, b.Name, sid, tr.Lagging.Label, b.Server(), zh.Join(parts, zh.Text{En: ", ", Zh: "，"}), base, after, after-base, rounds, rounds, 2*rounds)
	if replicas.MedianOf(get0.Up)+replicas.MedianOf(get0.Down) != 0 {
		claims.Refuted(t, "Y9", "a plain get moved %d bytes up, %d down on the follower's link (medians); want none: it is served by the follower", replicas.MedianOf(get0.Up), replicas.MedianOf(get0.Down))
	}
	if replicas.MedianOf(sync0.Up) == 0 || replicas.MedianOf(sync0.Down) == 0 {
		claims.Refuted(t, "Y9", "sync+get moved %d bytes up, %d down on the follower's link (medians); want the sync forwarded to the leader and its answer back", replicas.MedianOf(sync0.Up), replicas.MedianOf(sync0.Down))
	}
	if replicas.MedianOf(set0.Up) <= replicas.MedianOf(sync0.Up) || replicas.MedianOf(set0.Down) <= replicas.MedianOf(sync0.Down) {
		claims.Refuted(t, "Y9", "set+get moved %d bytes up, %d down (medians); sync+get %d, %d; want more both ways: the request and its ack up, the proposal and its commit down", replicas.MedianOf(set0.Up), replicas.MedianOf(set0.Down), replicas.MedianOf(sync0.Up), replicas.MedianOf(sync0.Down))
	}
	if g, sy, se := harness.MedianMicros(get0.Took), harness.MedianMicros(sync0.Took), harness.MedianMicros(set0.Took); !(g < sy && sy < se) {
		claims.Refuted(t, "Y9", "medians get %.0f µs, sync+get %.0f µs, set+get %.0f µs; want them in this order, rising", g, sy, se)
	}
}

// TestY5_CompositeReadIntervalMustIncludeTheBarrier: when a barrier and a
// read are treated as one composite read, its interval must start at the
// barrier's call: C's write can complete after B's barrier and before B's
// getData, which then returns the older value (claim Y5, article §2). The
// composite interval is linearizable; the inner getData interval alone is not.
func TestY5_CompositeReadIntervalMustIncludeTheBarrier(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it): its read after a barrier returns a value older than a write completed before the read"))
	claims.Open(t, "Y5")
	tr := replicas.NewTrio(t)
	tr.A.Set("1")
	claims.Phase(t, "B's composite read: barrier, then getData")
	composite := tr.History.Rec.Invoke(2, history.Read, "") // recorded live: barrier's call to getData's return
	barrierStart := composite.Start()
	tr.B.Log.Invoke("set /barrier (composite read begins)")
	if _, err := tr.B.Conn.Set("/barrier", []byte("b"), -1); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	tr.B.Log.Ok("barrier")
	claims.Phase(t, "after B's barrier and before B's getData, C's write x=2 completes")
	tr.HoldLeaderStream()
	tr.History.Client(t, "C", 3, tr.A.Client).Set("2")
	readStart := tr.History.Rec.Now()
	tr.B.Log.Invoke("get %s", replicas.XPath)
	b, _, err := tr.B.Conn.Get(replicas.XPath)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	readEnd := tr.History.Rec.Now()
	tr.B.Log.Ok("%q", b)
	tr.Release()
	claims.Evidence(t, "C's write of \"2\" completed after B's barrier and before B's getData, which returned %q", b)
	if string(b) != "1" {
		claims.NotShown(t, "Y5", "B read %q; want the older \"1\" (C's write was to land between the barrier and the read)", b)
	}
	composite.Ok(string(b))
	var base []porcupine.Operation // every operation but the live composite read
	for _, op := range tr.History.Rec.Operations() {
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
		harness.RequireHistory(t, "Y5", zh.Say("the history with the composite read from the barrier's call"), build(barrierStart), true)
	})
	t.Run("the same composite read, recorded live, is linearizable", func(t *testing.T) {
		harness.RequireHistory(t, "Y5", zh.Say("the history recorded live, with the composite read"), tr.History.Rec, true)
	})
	t.Run("the inner getData interval alone is not linearizable", func(t *testing.T) {
		harness.RequireHistory(t, "Y5", zh.Say("the history with only the inner getData interval"), build(readStart), false)
	})
}

// TestY6_OneBarrierDoesNotMakeLaterReadsFresh: a barrier gives progress only
// up to itself; hold the stream again, let A write, and B's next plain read
// is stale again (claim Y6, article §2).
func TestY6_OneBarrierDoesNotMakeLaterReadsFresh(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it), held again after a barrier"))
	claims.Open(t, "Y6")
	tr := replicas.NewTrio(t)
	tr.A.Set("1")
	tr.B.Log.Invoke("set /barrier")
	if _, err := tr.B.Conn.Set("/barrier", []byte("b"), -1); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	tr.B.Log.Ok("")
	if v := tr.B.Get(); v != "1" {
		claims.NotShown(t, "Y6", "after the barrier B read %q; want \"1\"", v)
	}
	claims.Phase(t, "hold again; A writes x=2")
	tr.HoldLeaderStream()
	tr.A.Set("2")
	v := tr.B.Get()
	claims.Evidence(t, "after one barrier had made B fresh, A wrote \"2\"; B's later plain read returned %q", v)
	tr.Release()
	if v != "1" {
		claims.Refuted(t, "Y6", "B's later plain read returned %q; want the stale \"1\"", v)
	}
}

// y8Session is one of Y8's sessions and the actor that logs its calls.
type y8Session struct {
	c   *zkclient.Client
	log claims.Actor
}

// y8Sessions gives Y8's A and B: on the two followers of a trio, or, on
// the external backend, two sessions on the user's server.
func y8Sessions(t *testing.T) (a, b y8Session) {
	t.Helper()
	if harness.Backend.Kind != zkserver.External {
		tr := replicas.NewTrio(t)
		return y8Session{tr.A.Client, tr.A.Log}, y8Session{tr.B.Client, tr.B.Log}
	}
	srv := harness.SharedServer(t)
	t.Logf("A and B are two sessions on the user's server %s (the external backend: one server, not the harness's to lag)", srv.Client)
	for _, s := range []struct {
		name string
		into *y8Session
	}{{"A", &a}, {"B", &b}} {
		*s.into = y8Session{zkclient.Connect(t, s.name, []string{srv.Client}), claims.NewActor(t, s.name)}
	}
	return a, b
}

// y9Requests is how many requests one round of Y9 sends: get; sync, get;
// set, get.
const y9Requests = 5

// TestY8_BarrierIsNoSnapshotAcrossPaths: a barrier gives B a lower bound
// for its next read, not a snapshot: reading /a and then /b, B can straddle
// another session's multi that changed both, and B's pair of values is a
// state the tree never had (claim Y8, article §2, last paragraph). The
// multi makes both changes one transaction, so the only states of (a, b)
// are ("0","0") before it and ("1","1") after it; B's pair is checked
// against them and against the zxids of what it read.
//
// A and B are on the two followers of a trio; on the external backend,
// whose user's server the harness can neither lag nor split, they are two
// sessions on that one server (y8Sessions): the straddle needs no fault,
// only the order of the calls. The nodes are under the test's parent.
func TestY8_BarrierIsNoSnapshotAcrossPaths(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "Y8")
	A, B := y8Sessions(t)
	root := harness.TestRoot(t, A.c)
	pathA, pathB, barrier := root+"/a", root+"/b", root+"/barrier"
	for _, p := range []string{pathA, pathB, barrier} {
		if _, err := A.c.Create(p, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	claims.Phase(t, "B's barrier, then B reads /a")
	B.log.Invoke("set %s", barrier)
	if _, err := B.c.Set(barrier, []byte("b"), -1); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	B.log.Ok("")
	a, aStat := replicas.ReadAs(t, B.c, B.log, pathA)
	claims.Phase(t, "A changes /a and /b in one multi")
	A.log.Invoke("multi [set %s \"1\", set %s \"1\"]", pathA, pathB)
	res, err := A.c.Multi(&zk.SetDataRequest{Path: pathA, Data: []byte("1"), Version: -1}, &zk.SetDataRequest{Path: pathB, Data: []byte("1"), Version: -1})
	if err != nil {
		t.Fatalf("multi: %v", err)
	}
	multiZxid := res[0].Stat.Mzxid
	A.log.Ok("zxid 0x%x", multiZxid)
	claims.Phase(t, "B reads /b (after a sync, so its server has the multi)")
	if _, err := B.c.Sync(pathB); err != nil {
		t.Fatalf("sync: %v", err)
	}
	b, bStat := replicas.ReadAs(t, B.c, B.log, pathB)
	claims.Evidence(t, "B read (a=%q at mzxid 0x%x, b=%q at mzxid 0x%x) across A's multi of zxid 0x%x; the tree only ever held (\"0\",\"0\") and (\"1\",\"1\")",
		a, aStat.Mzxid, b, bStat.Mzxid, multiZxid)
	// The reads must straddle the multi for the pair to say anything:
	// checked first, so a run where they did not is not shown.
	if aStat.Mzxid >= multiZxid || bStat.Mzxid != multiZxid {
		claims.BrokenCheck(t, "Y8", "got a at mzxid 0x%x and b at 0x%x; want a before and b at the multi's 0x%x", aStat.Mzxid, bStat.Mzxid, multiZxid)
	}
	if existed := a == b; existed {
		claims.Refuted(t, "Y8", "got B's pair (a=%q, b=%q), a state that existed; want a pair that never existed", a, b)
	}
}

// requireWaitsForTheStream is Y1's and Y3's proof: B's op stays pending
// while the leader's stream to its follower is held, succeeds, and the read
// after it sees "1" (replicas.WaitsForTheStream).
func requireWaitsForTheStream(t *testing.T, id string, what zh.Text, op func(*replicas.Trio) error) {
	t.Helper()
	r := replicas.WaitsForTheStream(t, what, op)
	if r.DoneBeforeRelease {
		claims.Refuted(t, id, "%s returned (%v) while the leader's stream was held; want it pending", what, r.Err)
	}
	if r.Err != nil {
		t.Errorf("%s: %s failed: %v", id, what, r.Err)
	}
	if r.ReadAfter != "1" {
		claims.Refuted(t, id, "the read after %s returned %q; want \"1\"", what, r.ReadAfter)
	}
}

package zk19_test

// §1 of the article (更新有统一顺序，普通读仍可能陈旧): ZooKeeper orders every
// update, yet a plain read served by a follower may return a value older
// than a write another client has already seen acknowledged. The section's
// diagram comes first, as Example_s1StaleReadFromLaggingFollower; then S1 to
// S4 in the order the article states them (S4 first), on three real servers
// whose links run through fault proxies, with porcupine judging the recorded
// histories.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/proof/replicas"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Example_s1StaleReadFromLaggingFollower is the article's first diagram,
// the stale-read sequence (§1 ¶3's diagram), run on three real servers; it
// proves claims S1 and S2 (§1 ¶2, sentences 1 and 3).
//
// The steps: the proxy holds the leader's stream to B's follower; A writes
// x=1 through the other follower and the update commits without B's; A
// tells B so out of band; B's plain getData on its follower returns the old
// x=0 while the stream is still held (S1). Porcupine, given the recorded
// history as one register, rejects it, and accepts the same history with
// B's read taken after the catch-up instead (S2). The control round takes
// the same steps but lets the follower catch up before B reads: B reads the
// new value and porcupine accepts the round recorded end to end.
//
// The Example judges its claims itself: not shown when the follower did
// not lag at the read, refuted when B's read or porcupine's verdict says
// otherwise. Every printed line is what the run observed; every call and
// fault is logged, and the record draws the diagram from those lines.
func Example_s1StaleReadFromLaggingFollower() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "S1")
	claims.Open(sc, "S2")
	tr := replicas.NewTrio(sc) // three servers, a proxy on every link; A on one follower, B on the other; x=0
	A, B := tr.A, tr.B

	claims.Phase(sc, "the leader's stream to B's follower is held")
	stream := tr.HoldLeaderStream()
	claims.Phase(sc, "A writes x=1 through the other follower; the write commits without B's follower")
	version := A.Set("1")
	A.Tell(B, "x=1 is written")
	told := B.Told()
	if version != 1 || told != "x=1 is written" {
		claims.NotShown(sc, "S1", "got A's write at version %d and B told %q; want version 1 and the message A sent", version, told)
	}
	fmt.Println("A: set x=1, version", version)
	fmt.Println("B: told", told)

	claims.Phase(sc, "B reads x on its follower while the stream is still held")
	read := B.Get()
	held := harness.HeldDown(stream) // bytes leave the proxy only on release: held now means held during the read
	if held == 0 {
		claims.NotShown(sc, "S1", "got no byte of the leader's stream held within %v of B's read; want some (the follower was not lagging at the read)", harness.Within)
	}
	claims.Evidence(sc, "B read %q on %s after A's acknowledged write of \"1\"; the proxy still held %d bytes of the leader's stream to it when the read returned", read, tr.Lagging.Label, held)
	if read != "0" {
		claims.RefutedNow(sc, "S1", "B read %q on the lagging follower after A's write; want the old value \"0\"", read)
	}
	fmt.Println("B: get x on its follower ->", read)
	fmt.Println("stream to B's follower held at the read:", held > 0)
	stale := tr.History.Verdict(sc, "S2")
	claims.Evidence(sc, "porcupine: the history with B's stale read is %v (%d operations)", stale, len(tr.History.Rec.Operations()))
	if stale != history.NotLinearizable {
		claims.RefutedNow(sc, "S2", "porcupine: got %v for the history with B's stale read; want not linearizable", stale)
	}
	fmt.Println("porcupine:", stale)

	claims.Phase(sc, "release; B reads again once its follower has x=1")
	again, moved := tr.ReadAgainAfterCatchUp("1")
	if again != "1" {
		claims.NotShown(sc, "S2", "after the catch-up B read %q; want \"1\"", again)
	}
	withRead := replicas.VerdictOf(sc, "S2", moved)
	claims.Evidence(sc, "porcupine: the same history with B's read taken after the catch-up is %v (%d operations)", withRead, len(moved.Operations()))
	if withRead != history.Linearizable {
		claims.RefutedNow(sc, "S2", "porcupine: got %v for the history with B reading after the catch-up; want linearizable", withRead)
	}
	fmt.Println("B: after the catch-up, get x ->", again, "| porcupine, this read in place of the stale one:", withRead)

	claims.Phase(sc, "control: the same steps, but B reads after its follower caught up")
	tr.History.Start(again) // the control round is recorded on its own, end to end
	stream = tr.HoldLeaderStream()
	fmt.Println("A: set x=2, version", A.Set("2"))
	A.Tell(B, "x=2 is written")
	fmt.Println("B: told", B.Told())
	tr.CatchUp("2")
	control := B.Get()
	controlHeld := stream.Stats().DownHeld
	if control != "2" || controlHeld != 0 {
		claims.NotShown(sc, "S2", "in the control round B read %q with %d bytes held; want \"2\" with the stream released", control, controlHeld)
	}
	fmt.Println("B: get x on its follower ->", control)
	fmt.Println("stream to B's follower held at the read:", controlHeld > 0)
	recorded := tr.History.Verdict(sc, "S2")
	claims.Evidence(sc, "porcupine: the control round, recorded end to end, is %v (%d operations)", recorded, len(tr.History.Rec.Operations()))
	if recorded != history.Linearizable {
		claims.RefutedNow(sc, "S2", "porcupine: got %v for the control round recorded end to end; want linearizable", recorded)
	}
	fmt.Println("porcupine:", recorded)
	// Output:
	// A: set x=1, version 1
	// B: told x=1 is written
	// B: get x on its follower -> 0
	// stream to B's follower held at the read: true
	// porcupine: not linearizable
	// B: after the catch-up, get x -> 1 | porcupine, this read in place of the stale one: linearizable
	// A: set x=2, version 2
	// B: told x=2 is written
	// B: get x on its follower -> 2
	// stream to B's follower held at the read: false
	// porcupine: linearizable
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
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it), and a server whose last zxid is behind what the session has seen"))
	claims.Open(t, "S4")
	// The server says why it turns a session away at INFO.
	tr := replicas.NewTrio(t, zkserver.WithLogger("org.apache.zookeeper.server.ZooKeeperServer", "info"))
	t.Run("a session reads its own write on a lagging follower", func(t *testing.T) {
		readYourWrite(t, tr.In(t))
	})
	t.Run("a server behind the session's last zxid refuses it", func(t *testing.T) {
		noGoingBack(t, tr.In(t))
	})
}

// TestS3_FollowerAnswersReadsFromItsOwnCopy: the lagging follower answers
// getData from its local copy while its link from the leader is still held:
// the read is not forwarded to the leader, unlike an update (claim S3,
// article §1, FinalRequestProcessor). The proof: B's read returned while
// the proxy still held the leader's bytes, and no byte went up from B's
// follower to the leader for it.
func TestS3_FollowerAnswersReadsFromItsOwnCopy(t *testing.T) {
	harness.Parallel(t)
	harness.RequireFaults(t, zh.Say("a follower held behind its leader (a proxy on the leader's stream to it), which answers a read from its own copy"))
	claims.Open(t, "S3")
	tr := replicas.NewTrio(t)
	tr.HoldLeaderStream()
	tr.A.Set("1")
	p := tr.QuorumLink()
	before := p.Stats()
	v := tr.B.Get()
	after := p.Stats()
	held := harness.HeldDown(p)
	claims.Evidence(t, "B's read returned %q while %d bytes of the leader's stream were held; %d bytes went up to the leader during it", v, held, after.UpBytes-before.UpBytes)
	// A proxy that held nothing made no lag: checked first, so that run
	// is not shown rather than refuted.
	if held == 0 {
		claims.BrokenCheck(t, "S3", "the proxy held nothing from the leader within %v; want the write's proposal held", harness.Within)
	}
	if v != "0" {
		claims.Refuted(t, "S3", "B's read returned %q; want the follower's own \"0\"", v)
	}
	if after.UpBytes != before.UpBytes {
		claims.Refuted(t, "S3", "B's follower sent %d bytes to the leader during a plain read; want 0", after.UpBytes-before.UpBytes)
	}
	tr.Release()
}

// readYourWrite judges the first half of S4 (replicas.ReadYourWrite): B's
// read does not return before B's own write commits, and then returns it.
func readYourWrite(t *testing.T, tr *replicas.Trio) {
	t.Helper()
	pl := replicas.ReadYourWrite(tr)
	if r, ok := pl.EarlyRead(); ok {
		claims.RefutedNow(t, "S4", "B's read returned %q (%v) before B's own write committed", r.V, r.Err)
	}
	w, r := pl.AfterRelease()
	if r.V != "7" || r.St.Mzxid != w.St.Mzxid {
		claims.RefutedNow(t, "S4", "got B's read %q at mzxid 0x%x; want its own \"7\" at 0x%x", r.V, r.St.Mzxid, w.St.Mzxid)
	}
}

// noGoingBack judges the second half of S4: B writes on the fresh
// follower, is moved to the lagging one and turned away (no session there,
// never an older value, and the server's refusal names B's zxid), then
// comes back on its own session once the follower caught up.
func noGoingBack(t *testing.T, tr *replicas.Trio) {
	t.Helper()
	b := replicas.WriteAhead(tr)
	states, read := b.TurnedAway(tr)
	if slices.Contains(states, zk.StateHasSession) {
		claims.RefutedNow(t, "S4", "%s gave B a session although it was behind (states since the move %v)", tr.Lagging.Label, states)
	}
	// While refused, B may get an error, never an older value.
	if read != nil && read.Err == nil {
		claims.RefutedNow(t, "S4", "B read %q on %s while it was behind B's zxid", read.V, tr.Lagging.Label)
	}
	said, err := b.Refusal(tr)
	if err != nil {
		claims.RefutedNow(t, "S4", "%v", err)
	}
	b.RefusalNamesTheZxid(tr, said)
	v, sid, now := b.BackWhenCaughtUp(tr)
	if now != sid || v != "8" {
		claims.RefutedNow(t, "S4", "got session 0x%x reading %q after the move; want the same session 0x%x reading its own \"8\"", now, v, sid)
	}
}

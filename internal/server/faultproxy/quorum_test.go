package faultproxy

import (
	"bytes"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/jute"
)

// A leader's packets, as the upstream of a proxy a follower dials.
func packet(typ int32, zxid int64, data []byte) []byte {
	return jute.QuorumPacket{Type: typ, Zxid: zxid, Data: data}.Append(nil)
}

// proposal is a PROPOSAL of a create of path by session at zxid: a
// TxnHeader, then the CreateTxn, which starts with the path.
func proposal(session, zxid int64, path string) []byte {
	d := jute.TxnHeader{ClientID: session, Cxid: 2, Zxid: zxid, Time: 1, Type: jute.OpCreate}.Append(nil)
	d = binary.BigEndian.AppendUint32(d, uint32(len(path)))
	d = append(d, path...)
	d = append(d, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0, 1) // data nil, no ACL, ephemeral, parentCVersion
	return packet(jute.QuorumProposal, zxid, d)
}

// syncStart is what a leader sends a follower that is in sync already.
func syncStart() []byte {
	var b []byte
	for _, p := range [][]byte{
		packet(jute.QuorumLeaderInfo, 0x1_00000000, []byte{0, 1, 0, 0}),
		packet(jute.QuorumDiff, 0x1_00000000, nil),
		packet(jute.QuorumNewLeader, 0x1_00000000, []byte("version=0")),
		packet(jute.QuorumUpToDate, -1, nil),
	} {
		b = append(b, p...)
	}
	return b
}

// leaderSends writes packets on the leader's side and expects each on the
// follower's, unchanged.
func leaderSends(t *testing.T, leader, follower net.Conn, pkts ...[]byte) {
	t.Helper()
	for _, p := range pkts {
		write(t, leader, p)
		if got := readN(t, follower, len(p)); !bytes.Equal(got, p) {
			t.Fatalf("follower read %x; want %x", got, p)
		}
	}
}

const ourSession = 0x1000a // the session whose create the hold waits for

func TestQuorumHoldCommitKeepsTheCommitAndWhatFollowsButPingAndRevalidate(t *testing.T) {
	p, _, follower, leader := linked(t, WithQuorumPackets())
	leaderSends(t, leader, follower, syncStart(),
		proposal(ourSession, 0x1_00000001, "/other/n"), packet(jute.QuorumCommit, 0x1_00000001, nil))
	h := p.HoldCommit(TxnMatch{Types: []int32{jute.OpCreate, jute.OpCreate2}, Under: "/r", Session: ourSession})

	// Another ourSession's create under /r, then ours: both proposals pass,
	// and the other's COMMIT, which comes first, too.
	leaderSends(t, leader, follower,
		proposal(0x2000b, 0x1_00000002, "/r/theirs-lock-0000000001"),
		proposal(ourSession, 0x1_00000003, "/r/guid-lock-0000000002"),
		proposal(0x2000b, 0x1_00000004, "/r/theirs-lock-0000000003"),
		packet(jute.QuorumCommit, 0x1_00000002, nil))
	select {
	case <-h.Holding():
		t.Fatal("holding before the matched proposal's COMMIT")
	default:
	}
	commit := packet(jute.QuorumCommit, 0x1_00000003, nil)
	write(t, leader, commit)
	awaitHolding(t, h, "the COMMIT of 0x100000003")
	expectSilence(t, follower)

	// From the COMMIT on: the next COMMIT and a SYNC stay behind it; a PING
	// and a REVALIDATE are delivered at once.
	later := [][]byte{packet(jute.QuorumCommit, 0x1_00000004, nil), packet(jute.QuorumSync, 0, nil)}
	for _, b := range later {
		write(t, leader, b)
	}
	ping := packet(jute.QuorumPing, 0x1_00000004, nil)
	revalidate := packet(jute.QuorumRevalidate, -1, []byte{0, 0, 0, 0, 0, 1, 0, 0xa, 1})
	leaderSends(t, leader, follower, ping, revalidate)
	expectSilence(t, follower)
	r := h.Result()
	if !r.Holding || r.Zxid != 0x1_00000003 || r.Session != ourSession || r.Path != "/r/guid-lock-0000000002" || r.Type != jute.OpCreate {
		t.Fatalf("got %+v; want our create at 0x100000003 held", r)
	}
	if got, want := Kinds(r.Held), "COMMIT×2 SYNC×1"; got != want || r.HeldNow != 3 {
		t.Fatalf("held %s (%d now); want %s (3 now)", got, r.HeldNow, want)
	}
	if got, want := Kinds(r.Passed), "PING×1 REVALIDATE×1"; got != want {
		t.Fatalf("passed %s; want %s", got, want)
	}

	// Release delivers the held packets in the order the leader sent them,
	// and later packets follow them.
	h.Release()
	want := append(append(append([]byte(nil), commit...), later[0]...), later[1]...)
	if got := readN(t, follower, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("after release the follower read %x; want %x", got, want)
	}
	leaderSends(t, leader, follower, ping)
	select {
	case <-h.Done():
	default:
		t.Fatal("the hold has not ended after Release")
	}
	if r := h.Result(); !r.Released || r.HeldNow != 0 || r.Reason != "released" {
		t.Fatalf("after release: %+v", r)
	}
}

// awaitHolding fails the test unless h holds its COMMIT within the bound;
// what names the COMMIT.
func awaitHolding(t *testing.T, h *CommitHold, what string) {
	t.Helper()
	select {
	case <-h.Holding():
	case <-time.After(within):
		t.Fatalf("%s was not held: %+v", what, h.Result())
	}
}

// holdingCommit is a follower's link with a hold in force: the leader sent
// a create's proposal and its COMMIT, which is held.
func holdingCommit(t *testing.T) (p *Proxy, h *CommitHold, follower, leader net.Conn, commit []byte) {
	t.Helper()
	p, _, follower, leader = linked(t, WithQuorumPackets())
	h, commit = holdCommitOn(t, p, follower, leader)
	return p, h, follower, leader, commit
}

// holdCommitOn puts a hold in force on the follower's link of p: the
// leader sends a create's proposal and its COMMIT, which is held.
func holdCommitOn(t *testing.T, p *Proxy, follower, leader net.Conn) (*CommitHold, []byte) {
	t.Helper()
	leaderSends(t, leader, follower, syncStart())
	h := p.HoldCommit(TxnMatch{Types: []int32{jute.OpCreate}})
	leaderSends(t, leader, follower, proposal(ourSession, 5, "/r/n"))
	commit := packet(jute.QuorumCommit, 5, nil)
	write(t, leader, commit)
	awaitHolding(t, h, "the COMMIT")
	expectSilence(t, follower)
	return h, commit
}

func TestQuorumHoldCommitEndsWhenItsConnectionIsCut(t *testing.T) {
	p, h, _, _, _ := holdingCommit(t)
	p.Cut(BothEnds)
	select {
	case <-h.Done():
	case <-time.After(within):
		t.Fatal("the hold did not end when its connection was cut")
	}
	if r := h.Result(); r.Released || !strings.Contains(r.Reason, "1 held packets discarded") {
		t.Fatalf("got %+v; want the held COMMIT discarded", r)
	}
	p.Heal()
}

func TestQuorumHealReleasesTheHold(t *testing.T) {
	p, h, follower, _, commit := holdingCommit(t)
	p.Heal()
	expectRead(t, follower, string(commit))
	if r := h.Result(); !r.Released || r.Reason != "heal" {
		t.Fatalf("got %+v; want released by heal", r)
	}
}

// The end of the leader's stream waits behind the held packets, as it
// does behind a Hold.
func TestQuorumEndOfStreamWaitsBehindTheHold(t *testing.T) {
	_, h, follower, leader, commit := holdingCommit(t)
	leader.(*net.TCPConn).CloseWrite()
	expectSilence(t, follower)
	h.Release()
	expectRead(t, follower, string(commit))
	expectClosed(t, follower)
}

// snapshot is a database as a leader writes it after SNAP: no session, no
// ACL, the root node alone, the end marker "/", the signature.
func snapshot(signature string) []byte {
	str := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...) }
	b := make([]byte, 8) // sessions 0, ACL cache 0
	b = str(b, "")       // the root's path
	b = append(b, 0xff, 0xff, 0xff, 0xff)
	b = append(b, make([]byte, 8+60)...) // ACL key, StatPersisted
	return str(str(b, "/"), signature)
}

// The snapshot after a SNAP is not packets: the proxy reads it through to
// its signature, and holds by packet on the stream after it.
func TestQuorumSnapshotIsReadThrough(t *testing.T) {
	up := newUpstream(t)
	p, sink := newProxy(t, up.addr(), WithQuorumPackets())
	follower, leader := connect(t, p, up)
	h := p.HoldCommit(TxnMatch{Types: []int32{jute.OpCreate}})
	leaderSends(t, leader, follower, packet(jute.QuorumLeaderInfo, 1, nil), packet(jute.QuorumSnap, 1, nil), snapshot(jute.SnapshotSignature),
		packet(jute.QuorumNewLeader, 1, nil), packet(jute.QuorumUpToDate, -1, nil), proposal(ourSession, 5, "/r/n"))
	sink.waitLine(t, "SNAP: read the snapshot through (103 bytes, 0 sessions, 1 nodes); packets follow")
	write(t, leader, packet(jute.QuorumCommit, 5, nil))
	awaitHolding(t, h, "the COMMIT after a snapshot")
	expectSilence(t, follower)
	h.Release()
}

// A snapshot without its signature is not one: the rest is copied raw, and
// nothing after it is held.
func TestQuorumBadSnapshotFallsBackToRawBytes(t *testing.T) {
	up := newUpstream(t)
	p, sink := newProxy(t, up.addr(), WithQuorumPackets())
	follower, leader := connect(t, p, up)
	h := p.HoldCommit(TxnMatch{Types: []int32{jute.OpCreate}})
	leaderSends(t, leader, follower, packet(jute.QuorumSnap, 1, nil), snapshot("BenWasNotHere"),
		proposal(ourSession, 5, "/r/n"), packet(jute.QuorumCommit, 5, nil))
	sink.waitLine(t, `the snapshot after SNAP: signature: got "BenWasNotHere"; want "BenWasHere": jute: not the snapshot signature; copying raw bytes from now on`)
	if r := h.Result(); r.Conn != 0 || r.Holding {
		t.Fatalf("got %+v; want nothing matched on a raw stream", r)
	}
	h.Release()
}

// Bytes that are no packet of a known type are copied raw, unchanged.
func TestQuorumUnknownTypeFallsBackToRawBytes(t *testing.T) {
	up := newUpstream(t)
	p, sink := newProxy(t, up.addr(), WithQuorumPackets())
	follower, leader := connect(t, p, up)
	junk := packet(99, 1, []byte("x"))
	leaderSends(t, leader, follower, packet(jute.QuorumPing, 1, nil), junk, []byte("and more"))
	sink.waitLine(t, "unknown packet type type(99); copying raw bytes")
}

func TestHoldCommitNeedsQuorumPacketsAndAValidMatch(t *testing.T) {
	p, _, _, _ := linked(t)
	if r := p.HoldCommit(TxnMatch{Types: []int32{jute.OpCreate}}); !done(r) || r.Result().Reason != "proxy does not read quorum packets" {
		t.Fatalf("without WithQuorumPackets: %+v", r.Result())
	}
	q, _, _, _ := linked(t, WithQuorumPackets())
	for m, want := range map[*TxnMatch]string{
		{}: "invalid match: no transaction type",
		{Types: []int32{jute.OpMulti}, Under: "/r"}: "invalid match: a path is required but multi has no transaction path decoder",
	} {
		if r := q.HoldCommit(*m); !done(r) || r.Result().Reason != want {
			t.Errorf("%+v: got %q; want %q", *m, r.Result().Reason, want)
		}
	}
}

func done(h *CommitHold) bool {
	select {
	case <-h.Done():
		return true
	default:
		return false
	}
}

// Bytes that are no packet stay behind a hold in force on their own
// connection, in order, and pass on another connection of the same proxy:
// a hold keeps one follower's stream, not every stream of the link.
func TestQuorumHoldKeepsRawBytesOfItsOwnConnectionOnly(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithQuorumPackets())
	follower, leader := connect(t, p, up)
	h, commit := holdCommitOn(t, p, follower, leader)

	// Another connection through the same proxy turns raw: its bytes pass.
	other, otherLeader := connect(t, p, up)
	leaderSends(t, otherLeader, other, packet(99, 1, []byte("x")), []byte("raw bytes of another follower"))

	// On the held connection, raw bytes wait behind the COMMIT.
	junk := append(packet(99, 6, []byte("y")), "raw bytes behind the hold"...)
	write(t, leader, junk)
	expectSilence(t, follower)
	h.Release()
	want := append(append([]byte(nil), commit...), junk...)
	if got := readN(t, follower, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("after release the follower read %x; want the COMMIT, then the raw bytes %x", got, want)
	}
}

// A hold armed for creates under a path lets a create of the same session
// elsewhere pass, its COMMIT too, and holds the first one under the path.
func TestQuorumHoldCommitMatchesOnlyUnderItsPath(t *testing.T) {
	p, _, follower, leader := linked(t, WithQuorumPackets())
	leaderSends(t, leader, follower, syncStart())
	h := p.HoldCommit(TxnMatch{Types: []int32{jute.OpCreate}, Under: "/r", Session: ourSession})
	leaderSends(t, leader, follower, proposal(ourSession, 5, "/other/n"), packet(jute.QuorumCommit, 5, nil))
	if r := h.Result(); r.Zxid != 0 || r.Holding {
		t.Fatalf("got %+v after a create under /other; want nothing matched (the hold is for creates under /r)", r)
	}
	leaderSends(t, leader, follower, proposal(ourSession, 6, "/r/n"))
	write(t, leader, packet(jute.QuorumCommit, 6, nil))
	awaitHolding(t, h, "the COMMIT of the create under /r")
	if r := h.Result(); r.Zxid != 6 || r.Path != "/r/n" {
		t.Fatalf("got %+v; want the create of /r/n at zxid 6 held", r)
	}
	h.Release()
}

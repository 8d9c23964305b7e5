package jute

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// createProposal is the data of a PROPOSAL for an ephemeral sequential
// create, laid out as Util.marshallTxnEntry writes it: the TxnHeader, then
// the CreateTxn (path, data, acl, ephemeral, parentCVersion), then a
// TxnDigest (version, treeDigest).
func createProposal(session int64, zxid int64, path string) []byte {
	b := TxnHeader{ClientID: session, Cxid: 3, Zxid: zxid, Time: 1_700_000_000_000, Type: OpCreate}.Append(nil)
	b = appendString(b, path)
	b = appendBuffer(b, []byte("v"))
	b = appendInt32(b, 1)
	b = appendInt32(b, 31)
	b = appendString(b, "world")
	b = appendString(b, "anyone")
	b = appendBool(b, true)
	b = appendInt32(b, 4)
	b = appendInt32(b, 2)
	return appendInt64(b, 0x1234)
}

// leaderStream is what a leader sends a follower: the initial sync, then a
// proposal, its commit, a ping, a revalidation answer with authinfo, a
// sync.
func leaderStream() []QuorumPacket {
	return []QuorumPacket{
		{Type: QuorumLeaderInfo, Zxid: 0x1_00000000, Data: []byte{0, 1, 0, 0}},
		{Type: QuorumDiff, Zxid: 0x1_00000000},
		{Type: QuorumNewLeader, Zxid: 0x1_00000000, Data: []byte("server.1=127.0.0.1:1:2:participant\nversion=0")},
		{Type: QuorumUpToDate, Zxid: -1},
		{Type: QuorumProposal, Zxid: 0x1_00000005, Data: createProposal(0x1000a, 0x1_00000005, "/zk19/r/guid-lock-0000000003")},
		{Type: QuorumCommit, Zxid: 0x1_00000005},
		{Type: QuorumPing, Zxid: 0x1_00000005},
		{Type: QuorumRevalidate, Zxid: -1, Data: []byte{0, 0, 0, 0, 0, 1, 0, 0xa, 1}, Authinfo: []ID{{"digest", "u:p"}, {"", ""}}},
		{Type: QuorumSync},
	}
}

func encodeAll(ps []QuorumPacket) []byte {
	var b []byte
	for _, p := range ps {
		b = p.Append(b)
	}
	return b
}

func TestReadQuorumPacketReadsAStreamBackToBack(t *testing.T) {
	want := leaderStream()
	stream := encodeAll(want)
	for name, r := range map[string]io.Reader{
		"whole":       bytes.NewReader(stream),
		"byte a read": iotest.OneByteReader(bytes.NewReader(stream)),
	} {
		off := 0
		for i, w := range want {
			raw, got, err := ReadQuorumPacket(r, 0)
			if err != nil {
				t.Fatalf("%s: packet %d (%s): %v", name, i, QuorumName(w.Type), err)
			}
			enc := w.Append(nil)
			if !bytes.Equal(raw, enc) || !bytes.Equal(raw, stream[off:off+len(enc)]) {
				t.Fatalf("%s: packet %d: got raw %x; want %x", name, i, raw, enc)
			}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("%s: packet %d: got %+v; want %+v", name, i, got, w)
			}
			off += len(enc)
		}
		if raw, _, err := ReadQuorumPacket(r, 0); err != io.EOF || raw != nil {
			t.Fatalf("%s: after the last packet: got %x, %v; want nil, io.EOF", name, raw, err)
		}
	}
}

// A stream cut anywhere inside a packet is truncated, and every byte read
// is handed back for forwarding.
func TestReadQuorumPacketTruncatedReturnsWhatItRead(t *testing.T) {
	for _, p := range leaderStream() {
		enc := p.Append(nil)
		for n := 1; n < len(enc); n++ {
			raw, _, err := ReadQuorumPacket(bytes.NewReader(enc[:n]), 0)
			if !errors.Is(err, ErrTruncated) || !bytes.Equal(raw, enc[:n]) {
				t.Fatalf("%s cut at %d of %d: got %d bytes, %v; want all %d bytes and ErrTruncated", QuorumName(p.Type), n, len(enc), len(raw), err, n)
			}
		}
	}
}

func TestReadQuorumPacketRefusesWhatTheOfficialReaderRefuses(t *testing.T) {
	hdr := QuorumPacket{Type: QuorumCommit, Zxid: 5}.Append(nil)[:12]
	cases := []struct {
		name  string
		tail  []byte
		limit int
		want  error
	}{
		{"data length -2", appendInt32(nil, -2), 0, ErrNegativeLength},
		{"data over the limit", appendInt32(nil, 17), 16, ErrFrameTooLarge},
		{"authinfo count over the limit", appendInt32(appendInt32(nil, -1), 3), 16, ErrFrameTooLarge},
		{"scheme length -5", appendInt32(appendInt32(appendInt32(nil, -1), 1), -5), 0, ErrNegativeLength},
	}
	for _, c := range cases {
		in := append(append(append([]byte(nil), hdr...), c.tail...), 0xde, 0xad)
		raw, _, err := ReadQuorumPacket(bytes.NewReader(in), c.limit)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v; want %v", c.name, err, c.want)
		}
		if want := len(hdr) + len(c.tail); !bytes.Equal(raw, in[:want]) {
			t.Errorf("%s: got %d bytes back; want the %d consumed", c.name, len(raw), want)
		}
	}
	// A negative authinfo count other than -1 is an empty vector, as
	// BinaryInputArchive.startVector reads it.
	in := append(append(append([]byte(nil), hdr...), appendInt32(nil, -1)...), appendInt32(nil, -7)...)
	raw, q, err := ReadQuorumPacket(bytes.NewReader(in), 0)
	if err != nil || !bytes.Equal(raw, in) || q.Authinfo == nil || len(q.Authinfo) != 0 {
		t.Fatalf("authinfo count -7: got %+v, %v; want an empty vector", q, err)
	}
}

func TestTxnHeaderAndPathOfAProposal(t *testing.T) {
	const path = "/zk19/r/guid-lock-0000000003"
	data := createProposal(0x1000a, 0x1_00000005, path)
	h, txn, err := DecodeTxnHeader(data)
	want := TxnHeader{ClientID: 0x1000a, Cxid: 3, Zxid: 0x1_00000005, Time: 1_700_000_000_000, Type: OpCreate}
	if err != nil || h != want {
		t.Fatalf("got %+v, %v; want %+v", h, err, want)
	}
	if !bytes.Equal(append(h.Append(nil), txn...), data) {
		t.Fatalf("re-encoding the header differs")
	}
	for _, typ := range []int32{OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData} {
		if p, err := TxnPath(typ, txn); err != nil || p != path {
			t.Errorf("TxnPath(%s): got %q, %v; want %q", OpName(typ), p, err, path)
		}
	}
	if _, err := TxnPath(OpMulti, txn); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("TxnPath(multi): got %v; want errors.ErrUnsupported", err)
	}
	if _, err := TxnPath(OpCreate, txn[:2]); !errors.Is(err, ErrTruncated) {
		t.Errorf("TxnPath of a cut transaction: got %v; want ErrTruncated", err)
	}
}

func FuzzReadQuorumPacket(f *testing.F) {
	stream := encodeAll(leaderStream())
	f.Add(stream)
	f.Add(stream[:40])
	f.Add(append(QuorumPacket{Type: QuorumPing}.Append(nil)[:12], 0x80, 0, 0, 0))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		off := 0
		for {
			raw, q, err := ReadQuorumPacket(r, 64)
			if !bytes.Equal(raw, in[off:off+len(raw)]) {
				t.Fatalf("the bytes handed back are not the input at %d", off)
			}
			off += len(raw)
			if err != nil {
				if err == io.EOF && (raw != nil || off != len(in)) {
					t.Fatalf("io.EOF with %d bytes handed back at %d of %d", len(raw), off, len(in))
				}
				if err != io.EOF && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNegativeLength) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if errors.Is(err, ErrTruncated) && off != len(in) {
					t.Fatalf("truncated at %d of %d", off, len(in))
				}
				return
			}
			again, rest, err := DecodeQuorumPacket(raw)
			if err != nil || len(rest) != 0 || !reflect.DeepEqual(again, q) {
				t.Fatalf("DecodeQuorumPacket(raw): %+v rest %d %v; want %+v and nothing left", again, len(rest), err, q)
			}
		}
	})
}

// learnerSnapshot lays out a database as ZKDatabase.serializeSnapshot and
// LearnerHandler write it after SNAP: two sessions, an ACL cache of two
// entries (one with no ACL), the root "" and three nodes, the end marker
// "/", the signature.
func learnerSnapshot(signature string) []byte {
	var b []byte
	b = appendInt32(b, 2)
	for _, id := range []int64{0x1000a, 0x2000b} {
		b = appendInt32(appendInt64(b, id), 10_000)
	}
	b = appendInt32(b, 2)
	b = appendInt32(appendInt64(b, 1), 1)
	b = appendString(appendString(appendInt32(b, 31), "world"), "anyone")
	b = appendInt32(appendInt64(b, 2), 0)
	for _, n := range []struct {
		path string
		data []byte
	}{{"", nil}, {"/zookeeper", []byte{}}, {"/zookeeper/config", []byte("version=0")}, {"/zk19", []byte("x")}} {
		b = appendString(b, n.path)
		b = appendBuffer(b, n.data)
		b = appendInt64(b, 1)
		b = append(b, make([]byte, statPersistedLen)...)
	}
	b = appendString(b, "/")
	return appendString(b, signature)
}

func TestReadLearnerSnapshotReadsToTheSignature(t *testing.T) {
	snap := learnerSnapshot(SnapshotSignature)
	next := QuorumPacket{Type: QuorumNewLeader, Zxid: 0x1_00000000}.Append(nil)
	r := iotest.OneByteReader(bytes.NewReader(append(append([]byte(nil), snap...), next...)))
	raw, sessions, nodes, err := ReadLearnerSnapshot(r, 0)
	if err != nil || !bytes.Equal(raw, snap) || sessions != 2 || nodes != 4 {
		t.Fatalf("got %d bytes, %d sessions, %d nodes, %v; want the %d-byte snapshot, 2 sessions, 4 nodes", len(raw), sessions, nodes, err, len(snap))
	}
	// The packets go on right after it.
	if _, q, err := ReadQuorumPacket(r, 0); err != nil || q.Type != QuorumNewLeader {
		t.Fatalf("after the snapshot: %+v, %v; want NEWLEADER", q, err)
	}
	if raw, _, _, err := ReadLearnerSnapshot(bytes.NewReader(nil), 0); err != io.EOF || raw != nil {
		t.Fatalf("empty stream: got %x, %v; want io.EOF", raw, err)
	}
	for n := 1; n < len(snap); n++ {
		raw, _, _, err := ReadLearnerSnapshot(bytes.NewReader(snap[:n]), 0)
		if !errors.Is(err, ErrTruncated) || !bytes.Equal(raw, snap[:n]) {
			t.Fatalf("cut at %d of %d: got %d bytes, %v; want all of them and ErrTruncated", n, len(snap), len(raw), err)
		}
	}
}

func TestReadLearnerSnapshotRefusesAWrongSignatureAndTheLimit(t *testing.T) {
	bad := learnerSnapshot("BenWasNotHere")
	if raw, _, _, err := ReadLearnerSnapshot(bytes.NewReader(bad), 0); !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "BenWasNotHere") || !bytes.Equal(raw, bad) {
		t.Fatalf("wrong signature: got %d bytes, %v; want an error naming it and every byte back", len(raw), err)
	}
	snap := learnerSnapshot(SnapshotSignature)
	if _, _, _, err := ReadLearnerSnapshot(bytes.NewReader(snap), len(snap)-1); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("a snapshot one byte over the limit: got %v; want ErrFrameTooLarge", err)
	}
	if _, _, _, err := ReadLearnerSnapshot(bytes.NewReader(snap), len(snap)); err != nil {
		t.Fatalf("a snapshot of exactly the limit: %v", err)
	}
}

func FuzzReadLearnerSnapshot(f *testing.F) {
	f.Add(learnerSnapshot(SnapshotSignature))
	f.Add(learnerSnapshot("x"))
	f.Fuzz(func(t *testing.T, in []byte) {
		raw, _, _, err := ReadLearnerSnapshot(bytes.NewReader(in), 256)
		if !bytes.Equal(raw, in[:len(raw)]) {
			t.Fatalf("the bytes handed back are not a prefix of the input")
		}
		if errors.Is(err, ErrTruncated) && len(raw) != len(in) {
			t.Fatalf("truncated after %d of %d bytes", len(raw), len(in))
		}
		if len(raw) > 256 {
			t.Fatalf("read %d bytes over the limit 256", len(raw))
		}
	})
}

package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The quorum protocol between a leader and its learners (followers and
// observers) is a stream of QuorumPacket records written back to back, with
// no frame length in front of them (LearnerHandler and Learner write them
// with BinaryOutputArchive.writeRecord). One exception: after a SNAP packet
// the leader writes the whole database in snapshot format and a signature
// string, not as packets; a reader of the stream cannot find the next packet
// without decoding the snapshot.

// Quorum packet types (the int constants of ZooKeeper's Leader class, the
// same in 3.8 and 3.9).
const (
	QuorumRequest           int32 = 1  // learner -> leader: a client's write (or sync) to run
	QuorumProposal          int32 = 2  // leader -> learner: log this transaction
	QuorumAck               int32 = 3  // learner -> leader: logged
	QuorumCommit            int32 = 4  // leader -> follower: apply the proposal with this zxid
	QuorumPing              int32 = 5  // both ways: liveness, and the learner's session touches
	QuorumRevalidate        int32 = 6  // both ways: is this session (reconnecting to the learner) valid?
	QuorumSync              int32 = 7  // leader -> learner: a forwarded sync has passed the leader
	QuorumInform            int32 = 8  // leader -> observer: a committed transaction
	QuorumCommitAndActivate int32 = 9  // leader -> follower: commit a reconfig
	QuorumNewLeader         int32 = 10 // leader -> learner: end of the initial sync
	QuorumFollowerInfo      int32 = 11 // follower -> leader: first packet
	QuorumUpToDate          int32 = 12 // leader -> learner: start serving
	QuorumDiff              int32 = 13 // leader -> learner: the sync is a diff of proposals
	QuorumTrunc             int32 = 14 // leader -> learner: truncate the log to this zxid
	QuorumSnap              int32 = 15 // leader -> learner: a snapshot follows, not as packets
	QuorumObserverInfo      int32 = 16 // observer -> leader: first packet
	QuorumLeaderInfo        int32 = 17 // leader -> learner: the new epoch
	QuorumAckEpoch          int32 = 18 // learner -> leader: the epoch
	QuorumInformAndActivate int32 = 19 // leader -> observer: a committed reconfig
)

var quorumNames = map[int32]string{
	QuorumRequest: "REQUEST", QuorumProposal: "PROPOSAL", QuorumAck: "ACK", QuorumCommit: "COMMIT",
	QuorumPing: "PING", QuorumRevalidate: "REVALIDATE", QuorumSync: "SYNC", QuorumInform: "INFORM",
	QuorumCommitAndActivate: "COMMITANDACTIVATE", QuorumNewLeader: "NEWLEADER",
	QuorumFollowerInfo: "FOLLOWERINFO", QuorumUpToDate: "UPTODATE", QuorumDiff: "DIFF",
	QuorumTrunc: "TRUNC", QuorumSnap: "SNAP", QuorumObserverInfo: "OBSERVERINFO",
	QuorumLeaderInfo: "LEADERINFO", QuorumAckEpoch: "ACKEPOCH", QuorumInformAndActivate: "INFORMANDACTIVATE",
}

// QuorumName returns the name of quorum packet type typ, such as "COMMIT",
// or "type(N)" for an unknown one.
func QuorumName(typ int32) string {
	if s, ok := quorumNames[typ]; ok {
		return s
	}
	return "type(" + strconv.Itoa(int(typ)) + ")"
}

// IsQuorumType reports whether typ is one of the Quorum* packet types.
func IsQuorumType(typ int32) bool {
	_, ok := quorumNames[typ]
	return ok
}

// ID is an identity in a QuorumPacket's authinfo (the official Id record).
type ID struct {
	Scheme string
	ID     string
}

// idMinLen is the smallest encoded ID: two empty strings.
const idMinLen = 8

// QuorumPacket is one packet of the quorum protocol.
type QuorumPacket struct {
	Type     int32  // one of the Quorum* constants
	Zxid     int64  // the proposal's zxid for PROPOSAL and COMMIT
	Data     []byte // nil encodes as length -1; a PROPOSAL's is a TxnHeader and its transaction
	Authinfo []ID   // nil encodes as count -1
}

// DecodeQuorumPacket decodes the packet at the start of p and returns it
// with the bytes after it, which alias p.
func DecodeQuorumPacket(p []byte) (QuorumPacket, []byte, error) {
	return decode(p, func(d *decoder) (q QuorumPacket) {
		q.Type = d.int32("QuorumPacket.type")
		q.Zxid = d.int64("QuorumPacket.zxid")
		q.Data = d.buffer("QuorumPacket.data")
		if n := d.count("QuorumPacket.authinfo", idMinLen); n >= 0 && d.err == nil {
			q.Authinfo = make([]ID, n)
			for i := range q.Authinfo {
				q.Authinfo[i].Scheme = d.string("Id.scheme")
				q.Authinfo[i].ID = d.string("Id.id")
			}
		}
		return q
	})
}

// Append appends the encoded packet to dst.
func (q QuorumPacket) Append(dst []byte) []byte {
	dst = appendInt32(dst, q.Type)
	dst = appendInt64(dst, q.Zxid)
	dst = appendBuffer(dst, q.Data)
	if q.Authinfo == nil {
		return appendInt32(dst, -1)
	}
	dst = appendInt32(dst, int32(len(q.Authinfo)))
	for _, id := range q.Authinfo {
		dst = appendString(dst, id.Scheme)
		dst = appendString(dst, id.ID)
	}
	return dst
}

// ReadQuorumPacket reads exactly one QuorumPacket from r and returns its
// bytes as they were read, ready to be forwarded unchanged, and the packet
// decoded from them. Since the stream has no frame lengths, it reads field
// by field: the data buffer, each authinfo string, and the authinfo count
// (times the smallest identity) must each fit in limit bytes (a
// non-positive limit means MaxFrame).
//
// It returns io.EOF, unwrapped, if r is at EOF before the packet's first
// byte. Otherwise, on any failure it also returns the bytes it consumed, so
// that a proxy can forward them and copy the rest of the stream raw: an
// error wrapping ErrTruncated if r ended inside the packet, or wrapping
// ErrNegativeLength or ErrFrameTooLarge for a length the official reader
// would refuse (or, for the count, one over the limit).
func ReadQuorumPacket(r io.Reader, limit int) (raw []byte, q QuorumPacket, err error) {
	if limit <= 0 {
		limit = MaxFrame
	}
	s := streamReader{r: r}
	s.fixed("QuorumPacket.type+zxid", 12)
	if s.err != nil && len(s.raw) == 0 && errors.Is(s.err, io.EOF) {
		return nil, q, io.EOF
	}
	s.bytes("QuorumPacket.data", s.length("QuorumPacket.data", limit))
	n := int(s.int32("QuorumPacket.authinfo"))
	switch {
	case s.err != nil || n < 0: // -1 is nil; other negative counts are an empty vector, as the official reader has it
	case n > limit/idMinLen:
		s.fail("QuorumPacket.authinfo", fmt.Errorf("count %d over limit %d: %w", n, limit, ErrFrameTooLarge))
	default:
		for i := 0; i < n && s.err == nil; i++ {
			s.bytes("Id.scheme", s.length("Id.scheme", limit))
			s.bytes("Id.id", s.length("Id.id", limit))
		}
	}
	if s.err != nil {
		return s.raw, q, s.err
	}
	q, _, err = DecodeQuorumPacket(s.raw)
	return s.raw, q, err
}

// streamReader reads Jute fields from a stream and keeps every byte it
// consumed. The first failure is kept in err and makes later reads no-ops.
type streamReader struct {
	r     io.Reader
	raw   []byte
	err   error
	limit int // if positive, how many bytes it reads at most
}

func (s *streamReader) fail(field string, err error) {
	if s.err == nil {
		s.err = fmt.Errorf("%s: %w", field, err)
	}
}

// fixed reads n bytes (n is small) and returns them.
func (s *streamReader) fixed(field string, n int) []byte {
	if s.err != nil {
		return nil
	}
	if s.limit > 0 && len(s.raw)+n > s.limit {
		s.fail(field, fmt.Errorf("%d bytes read, %d more over limit %d: %w", len(s.raw), n, s.limit, ErrFrameTooLarge))
		return nil
	}
	start := len(s.raw)
	s.raw = append(s.raw, make([]byte, n)...)
	m, err := io.ReadFull(s.r, s.raw[start:])
	s.raw = s.raw[:start+m]
	switch {
	case err == io.EOF && start == 0:
		s.err = io.EOF
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		s.fail(field, fmt.Errorf("got %d of %d bytes: %w", m, n, ErrTruncated))
	case err != nil:
		s.fail(field, err)
	}
	if s.err != nil {
		return nil
	}
	return s.raw[start:]
}

func (s *streamReader) int32(field string) int32 {
	if b := s.fixed(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// length reads a buffer or string length as the official reader checks it:
// -1 (nil) reads as 0; any other negative length, or one over limit, fails.
func (s *streamReader) length(field string, limit int) int {
	n := int(s.int32(field))
	switch {
	case s.err != nil, n == -1:
		return 0
	case n < 0:
		s.fail(field, fmt.Errorf("length %d: %w", n, ErrNegativeLength))
		return 0
	case n > limit:
		s.fail(field, fmt.Errorf("length %d over limit %d: %w", n, limit, ErrFrameTooLarge))
		return 0
	}
	return n
}

// str reads a ustring; nil reads as "".
func (s *streamReader) str(field string, limit int) string {
	n := s.length(field, limit)
	start := len(s.raw)
	s.bytes(field, n)
	if s.err != nil {
		return ""
	}
	return string(s.raw[start:])
}

// bytes reads n bytes, growing the buffer by at most readChunk at a time,
// so a stream that claims a large buffer and ends early costs little.
func (s *streamReader) bytes(field string, n int) {
	for n > 0 && s.err == nil {
		k := min(n, readChunk)
		s.fixed(field, k)
		n -= k
	}
}

// SnapshotSignature is the string a leader writes after the snapshot that
// follows a SNAP packet (LearnerHandler.run); the learner refuses the sync
// without it.
const SnapshotSignature = "BenWasHere"

// ErrSignature means a snapshot did not end with SnapshotSignature.
var ErrSignature = errors.New("jute: not the snapshot signature")

// ReadLearnerSnapshot reads what a leader writes after a SNAP packet, the
// database as ZKDatabase.serializeSnapshot lays it out and then the
// signature, and returns its bytes as they were read, with the number of
// sessions and nodes it held. The layout (the same in 3.8.0 and 3.9.3):
// the sessions (a count, then each id and timeout), the ACL cache (a count,
// then each key and its vector of ACLs), the nodes (each a path, then its
// data, ACL key and StatPersisted) up to the path "/", then the signature
// string. Every buffer, string and vector must fit in limit bytes, and so
// must the whole (a non-positive limit means MaxFrame). As ReadQuorumPacket
// does, it returns io.EOF only at EOF before the first byte, and otherwise
// every byte it consumed with its error; a signature other than
// SnapshotSignature is an error wrapping ErrSignature.
func ReadLearnerSnapshot(r io.Reader, limit int) (raw []byte, sessions, nodes int, err error) {
	if limit <= 0 {
		limit = MaxFrame
	}
	s := streamReader{r: r, limit: limit}
	sessions = max(0, int(s.int32("snapshot.count"))) // as the official loop, a negative count is none
	if s.err != nil && len(s.raw) == 0 && errors.Is(s.err, io.EOF) {
		return nil, 0, 0, io.EOF
	}
	for i := 0; i < sessions && s.err == nil; i++ {
		s.fixed("snapshot.session", 12) // id, timeout
	}
	acls := int(s.int32("acl cache.map"))
	for i := 0; i < acls && s.err == nil; i++ {
		s.fixed("acl cache.long", 8)
		n := int(s.int32("acl cache.acls"))
		switch {
		case n == -1:
			s.fail("acl cache.acls", fmt.Errorf("count -1 (nil), which the official reader refuses: %w", ErrNegativeLength))
		case n > limit/aclMinLen:
			s.fail("acl cache.acls", fmt.Errorf("count %d over limit %d: %w", n, limit, ErrFrameTooLarge))
		}
		for j := 0; j < n && s.err == nil; j++ {
			s.fixed("ACL.perms", 4)
			s.bytes("ACL.id.scheme", s.length("ACL.id.scheme", limit))
			s.bytes("ACL.id.id", s.length("ACL.id.id", limit))
		}
	}
	for s.err == nil {
		if s.str("node.path", limit) == "/" {
			break
		}
		s.bytes("node.data", s.length("node.data", limit))
		s.fixed("node.acl+statpersisted", 8+statPersistedLen)
		nodes++
	}
	if sig := s.str("signature", limit); s.err == nil && sig != SnapshotSignature {
		s.fail("signature", fmt.Errorf("got %q; want %q: %w", sig, SnapshotSignature, ErrSignature))
	}
	return s.raw, sessions, nodes, s.err
}

// statPersistedLen is the encoded StatPersisted: czxid, mzxid, ctime and
// mtime (longs), version, cversion and aversion (ints), ephemeralOwner and
// pzxid (longs).
const statPersistedLen = 4*8 + 3*4 + 2*8

// TxnHeader starts the data of a PROPOSAL: who asked for the transaction
// and what it is (the official org.apache.zookeeper.txn.TxnHeader).
type TxnHeader struct {
	ClientID int64 `jute:"clientId"` // the session that asked
	Cxid     int32 // the client's xid for the request
	Zxid     int64
	Time     int64 // the leader's wall clock, in ms
	Type     int32 // an Op* opcode: create for a create request, create2 for create2, ...
}

// DecodeTxnHeader decodes the header at the start of a PROPOSAL's data and
// returns it with the transaction after it, which aliases p.
func DecodeTxnHeader(p []byte) (TxnHeader, []byte, error) {
	return decode(p, func(d *decoder) TxnHeader {
		return TxnHeader{
			ClientID: d.int64("TxnHeader.clientId"),
			Cxid:     d.int32("TxnHeader.cxid"),
			Zxid:     d.int64("TxnHeader.zxid"),
			Time:     d.int64("TxnHeader.time"),
			Type:     d.int32("TxnHeader.type"),
		}
	})
}

// Append appends the encoded header to dst.
func (h TxnHeader) Append(dst []byte) []byte {
	dst = appendInt64(dst, h.ClientID)
	dst = appendInt32(dst, h.Cxid)
	dst = appendInt64(dst, h.Zxid)
	dst = appendInt64(dst, h.Time)
	return appendInt32(dst, h.Type)
}

// TxnPath returns the path a transaction of type typ names, read from its
// first field: for a create (CreateTxn, CreateContainerTxn, CreateTTLTxn),
// the node's full name as the leader chose it, with a sequential node's
// suffix; also for delete and setData. For any other type it returns an
// error wrapping errors.ErrUnsupported without reading txn.
func TxnPath(typ int32, txn []byte) (string, error) {
	switch {
	case IsCreate(typ), typ == OpDelete, typ == OpSetData:
		p, _, err := decode(txn, func(d *decoder) string { return d.string("Txn.path") })
		return p, err
	}
	return "", fmt.Errorf("jute: no transaction path decoder for %s: %w", OpName(typ), errors.ErrUnsupported)
}

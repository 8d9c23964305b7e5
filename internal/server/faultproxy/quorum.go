package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/zk19/zk19/internal/server/jute"
)

// WithQuorumPackets makes the proxy read its Down direction (upstream to
// client) as the stream of quorum packets a ZooKeeper leader sends a
// learner, which HoldCommit needs: use it on a proxy that a follower dials
// to reach a server's quorum port. Packets, and the snapshot a SNAP packet
// announces, are forwarded byte for byte; Up is copied raw. After bytes
// that are neither a packet of a known type nor the snapshot where one is
// due, the direction copies raw bytes for the rest of the connection, and
// says so in one log line.
func WithQuorumPackets() Option { return func(c *config) { c.quorum = true } }

// quorumLimit bounds a packet's data buffer: the learner's reader refuses
// more than jute.maxbuffer (1 MiB by default) plus a little, so this only
// tells a desynchronised stream from a real one. snapshotLimit bounds the
// snapshot after a SNAP, which the proxy keeps whole until it has read the
// signature at its end.
const (
	quorumLimit   = 16 << 20
	snapshotLimit = 256 << 20
)

// nextPacket returns the next quorum packet read from src and reports it in
// pkt; after the stream has fallen back to raw, or for the bytes of a
// packet that did not parse, pkt is nil.
func (pp *pipe) nextPacket(buf []byte) (b []byte, pkt *jute.QuorumPacket, err error) {
	if pp.raw {
		n, err := pp.br.Read(buf)
		return clone(buf[:n]), nil, err
	}
	if pp.snapshotDue {
		return pp.nextSnapshot()
	}
	raw, q, err := jute.ReadQuorumPacket(pp.br, quorumLimit)
	why := ""
	switch {
	case err == io.EOF:
		return nil, nil, err
	case errors.Is(err, jute.ErrTruncated):
		return raw, nil, io.EOF // a clean end of stream, even inside a packet
	case malformed(err):
		why = err.Error()
	case err != nil: // the socket failed
		return raw, nil, err
	case !jute.IsQuorumType(q.Type):
		why = "unknown packet type " + jute.QuorumName(q.Type)
	case q.Type == jute.QuorumSnap:
		pp.snapshotDue = true
	}
	if why != "" {
		pp.raw = true
		p := pp.c.p
		p.mu.Lock()
		p.logConn(pp.c, "%s: %s; copying raw bytes from now on", pp.dir(), why)
		p.mu.Unlock()
	}
	if err != nil || !jute.IsQuorumType(q.Type) {
		return raw, nil, nil
	}
	pp.frames++
	return raw, &q, nil
}

// nextSnapshot reads the snapshot after a SNAP packet up to its signature
// and returns it as one item.
func (pp *pipe) nextSnapshot() ([]byte, *jute.QuorumPacket, error) {
	pp.snapshotDue = false
	raw, sessions, nodes, err := jute.ReadLearnerSnapshot(pp.br, snapshotLimit)
	if err == io.EOF || errors.Is(err, jute.ErrTruncated) {
		return raw, nil, io.EOF
	}
	if err != nil && !malformed(err) {
		return raw, nil, err
	}
	p := pp.c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		pp.raw = true
		p.logConn(pp.c, "%s: the snapshot after SNAP: %v; copying raw bytes from now on", pp.dir(), err)
		return raw, nil, nil
	}
	p.logConn(pp.c, "%s: SNAP: read the snapshot through (%d bytes, %d sessions, %d nodes); packets follow", pp.dir(), len(raw), sessions, nodes)
	return raw, nil, nil
}

// malformed reports whether err says the bytes are not what the reader
// expected, rather than that the socket failed.
func malformed(err error) bool {
	return errors.Is(err, jute.ErrNegativeLength) || errors.Is(err, jute.ErrFrameTooLarge) || errors.Is(err, jute.ErrSignature)
}

// TxnMatch selects the proposal whose COMMIT a HoldCommit holds.
type TxnMatch struct {
	// Types are the transaction types that match (jute.OpCreate, ...): the
	// TxnHeader's type is the opcode of the request, create for a create
	// and create2 for a create2. At least one is required.
	Types []int32
	// Under, if set, is a node the transaction's path must lie strictly
	// under; the types must then be ones jute.TxnPath decodes.
	Under string
	// Session, if not 0, is the session that asked for the transaction
	// (the TxnHeader's clientId).
	Session int64
}

// String describes m for log lines, such as "create under /r of session 0x1000a".
func (m TxnMatch) String() string {
	s := opNames(m.Types)
	if m.Under != "" {
		s += " under " + m.Under
	}
	if m.Session != 0 {
		s += fmt.Sprintf(" of session 0x%x", m.Session)
	}
	return s
}

func (m TxnMatch) check() error {
	if len(m.Types) == 0 {
		return errors.New("no transaction type")
	}
	if m.Under == "" {
		return nil
	}
	for _, t := range m.Types {
		if _, err := jute.TxnPath(t, nil); errors.Is(err, errors.ErrUnsupported) {
			return fmt.Errorf("a path is required but %s has no transaction path decoder", jute.OpName(t))
		}
	}
	return nil
}

// txn is what a PROPOSAL's data says, read before taking the lock.
type txn struct {
	hdr  jute.TxnHeader
	path string
	ok   bool
}

func readTxn(q *jute.QuorumPacket) (t txn) {
	if q == nil || q.Type != jute.QuorumProposal {
		return t
	}
	h, rest, err := jute.DecodeTxnHeader(q.Data)
	if err != nil {
		return t
	}
	t.hdr, t.ok = h, true
	t.path, _ = jute.TxnPath(h.Type, rest)
	return t
}

func (m TxnMatch) matches(t txn) bool {
	switch {
	case !t.ok, !slices.Contains(m.Types, t.hdr.Type):
		return false
	case m.Session != 0 && t.hdr.ClientID != m.Session:
		return false
	case m.Under != "":
		return under(t.path, m.Under)
	}
	return true
}

// passHeld is what a CommitHold lets past the packets it holds. The
// follower answers a PING from its session table and a REVALIDATE from the
// leader's answer about one session (Follower.processPacket, Learner.ping
// and Learner.revalidate in 3.8.0 and 3.9.3): neither reads the data tree
// or the queue of commits, so delivering them ahead of a held COMMIT is
// what a follower whose CommitProcessor has not yet applied that COMMIT
// does anyway. Everything else stays in order behind it: COMMITs must
// arrive in zxid order, and a SYNC is answered only after the commits
// before it (FollowerZooKeeperServer.commit and sync).
var passHeld = []int32{jute.QuorumPing, jute.QuorumRevalidate}

type holdState int

const (
	holdArmed    holdState = iota // waiting for a matching PROPOSAL
	holdProposed                  // PROPOSAL seen; waiting for its COMMIT
	holdHolding                   // COMMIT held, and what follows it but PINGs and REVALIDATEs
	holdEnded                     // released, or the held packets were lost
)

// CommitHoldResult describes what a HoldCommit did so far.
type CommitHoldResult struct {
	Conn    int    // proxied connection number as in log lines; 0 until a PROPOSAL matched
	Zxid    int64  // the matched proposal's zxid
	Session int64  // the session that asked for it
	Type    int32  // its transaction type
	Path    string // its path: for a sequential create, the node's full name
	// Holding is true from the moment the COMMIT was held until the end.
	Holding bool
	// Held counts the packets held, by type; Passed the PINGs and
	// REVALIDATEs let past them, by type. HeldNow is how many are held now.
	Held, Passed map[int32]int
	HeldNow      int
	Released     bool   // the held packets were delivered, in order
	Reason       string // how the hold ended, once it has
}

// Kinds lists counts by packet type name, such as "COMMIT×1 SYNC×1".
func Kinds(counts map[int32]int) string {
	var s []string
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		s = append(s, fmt.Sprintf("%s×%d", jute.QuorumName(t), counts[t]))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

// CommitHold is a fault armed by Proxy.HoldCommit.
type CommitHold struct {
	p       *Proxy
	m       TxnMatch
	holding chan struct{}
	done    chan struct{}

	// Guarded by p.mu.
	state holdState
	conn  *conn
	res   CommitHoldResult
}

// HoldCommit arms a fault on the leader's quorum stream (Down, on a proxy
// made WithQuorumPackets) that makes one follower lag behind one write,
// and no other: the first PROPOSAL that m selects, on any connection,
// passes (the follower logs it and acks it, so the write commits), and the
// proxy waits for the COMMIT of its zxid on that connection. From that
// COMMIT on it keeps every packet in order, except PINGs and REVALIDATEs,
// which it delivers at once (see passHeld): the follower stays connected,
// keeps its clients' sessions alive and can take a reconnecting session,
// but never applies the write, nor answers a sync that queued behind it,
// until Release delivers what was held, in order. Heal releases it too;
// Cut, Blackhole or the connection's end discards what it holds and ends
// it (Result says which). A proxy without WithQuorumPackets, or an invalid
// m, returns a CommitHold that has already ended, with the reason.
func (p *Proxy) HoldCommit(m TxnMatch) *CommitHold {
	h := &CommitHold{p: p, m: m, holding: make(chan struct{}), done: make(chan struct{}),
		res: CommitHoldResult{Held: map[int32]int{}, Passed: map[int32]int{}}}
	p.mu.Lock()
	defer p.mu.Unlock()
	err := m.check()
	switch {
	case p.closed:
		h.end("proxy closed")
	case !p.cfg.quorum:
		h.end("proxy does not read quorum packets")
		p.logf("HoldCommit ignored: not reading quorum packets")
	case err != nil:
		h.end("invalid match: " + err.Error())
		p.logf("HoldCommit ignored: invalid match: %v (%s)", err, m)
	default:
		p.holds = append(p.holds, h)
		p.logf("HoldCommit armed: the COMMIT of the first proposal of %s", m)
	}
	return h
}

// Holding returns a channel closed once the COMMIT is held.
func (h *CommitHold) Holding() <-chan struct{} { return h.holding }

// Done returns a channel closed once the hold has ended.
func (h *CommitHold) Done() <-chan struct{} { return h.done }

// Result returns what the hold has done so far.
func (h *CommitHold) Result() CommitHoldResult {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	r := h.res
	r.Held, r.Passed = maps.Clone(r.Held), maps.Clone(r.Passed)
	return r
}

// Release delivers, in order, every packet the hold keeps, and ends it; a
// hold whose COMMIT has not come yet is cancelled.
func (h *CommitHold) Release() {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	h.p.releaseHold(h, "released")
}

// end marks h ended. Callers hold p.mu (or own h).
func (h *CommitHold) end(reason string) {
	if h.state == holdEnded {
		return
	}
	h.state = holdEnded
	h.res.Reason = reason
	close(h.done)
}

// releaseHold delivers what h holds and ends it. Callers hold p.mu.
func (p *Proxy) releaseHold(h *CommitHold, reason string) {
	if h.state == holdEnded {
		return
	}
	if h.state == holdHolding {
		pp := h.conn.pipes[1]
		n := len(pp.held)
		for _, it := range pp.held {
			pp.q = append(pp.q, it)
			pp.qBytes += int64(len(it.b))
		}
		pp.held = nil
		pp.cond.Broadcast()
		h.res.Released, h.res.HeldNow = true, 0
		p.logConn(h.conn, "HoldCommit %s: delivering %d held packets (%s) in order, then passing", reason, n, Kinds(h.res.Held))
	} else {
		p.logf("HoldCommit %s before its COMMIT was held", reason)
	}
	p.forgetHold(h)
	h.end(reason)
}

func (p *Proxy) forgetHold(h *CommitHold) {
	if i := slices.Index(p.holds, h); i >= 0 {
		p.holds = slices.Delete(p.holds, i, i+1)
	}
}

// holdPacket applies the armed holds to what was read on Down: a packet,
// or (q nil) bytes that are not one, which a hold in force keeps in order
// like any packet it does not let past. It reports whether a hold took b.
// Callers hold p.mu.
func (pp *pipe) holdPacket(q *jute.QuorumPacket, t txn, b []byte) bool {
	c, p := pp.c, pp.c.p
	for _, h := range p.holds {
		switch {
		case q == nil:
			if h.conn == c && h.state == holdHolding {
				pp.keep(h, q, b)
				return true
			}
		case h.state == holdArmed && h.m.matches(t):
			h.state, h.conn = holdProposed, c
			h.res.Conn, h.res.Zxid, h.res.Session, h.res.Type, h.res.Path = c.id, q.Zxid, t.hdr.ClientID, t.hdr.Type, t.path
			p.logConn(c, "PROPOSAL zxid=%#x %s %s of session 0x%x: forwarded; HoldCommit will hold its COMMIT", q.Zxid, jute.OpName(t.hdr.Type), t.path, t.hdr.ClientID)
		case h.conn != c:
		case h.state == holdProposed && q.Type == jute.QuorumCommit && q.Zxid == h.res.Zxid:
			h.state, h.res.Holding = holdHolding, true
			close(h.holding)
			pp.keep(h, q, b)
			p.logConn(c, "COMMIT zxid=%#x: held, with every later packet but PING and REVALIDATE", q.Zxid)
			return true
		case h.state == holdHolding && slices.Contains(passHeld, q.Type):
			h.res.Passed[q.Type]++
		case h.state == holdHolding:
			pp.keep(h, q, b)
			return true
		}
	}
	return false
}

func (pp *pipe) keep(h *CommitHold, q *jute.QuorumPacket, b []byte) {
	pp.held = append(pp.held, item{b: b})
	if q != nil {
		h.res.Held[q.Type]++
	}
	h.res.HeldNow = len(pp.held)
}

// loseHeld discards what the holds on pp's connection keep and ends them.
// Callers hold p.mu.
func (pp *pipe) loseHeld(why string) {
	p := pp.c.p
	for _, it := range pp.held {
		p.discarded[pp.idx] += int64(len(it.b))
	}
	n := len(pp.held)
	pp.held = nil
	for _, h := range slices.Clone(p.holds) {
		if h.conn == pp.c && h.state != holdArmed {
			h.res.HeldNow = 0
			p.logConn(pp.c, "HoldCommit ended: %s; %d held packets discarded", why, n)
			p.forgetHold(h)
			h.end(fmt.Sprintf("%s: %d held packets discarded", why, n))
		}
	}
}

// Package fence is the resource side of the zk19 article's fencing
// (sections "资源接受新 token 后拒绝旧写" and "顺序号只在明确的锁域内比较"):
// tokens taken from ZooKeeper lock nodes, and resources that refuse a write
// whose token is older than one they have accepted.
//
// A lock holder's token is the sequence suffix of its EPHEMERAL_SEQUENTIAL
// node ("<guid>-lock-0000000007"), qualified by a domain that names the
// incarnation of the persistent lock parent (for example its czxid) and by
// the lock it came from (LockID, a digest of the parent's path). Tokens of
// one lock are ordered by (Domain, Seq). A token travels as text in one
// versioned form (Token.MarshalText; over HTTP, package fencehttp).
//
// A fenced resource keeps a high-water mark, the largest token it has
// accepted, and compares a write's token with the mark and stores the value
// in one critical section: Memory under a mutex, Durable in one SQLite or
// PostgreSQL transaction, and a service's own table in the service's
// transaction with AdvanceMark. A refusal is an error: *StaleError (ErrStale) for a token
// below the mark, *ForeignLockError (ErrForeignLock) for a token of another
// lock than the mark's, ErrZeroToken for the zero Token.
//
// What it guarantees: once a resource has accepted token t, it stores no
// value carrying a token below t, nor one of another lock, whatever the
// writers' timing (claims F1, F3, F6). An equal token is accepted again;
// WriteOnce adds a request id, applied at most once (F12).
//
// What it does not:
//   - Fencing is not authentication: a forged larger token is accepted, and
//     the text form is not signed.
//   - Tokens compare only within one lock domain. Sequence numbers restart
//     when the parent is recreated, and czxids when an ensemble's data is
//     wiped: a domain that must outlive either is a generation the operator
//     raises (claims T1–T5).
//   - ZooKeeper's sequence counter is a signed 32-bit integer; ParseSeq
//     refuses a wrapped (negative) suffix rather than compare it.
//   - Only writes that pass through the resource are fenced. A write the
//     old holder made before the new token reached the resource stands,
//     and the resource cannot tell a holder that is merely slow from one
//     that lost its lock (F2).
//   - A resource is bound to a lock by its mark: before its first accepted
//     write, or after the mark is cleared, it takes any lock's token.
//   - The database resources speak SQLite and PostgreSQL (proven on
//     PostgreSQL 15); they refuse any other database (ErrUnknownDatabase),
//     and take any server whose version() begins "PostgreSQL " for
//     PostgreSQL. On PostgreSQL, a transaction under REPEATABLE READ or
//     SERIALIZABLE that overlaps another's advance of the same mark fails
//     with a serialization failure, which the caller retries (AdvanceMark).
//
// The controls that break the guarantee on purpose, for demonstrations and
// tests, are in package fencetest, apart from the resources a service uses.
package fence

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Token is a fencing token. Tokens are ordered by Domain first, then Seq;
// tokens of different locks (Lock) are not ordered, and a resource refuses
// a token of a lock other than its mark's.
//
// The zero Token is no token: every resource of this package refuses it
// with ErrZeroToken. A token made by NewToken is never zero.
//
// A token travels as text (MarshalText, and so JSON) in one versioned
// format; see MarshalText.
type Token struct {
	// Lock identifies the lock the token came from: LockID of the lock
	// parent's path (16 lowercase hex digits), or empty for a token made
	// without one. It is an identity, not a secret.
	Lock string
	// Domain identifies the generation of the lock domain (the persistent
	// lock parent), e.g. the parent's czxid. Sequence numbers restart when
	// the parent is recreated, so a larger Domain dominates any Seq. The
	// czxid orders parents of one ensemble's lifetime only: an ensemble
	// whose data is wiped or replaced counts zxids from the start again
	// (claim T5), so a domain that must outlive it is a generation the
	// operator assigns and raises, compared first.
	Domain int64
	// Seq is the ZooKeeper sequence number of the lock node.
	Seq int64
}

// Compare returns -1 if t orders before u, 0 if they are equal and +1 if t
// orders after u. Domain is compared first, then Seq.
func (t Token) Compare(u Token) int {
	switch {
	case t.Domain < u.Domain:
		return -1
	case t.Domain > u.Domain:
		return +1
	case t.Seq < u.Seq:
		return -1
	case t.Seq > u.Seq:
		return +1
	default:
		return 0
	}
}

// String formats the token as "g<Domain>/<Seq>", e.g. "g5/7", for people:
// it leaves out Lock and is not parsed back. MarshalText is the format that
// travels.
func (t Token) String() string {
	return fmt.Sprintf("g%d/%d", t.Domain, t.Seq)
}

// LockInfix separates the client-chosen prefix of a lock node name from the
// sequence suffix appended by ZooKeeper.
const LockInfix = "-lock-"

// seqWidth is the width of ZooKeeper's sequence suffix (Java "%010d").
const seqWidth = 10

// Errors returned (wrapped, test with errors.Is) by ParseSeq and ParseToken.
var (
	// ErrNoSuffix reports a node name without LockInfix or with nothing
	// after its last occurrence.
	ErrNoSuffix = errors.New("missing " + LockInfix + " sequence suffix")
	// ErrNegativeSeq reports a suffix starting with '-', which ZooKeeper
	// produces after its signed 32-bit counter overflows.
	ErrNegativeSeq = errors.New("negative sequence suffix")
	// ErrSeqOverflow reports a suffix longer than 10 digits or above
	// math.MaxInt32.
	ErrSeqOverflow = errors.New("sequence suffix overflows int32")
	// ErrNotNumeric reports a suffix containing anything but ASCII digits
	// ('+', spaces and non-ASCII digits included).
	ErrNotNumeric = errors.New("sequence suffix is not numeric")
	// ErrShortSeq reports an all-digit suffix narrower than the 10 digits
	// ZooKeeper always produces.
	ErrShortSeq = errors.New("sequence suffix shorter than 10 digits")
)

// ParseSeq returns the sequence number encoded in the suffix that follows
// the last LockInfix in nodeName. The suffix must be exactly 10 ASCII digits
// with a value in [0, math.MaxInt32]. Checks are applied in this order:
// missing or empty suffix (ErrNoSuffix), leading '-' (ErrNegativeSeq), any
// non-ASCII-digit byte (ErrNotNumeric), more than 10 digits or a value above
// math.MaxInt32 (ErrSeqOverflow), fewer than 10 digits (ErrShortSeq). Errors
// name the node, e.g. `fence: "a-lock--000000001": negative sequence suffix`.
func ParseSeq(nodeName string) (int64, error) {
	i := strings.LastIndex(nodeName, LockInfix)
	if i < 0 {
		return 0, parseErr(nodeName, ErrNoSuffix)
	}
	s := nodeName[i+len(LockInfix):]
	if s == "" {
		return 0, parseErr(nodeName, ErrNoSuffix)
	}
	if s[0] == '-' {
		return 0, parseErr(nodeName, ErrNegativeSeq)
	}
	for j := 0; j < len(s); j++ {
		if s[j] < '0' || s[j] > '9' {
			return 0, parseErr(nodeName, ErrNotNumeric)
		}
	}
	if len(s) > seqWidth {
		return 0, parseErr(nodeName, ErrSeqOverflow)
	}
	if len(s) < seqWidth {
		return 0, parseErr(nodeName, ErrShortSeq)
	}
	var v int64
	for j := 0; j < len(s); j++ {
		v = v*10 + int64(s[j]-'0') // at most 10 digits: cannot overflow int64
	}
	if v > math.MaxInt32 {
		return 0, parseErr(nodeName, ErrSeqOverflow)
	}
	return v, nil
}

// ParseToken parses nodeName with ParseSeq and qualifies the sequence
// number with domain.
func ParseToken(domain int64, nodeName string) (Token, error) {
	seq, err := ParseSeq(nodeName)
	if err != nil {
		return Token{}, err
	}
	return Token{Domain: domain, Seq: seq}, nil
}

func parseErr(node string, err error) error {
	return fmt.Errorf("fence: %q: %w", node, err)
}

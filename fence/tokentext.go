package fence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TokenPrefix starts every token in its text form: the format's name and
// version. A later format gets another prefix; this version's parser
// refuses it.
const TokenPrefix = "zk19-fence-v1:"

// maxTokenText bounds the text form: the prefix, 16 hex digits, a domain of
// at most 19 digits and a sign, a sequence of at most 10 digits and three colons.
const maxTokenText = len(TokenPrefix) + 16 + 1 + 20 + 1 + 10

// lockIDLen is the length of a LockID: 8 bytes of SHA-256 in hex.
const lockIDLen = 16

// ErrZeroToken is returned by the resources of this package for the zero
// Token: it is no lock's token, the value a forgotten assignment leaves.
var ErrZeroToken = errors.New("fence: zero token: no lock's token")

// ErrMalformedToken is wrapped by the errors of UnmarshalText (and
// MarshalText, for a Token whose fields the format cannot carry).
var ErrMalformedToken = errors.New("malformed fencing token")

// LockID names a lock in a token: the first 8 bytes of the SHA-256 of the
// lock parent's path, as given to the recipe (e.g. "/services/billing/lock"),
// in 16 lowercase hex digits. Two paths that differ in any byte are two
// locks; the path is not cleaned.
func LockID(lockPath string) string {
	sum := sha256.Sum256([]byte(lockPath))
	return hex.EncodeToString(sum[:lockIDLen/2])
}

// NewToken returns the token of the lock whose parent is lockPath: Lock is
// LockID(lockPath), with domain and the node's sequence number seq. Package
// lock builds Held.Token with it.
func NewToken(lockPath string, domain, seq int64) Token {
	return Token{Lock: LockID(lockPath), Domain: domain, Seq: seq}
}

// IsZero reports whether t is the zero Token.
func (t Token) IsZero() bool { return t == Token{} }

// MarshalText encodes t as
//
//	zk19-fence-v1:<lock>:<domain>:<seq>
//
// where <lock> is t.Lock (16 lowercase hex digits, or empty for a token
// without a lock), <domain> is t.Domain in decimal (any int64) and
// <seq> is t.Seq in decimal (0 to MaxInt32), both without leading zeros
// or '+' (a negative domain, which an operator's generation may be, has a
// '-'); for example "zk19-fence-v1:8d3a5b1c9e0f2a47:0:7". The form is
// canonical: one token, one text. It fails, wrapping ErrMalformedToken, for
// a token the format cannot carry (a negative field, a Seq above MaxInt32,
// a Lock that is not a LockID) and with ErrZeroToken for the zero Token.
func (t Token) MarshalText() ([]byte, error) {
	if t.IsZero() {
		return nil, ErrZeroToken
	}
	if err := t.check(); err != nil {
		return nil, fmt.Errorf("fence: marshal token %v: %w", t, err)
	}
	b := make([]byte, 0, maxTokenText)
	b = append(b, TokenPrefix...)
	b = append(b, t.Lock...)
	b = append(b, ':')
	b = strconv.AppendInt(b, t.Domain, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, t.Seq, 10)
	return b, nil
}

// check reports a field the text form cannot carry.
func (t Token) check() error {
	switch {
	case t.Lock != "" && !isLockID(t.Lock):
		return fmt.Errorf("%w: lock %q is not 16 lowercase hex digits", ErrMalformedToken, t.Lock)
	case t.Seq < 0 || t.Seq > math.MaxInt32:
		return fmt.Errorf("%w: sequence %d outside [0, MaxInt32]", ErrMalformedToken, t.Seq)
	}
	return nil
}

// UnmarshalText parses the form MarshalText writes, and only that form:
// the prefix exactly, then the three fields, each canonical (no '+', no
// leading zero, no "-0", no space, nothing before or after). Anything else,
// including a token of another version, quoted or wrapped text, or the
// zero Token's fields, is refused with an error wrapping ErrMalformedToken
// (or ErrZeroToken) that names the input, and t is left unchanged.
func (t *Token) UnmarshalText(text []byte) error {
	tok, err := parseTokenText(string(text))
	if err != nil {
		return fmt.Errorf("fence: token %.80q: %w", text, err)
	}
	*t = tok
	return nil
}

func parseTokenText(s string) (Token, error) {
	if len(s) > maxTokenText {
		return Token{}, fmt.Errorf("%w: longer than %d bytes", ErrMalformedToken, maxTokenText)
	}
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok {
		return Token{}, fmt.Errorf("%w: does not start with %q", ErrMalformedToken, TokenPrefix)
	}
	fields := strings.Split(rest, ":")
	if len(fields) != 3 {
		return Token{}, fmt.Errorf("%w: %d fields after the prefix; want 3 (lock:domain:seq)", ErrMalformedToken, len(fields))
	}
	if fields[0] != "" && !isLockID(fields[0]) {
		return Token{}, fmt.Errorf("%w: lock %q is not 16 lowercase hex digits", ErrMalformedToken, fields[0])
	}
	domain, err := canonicalDomain(fields[1])
	if err != nil {
		return Token{}, fmt.Errorf("%w: domain: %w", ErrMalformedToken, err)
	}
	seq, err := canonical(fields[2], math.MaxInt32)
	if err != nil {
		return Token{}, fmt.Errorf("%w: sequence: %w", ErrMalformedToken, err)
	}
	tok := Token{Lock: fields[0], Domain: domain, Seq: seq}
	if tok.IsZero() {
		return Token{}, ErrZeroToken
	}
	return tok, nil
}

// canonicalDomain parses a domain: canonical, with a '-' for a negative
// one ("-0" is not canonical).
func canonicalDomain(s string) (int64, error) {
	digits, neg := strings.CutPrefix(s, "-")
	v, err := canonical(digits, math.MaxInt64)
	switch {
	case neg && digits == "9223372036854775808":
		return math.MinInt64, nil
	case err != nil:
		return 0, err
	case neg && v == 0:
		return 0, fmt.Errorf("%q is not canonical", s)
	case neg:
		return -v, nil
	}
	return v, nil
}

// canonical parses a decimal in [0, max] written without sign or leading
// zeros.
func canonical(s string, max int64) (int64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not ASCII digits", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("%q is above %d", s, max)
	}
	return v, nil
}

func isLockID(s string) bool {
	if len(s) != lockIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

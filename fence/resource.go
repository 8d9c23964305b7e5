package fence

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by operations on a closed resource.
var ErrClosed = errors.New("fence: resource closed")

// ErrStale is the refusal of a token below the resource's mark. The error a
// resource returns is a *StaleError, which carries both tokens; test with
// errors.Is(err, ErrStale) or errors.As(err, &stale).
var ErrStale = errors.New("fence: stale token")

// ErrForeignLock is the refusal of a token of another lock than the
// resource's mark (their Lock differs). The error a resource returns is a
// *ForeignLockError.
var ErrForeignLock = errors.New("fence: token of another lock")

// StaleError is a write refused because its token is below the mark.
type StaleError struct {
	Mark  Token // the resource's mark when it refused
	Token Token // the refused token
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("fence: stale token: %v is below the mark %v", e.Token, e.Mark)
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// ForeignLockError is a write refused because its token is of another lock
// than the resource's mark.
type ForeignLockError struct {
	Mark  Token // the resource's mark, of the lock the resource is bound to
	Token Token // the refused token
}

func (e *ForeignLockError) Error() string {
	return fmt.Sprintf("fence: token %v of lock %q refused: the mark %v is of lock %q", e.Token, e.Token.Lock, e.Mark, e.Mark.Lock)
}

// Is makes errors.Is(err, ErrForeignLock) true.
func (e *ForeignLockError) Is(target error) bool { return target == ErrForeignLock }

// Refused reports whether err is a resource's refusal of a write's token:
// ErrStale, ErrForeignLock or ErrZeroToken. Any other error says nothing of
// the token: the write may or may not have been stored.
func Refused(err error) bool {
	return errors.Is(err, ErrStale) || errors.Is(err, ErrForeignLock) || errors.Is(err, ErrZeroToken)
}

// Admit is the fence's rule, the same for every resource of this package:
// the zero token is refused (ErrZeroToken); before the first accepted write
// (marked false) any other token is admitted; after it, a token of another
// lock than mark's is refused (*ForeignLockError), and one below mark
// (*StaleError). An equal or larger token is admitted (nil).
func Admit(tok, mark Token, marked bool) error {
	switch {
	case tok.IsZero():
		return ErrZeroToken
	case !marked:
		return nil
	case tok.Lock != mark.Lock:
		return &ForeignLockError{Mark: mark, Token: tok}
	case tok.Compare(mark) < 0:
		return &StaleError{Mark: mark, Token: tok}
	}
	return nil
}

// Resource is a single-value store guarded by a fencing token.
type Resource interface {
	// Write stores value if tok is admitted (see Admit). A refusal is an
	// error: *StaleError (errors.Is ErrStale) for a token below the mark,
	// *ForeignLockError for a token of another lock, ErrZeroToken for the
	// zero Token; the Result then tells the state the write was refused
	// against (Mark, Prev, Commit; Accepted false). Other errors are I/O
	// problems, cancellation and use after Close. A nil error means the
	// value was stored (Result.Accepted) or, for WriteOnce, had been
	// (Result.Duplicate).
	Write(ctx context.Context, tok Token, value string) (Result, error)
	// Read returns the current value and high-water mark; ok is false
	// while no write has been accepted yet (no mark is set).
	Read(ctx context.Context) (value string, mark Token, ok bool, err error)
	// Close releases the resource.
	Close() error
}

// Result describes the outcome of a Write.
type Result struct {
	// Accepted reports whether the value was stored.
	Accepted bool
	// Mark is the high-water mark after the call.
	Mark Token
	// Prev is the value before the call.
	Prev string
	// Commit is the number of writes accepted so far, including this
	// one if it was accepted. It is assigned atomically with the write,
	// so ordering accepted writes by Commit yields their commit order.
	Commit uint64
	// Duplicate reports that WriteOnce found its request id already
	// applied and stored nothing.
	Duplicate bool
}

// Trace is the resources' test seam, in the manner of
// net/http/httptrace.ClientTrace: optional callbacks at the one point of a
// write that matters. A service passes none.
type Trace struct {
	// Decided runs inside the write's critical section, after the token was
	// compared with the mark and before anything is written. The critical
	// section is held while it runs: a Decided that blocks keeps every other
	// write of the resource out (that is how claim F6's proof shows the
	// compare and the write are one step). It is not called for a WriteOnce
	// whose request id was applied already. The compare-then-write control
	// of package fencetest calls it between its two steps, with no critical
	// section held, so that the same callback that proves a fenced write
	// atomic finds the control's gap.
	Decided func(Decision)
}

// Decision is what a write's compare found.
type Decision struct {
	Token    Token // the write's token
	Mark     Token // the mark it was compared with
	Marked   bool  // false before the first accepted write
	Admitted bool  // the value will be stored
}

func (t *Trace) decided(d Decision) {
	if t != nil && t.Decided != nil {
		t.Decided(d)
	}
}

// Option configures a resource.
type Option func(*config)

type config struct {
	trace    *Trace
	tables   *Tables
	register string
}

// WithTrace makes the resource call t's callbacks.
func WithTrace(t *Trace) Option { return func(c *config) { c.trace = t } }

func options(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// state is Memory's value and mark. Its methods take mu for their whole
// duration.
type state struct {
	trace   *Trace
	mu      sync.Mutex
	value   string
	mark    Token
	marked  bool
	commits uint64
	closed  bool
	applied map[string]Token // request ids of WriteOnce, with their tokens
}

// write applies value if tok is admitted, all within one critical section.
// A non-empty id is applied at most once: it is looked up and recorded in
// the same critical section. The ids whose tokens fall below the mark are
// forgotten when it rises: a retry of one is refused by its token.
func (s *state) write(ctx context.Context, tok Token, id, value string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if tok.IsZero() {
		return Result{}, ErrZeroToken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Result{}, ErrClosed
	}
	res := Result{Prev: s.value}
	if _, ok := s.applied[id]; ok && id != "" {
		res.Duplicate, res.Mark, res.Commit = true, s.mark, s.commits
		return res, nil
	}
	refused := s.admits(tok)
	s.trace.decided(Decision{Token: tok, Mark: s.mark, Marked: s.marked, Admitted: refused == nil})
	if refused == nil {
		res.Accepted = true
		s.apply(tok, value)
		if id != "" {
			s.applied[id] = tok
		}
	}
	res.Mark = s.mark
	res.Commit = s.commits
	return res, refused
}

// admits is the fence's rule (Admit) against the mark: nil, or the
// refusal. s.mu must be held.
func (s *state) admits(tok Token) error {
	return Admit(tok, s.mark, s.marked)
}

// apply stores value and raises the mark to tok if it is larger, forgetting
// the request ids below the new mark. s.mu must be held.
func (s *state) apply(tok Token, value string) {
	s.value = value
	s.commits++
	if !s.marked || tok.Compare(s.mark) > 0 {
		s.mark = tok
		s.marked = true
		for id, t := range s.applied {
			if t.Compare(tok) < 0 {
				delete(s.applied, id)
			}
		}
	}
	if s.applied == nil {
		s.applied = map[string]Token{}
	}
}

func (s *state) read(ctx context.Context) (string, Token, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", Token{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", Token{}, false, ErrClosed
	}
	return s.value, s.mark, s.marked, nil
}

// clearMark forgets the mark and keeps the value, in one critical section
// so that no write is judged against half of it. Only package fencetest
// reaches it (mark.go): it is claim T4's wrong rule.
func (s *state) clearMark(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.marked, s.mark = false, Token{}
	return nil
}

func (s *state) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Memory is an in-memory fenced resource. It compares the token with the
// mark and writes in a single critical section. A token equal to the mark
// is accepted; a larger token raises the mark. It is safe for concurrent use.
type Memory struct{ s state }

var _ Resource = (*Memory)(nil)

// NewMemory returns an empty fenced in-memory resource.
func NewMemory(opts ...Option) *Memory { return &Memory{s: state{trace: options(opts).trace}} }

// Write implements Resource.
func (m *Memory) Write(ctx context.Context, tok Token, value string) (Result, error) {
	return m.s.write(ctx, tok, "", value)
}

// WriteOnce is Write for a request that may be retried: a request id
// already applied stores nothing (Result.Duplicate, nil error). The id is
// checked and recorded in the same critical section as the token and the
// value. The fence alone does not deduplicate: an equal token is accepted
// again. The ids are kept while their token is the mark: once a larger
// token is accepted they are forgotten, and a retry of one is refused by
// its token (*StaleError), so it is still applied at most once.
func (m *Memory) WriteOnce(ctx context.Context, tok Token, id, value string) (Result, error) {
	if id == "" {
		return Result{}, errors.New("fence: WriteOnce needs a request id")
	}
	return m.s.write(ctx, tok, id, value)
}

// Read implements Resource.
func (m *Memory) Read(ctx context.Context) (string, Token, bool, error) {
	return m.s.read(ctx)
}

// Close implements Resource; later calls fail with ErrClosed.
func (m *Memory) Close() error { return m.s.close() }

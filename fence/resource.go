package fence

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is returned by operations on a closed resource.
var ErrClosed = errors.New("fence: resource closed")

// Resource is a single-value store guarded by a fencing token.
type Resource interface {
	// Write stores value if tok is accepted. A fencing rejection is
	// reported through Result.Accepted, not as an error; the error is
	// reserved for I/O problems, cancellation and use after Close.
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

type config struct{ trace *Trace }

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
	applied map[string]bool // request ids of WriteOnce
}

// write applies value if tok is not below the mark, all within one
// critical section. A non-empty id is applied at most once: it is looked up
// and recorded in the same critical section.
func (s *state) write(ctx context.Context, tok Token, id, value string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Result{}, ErrClosed
	}
	res := Result{Prev: s.value, Duplicate: id != "" && s.applied[id]}
	if res.Duplicate {
		res.Mark, res.Commit = s.mark, s.commits
		return res, nil
	}
	admitted := s.admits(tok)
	s.trace.decided(Decision{Token: tok, Mark: s.mark, Marked: s.marked, Admitted: admitted})
	if admitted {
		res.Accepted = true
		s.apply(tok, value)
		if id != "" {
			if s.applied == nil {
				s.applied = map[string]bool{}
			}
			s.applied[id] = true
		}
	}
	res.Mark = s.mark
	res.Commit = s.commits
	return res, nil
}

// admits is the fence's rule: no token below the mark. s.mu must be held.
func (s *state) admits(tok Token) bool {
	return !s.marked || tok.Compare(s.mark) >= 0
}

// apply stores value and raises the mark to tok if it is larger. s.mu must
// be held.
func (s *state) apply(tok Token, value string) {
	s.value = value
	s.commits++
	if !s.marked || tok.Compare(s.mark) > 0 {
		s.mark = tok
		s.marked = true
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
// already applied stores nothing (Result.Duplicate). The id is checked and
// recorded in the same critical section as the token and the value. The
// fence alone does not deduplicate: an equal token is accepted again.
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

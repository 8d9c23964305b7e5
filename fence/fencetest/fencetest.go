// Package fencetest holds the controls of package fence: resources and an
// operation that are wrong on purpose, for demonstrations and tests. A
// proof that a fenced resource refuses a stale write shows something only
// if the same proof, run where nothing fences, catches the stale write;
// these are that somewhere. None belongs in a service, so they live apart
// from the real resources, as net/http/httptest lives apart from net/http.
//
//   - [Unfenced] accepts every write. It is the unfenced control of the
//     F-claims: beside a fenced resource in the same story it takes the
//     late holder's write that the fenced one refuses (claims F4 and F5,
//     and the chaos run C1), and the checks of fence's concurrent tests
//     must flag it, or they are too weak.
//   - [CheckThenWrite] has the fence's rule but not its atomicity: it
//     compares the token with the mark in one critical section and writes
//     in another. It is claim F5's mistake, a check and then a write on its
//     answer, moved into the resource: a write that passed the compare
//     lands even when a larger token was accepted in the gap (claim F11),
//     and claim F6's proof must find that gap, in a run and in this source.
//   - [ClearMark] forgets a fenced resource's mark and keeps its value, as
//     an operator might once the lock parent was recreated. Sequence
//     numbers restart with the parent, so the old holder's late token is
//     accepted again (claim T4); the right rule compares a domain
//     generation first ([fence.Token].Domain).
package fencetest

import (
	"context"
	"sync"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/internal/mark"
)

// state is what both resource controls keep, as fence.Memory keeps it: the
// value, the largest token accepted and the commits. Its fields are
// guarded by mu; each control decides for itself how long it holds mu,
// which is where it goes wrong.
type state struct {
	mu      sync.Mutex
	value   string
	mark    fence.Token
	marked  bool
	commits uint64
	closed  bool
}

// admits is the fence's rule (fence.Admit), so that CheckThenWrite differs
// from a fenced resource in its steps only. s.mu must be held.
func (s *state) admits(tok fence.Token) error {
	return fence.Admit(tok, s.mark, s.marked)
}

// apply stores value and raises the mark to tok if it is larger. s.mu must
// be held.
func (s *state) apply(tok fence.Token, value string) {
	s.value = value
	s.commits++
	if !s.marked || tok.Compare(s.mark) > 0 {
		s.mark = tok
		s.marked = true
	}
}

func (s *state) read(ctx context.Context) (string, fence.Token, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", fence.Token{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", fence.Token{}, false, fence.ErrClosed
	}
	return s.value, s.mark, s.marked, nil
}

func (s *state) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Unfenced is the control resource that accepts every write. It still
// keeps the largest token it has seen as its mark, so that a proof can
// report the write it took below that mark. It is safe for concurrent use;
// the zero value is an empty resource.
type Unfenced struct{ s state }

var _ fence.Resource = (*Unfenced)(nil)

// NewUnfenced returns an empty unfenced resource.
func NewUnfenced() *Unfenced { return new(Unfenced) }

// Write implements fence.Resource; every write is accepted.
func (u *Unfenced) Write(ctx context.Context, tok fence.Token, value string) (fence.Result, error) {
	if err := ctx.Err(); err != nil {
		return fence.Result{}, err
	}
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	if u.s.closed {
		return fence.Result{}, fence.ErrClosed
	}
	res := fence.Result{Accepted: true, Prev: u.s.value}
	u.s.apply(tok, value)
	res.Mark, res.Commit = u.s.mark, u.s.commits
	return res, nil
}

// Read implements fence.Resource.
func (u *Unfenced) Read(ctx context.Context) (string, fence.Token, bool, error) {
	return u.s.read(ctx)
}

// Close implements fence.Resource; later calls fail with fence.ErrClosed.
func (u *Unfenced) Close() error { return u.s.close() }

// CheckThenWrite is the control resource with the fence's rule but not its
// atomicity: it compares the token with the mark in one critical section
// and writes in another. Its trace's Decided runs in the gap, outside
// both, so that a test can let another writer in there: a write that
// passed the compare is then stored even if a larger token was accepted
// meanwhile (claim F11). It is safe for concurrent use; the zero value is
// an empty resource without a trace.
type CheckThenWrite struct {
	trace *fence.Trace
	s     state
}

var _ fence.Resource = (*CheckThenWrite)(nil)

// NewCheckThenWrite returns an empty compare-then-write control whose
// writes call trace's Decided in their gap; trace may be nil. It takes the
// trace itself, not fence's options, because those configure fence's own
// resources only.
func NewCheckThenWrite(trace *fence.Trace) *CheckThenWrite {
	return &CheckThenWrite{trace: trace}
}

// Write implements fence.Resource in two steps, with the gap between them.
// A refusal is an error, as fence's resources return it.
func (c *CheckThenWrite) Write(ctx context.Context, tok fence.Token, value string) (fence.Result, error) {
	if err := ctx.Err(); err != nil {
		return fence.Result{}, err
	}
	c.s.mu.Lock()
	closed, refused := c.s.closed, c.s.admits(tok)
	d := fence.Decision{Token: tok, Mark: c.s.mark, Marked: c.s.marked, Admitted: refused == nil}
	c.s.mu.Unlock()
	if closed {
		return fence.Result{}, fence.ErrClosed
	}
	if c.trace != nil && c.trace.Decided != nil {
		c.trace.Decided(d) // the gap: no critical section is held here
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	res := fence.Result{Prev: c.s.value}
	if refused == nil {
		res.Accepted = true
		c.s.apply(tok, value)
	}
	res.Mark, res.Commit = c.s.mark, c.s.commits
	return res, refused
}

// Read implements fence.Resource.
func (c *CheckThenWrite) Read(ctx context.Context) (string, fence.Token, bool, error) {
	return c.s.read(ctx)
}

// Close implements fence.Resource; later calls fail with fence.ErrClosed.
func (c *CheckThenWrite) Close() error { return c.s.close() }

// ClearMark forgets r's high-water mark and keeps its value, as an operator
// might after the lock parent was recreated: claim T4's wrong rule, under
// which a late token of the old domain is accepted again. It runs in the
// one critical section (fence.Memory) or transaction (fence.Durable) that
// r's writes use, so no write is judged against half a mark, and fails with
// fence.ErrClosed once r is closed. A resource that wraps a *fence.Durable
// passes the *fence.Durable.
func ClearMark[R *fence.Memory | *fence.Durable](ctx context.Context, r R) error {
	return mark.Clear(ctx, r)
}

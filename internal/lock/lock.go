// Package lock is the ephemeral-sequential lock recipe of the zk19 article
// (section "临时顺序锁怎样判断资格"), with recovery after a lost create reply
// (section "create 回复丢失以后怎样找回节点").
//
// A Locker belongs to one ZooKeeper session. Every acquisition makes a fresh
// GUID and creates the EPHEMERAL_SEQUENTIAL node <parent>/<guid>-lock-
// under one persistent parent. Candidates are ordered by the parsed sequence
// suffix, never by name. A candidate that is not the lowest watches only its
// immediate predecessor (exists with a watch); after every watch event, and
// whenever exists finds no node, it lists the parent again and decides again:
// a watch event is never success by itself. Every round checks that its own
// node is still listed (ErrLostCandidacy otherwise) and that the connection
// still carries the session the Locker was made in (ErrSessionChanged
// otherwise: go-zookeeper silently opens a new session after expiry, and
// nothing done in the new session may continue the old one's candidacy).
//
// The package returns errors and takes contexts; it never sleeps. Tests
// observe and steer it through Hooks and Locker.Inspect.
package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/internal/fence"
)

// Errors, wrapped by the package's errors (test with errors.Is).
var (
	// ErrLostCandidacy: the candidate's own node is no longer among the
	// parent's children (deleted by someone, or its session ended). The
	// acquisition is over; it is never reported as acquired.
	ErrLostCandidacy = errors.New("lock: lost candidacy: own node is gone")
	// ErrSessionChanged: the connection no longer carries the session the
	// Locker was made in (it expired and the client opened a new one).
	// Nothing continues or recovers across sessions.
	ErrSessionChanged = errors.New("lock: session changed")
	// ErrNoSession: New was called on a connection without a session.
	ErrNoSession = errors.New("lock: the connection has no session")
	// ErrParent: the lock parent is missing or is not persistent.
	ErrParent = errors.New("lock: unusable lock parent")
	// ErrMissing: Recover found no child with the GUID owned by this session.
	ErrMissing = errors.New("lock: recover: no node with this GUID is owned by this session")
	// ErrAmbiguous: Recover found several children with the GUID owned by
	// this session (a blind retry of the create made a second node).
	ErrAmbiguous = errors.New("lock: recover: several nodes with this GUID are owned by this session")
	// ErrReleased: the hold was released by its owner.
	ErrReleased = errors.New("lock: released")
	// ErrBadGUID: a caller-provided GUID cannot name a candidate.
	ErrBadGUID = errors.New("lock: unusable GUID")
)

// SessionError reports that the connection's session differs from the one
// the Locker pinned. It wraps ErrSessionChanged and, when the change was
// seen as a watch dropped for expiry, zk.ErrSessionExpired.
type SessionError struct {
	Pinned, Now int64
	Cause       error // zk.ErrSessionExpired or nil
}

func (e *SessionError) Error() string {
	s := fmt.Sprintf("lock: session changed: pinned 0x%x, connection now has 0x%x", e.Pinned, e.Now)
	if e.Cause != nil {
		s += " (" + e.Cause.Error() + ")"
	}
	return s
}

// Unwrap returns ErrSessionChanged and the cause.
func (e *SessionError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrSessionChanged, e.Cause}
	}
	return []error{ErrSessionChanged}
}

// CreateError reports that the create of a candidate did not return a name
// (for example zk.ErrConnectionClosed: the reply may have been lost while the
// server created the node). The caller may call Recover with GUID in the same
// session; nothing was retried.
type CreateError struct {
	GUID string
	Err  error
}

func (e *CreateError) Error() string {
	return fmt.Sprintf("lock: create of candidate %s: %v (the node may exist: Recover with this GUID in the same session)", e.GUID, e.Err)
}

func (e *CreateError) Unwrap() error { return e.Err }

// RecoverError is what Recover returns when it cannot name exactly one node.
// It wraps ErrMissing or ErrAmbiguous.
type RecoverError struct {
	GUID    string
	Kind    error    // ErrMissing or ErrAmbiguous
	Owned   []string // matches owned by this session
	Foreign []string // matches owned by another session (never adopted)
}

func (e *RecoverError) Error() string {
	s := fmt.Sprintf("%v: GUID %s", e.Kind, e.GUID)
	if len(e.Owned) > 0 {
		s += fmt.Sprintf("; owned by this session: %s", strings.Join(e.Owned, ", "))
	}
	if len(e.Foreign) > 0 {
		s += fmt.Sprintf("; owned by other sessions (not adopted): %s", strings.Join(e.Foreign, ", "))
	}
	return s
}

func (e *RecoverError) Unwrap() error { return e.Kind }

// Op is one step of an acquisition, reported to Hooks.Trace in the style of
// a Jepsen history: an "invoke" line, then "ok", "fail" or "info".
type Op struct {
	Type  string // "invoke", "ok", "fail", "info"
	Kind  string // "create", "children", "exists", "wait", "event", "acquired", "lost", "delete", "recover"
	Own   string // the candidate's node name ("" before it exists)
	Path  string // the path the call is about
	Watch bool   // the call leaves a watch
	Value string // the result, rendered
	Err   error
}

// String renders the op without the actor, e.g.
// "invoke exists /lock/a-lock-0000000000 watch" or "ok false".
func (o Op) String() string {
	var b strings.Builder
	b.WriteString(o.Type)
	if o.Type == "invoke" || o.Type == "info" {
		b.WriteString(" " + o.Kind)
		if o.Path != "" {
			b.WriteString(" " + o.Path)
		}
		if o.Watch {
			b.WriteString(" watch")
		}
	}
	if o.Value != "" {
		b.WriteString(" " + o.Value)
	}
	if o.Err != nil {
		b.WriteString(" " + o.Err.Error())
	}
	return b.String()
}

// Hooks let tests observe and steer the recipe at named points. They run on
// the acquiring goroutine; a hook that blocks blocks the acquisition.
type Hooks struct {
	// AfterList runs after getChildren and before exists(pred, watch), with
	// the children as listed and the chosen predecessor. Deleting pred here
	// makes the list/exists race happen every time (claim L8).
	AfterList func(own string, children []string, pred string)
	// Waiting runs when exists(pred, watch) found pred and the acquisition
	// is about to block on that watch.
	Waiting func(own, pred string)
	// Woke runs for every watch event the acquisition receives (claim L7
	// counts them), before it lists again.
	Woke func(own string, ev zk.Event)
	// Trace receives every step.
	Trace func(Op)
}

// Option configures a Locker.
type Option func(*Locker)

// WithHooks installs hooks.
func WithHooks(h Hooks) Option { return func(l *Locker) { l.hooks = h } }

// WithACL sets the ACL of candidate nodes (default: world, all permissions).
func WithACL(acl []zk.ACL) Option { return func(l *Locker) { l.acl = acl } }

// WithCzxidDomain puts the parent's czxid, read once by New, in every
// Held.Token.Domain: a recreated parent restarts its sequence numbers but
// gets a larger czxid.
func WithCzxidDomain() Option { return func(l *Locker) { l.czxidDomain = true } }

// WithDomain sets Held.Token.Domain to a fixed value.
func WithDomain(d int64) Option { return func(l *Locker) { l.domain, l.czxidDomain = d, false } }

// WithCleanupTimeout bounds the best-effort delete of the own node after a
// failed or cancelled acquisition (default 5s).
func WithCleanupTimeout(d time.Duration) Option { return func(l *Locker) { l.cleanupWithin = d } }

// maxConnRetries bounds consecutive connection errors on the idempotent
// reads of one acquisition (getChildren, exists); a create is never retried.
const maxConnRetries = 3

// Locker acquires locks under one persistent parent for one session.
type Locker struct {
	conn          *zk.Conn
	parent        string
	acl           []zk.ACL
	session       int64
	parentCzxid   int64
	czxidDomain   bool
	domain        int64
	hooks         Hooks
	cleanupWithin time.Duration

	mu      sync.Mutex
	waiters map[*waiter]struct{}
}

// New returns a Locker for conn's current session. The parent must exist and
// be persistent; its stat is read once (for WithCzxidDomain).
func New(conn *zk.Conn, parent string, opts ...Option) (*Locker, error) {
	l := &Locker{
		conn:          conn,
		parent:        strings.TrimSuffix(parent, "/"),
		acl:           zk.WorldACL(zk.PermAll),
		cleanupWithin: 5 * time.Second,
		waiters:       map[*waiter]struct{}{},
	}
	for _, o := range opts {
		o(l)
	}
	l.session = conn.SessionID()
	if l.session == 0 {
		return nil, ErrNoSession
	}
	ok, st, err := conn.Exists(l.parent)
	if err != nil {
		return nil, fmt.Errorf("%w: exists %s: %w", ErrParent, l.parent, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s does not exist", ErrParent, l.parent)
	}
	if st.EphemeralOwner != 0 {
		return nil, fmt.Errorf("%w: %s is ephemeral (owner 0x%x); candidates need a persistent parent", ErrParent, l.parent, st.EphemeralOwner)
	}
	if err := l.checkSession(); err != nil {
		return nil, err
	}
	l.parentCzxid = st.Czxid
	if l.czxidDomain {
		l.domain = st.Czxid
	}
	return l, nil
}

// Parent returns the lock parent's path.
func (l *Locker) Parent() string { return l.parent }

// Session returns the pinned session id.
func (l *Locker) Session() int64 { return l.session }

// ParentCzxid returns the parent's czxid as New read it.
func (l *Locker) ParentCzxid() int64 { return l.parentCzxid }

// NewGUID returns a fresh GUID for one logical acquisition.
func (l *Locker) NewGUID() string { return uuid.NewString() }

// Prefix returns the path a candidate with guid is created at, before the
// server appends the sequence suffix.
func (l *Locker) Prefix(guid string) string { return l.parent + "/" + guid + fence.LockInfix }

func (l *Locker) checkSession() error {
	if now := l.conn.SessionID(); now != l.session {
		return &SessionError{Pinned: l.session, Now: now}
	}
	return nil
}

func (l *Locker) trace(op Op) {
	if l.hooks.Trace != nil {
		l.hooks.Trace(op)
	}
}

// Candidate is a node this Locker's session owns under the parent.
type Candidate struct {
	Path    string // full path
	Name    string // node name: <guid>-lock-<10 digits>
	GUID    string
	Seq     int64
	Session int64 // the owner session
}

func (l *Locker) candidate(guid, name string) (*Candidate, error) {
	seq, err := fence.ParseSeq(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return &Candidate{Path: l.parent + "/" + name, Name: name, GUID: guid, Seq: seq, Session: l.session}, nil
}

// Create creates one EPHEMERAL_SEQUENTIAL candidate <parent>/<guid>-lock-
// and returns it. It never retries: an error (a *CreateError, wrapping for
// example zk.ErrConnectionClosed) leaves it open whether the node exists;
// Recover with the same guid in the same session finds out.
func (l *Locker) Create(ctx context.Context, guid string) (*Candidate, error) {
	if guid == "" || strings.ContainsAny(guid, "/\x00") || strings.Contains(guid, fence.LockInfix) {
		return nil, fmt.Errorf("%w: %q", ErrBadGUID, guid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := l.checkSession(); err != nil {
		return nil, err
	}
	prefix := l.Prefix(guid)
	l.trace(Op{Type: "invoke", Kind: "create", Path: prefix, Value: "EPHEMERAL_SEQUENTIAL"})
	path, err := l.conn.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, l.acl)
	if err != nil {
		l.trace(Op{Type: "fail", Kind: "create", Err: err})
		return nil, &CreateError{GUID: guid, Err: err}
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	l.trace(Op{Type: "ok", Kind: "create", Own: name, Value: name})
	if err := l.checkSession(); err != nil {
		// The create may have run in the new session: remove the node that
		// bears our GUID so it cannot linger as somebody's candidate.
		l.bestEffortDelete(path)
		return nil, err
	}
	return l.candidate(guid, name)
}

// Recover finds the candidate that a create with guid made in this session
// when its reply was lost: it lists the parent and keeps the children whose
// name contains guid and whose ephemeralOwner is this session. Exactly one
// is returned; none is ErrMissing, several are ErrAmbiguous (both as a
// *RecoverError that lists what was found). Matches owned by another session
// are never adopted. Recover deletes nothing, never creates, and refuses to
// run in a session other than the pinned one.
func (l *Locker) Recover(ctx context.Context, guid string) (*Candidate, error) {
	if guid == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadGUID)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := l.checkSession(); err != nil {
		return nil, err
	}
	l.trace(Op{Type: "invoke", Kind: "children", Path: l.parent})
	kids, _, err := l.conn.Children(l.parent)
	if err != nil {
		l.trace(Op{Type: "fail", Kind: "children", Err: err})
		return nil, fmt.Errorf("lock: recover %s: children %s: %w", guid, l.parent, err)
	}
	l.trace(Op{Type: "ok", Kind: "children", Value: fmt.Sprint(kids)})
	var owned, foreign []string
	for _, k := range kids {
		if !strings.Contains(k, guid) || !IsCandidate(k) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := l.parent + "/" + k
		l.trace(Op{Type: "invoke", Kind: "exists", Path: p})
		ok, st, err := l.conn.Exists(p)
		if err != nil {
			l.trace(Op{Type: "fail", Kind: "exists", Err: err})
			return nil, fmt.Errorf("lock: recover %s: exists %s: %w", guid, p, err)
		}
		if !ok {
			l.trace(Op{Type: "ok", Kind: "exists", Value: "false"})
			continue
		}
		l.trace(Op{Type: "ok", Kind: "exists", Value: fmt.Sprintf("true ephemeralOwner=0x%x", st.EphemeralOwner)})
		if st.EphemeralOwner == l.session {
			owned = append(owned, k)
		} else {
			foreign = append(foreign, k)
		}
	}
	if err := l.checkSession(); err != nil {
		return nil, err
	}
	switch len(owned) {
	case 1:
		c, err := l.candidate(guid, owned[0])
		if err != nil {
			return nil, err
		}
		l.trace(Op{Type: "info", Kind: "recovered", Own: c.Name, Path: c.Path})
		return c, nil
	case 0:
		return nil, &RecoverError{GUID: guid, Kind: ErrMissing, Foreign: foreign}
	default:
		o, _ := Order(owned) // sorted for the message; parse errors cannot hide matches
		names := owned
		if len(o) == len(owned) {
			names = names[:0:0]
			for _, e := range o {
				names = append(names, e.Name)
			}
		}
		return nil, &RecoverError{GUID: guid, Kind: ErrAmbiguous, Owned: names, Foreign: foreign}
	}
}

// Acquire makes a fresh GUID, creates a candidate and waits until it is the
// lowest (see AcquireFrom). A create without a reply returns a *CreateError
// carrying the GUID, for Recover.
func (l *Locker) Acquire(ctx context.Context) (*Held, error) {
	c, err := l.Create(ctx, l.NewGUID())
	if err != nil {
		return nil, err
	}
	return l.AcquireFrom(ctx, c)
}

// WaitState is a snapshot of one acquisition, taken by its own goroutine.
type WaitState struct {
	Own      string // own node name
	Pred     string // predecessor watched now or last
	Waiting  bool   // blocked on the watch of Pred
	Rounds   int    // getChildren rounds so far
	Wakeups  int    // watch events received so far
	NoNode   int    // times exists(pred, watch) found no node
	Done     bool   // the acquisition has returned
	Acquired bool   // ... as holder
	Err      error  // ... with this error
}

type waiter struct {
	probe   chan chan WaitState
	done    chan struct{}
	final   WaitState
	pending []chan WaitState
}

// Inspect returns the state of every acquisition of this Locker that is
// waiting now. A waiting acquisition first takes in any watch event already
// delivered to its channel, so after a read on the same connection has
// returned (which orders every earlier notification before it), Inspect
// tells for certain whether a notification arrived. An acquisition that is
// between rounds answers when it next blocks or returns.
func (l *Locker) Inspect(ctx context.Context) ([]WaitState, error) {
	l.mu.Lock()
	ws := make([]*waiter, 0, len(l.waiters))
	for w := range l.waiters {
		ws = append(ws, w)
	}
	l.mu.Unlock()
	var out []WaitState
	for _, w := range ws {
		reply := make(chan WaitState, 1)
		select {
		case w.probe <- reply:
		case <-w.done:
			out = append(out, w.final)
			continue
		case <-ctx.Done():
			return out, ctx.Err()
		}
		select {
		case st := <-reply:
			out = append(out, st)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}

// AcquireFrom waits until candidate c (made by Create or found by Recover
// in this session) is the lowest candidate, and returns the hold.
//
// Each round lists the parent, checks that c is still listed and that the
// session is the pinned one, and either holds (c is lowest) or sets a watch
// on the immediate predecessor with exists. No node there: list again at
// once. A watch event: list again. On a context end or an error other than
// ErrLostCandidacy and ErrSessionChanged it deletes c (best effort, bounded
// by WithCleanupTimeout) before returning.
func (l *Locker) AcquireFrom(ctx context.Context, c *Candidate) (h *Held, err error) {
	if c == nil {
		return nil, errors.New("lock: nil candidate")
	}
	if c.Session != l.session {
		return nil, &SessionError{Pinned: l.session, Now: c.Session}
	}
	w := &waiter{probe: make(chan chan WaitState), done: make(chan struct{})}
	st := WaitState{Own: c.Name}
	l.mu.Lock()
	l.waiters[w] = struct{}{}
	l.mu.Unlock()
	defer func() {
		st.Done, st.Waiting, st.Err = true, false, err
		st.Acquired = err == nil
		w.final = st
		l.mu.Lock()
		delete(l.waiters, w)
		l.mu.Unlock()
		close(w.done)
		for _, r := range w.pending {
			r <- st
		}
	}()
	fail := func(err error) (*Held, error) {
		if errors.Is(err, ErrLostCandidacy) || errors.Is(err, ErrSessionChanged) {
			l.trace(Op{Type: "info", Kind: "lost", Own: c.Name, Err: err})
			return nil, err
		}
		l.trace(Op{Type: "info", Kind: "abort", Own: c.Name, Err: err})
		l.bestEffortDelete(c.Path)
		return nil, err
	}
	connErrs := 0
	transient := func(err error) bool {
		if errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) {
			connErrs++
			return connErrs <= maxConnRetries
		}
		return false
	}
	for {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := l.checkSession(); err != nil {
			return fail(err)
		}
		l.trace(Op{Type: "invoke", Kind: "children", Own: c.Name, Path: l.parent})
		kids, _, err := l.conn.Children(l.parent)
		if serr := l.checkSession(); serr != nil {
			return fail(serr)
		}
		if err != nil {
			l.trace(Op{Type: "fail", Kind: "children", Own: c.Name, Err: err})
			if transient(err) {
				continue
			}
			return fail(fmt.Errorf("lock: children %s: %w", l.parent, err))
		}
		st.Rounds++
		ord, err := Order(kids)
		if err != nil {
			l.trace(Op{Type: "fail", Kind: "children", Own: c.Name, Err: err})
			return fail(err)
		}
		l.trace(Op{Type: "ok", Kind: "children", Own: c.Name, Value: renderOrder(ord)})
		i := Position(ord, c.Name)
		if i < 0 {
			return fail(fmt.Errorf("%w: %s is not among the %d candidates of %s", ErrLostCandidacy, c.Name, len(ord), l.parent))
		}
		if i == 0 {
			l.trace(Op{Type: "info", Kind: "acquired", Own: c.Name, Path: c.Path, Value: fmt.Sprintf("lowest of %d", len(ord))})
			tok := fence.Token{Domain: l.domain, Seq: c.Seq}
			return &Held{Candidate: *c, Token: tok, Stats: st, l: l, lost: make(chan struct{}), stop: make(chan struct{})}, nil
		}
		pred := ord[i-1].Name
		st.Pred = pred
		if l.hooks.AfterList != nil {
			l.hooks.AfterList(c.Name, kids, pred)
		}
		pp := l.parent + "/" + pred
		l.trace(Op{Type: "invoke", Kind: "exists", Own: c.Name, Path: pp, Watch: true})
		ok, _, ch, err := l.conn.ExistsW(pp)
		if serr := l.checkSession(); serr != nil {
			return fail(serr)
		}
		if err != nil {
			l.trace(Op{Type: "fail", Kind: "exists", Own: c.Name, Err: err})
			if transient(err) {
				continue
			}
			return fail(fmt.Errorf("lock: exists %s: %w", pp, err))
		}
		connErrs = 0
		l.trace(Op{Type: "ok", Kind: "exists", Own: c.Name, Value: fmt.Sprint(ok)})
		if !ok {
			// The predecessor went away between the list and the exists:
			// its deletion event will never come. List again now. (The
			// exists left a creation watch on a name nobody reuses.)
			st.NoNode++
			continue
		}
		if l.hooks.Waiting != nil {
			l.hooks.Waiting(c.Name, pred)
		}
		l.trace(Op{Type: "info", Kind: "wait", Own: c.Name, Path: pp})
		ev, err := w.wait(ctx, ch, &st)
		if err != nil {
			return fail(err)
		}
		if l.hooks.Woke != nil {
			l.hooks.Woke(c.Name, ev)
		}
		l.trace(Op{Type: "info", Kind: "event", Own: c.Name, Path: ev.Path, Value: ev.Type.String(), Err: ev.Err})
		if ev.Type == zk.EventNotWatching {
			if errors.Is(ev.Err, zk.ErrSessionExpired) {
				return fail(&SessionError{Pinned: l.session, Now: l.conn.SessionID(), Cause: ev.Err})
			}
			return fail(fmt.Errorf("lock: watch on %s dropped: %w", pp, ev.Err))
		}
		// Any event, a deletion included, only means "look again".
	}
}

// wait blocks on the watch channel, answering probes. Before answering, it
// takes in an event already delivered; the answer then waits for the next
// blocking point (or the end of the acquisition), so it describes the state
// after that event was handled.
func (w *waiter) wait(ctx context.Context, ch <-chan zk.Event, st *WaitState) (zk.Event, error) {
	st.Waiting = true
	defer func() { st.Waiting = false }()
	received := func(ev zk.Event, ok bool) zk.Event {
		st.Wakeups++
		if !ok {
			return zk.Event{Type: zk.EventNotWatching, Err: zk.ErrClosing}
		}
		return ev
	}
	for {
		if len(w.pending) > 0 {
			select {
			case ev, ok := <-ch:
				return received(ev, ok), nil
			default:
			}
			for _, r := range w.pending {
				r <- *st
			}
			w.pending = w.pending[:0]
		}
		select {
		case ev, ok := <-ch:
			return received(ev, ok), nil
		case <-ctx.Done():
			return zk.Event{}, ctx.Err()
		case r := <-w.probe:
			w.pending = append(w.pending, r)
		}
	}
}

func renderOrder(ord []Entry) string {
	parts := make([]string, len(ord))
	for i, e := range ord {
		parts[i] = e.Name
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// bestEffortDelete deletes path, waiting at most cleanupWithin. The call
// itself is not cancellable; it ends when the client answers or closes.
func (l *Locker) bestEffortDelete(path string) {
	l.trace(Op{Type: "invoke", Kind: "delete", Path: path})
	done := make(chan error, 1)
	go func() { done <- l.conn.Delete(path, -1) }()
	t := time.NewTimer(l.cleanupWithin)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			l.trace(Op{Type: "fail", Kind: "delete", Err: err})
		} else {
			l.trace(Op{Type: "ok", Kind: "delete"})
		}
	case <-t.C:
		l.trace(Op{Type: "info", Kind: "delete", Path: path, Value: fmt.Sprintf("no answer within %v", l.cleanupWithin)})
	}
}

// Held is an acquired lock: this session's candidate was the lowest when
// last listed.
type Held struct {
	Candidate
	Token fence.Token // Seq = Candidate.Seq; Domain from WithCzxidDomain/WithDomain
	Stats WaitState   // the acquisition's counters when it acquired

	l        *Locker
	mu       sync.Mutex
	armed    bool
	released bool
	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
	stop     chan struct{}
}

// Lost returns a channel closed when the hold is known to be over: its node
// was deleted, its session expired (seen when the client reaches a server
// again), the client closed, or Release was called. The first call sets a
// watch on the own node (no watch is kept before, so a holder adds nothing
// to the herd measured in claim L7). Err tells why.
func (h *Held) Lost() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.armed && !h.released {
		h.armed = true
		go h.watchOwn()
	}
	return h.lost
}

// Err returns why the hold was lost, or nil while it is not known lost.
func (h *Held) Err() error {
	select {
	case <-h.lost:
		return h.lostErr
	default:
		return nil
	}
}

func (h *Held) markLost(err error) {
	h.lostOnce.Do(func() {
		h.lostErr = err
		close(h.lost)
		if errors.Is(err, ErrReleased) {
			h.l.trace(Op{Type: "info", Kind: "release", Own: h.Name, Path: h.Path})
		} else {
			h.l.trace(Op{Type: "info", Kind: "lost", Own: h.Name, Path: h.Path, Err: err})
		}
	})
}

func (h *Held) watchOwn() {
	connErrs := 0
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		if err := h.l.checkSession(); err != nil {
			h.markLost(err)
			return
		}
		ok, st, ch, err := h.l.conn.ExistsW(h.Path)
		if err != nil {
			if (errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer)) && connErrs < maxConnRetries {
				connErrs++
				continue
			}
			h.markLost(fmt.Errorf("lock: cannot watch own node %s: %w", h.Path, err))
			return
		}
		connErrs = 0
		if err := h.l.checkSession(); err != nil {
			h.markLost(err)
			return
		}
		if !ok || st.EphemeralOwner != h.Session {
			h.markLost(fmt.Errorf("%w: %s no longer exists", ErrLostCandidacy, h.Path))
			return
		}
		select {
		case <-h.stop:
			return
		case ev := <-ch:
			switch {
			case ev.Type == zk.EventNodeDeleted:
				h.markLost(fmt.Errorf("%w: %s was deleted", ErrLostCandidacy, h.Path))
				return
			case ev.Type == zk.EventNotWatching && errors.Is(ev.Err, zk.ErrSessionExpired):
				h.markLost(&SessionError{Pinned: h.Session, Now: h.l.conn.SessionID(), Cause: ev.Err})
				return
			case ev.Type == zk.EventNotWatching:
				h.markLost(fmt.Errorf("lock: watch on own node %s dropped: %w", h.Path, ev.Err))
				return
			}
			// data changed: watch again
		}
	}
}

// Release deletes this hold's own node, and only it. It stops the Lost
// watch and closes Lost (Err: ErrReleased). If the node was already gone it
// returns an error wrapping ErrLostCandidacy; in a changed session it
// deletes nothing and returns ErrSessionChanged. ctx bounds the wait for the
// delete's answer.
func (h *Held) Release(ctx context.Context) error {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return fmt.Errorf("lock: %s: %w already", h.Name, ErrReleased)
	}
	h.released = true
	close(h.stop)
	h.mu.Unlock()
	// The hold ends when its owner decides to release, before the delete
	// is confirmed. The Lost watcher, if any, exits when its call returns.
	h.markLost(ErrReleased)
	if err := h.l.checkSession(); err != nil {
		return err
	}
	h.l.trace(Op{Type: "invoke", Kind: "delete", Own: h.Name, Path: h.Path})
	done := make(chan error, 1)
	go func() { done <- h.l.conn.Delete(h.Path, -1) }()
	select {
	case err := <-done:
		switch {
		case err == nil:
			h.l.trace(Op{Type: "ok", Kind: "delete", Own: h.Name})
			return nil
		case errors.Is(err, zk.ErrNoNode):
			h.l.trace(Op{Type: "fail", Kind: "delete", Own: h.Name, Err: err})
			return fmt.Errorf("%w: %s was already gone at release", ErrLostCandidacy, h.Path)
		default:
			h.l.trace(Op{Type: "fail", Kind: "delete", Own: h.Name, Err: err})
			return fmt.Errorf("lock: release %s: %w", h.Path, err)
		}
	case <-ctx.Done():
		return fmt.Errorf("lock: release %s: %w", h.Path, ctx.Err())
	}
}

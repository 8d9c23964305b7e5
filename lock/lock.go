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
// still carries the session the Locker pinned (ErrSessionChanged otherwise:
// go-zookeeper silently opens a new session after expiry, and nothing done
// in the new session may continue the old one's candidacy).
//
// A create whose reply is lost is never retried blindly: Acquire returns a
// *CreateError with the GUID, and Recover, in the same session, syncs the
// parent, lists it and adopts the one child named <guid>-lock-<10 digits>
// that this session owns (ErrMissing for none, ErrAmbiguous for several).
//
// # What it guarantees
//
//   - Among the Lockers of one parent, at most one acquisition at a time
//     returns a Held whose node is still the lowest candidate, as seen by
//     the ensemble's order of writes (claims L1–L5).
//   - A waiter wakes only for its immediate predecessor, and re-reads the
//     queue before it holds (L4, L5, L7, L8, L11).
//   - Nothing of an expired session is continued or recovered; Release
//     deletes only the hold's own node (L6, R5, R8).
//   - Held.Token orders holds: a later hold of the same parent has a larger
//     token. Check it at the resource with package fence.
//   - Every call returns when its context ends. go-zookeeper's requests take
//     no context: a request the caller stopped waiting for goes on, and
//     what it leaves (a candidate whose create was answered late, or not at
//     all) is deleted by the recipe once the server answers, in the same
//     session. Acquire, TryAcquire and Recover return at most three
//     seconds (cleanupGrace) after ctx ends: they give the delete of their
//     own candidate that long, enough for one reconnect, before leaving it
//     to the background. Release returns when ctx ends; its delete goes on
//     in the background (Gone).
//   - A cleanup in the background keeps at it across reconnects, for as
//     long as the session lives, and deletes only this session's node of
//     this acquisition. It stops when the node is known gone, when the
//     session changed (the node went with it), or when the client is
//     closed (which ends the session).
//
// # What it does not
//
//   - A Held is not proof of holding now. The session can expire while the
//     holder pauses (GC, a stalled disk, a partition): ZooKeeper then gives
//     the lock to the next candidate, and the old holder learns it only
//     when its client reaches a server again (Lost). Only a resource that
//     checks the token refuses the old holder's late write (package fence,
//     claims F1–F4).
//   - Recovery works only in the session that made the create; across
//     sessions the node is gone with the old session.
//   - The parent is fixed and must not be recreated while it is in use:
//     sequence numbers restart in a new parent (WithCzxidDomain gives a
//     token that still orders, claims T2 and T4).
//   - ZooKeeper's sequence counter is a signed 32-bit integer per parent; a
//     wrapped (negative) suffix is refused, not ordered (claim T1).
//   - ACLs on the candidates do not stop another session from deleting
//     them; only the parent's ACL does (claim A1).
//
// The surface is the one of etcd's concurrency.Mutex: New, Acquire,
// TryAcquire (and Recover after a lost create reply), and a Held with Lost,
// Release and Gone. The package returns errors and takes contexts; it never
// sleeps. Tests observe and steer it through package locktrace (WithTrace).
//
// Files: lock.go acquires and releases; cleanup.go deletes what an
// abandoned call left; recover.go finds a candidate again after a lost
// create reply; order.go orders candidates; trace.go calls the test seam.
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

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock/locktrace"
)

// Errors, wrapped by the package's errors (test with errors.Is).
var (
	// ErrLostCandidacy: the candidate's own node is no longer among the
	// parent's children (deleted by someone, or its session ended). The
	// acquisition or hold is over; it is never reported as acquired.
	ErrLostCandidacy = errors.New("lock: lost candidacy: own node is gone")
	// ErrSessionChanged: the connection no longer carries the session the
	// Locker pinned (it expired and the client opened a new one). Nothing
	// continues or recovers across sessions.
	ErrSessionChanged = errors.New("lock: session changed")
	// ErrParent: the lock parent is missing or is not persistent.
	ErrParent = errors.New("lock: unusable lock parent")
	// ErrLocked: TryAcquire found another candidate ahead of its own; its
	// own candidate is deleted.
	ErrLocked = errors.New("lock: held by another candidate")
	// ErrOutcomeUnknown: Release returned before it knew whether the node is
	// gone (its context ended, or the client was closed). The hold is over
	// either way. When ctx ended first, the recipe goes on by itself: once
	// the client reaches a server again in the same session it deletes the
	// node, and Gone is closed when that is done. The session's end removes
	// the node at the latest; nothing is left for the caller to do.
	ErrOutcomeUnknown = errors.New("lock: release outcome unknown")
	// ErrMissing: Recover found no child of the GUID owned by this session.
	// (The error Recover returns also lists the nodes it found.)
	ErrMissing = errors.New("lock: recover: no node with this GUID is owned by this session")
	// ErrAmbiguous: Recover found several children of the GUID owned by
	// this session (a blind retry of the create made a second node).
	ErrAmbiguous = errors.New("lock: recover: several nodes with this GUID are owned by this session")

	errBadGUID   = errors.New("lock: unusable GUID")
	errNoSession = errors.New("lock: the connection has no session")
	errReleased  = errors.New("lock: released")
)

// sessionError reports that the connection's session differs from the
// pinned one. It wraps ErrSessionChanged and, when the change was seen as a
// watch dropped for expiry, zk.ErrSessionExpired.
type sessionError struct {
	pinned, now int64
	cause       error
}

func (e *sessionError) Error() string {
	s := fmt.Sprintf("lock: session changed: pinned 0x%x, connection now has 0x%x", e.pinned, e.now)
	if e.cause != nil {
		s += " (" + e.cause.Error() + ")"
	}
	return s
}

func (e *sessionError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrSessionChanged, e.cause}
	}
	return []error{ErrSessionChanged}
}

// Option configures a Locker: WithACL, WithCzxidDomain, or WithTrace, which
// a test passes to observe and steer the recipe.
type Option interface{ apply(*Locker) }

type optionFunc func(*Locker)

func (f optionFunc) apply(l *Locker) { f(l) }

// WithACL sets the ACL of candidate nodes (default: world, all permissions),
// for example creator-only, so that another session cannot read or change
// them. It does not stop a delete: the server checks a delete against the
// parent's ACL, so only a creator-only parent keeps another session from
// deleting a holder's node (claim A1).
func WithACL(acl []zk.ACL) Option { return optionFunc(func(l *Locker) { l.acl = acl }) }

// WithCzxidDomain puts in Held.Token.Domain the czxid of the parent as the
// acquisition last listed it (the listing that found the candidate lowest):
// a recreated parent restarts its sequence numbers but gets a larger czxid,
// also under a Locker that outlives the old parent. It lasts one ensemble's
// life (claim T5).
func WithCzxidDomain() Option { return optionFunc(func(l *Locker) { l.czxidDomain = true }) }

// maxConnRetries bounds consecutive connection errors on the idempotent
// calls of one acquisition or release (getChildren, exists, delete); a
// create is never retried.
const maxConnRetries = 3

// cleanupGrace is how long a failed or cancelled acquisition waits for the
// delete of its own candidate before it returns and leaves the delete to
// the background. On a server that answers, the delete takes one round
// trip; after a lost delete it takes a reconnect (go-zookeeper waits a
// second before it dials a server again) and two more. The grace only
// bounds the wait on a server that does not answer.
const cleanupGrace = 3 * time.Second

// Locker acquires locks under one persistent parent for one session.
type Locker struct {
	conn        *zk.Conn
	parent      string
	acl         []zk.ACL
	czxidDomain bool
	trace       tracer

	mu      sync.Mutex
	pinned  bool
	session int64 // set once, under mu, by pin
}

// New returns a Locker for parent on conn. It makes no call: a constructor
// that talks to the server fails whenever the client is reconnecting, and
// the first acquisition has to talk to it anyway, under a context and with
// the errors a caller already handles. That first acquisition (or Recover)
// checks that the parent exists and is persistent and pins the session the
// connection has then.
func New(conn *zk.Conn, parent string, opts ...Option) *Locker {
	l := &Locker{conn: conn, parent: strings.TrimSuffix(parent, "/"), acl: zk.WorldACL(zk.PermAll)}
	for _, o := range opts {
		o.apply(l)
	}
	return l
}

// pin checks the parent and pins the session, once; a failed check is
// tried again by the next call. ctx bounds the wait for the check.
func (l *Locker) pin(ctx context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pinned {
		return l.session, nil
	}
	sid := l.conn.SessionID()
	if sid == 0 {
		return 0, errNoSession
	}
	var ok bool
	var st *zk.Stat
	err := call(ctx, func() (err error) { ok, st, err = l.conn.Exists(l.parent); return err }, nil)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: exists %s: %w", ErrParent, l.parent, err)
	case !ok:
		return 0, fmt.Errorf("%w: %s does not exist", ErrParent, l.parent)
	case st.EphemeralOwner != 0:
		return 0, fmt.Errorf("%w: %s is ephemeral (owner 0x%x); candidates need a persistent parent", ErrParent, l.parent, st.EphemeralOwner)
	}
	if now := l.conn.SessionID(); now != sid {
		return 0, &sessionError{pinned: sid, now: now}
	}
	l.pinned, l.session = true, sid
	return sid, nil
}

func (l *Locker) checkSession(pinned int64) error {
	if now := l.conn.SessionID(); now != pinned {
		return &sessionError{pinned: pinned, now: now}
	}
	return nil
}

// Acquire makes a fresh GUID, creates a candidate and waits until it is the
// lowest, then returns the hold. A create that returns no name (for example
// zk.ErrConnectionClosed: the reply may have been lost while the server
// created the node) is not retried: Acquire returns a *CreateError carrying
// the GUID, for Recover.
//
// Each round lists the parent, checks that the own node is still listed and
// that the session is the pinned one, and either holds (the own node is
// lowest) or sets a watch on the immediate predecessor with exists. No node
// there: list again at once. A watch event: list again. On a context end or
// an error other than ErrLostCandidacy and ErrSessionChanged it deletes its
// own node before returning, waiting at most cleanupGrace for the delete.
// It returns at most cleanupGrace after ctx ends, whatever the server does.
func (l *Locker) Acquire(ctx context.Context) (*Held, error) {
	a, err := l.candidate(ctx)
	if err != nil {
		return nil, err
	}
	return a.await(ctx)
}

// TryAcquire is Acquire without the wait, as etcd's Mutex.TryLock: it
// creates a candidate and lists the parent once. The candidate is the
// lowest: TryAcquire holds. Another is ahead: it deletes its candidate and
// returns an error wrapping ErrLocked, leaving no node (it waits at most
// cleanupGrace for the delete, as Acquire does when it gives up).
func (l *Locker) TryAcquire(ctx context.Context) (*Held, error) {
	a, err := l.candidate(ctx)
	if err != nil {
		return nil, err
	}
	ord, err := a.listRetrying(ctx)
	if err == nil {
		var pred string
		if pred, err = a.decide(ord); err == nil {
			if pred == "" {
				return a.hold(), nil
			}
			err = fmt.Errorf("%w: %s holds %s", ErrLocked, ord[0].name, l.parent)
		}
	}
	return nil, a.fail(err)
}

// candidate pins the session, makes a fresh GUID and creates its node.
func (l *Locker) candidate(ctx context.Context) (*attempt, error) {
	session, err := l.pin(ctx)
	if err != nil {
		return nil, err
	}
	guid := uuid.NewString()
	path, err := l.create(ctx, session, guid)
	if err != nil {
		return nil, err
	}
	return l.begin(session, guid, path), nil
}

// create makes one candidate; it never retries. When ctx ends before the
// server answers, the create goes on, and whatever it made is deleted once
// the answer (or the connection's end) comes.
func (l *Locker) create(ctx context.Context, session int64, guid string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := l.checkSession(session); err != nil {
		return "", err
	}
	prefix := l.parent + "/" + guid + fence.LockInfix
	l.trace.request(locktrace.OpCreate, prefix, false)
	var path string
	err := call(ctx, func() (err error) {
		path, err = l.conn.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, l.acl)
		return err
	}, func(err error) {
		// The caller left: delete what the create made. No name came back
		// when the reply was lost; then the GUID finds it. A create sent
		// after the session changed made its node in the new session.
		switch {
		case err == nil && l.checkSession(session) != nil:
			l.deleteAnySession(tracer{}, path)
		case err == nil || connectionError(err):
			_ = l.cleanup(tracer{}, session, guid, path)
		}
	})
	switch {
	case isContextError(err):
		l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpCreate, Path: prefix, Err: err})
		return "", fmt.Errorf("lock: create of candidate %s: %w (a node it made is deleted once the server answers)", guid, err)
	case err != nil:
		l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpCreate, Path: prefix, Err: err})
		return "", &CreateError{GUID: guid, Err: err}
	}
	l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpCreate, Path: prefix, Node: path[strings.LastIndexByte(path, '/')+1:]})
	if err := l.checkSession(session); err != nil {
		// The create may have run in the new session: remove the node that
		// bears our GUID so it cannot linger as somebody's candidate.
		l.deleteAnySession(l.trace, path)
		return "", err
	}
	return path, nil
}

// await waits until the candidate is the lowest: the loop of list, decide,
// watch the predecessor, wait.
func (a *attempt) await(ctx context.Context) (*Held, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, a.fail(err)
		}
		ord, err := a.listRetrying(ctx)
		if err != nil {
			return nil, a.fail(err)
		}
		pred, err := a.decide(ord)
		if err != nil {
			return nil, a.fail(err)
		}
		if pred == "" {
			return a.hold(), nil
		}
		ch, err := a.watch(ctx, pred)
		if err != nil {
			if a.retries.again(err) {
				continue
			}
			return nil, a.fail(err)
		}
		if ch == nil {
			continue
		}
		if err := a.wait(ctx, ch); err != nil {
			return nil, a.fail(err)
		}
	}
}

// attempt is one acquisition of one candidate node, from its first list to
// its return. Only the acquiring goroutine touches it.
type attempt struct {
	l       *Locker
	session int64
	guid    string
	path    string
	own     string
	pred    string // the predecessor watched now or last
	retries connRetries
	// parentCzxid is the parent's czxid as the last listing saw it.
	parentCzxid int64
}

func (l *Locker) begin(session int64, guid, path string) *attempt {
	own := path[strings.LastIndexByte(path, '/')+1:]
	return &attempt{l: l, session: session, guid: guid, path: path, own: own}
}

// listRetrying lists the parent, again after a connection error while the
// retry policy allows: a lost reply to getChildren is never an empty queue.
func (a *attempt) listRetrying(ctx context.Context) ([]entry, error) {
	for {
		ord, err := a.list(ctx)
		if err == nil || !a.retries.again(err) {
			return ord, err
		}
	}
}

// list reads the parent's children and orders the candidates among them.
func (a *attempt) list(ctx context.Context) ([]entry, error) {
	l := a.l
	l.trace.request(locktrace.OpChildren, l.parent, false)
	var kids []string
	var st *zk.Stat
	err := call(ctx, func() (err error) { kids, st, err = l.conn.Children(l.parent); return err }, nil)
	if serr := l.checkSession(a.session); serr != nil {
		l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpChildren, Path: l.parent, Err: serr})
		return nil, serr
	}
	l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpChildren, Path: l.parent, Err: err, Children: kids, Stat: st})
	if err != nil {
		return nil, fmt.Errorf("lock: children %s: %w", l.parent, err)
	}
	a.parentCzxid = st.Czxid
	ord, err := order(kids)
	if err != nil {
		return nil, err
	}
	l.trace.listed(a.own, ord)
	return ord, nil
}

// decide returns the predecessor to watch, or "" when the own node is the
// lowest.
func (a *attempt) decide(ord []entry) (string, error) {
	i := position(ord, a.own)
	switch {
	case i < 0:
		return "", fmt.Errorf("%w: %s is not among the %d candidates of %s", ErrLostCandidacy, a.own, len(ord), a.l.parent)
	case i == 0:
		return "", nil
	}
	a.pred = ord[i-1].name
	return a.pred, nil
}

// watch sets a watch on pred with exists. A nil channel and no error mean
// pred was already gone: its deletion event will never come.
func (a *attempt) watch(ctx context.Context, pred string) (<-chan zk.Event, error) {
	l := a.l
	l.trace.watching(a.own, pred)
	pp := l.parent + "/" + pred
	l.trace.request(locktrace.OpExists, pp, true)
	var ok bool
	var st *zk.Stat
	var ch <-chan zk.Event
	err := call(ctx, func() (err error) { ok, st, ch, err = l.conn.ExistsW(pp); return err }, nil)
	if serr := l.checkSession(a.session); serr != nil {
		l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: pp, Err: serr})
		return nil, serr
	}
	l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: pp, Err: err, Exists: ok, Stat: st})
	if err != nil {
		return nil, fmt.Errorf("lock: exists %s: %w", pp, err)
	}
	a.retries = 0
	if !ok {
		// List again now. (The exists left a creation watch on a name
		// nobody reuses: the GUID is in it.)
		return nil, nil
	}
	l.trace.waiting(a.own, pred)
	return ch, nil
}

// wait blocks on the predecessor's watch; any event, a deletion included,
// only means "look again".
func (a *attempt) wait(ctx context.Context, ch <-chan zk.Event) error {
	var ev zk.Event
	select {
	case e, ok := <-ch:
		if ev = e; !ok {
			ev = zk.Event{Type: zk.EventNotWatching, Err: zk.ErrClosing}
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	a.l.trace.woke(a.own, a.pred, ev)
	if ev.Type != zk.EventNotWatching {
		return nil
	}
	if errors.Is(ev.Err, zk.ErrSessionExpired) {
		return &sessionError{pinned: a.session, now: a.l.conn.SessionID(), cause: ev.Err}
	}
	return fmt.Errorf("lock: watch on %s dropped: %w", a.pred, ev.Err)
}

func (a *attempt) hold() *Held {
	seq, _ := fence.ParseSeq(a.own) // order parsed it already
	h := &Held{
		Path: a.path, GUID: a.guid, Token: fence.Token{Seq: seq},
		l: a.l, session: a.session, lost: make(chan struct{}), stop: make(chan struct{}), gone: make(chan struct{}),
	}
	if a.l.czxidDomain {
		h.Token.Domain = a.parentCzxid
	}
	a.l.trace.held(a.path, h.Token)
	return h
}

// fail ends the attempt. A candidacy that is over leaves nothing to delete;
// any other end deletes the own node, so it cannot block the queue.
func (a *attempt) fail(err error) error {
	if errors.Is(err, ErrLostCandidacy) || errors.Is(err, ErrSessionChanged) {
		a.l.trace.ended(a.path, locktrace.EndLost, err)
		return err
	}
	a.l.trace.ended(a.path, locktrace.EndAbandoned, err)
	a.l.abandon(a.session, a.guid, a.path)
	return err
}

// connRetries is the package's one retry policy: an idempotent call that
// failed on the connection (the client reconnects by itself) is sent again,
// at most maxConnRetries times in a row.
type connRetries int

func (r *connRetries) again(err error) bool {
	if !connectionError(err) {
		return false
	}
	*r++
	return *r <= maxConnRetries
}

func connectionError(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer)
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// call runs req, a client call that takes no context, and returns its
// error, or ctx's once ctx ends first. go-zookeeper answers a request only
// when its reply comes or the connection drops, so a call left behind goes
// on until then; late, if not nil, then gets its error on the call's own
// goroutine, to undo what the call did. A ctx that has ended sends nothing.
func call(ctx context.Context, req func() error, late func(error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var mu sync.Mutex
	left := false
	done := make(chan error, 1)
	go func() {
		err := req()
		mu.Lock()
		gone := left
		if !gone {
			done <- err
		}
		mu.Unlock()
		if gone && late != nil {
			late(err)
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		select {
		case err := <-done: // answered as ctx ended: the answer counts
			return err
		default:
		}
		left = true
		return ctx.Err()
	}
}

// Held is an acquired lock: this session's candidate was the lowest when
// last listed.
type Held struct {
	Path  string      // the own node
	GUID  string      // the acquisition's GUID, part of the node's name
	Token fence.Token // Seq is the node's sequence number; Domain from WithCzxidDomain

	l        *Locker
	session  int64
	mu       sync.Mutex
	armed    bool
	released bool
	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
	stop     chan struct{}
	gone     chan struct{} // closed when Release's delete has finished
}

// Lost returns a channel closed when the hold is known to be over: its node
// was deleted, its session expired (seen when the client reaches a server
// again), the client closed, or Release was called. Release then says why.
// The first call sets a watch on the own node; none is kept before, so a
// holder adds nothing to the herd measured in claim L7.
func (h *Held) Lost() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.armed && !h.released {
		h.armed = true
		go h.watchOwn()
	}
	return h.lost
}

func (h *Held) markLost(err error) {
	h.lostOnce.Do(func() {
		h.lostErr = err
		close(h.lost)
		if errors.Is(err, errReleased) {
			h.l.trace.ended(h.Path, locktrace.EndReleased, nil)
		} else {
			h.l.trace.ended(h.Path, locktrace.EndLost, err)
		}
	})
}

func (h *Held) watchOwn() {
	var retries connRetries
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		ok, _, ch, err := h.l.conn.ExistsW(h.Path)
		if serr := h.l.checkSession(h.session); serr != nil {
			h.markLost(serr)
			return
		}
		if err != nil {
			if retries.again(err) {
				continue
			}
			h.markLost(fmt.Errorf("lock: cannot watch own node %s: %w", h.Path, err))
			return
		}
		retries = 0
		if !ok { // a node at this path is this session's: the GUID is in its name
			h.markLost(fmt.Errorf("%w: %s no longer exists", ErrLostCandidacy, h.Path))
			return
		}
		select {
		case <-h.stop:
			return
		case ev := <-ch:
			if err := h.ownEvent(ev); err != nil {
				h.markLost(err)
				return
			}
		}
	}
}

// ownEvent says what a watch event on the own node means: nil for a data
// change (watch again), otherwise why the hold is over.
func (h *Held) ownEvent(ev zk.Event) error {
	switch ev.Type {
	case zk.EventNodeDeleted:
		return fmt.Errorf("%w: %s was deleted", ErrLostCandidacy, h.Path)
	case zk.EventNotWatching:
		if errors.Is(ev.Err, zk.ErrSessionExpired) {
			return &sessionError{pinned: h.session, now: h.l.conn.SessionID(), cause: ev.Err}
		}
		return fmt.Errorf("lock: watch on own node %s dropped: %w", h.Path, ev.Err)
	}
	return nil
}

// Release deletes this hold's own node, and only it, and closes Lost. It
// returns nil once the node is known gone by this release. Otherwise:
//   - the hold was over before (its node deleted by someone else, or its
//     session changed): an error wrapping ErrLostCandidacy or
//     ErrSessionChanged, and nothing is deleted;
//   - the delete's answer was lost with the connection: Release looks
//     again after the reconnect, in the same session; the node gone means
//     released, the node still there means delete again. A node found at
//     the path that another session owns is not this hold's (its own is
//     gone): it is left alone, and the error wraps ErrLostCandidacy. In a
//     changed session the node went with the old session:
//     ErrSessionChanged;
//   - ctx ended before that was known: an error wrapping ErrOutcomeUnknown
//     and ctx's error, at once. The delete goes on by itself, and Gone is
//     closed when it has finished;
//   - the client was closed before that was known: an error wrapping
//     ErrOutcomeUnknown; closing the client ended the session, and the
//     node with it.
func (h *Held) Release(ctx context.Context) error {
	if err := h.end(); err != nil {
		return err
	}
	tr, detach := h.l.trace.detachable()
	done := make(chan error, 1)
	go func() {
		err := h.l.deleteOwn(tr, h.session, h.Path)
		close(h.gone)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		detach()
		return fmt.Errorf("%w: release %s: %w; the recipe deletes the node once the client reaches a server again in this session (Gone is closed then)", ErrOutcomeUnknown, h.Path, ctx.Err())
	}
}

// Gone returns a channel closed when Release's delete has finished: the
// node is deleted, or known gone (its session changed), or the client was
// closed, which ends the session and the node with it.
// After a Release that returned ErrOutcomeUnknown because its context
// ended, Gone is how the caller learns that the recipe finished its
// cleanup by itself. It is never closed before Release is called.
func (h *Held) Gone() <-chan struct{} { return h.gone }

// end marks the hold released. It returns why the hold cannot be released:
// released already, or known lost for certain.
func (h *Held) end() error {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return fmt.Errorf("lock: %s: %w already", h.Path, errReleased)
	}
	h.released = true
	close(h.stop)
	h.mu.Unlock()
	select {
	case <-h.lost:
		if errors.Is(h.lostErr, ErrLostCandidacy) || errors.Is(h.lostErr, ErrSessionChanged) {
			close(h.gone)
			return h.lostErr
		}
	default:
	}
	// The hold ends when its owner decides to release, before the delete
	// is confirmed. The Lost watcher, if any, exits when its call returns.
	h.markLost(errReleased)
	return nil
}

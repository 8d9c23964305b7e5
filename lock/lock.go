// Package lock is the ephemeral-sequential lock recipe of the zk19 article
// (section "临时顺序锁怎样判断资格"), with recovery after a lost create reply
// (section "create 回复丢失以后怎样找回节点").
//
// A Locker works on one connection and one persistent parent (created as
// a container under WithParents). Every
// acquisition runs in the session the connection has when it starts, makes
// a fresh GUID and creates the EPHEMERAL_SEQUENTIAL node
// <parent>/<guid>-lock-. Candidates are ordered by the parsed sequence
// suffix, never by name. A candidate that is not the lowest watches only its
// immediate predecessor (exists with a watch); after every watch event, and
// whenever exists finds no node, it lists the parent again and decides again:
// a watch event is never success by itself. Every round checks that its own
// node is still listed (ErrLostCandidacy otherwise) and that the connection
// still carries the acquisition's session (ErrSessionChanged otherwise:
// go-zookeeper silently opens a new session after expiry, and nothing done
// in the new session may continue the old one's candidacy). The next
// acquisition runs in the new session: one that starts while the client
// has no session waits for it, within its context.
//
// A create whose reply is lost is never retried blindly. Acquire and
// TryAcquire recover it themselves, in the same session: they sync the
// parent, list it and adopt the one child named <guid>-lock-<10 digits>
// that this session owns; none means the create did not happen, and they
// create again with a fresh GUID; several (someone retried the create
// blindly) are all deleted and reported. Recover does the same for a GUID a
// caller kept.
//
// A hold watches its own node and its connection from the moment it is
// made: Lost closes (and Context is cancelled) when the hold is known over,
// and Err says why; Suspensions reports, as it happens, that the connection
// carrying the session dropped, and the earliest time the server may
// expire the session. A service gates its writes with one call, Ready,
// right before each: it returns nil only when the hold is neither known
// over nor suspended, waits out a suspension within its ctx, and a known
// end always wins over the next write (no select among ready channels,
// which Go decides at random).
//
// Give the session timeout once: make the connection with Connect, and the
// Locker reads the timeout the server negotiated, and when the server last
// heard the client, from the connection itself.
//
// # Errors
//
// What a call returns, by the fault it met (test with errors.Is or As):
//
//	the caller's ctx ended          ctx's error, at most cleanupGrace (3s) after ctx ended;
//	                                its candidate is deleted once the server answers
//	no session yet (connecting, or  nothing: the call waits for the client's next session,
//	  reconnecting after expiry)    within ctx, and runs in it
//	no server reachable             nothing: zk.ErrNoServer means the request was not sent;
//	  (zk.ErrNoServer)              it is sent again once the client reaches a server, within
//	                                ctx (a call never returns zk.ErrNoServer)
//	a lost create reply             nothing: recovered in the same session (see above);
//	                                none made: created again, with a fresh GUID, within ctx;
//	                                *CreateError only when recovery cannot decide
//	other lost replies, a cut       the request is sent again after the reconnect, up to
//	                                3 lost connections in a row (an answered request starts
//	                                the count again); then an error wrapping
//	                                zk.ErrConnectionClosed, and the candidate is deleted
//	the session expired during      ErrSessionChanged (wrapping zk.ErrSessionExpired when
//	  the call                      seen as a dropped watch); nothing is left to delete;
//	                                the next call runs in the new session
//	the own node deleted            ErrLostCandidacy (someone else acted on the queue: the
//	                                recipe reports it, claim L6, and does not start over)
//	TryAcquire behind another       ErrLocked; its candidate is deleted
//	the parent missing              ErrParent, unless WithParents (then it is created)
//	a create refused by the server  *CreateError wrapping the server's error (zk.ErrNoAuth:
//	                                the parent's ACL grants no create)
//	Release of a hold already over  ErrAlreadyOver, wrapping ErrSessionChanged or
//	                                ErrLostCandidacy: nothing to do
//	Release's ctx ended (bounded    ErrOutcomeUnknown: nothing to do, the delete goes on
//	  even without a deadline),     (Gone)
//	  or Close
//	a delete refused (parent's ACL) an error wrapping zk.ErrNoAuth; the node stays until
//	                                the session ends
//	Held.Ready's ctx ended while    ErrSuspended
//	  suspended
//	Recover found no node, or       *RecoverError wrapping ErrMissing or ErrAmbiguous; an
//	  several, of its GUID          unusable GUID is an error of its own
//	a child under the parent with   an error wrapping fence's parse error (fence.ErrNegativeSeq,
//	  the infix and a malformed     ErrSeqOverflow, ...): something other than this recipe
//	  suffix, or two of one number  wrote there; the recipe does not guess an order (claim T1)
//	the client closed mid-call      an error wrapping zk.ErrConnectionClosed (every request
//	                                fails so at once, 3 in a row) or zk.ErrClosing; its
//	                                candidate went with the session
//
// A client closed with Close is a connection that never comes back: a call
// then waits for a session until its ctx ends.
//
// No outcome leaves a node of this session in the queue that no Held owns,
// once the server answers in the same session, unless the parent's ACL
// refuses this session's deletes.
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
//     token, and its Domain, the parent's czxid, orders a recreated parent's
//     holds after the old one's (WithoutCzxidDomain turns that off, at the
//     cost claim T2 shows). Check it at the resource with package fence.
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
//   - The parent is fixed and should not be recreated while it is in use:
//     sequence numbers restart in a new parent; the default czxid domain
//     keeps tokens ordered across it (claims T2 and T4), for one
//     ensemble's life (T5).
//   - A Suspension is advisory: the client notices a silent drop only
//     after two thirds of the session timeout without a reply; until then
//     Ready returns nil. ExpiresBy is never later than the server's expiry
//     on a connection made by Connect (TestExpiresByIsNeverLate); on
//     another one it rests on go-zookeeper's bound on a silent connection
//     and on the timeout the caller gave.
//   - ZooKeeper's sequence counter is a signed 32-bit integer per parent; a
//     wrapped (negative) suffix is refused, not ordered (claim T1).
//   - ACLs on the candidates do not stop another session from deleting
//     them; only the parent's ACL does (claim A1).
//
// The surface is the one of etcd's concurrency.Mutex: New, Acquire,
// TryAcquire (and Recover for a kept GUID), and a Held with Lost, Err,
// Suspensions, Context, Ready, Release and Gone; Connect makes the
// connection. The package returns errors and takes
// contexts; it never sleeps (a hold reads its connection's state, an
// atomic read, every 20ms). Tests observe and steer it through package
// locktrace (WithTrace).
//
// Files: lock.go makes candidates; attempt.go waits for the lock; held.go
// is the hold and its release; cleanup.go deletes what an abandoned call
// left; recover.go finds a candidate again after a lost create reply;
// order.go orders candidates; link.go is Connect and the connection's
// clock; trace.go calls the test seam.
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
	// ErrMissing: Recover found no child of the GUID owned by this session,
	// other than the node of a live hold of its Locker. (The error Recover
	// returns also lists the nodes it found.)
	ErrMissing = errors.New("lock: recover: no node with this GUID is owned by this session")
	// ErrAmbiguous: Recover found several children of the GUID owned by
	// this session (a blind retry of the create made a second node).
	ErrAmbiguous = errors.New("lock: recover: several nodes with this GUID are owned by this session")

	// ErrReleased: the hold ended because its owner called Release
	// (Held.Err after Lost closed).
	ErrReleased = errors.New("lock: released")
	// ErrAlreadyOver: Release found the hold over before it was called
	// (its session changed, or its node was gone): nothing was deleted and
	// nothing is left to do. The error wraps the cause too.
	ErrAlreadyOver = errors.New("lock: the hold was already over")
	// ErrSuspended: Held.Ready's context ended while the connection
	// carrying the hold's session was down.
	ErrSuspended = errors.New("lock: hold suspended")

	errBadGUID = errors.New("lock: unusable GUID")
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

// Option configures a Locker: WithACL, WithParents, WithoutCzxidDomain,
// WithSessionTimeout, or WithTrace, which a test passes to observe and
// steer the recipe.
type Option interface{ apply(*Locker) }

type optionFunc func(*Locker)

func (f optionFunc) apply(l *Locker) { f(l) }

// WithACL sets the ACL of candidate nodes (default: world, all permissions),
// for example creator-only, so that another session cannot read or change
// them. It does not stop a delete: the server checks a delete against the
// parent's ACL, so only a creator-only parent keeps another session from
// deleting a holder's node (claim A1).
func WithACL(acl []zk.ACL) Option { return optionFunc(func(l *Locker) { l.acl = acl }) }

// WithoutCzxidDomain leaves Held.Token.Domain 0 instead of the parent's
// czxid. What it costs (claim T2): a parent deleted and recreated restarts
// its sequence numbers at 0, so a resource that kept the old parent's mark
// refuses every new holder until someone resets the mark by hand, and a
// resource that compares Seq alone accepts the old parent's holders again.
// Use it only where the parent is never recreated and the resource cannot
// store the domain.
func WithoutCzxidDomain() Option { return optionFunc(func(l *Locker) { l.czxidDomain = false }) }

// WithParents makes the Locker create its parent when it is missing, as
// Curator's creatingParentContainersIfNeeded does: the missing ancestors
// are created as persistent nodes and the parent itself as a container
// node (ZooKeeper 3.5 and later; the server deletes a container once its
// last child is gone, so a parent of locks nobody takes does not stay).
// Without it, a missing parent is ErrParent.
//
// What it does to fencing tokens: a parent deleted and recreated restarts
// its sequence numbers, but gets a larger czxid, and the default
// Token.Domain is that czxid, so a hold of the recreated parent orders
// after every hold of the old one, and a resource refuses the old
// holders' tokens as stale (fence.StaleError), not as another lock's: a
// Token's Lock is the parent's path, the same for both
// (TestARecreatedParentRefusesTheOldParentsToken). Under
// WithoutCzxidDomain, the recreated parent's holders are refused instead
// until someone resets the mark (claim T2): do not combine the two.
func WithParents() Option { return optionFunc(func(l *Locker) { l.parents = true }) }

// WithCzxidDomain is the default, and undoes an earlier
// WithoutCzxidDomain: Held.Token.Domain is the czxid of the parent as the
// acquisition last listed it (the listing that found the candidate
// lowest). A recreated parent restarts its sequence numbers but gets a
// larger czxid, also under a Locker that outlives the old parent. It lasts
// one ensemble's life (claim T5).
func WithCzxidDomain() Option { return optionFunc(func(l *Locker) { l.czxidDomain = true }) }

// WithSessionTimeout tells the Locker the session timeout the caller gave
// zk.Connect, for a connection not made by Connect (whose timeout the
// Locker reads from the server's connect reply, and which needs no option:
// give the timeout once, to Connect). Without either, a Suspension's
// ExpiresBy is its Since: the session may be gone at once. On a plain
// connection ExpiresBy is counted from go-zookeeper's own bound on a
// silent connection (see Suspension); a server that negotiated a shorter
// timeout than the one asked for makes it late: pass the server's
// maxSessionTimeout when it is lower, or use Connect.
func WithSessionTimeout(d time.Duration) Option {
	return optionFunc(func(l *Locker) { l.timeout = d })
}

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

// Locker acquires locks under one persistent parent on one connection. It
// outlives the connection's sessions: each acquisition runs in the session
// the connection has when it starts, and after an expiry the next one runs
// in the new session. A call or a hold that spans a change of session ends
// with ErrSessionChanged; nothing of the old session is continued.
type Locker struct {
	conn        *zk.Conn
	parent      string
	lockID      string // fence.LockID(parent), every hold's Token.Lock
	acl         []zk.ACL
	czxidDomain bool
	parents     bool          // WithParents
	timeout     time.Duration // WithSessionTimeout; 0: unknown
	link        *link         // the connection's, when Connect made it
	trace       tracer

	mu       sync.Mutex
	parentOK bool                // the parent was found persistent
	holding  map[string]struct{} // the nodes of this Locker's live holds
}

// track records that path is (held) or is no longer the node of a live
// hold of this Locker.
func (l *Locker) track(path string, held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !held {
		delete(l.holding, path)
		return
	}
	if l.holding == nil {
		l.holding = make(map[string]struct{})
	}
	l.holding[path] = struct{}{}
}

// unheld returns the names among names whose node no live hold of this
// Locker owns.
func (l *Locker) unheld(names []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, n := range names {
		if _, ok := l.holding[l.parent+"/"+n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// New returns a Locker for parent on conn. It makes no call: a constructor
// that talks to the server fails whenever the client is reconnecting, and
// the first acquisition has to talk to it anyway, under a context and with
// the errors a caller already handles. That first acquisition (or Recover)
// checks that the parent exists and is persistent (and creates it under
// WithParents). On a connection made by Connect the Locker reads the
// session timeout from the connection; on another, give it with
// WithSessionTimeout.
func New(conn *zk.Conn, parent string, opts ...Option) *Locker {
	l := &Locker{conn: conn, parent: strings.TrimSuffix(parent, "/"), acl: zk.WorldACL(zk.PermAll), czxidDomain: true}
	l.lockID = fence.LockID(l.parent)
	l.link = linkOf(conn)
	for _, o := range opts {
		o.apply(l)
	}
	return l
}

// sessionTimeout is the session's timeout as far as the Locker knows it:
// the one the server negotiated (a connection made by Connect), else
// WithSessionTimeout's, else 0.
func (l *Locker) sessionTimeout() time.Duration {
	if l.link != nil {
		if _, t, ok := l.link.last(); ok {
			return t
		}
	}
	return l.timeout
}

// expiresBy is a Suspension's ExpiresBy for one seen at since.
func (l *Locker) expiresBy(since time.Time) time.Time {
	if l.link != nil {
		if heard, t, ok := l.link.last(); ok {
			return heard.Add(t)
		}
	}
	if l.timeout == 0 {
		return since
	}
	// go-zookeeper drops a connection that read nothing for two thirds of
	// the timeout: the last reply came at most that long before the drop.
	return since.Add(l.timeout - 2*l.timeout/3 - suspendPoll)
}

// releaseBound is how long a Release whose context has no deadline waits
// for the server: the session timeout when known (a server unreachable
// that long has expired the session, and the node with it), else this.
const defaultReleaseBound = 10 * time.Second

func (l *Locker) releaseBound() time.Duration {
	if t := l.sessionTimeout(); t > 0 {
		return t
	}
	return defaultReleaseBound
}

// pin returns the session an acquisition or recovery runs in: the one the
// connection has when it starts. While the client has no session (it is
// connecting, or reconnecting after an expiry: go-zookeeper opens a new
// session by itself) it waits for the next one, within ctx. The first
// call checks the parent (and creates it, under WithParents); a failed
// check is tried again by the next call.
func (l *Locker) pin(ctx context.Context) (int64, error) {
	sid, err := l.awaitSession(ctx)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	checked := l.parentOK
	l.mu.Unlock()
	if checked {
		return sid, nil
	}
	if err := l.checkParent(ctx); err != nil {
		return 0, err
	}
	// No candidate exists yet: an expiry during the check only means the
	// call runs in the next session.
	if sid, err = l.awaitSession(ctx); err != nil {
		return 0, err
	}
	l.mu.Lock()
	l.parentOK = true
	l.mu.Unlock()
	return sid, nil
}

// awaitSession returns the connection's session once it has one, reading
// its state every suspendPoll (an atomic read, no request), or ctx's
// error.
func (l *Locker) awaitSession(ctx context.Context) (int64, error) {
	var tick *time.Ticker
	for {
		if sid := l.conn.SessionID(); sid != 0 && l.conn.State() == zk.StateHasSession {
			return sid, nil
		}
		if tick == nil {
			tick = time.NewTicker(suspendPoll)
			defer tick.Stop()
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("lock: waiting for the client's session (state %v): %w", l.conn.State(), ctx.Err())
		}
	}
}

// checkParent checks that the parent exists and is persistent (or a
// container, which the server shows as persistent), and under WithParents
// creates it when it is missing. A check that the connection lost is sent
// again, as every idempotent call is.
func (l *Locker) checkParent(ctx context.Context) error {
	var ok bool
	var st *zk.Stat
	// The client may be between sessions: wait for one, within ctx. No
	// candidate exists yet, so an expiry only means the acquisition runs in
	// the new session.
	var retries cleanupRetries
	again := func(err error) bool {
		return errors.Is(err, zk.ErrSessionExpired) || retries.again(err)
	}
	for created := false; ; created = true {
		err := retrying(again, func() (err error) {
			return call(ctx, func() (err error) { ok, st, err = l.conn.Exists(l.parent); return err }, nil)
		})
		switch {
		case err != nil:
			return fmt.Errorf("%w: exists %s: %w", ErrParent, l.parent, err)
		case !ok && l.parents && !created:
			if err := l.createParents(ctx); err != nil {
				return err
			}
			continue
		case !ok:
			return fmt.Errorf("%w: %s does not exist", ErrParent, l.parent)
		case st.EphemeralOwner != 0: // a container shows 0, as a persistent node
			return fmt.Errorf("%w: %s is ephemeral (owner 0x%x); candidates need a persistent parent", ErrParent, l.parent, st.EphemeralOwner)
		}
		return nil
	}
}

// createParents creates the parent as a container and its missing
// ancestors as persistent nodes, all with the world's ACL. A node that
// exists already is fine; a create lost with the connection, or answered
// with an expiry, is sent again (NodeExists then means made).
func (l *Locker) createParents(ctx context.Context) error {
	// No candidate exists yet: an expiry only means the creates run in the
	// next session, as the check's do.
	var retries cleanupRetries
	again := func(err error) bool {
		return errors.Is(err, zk.ErrSessionExpired) || retries.again(err)
	}
	for i := 1; i <= len(l.parent); i++ {
		if i < len(l.parent) && l.parent[i] != '/' {
			continue
		}
		p := l.parent[:i]
		err := retrying(again, func() error {
			if p == l.parent {
				l.trace.request(locktrace.OpCreateParent, p, false)
			}
			err := call(ctx, func() (err error) {
				if p == l.parent {
					_, err = l.conn.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
				} else {
					_, err = l.conn.Create(p, nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll))
				}
				return err
			}, nil)
			if p == l.parent {
				l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpCreateParent, Path: p, Err: err})
			}
			return err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("%w: create %s: %w", ErrParent, p, err)
		}
	}
	return nil
}

func (l *Locker) checkSession(pinned int64) error {
	if now := l.conn.SessionID(); now != pinned {
		return &sessionError{pinned: pinned, now: now}
	}
	return nil
}

// Acquire makes a fresh GUID, creates a candidate and waits until it is the
// lowest, then returns the hold.
//
// A create that returns no name because the connection dropped (its reply
// may have been lost while the server created the node) is never retried
// blindly: Acquire recovers it by itself, in the same session, as Recover
// does (sync, list, the one node named <guid>-lock-<10 digits> that this
// session owns). Found: it waits with that node. Not found: the create did
// not happen, and it creates again with a fresh GUID, at most
// maxConnRetries lost creates in a row. Several found: it deletes them all
// (none is held, all are its own) and returns a *CreateError wrapping
// ErrAmbiguous. A *CreateError reaches the caller only when the recipe
// cannot decide, and says what it found.
//
// Each round lists the parent, checks that the own node is still listed and
// that the session is the one the acquisition started in, and either holds
// (the own node is lowest) or sets a watch on the immediate predecessor
// with exists. No node there: list again at once. A watch event: list
// again. On a context end or an error other than ErrLostCandidacy and
// ErrSessionChanged it deletes its own node before returning, waiting at
// most cleanupGrace for the delete. It returns at most cleanupGrace after
// ctx ends, whatever the server does.
func (l *Locker) Acquire(ctx context.Context) (*Held, error) {
	a, err := l.candidate(ctx)
	if err != nil {
		return nil, err
	}
	return a.await(ctx)
}

// TryAcquire is Acquire without the wait, as etcd's Mutex.TryLock: it
// creates a candidate (recovering a lost create reply as Acquire does) and
// lists the parent once. The candidate is the lowest: TryAcquire holds.
// Another is ahead: it deletes its candidate and returns an error wrapping
// ErrLocked, leaving no node (it waits at most cleanupGrace for the delete,
// as Acquire does when it gives up).
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

// candidate pins the session, makes a fresh GUID and creates its node. A
// create whose reply was lost is recovered in the same session; when it
// is known not to have happened, it is made again with a fresh GUID.
func (l *Locker) candidate(ctx context.Context) (*attempt, error) {
	session, err := l.pin(ctx)
	if err != nil {
		return nil, err
	}
	return l.created(ctx, session)
}

// created makes the acquisition's candidate in session: a create, and
// after a lost reply the recovery. A create known not to have happened (a
// lost reply and no node of its GUID, or, under WithParents, a parent
// deleted since the check) is made again with a fresh GUID, for as long
// as ctx lives: a caller would do the same.
func (l *Locker) created(ctx context.Context, session int64) (*attempt, error) {
	for {
		guid := uuid.NewString()
		path, err := l.create(ctx, session, guid)
		ce, ok := errors.AsType[*CreateError](err)
		switch {
		case !ok && err != nil:
			return nil, err
		case !ok:
			return l.begin(session, guid, path), nil
		case l.parents && errors.Is(ce.Err, zk.ErrNoNode):
			if err := l.createParents(ctx); err != nil {
				return nil, err
			}
			continue
		case !connectionError(ce.Err):
			return nil, err
		}
		if path, err = l.recoverCreate(ctx, session, ce); err != nil || path != "" {
			if err != nil {
				return nil, err
			}
			return l.begin(session, guid, path), nil
		}
	}
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
	}, func(err error) { l.createdLate(session, guid, path, err) })
	if err == nil {
		err = l.checkSession(session)
	}
	l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpCreate, Path: prefix, Err: err, Node: baseName(path, err)})
	switch {
	case err == nil:
		return path, nil
	case isContextError(err):
		return "", fmt.Errorf("lock: create of candidate %s: %w (a node it made is deleted once the server answers)", guid, err)
	case errors.Is(err, ErrSessionChanged):
		// The create may have run in the new session: remove the node that
		// bears our GUID so it cannot linger as somebody's candidate.
		l.deleteAnySession(l.trace, path)
		return "", err
	case errors.Is(err, zk.ErrSessionExpired):
		return "", &sessionError{pinned: session, now: l.conn.SessionID(), cause: err}
	}
	return "", &CreateError{GUID: guid, Err: err}
}

// createdLate undoes a create whose caller left before it answered: it
// deletes what the create made. No name came back when the reply was
// lost; then the GUID finds it. A create sent after the session changed
// made its node in the new session.
func (l *Locker) createdLate(session int64, guid, path string, err error) {
	switch {
	case err == nil && l.checkSession(session) != nil:
		l.deleteAnySession(tracer{}, path)
	case err == nil || connectionError(err):
		_ = l.cleanup(tracer{}, session, guid, path)
	}
}

// baseName is the name of the node a create made, without the parent: ""
// when the create failed (or was answered in another session).
func baseName(path string, err error) string {
	if err != nil {
		return ""
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// connRetries is the package's one retry policy: an idempotent call that
// failed on the connection (the client reconnects by itself) is sent again,
// at most maxConnRetries times in a row.
type connRetries int

// reset starts the count again: a request was answered.
func (r *connRetries) reset() { *r = 0 }

// retryPolicy is connRetries or cleanupRetries.
type retryPolicy interface {
	again(error) bool
	reset()
}

func (r *connRetries) again(err error) bool {
	if !connectionError(err) {
		return false
	}
	*r++
	return *r <= maxConnRetries
}

// retrying sends req, and again while it fails with an error that again
// allows (again counts the tries): the one loop of the recipe's
// idempotent requests.
func retrying(again func(error) bool, req func() error) error {
	for {
		err := req()
		if err == nil || !again(err) {
			return err
		}
	}
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

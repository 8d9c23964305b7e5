package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock/locktrace"
)

// suspendPoll is how often a hold reads its connection's state (an atomic
// read in the client, no request): a Suspension arrives at most this long
// after the client noticed the drop, and its Resumed closes at most this
// long after the client has its session back.
const suspendPoll = 20 * time.Millisecond

// Held is an acquired lock: this session's candidate was the lowest when
// last listed. From the moment it is made, it watches its own node and
// its connection: Lost, Err and Suspensions report what they see.
type Held struct {
	Path string // the own node
	GUID string // the acquisition's GUID, part of the node's name
	// Token orders this hold against the parent's others: Lock is
	// fence.LockID(parent), Seq the node's sequence number, Domain the
	// parent's czxid (0 under WithoutCzxidDomain). Send it with every write.
	Token fence.Token

	l        *Locker
	session  int64
	ctx      context.Context
	cancel   context.CancelCauseFunc
	mu       sync.Mutex
	released bool
	lostErr  error         // why the hold ended, set before lost closes
	resumed  chan struct{} // the current Suspension's Resumed; nil while not suspended
	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	gone     chan struct{} // closed when Release's delete has finished
	susp     chan Suspension
}

// Suspension says that the connection carrying a hold's session dropped.
// It is advisory: the hold may still be good (the client reconnects in the
// same session, and Resumed closes), or already over (the session expired
// on the server, which the client learns only when it reaches a server
// again; Lost closes then). A holder should stop starting writes while
// suspended. Lost stays the certainty that the hold is over, and only the
// resource's fence (package fence) stops a write already under way.
type Suspension struct {
	// Since is when the hold saw the drop: at most suspendPoll (20ms)
	// after the client noticed it. A connection that fails silently is
	// noticed after two thirds of the session timeout without an answer.
	Since time.Time
	// ExpiresBy is the earliest time at which the server may expire the
	// session: the session timeout counted from the last moment the
	// server is known to have heard the client. The server resets its
	// timer on every packet it hears, and a reply says that it heard the
	// request answered, so on a connection made by Connect that moment is
	// when the request of the last reply the client read was sent, and the
	// timeout is the one the server negotiated, read from its connect
	// reply: ExpiresBy is never later than the server's expiry, for a
	// connection that closed and for one that went silent alike
	// (TestExpiresByIsNeverLate). On another connection, with
	// WithSessionTimeout, it is Since minus two thirds of the timeout (a
	// silent connection is dropped after that long without a reply) minus
	// suspendPoll, plus the timeout, which assumes replies come within a
	// round trip; with neither, the timeout is unknown and ExpiresBy is
	// Since. The session
	// may outlive ExpiresBy (the server heard a later packet, or expires
	// sessions on its next tick): a holder stops starting writes when
	// suspended, and only the fence stops one already sent.
	ExpiresBy time.Time
	// Resumed is closed when the client has the same session again, at
	// most suspendPoll after it has. It is never closed when the session
	// was lost; Lost closes instead.
	Resumed <-chan struct{}
}

func newHeld(a *attempt) *Held {
	seq, _ := fence.ParseSeq(a.own) // order parsed it already
	h := &Held{
		Path: a.path, GUID: a.guid, Token: fence.Token{Lock: a.l.lockID, Seq: seq},
		l: a.l, session: a.session,
		lost: make(chan struct{}), stop: make(chan struct{}), gone: make(chan struct{}),
		susp: make(chan Suspension, 1),
	}
	h.ctx, h.cancel = context.WithCancelCause(context.Background())
	if a.l.czxidDomain {
		h.Token.Domain = a.parentCzxid
	}
	return h
}

// start begins watching the own node and the connection.
func (h *Held) start() {
	go h.watchOwn()
	go h.watchConn()
}

// Lost returns a channel closed when the hold is known to be over: its node
// was deleted, its session expired (seen when the client reaches a server
// again), the client closed, or Release was called. Err then says why.
// It has no side effect: the hold watches its own node from the moment it
// is made.
func (h *Held) Lost() <-chan struct{} { return h.lost }

// Err returns nil while the hold is not known to be over, and after Lost
// has closed, why it ended: an error wrapping ErrLostCandidacy (the node
// was deleted), ErrSessionChanged (the session expired), the client's
// error, or ErrReleased (Release was called). It keeps the first cause: a
// Release of a hold that had already ended leaves Err as it was, and when
// Release's delete finds that the hold had ended before it was called
// (the session expired while the client could not tell, or the node was
// deleted), Err says that cause, wrapping ErrReleased too.
func (h *Held) Err() error {
	select {
	case <-h.lost:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.lostErr
	default:
		return nil
	}
}

// Context returns a context that is cancelled when the hold is known to be
// over (when Lost closes); context.Cause then returns Err. Pass it to the
// writes the hold guards: a write still waiting when the hold is lost
// gives up. It is not cancelled by a Suspension (see Ready).
func (h *Held) Context() context.Context { return h.ctx }

// Ready is the check a holder makes right before each write, instead of a
// select of its own: it returns nil only when the hold is neither over nor
// suspended as far as this client knows at the moment of the call. It
// reads the connection's state itself, so a drop the client has noticed
// counts at once, not at the hold's next poll; and it looks for the end
// before the drop, never at random as a select among ready channels
// does: a hold known lost always gets Err, however many times Ready is
// called. While suspended it waits for the Suspension to end: nil once the
// client has the same session again, Err once the hold is lost, or, when
// ctx ends first, an error wrapping ErrSuspended and ctx's cause.
//
// A nil from Ready is not a lease: the session may expire on the server
// before the client can know (see Suspension.ExpiresBy), and a write sent
// then is stopped only by the resource's fence.
func (h *Held) Ready(ctx context.Context) error {
	for {
		resumed, err := h.observe(time.Now())
		if err != nil {
			return err
		}
		if resumed == nil {
			return nil
		}
		select {
		case <-resumed: // look again: the end still comes first
		case <-h.lost:
		case <-ctx.Done():
			return fmt.Errorf("%w: %s: %w", ErrSuspended, h.Path, context.Cause(ctx))
		}
	}
}

// Suspensions returns the channel on which the hold reports each drop of
// the connection carrying its session, as it happens (see Suspension). It
// holds the latest drop not yet received; nobody has to read it.
func (h *Held) Suspensions() <-chan Suspension { return h.susp }

func (h *Held) markLost(err error) {
	h.lostOnce.Do(func() {
		h.mu.Lock()
		h.lostErr = err
		h.mu.Unlock()
		h.l.track(h.Path, false)
		h.cancel(err)
		close(h.lost)
		if errors.Is(err, ErrReleased) {
			h.l.trace.ended(h.Path, locktrace.EndReleased, nil)
		} else {
			h.l.trace.ended(h.Path, locktrace.EndLost, err)
		}
	})
}

// endedBefore records, when Release's delete found that the hold had
// ended before Release was called (err: its session changed, or its node
// was gone), that cause in Err in place of ErrReleased alone.
func (h *Held) endedBefore(err error) {
	if !errors.Is(err, ErrSessionChanged) && !errors.Is(err, ErrLostCandidacy) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if errors.Is(h.lostErr, ErrReleased) {
		h.lostErr = fmt.Errorf("%w (found by Release: %w)", err, ErrReleased)
	}
}

// observe reads the connection's state now and brings the hold's up to
// date: it ends the hold when the connection carries another session, and
// begins or ends a Suspension. It returns why the hold is over, and
// otherwise the current Suspension's Resumed, nil when not suspended.
func (h *Held) observe(now time.Time) (chan struct{}, error) {
	sid, st := h.l.conn.SessionID(), h.l.conn.State()
	if sid != 0 && sid != h.session {
		h.markLost(&sessionError{pinned: h.session, now: sid})
	}
	if err := h.Err(); err != nil { // the end wins over anything else
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.resumed == nil && st != zk.StateHasSession:
		h.resumed = make(chan struct{})
		h.suspend(Suspension{Since: now, ExpiresBy: h.l.expiresBy(now), Resumed: h.resumed})
	case h.resumed != nil && st == zk.StateHasSession && sid == h.session:
		close(h.resumed)
		h.resumed = nil
	}
	return h.resumed, nil
}

// watchConn reports the connection's drops and returns, and ends the hold
// when the connection carries another session.
func (h *Held) watchConn() {
	tick := time.NewTicker(suspendPoll)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.lost:
			return
		case now := <-tick.C:
			if _, err := h.observe(now); err != nil {
				return
			}
		}
	}
}

// suspend offers s on the channel, replacing a drop nobody received.
func (h *Held) suspend(s Suspension) {
	for {
		select {
		case h.susp <- s:
			return
		default:
		}
		select {
		case <-h.susp:
		default:
		}
	}
}

// watchOwn watches the hold's own node until it is deleted, the watch is
// dropped, or the hold is released. A request that failed because the
// client has no connection yet is sent again: a drop is no loss
// (Suspensions reports it), and go-zookeeper fails a queued request at most
// once a second while it has no server. One lost with the connection is
// sent again up to maxConnRetries times in a row; a closed client fails
// every request at once, and then the hold is lost (closing the client
// ended the session).
func (h *Held) watchOwn() {
	var retries cleanupRetries
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		h.l.trace.request(locktrace.OpExists, h.Path, true)
		ok, st, ch, err := h.l.conn.ExistsW(h.Path)
		if serr := h.l.checkSession(h.session); serr != nil {
			h.l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: h.Path, Err: serr})
			h.markLost(serr)
			return
		}
		h.l.trace.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: h.Path, Err: err, Exists: ok, Stat: st})
		switch {
		case err != nil && retries.again(err):
			continue
		case err != nil:
			h.markLost(fmt.Errorf("lock: cannot watch own node %s: %w", h.Path, err))
			return
		case !ok: // a node at this path is this session's: the GUID is in its name
			h.markLost(fmt.Errorf("%w: %s no longer exists", ErrLostCandidacy, h.Path))
			return
		}
		retries = cleanupRetries{}
		h.l.trace.guarded(h.Path)
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

// Release deletes this hold's own node, and only it, and closes Lost. Its
// error says whether anything is left to do:
//   - nil: the node is known gone by this release;
//   - an error wrapping ErrAlreadyOver: the hold had ended before (its
//     session expired or changed, wrapping ErrSessionChanged; its node was
//     deleted by someone else or found gone, wrapping ErrLostCandidacy).
//     Nothing was deleted and nothing is left to do;
//   - an error wrapping ErrOutcomeUnknown: ctx ended before the outcome
//     was known (a ctx without a deadline is given one: the session
//     timeout when the Locker knows it, else releaseBound), or the client
//     was closed. Nothing is left to do either: the delete goes on by
//     itself in the same session (Gone is closed when it has finished),
//     and the session's end removes the node at the latest;
//   - an error wrapping zk.ErrNoAuth: the server refused the delete (the
//     parent's ACL grants this session none). The node stays, first in
//     the queue, until the session ends: closing the client ends it.
//
// A delete whose answer was lost with the connection is resolved after the
// reconnect, in the same session: the node gone means released, still
// there means delete again; a node at the path that another session owns
// is not this hold's (its own is gone), and is left alone.
func (h *Held) Release(ctx context.Context) error {
	if err := h.end(); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.l.releaseBound())
		defer cancel()
	}
	tr, detach := h.l.trace.detachable()
	done := make(chan error, 1)
	go func() {
		err := h.l.deleteOwn(tr, h.session, h.Path)
		h.endedBefore(err)
		close(h.gone)
		done <- err
	}()
	select {
	case err := <-done:
		return alreadyOver(err)
	case <-ctx.Done():
		detach()
		return fmt.Errorf("%w: release %s: %w; the recipe deletes the node once the client reaches a server again in this session (Gone is closed then)", ErrOutcomeUnknown, h.Path, ctx.Err())
	}
}

// alreadyOver marks err, a Release's, with ErrAlreadyOver when it says the
// hold had ended before: its session changed or its node was gone.
func alreadyOver(err error) error {
	if errors.Is(err, ErrSessionChanged) || errors.Is(err, ErrLostCandidacy) {
		return fmt.Errorf("%w: %w", ErrAlreadyOver, err)
	}
	return err
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
		return fmt.Errorf("lock: %s: %w already", h.Path, ErrReleased)
	}
	h.released = true
	close(h.stop)
	h.mu.Unlock()
	if err := alreadyOver(h.Err()); errors.Is(err, ErrAlreadyOver) {
		close(h.gone)
		return err
	}
	// The hold ends when its owner decides to release, before the delete
	// is confirmed. The Lost watcher, if any, exits when its call returns.
	h.markLost(ErrReleased)
	return nil
}

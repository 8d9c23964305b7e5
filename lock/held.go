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
	mu       sync.Mutex
	released bool
	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
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
	// ExpiresBy is the time by which the server may have expired the
	// session: Since plus the timeout given to WithSessionTimeout, or Since
	// itself when none was given. It is not a promise that the session
	// lives until then: the client may have noticed the drop late.
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
// has closed, why it ended: an error wrapping ErrReleased (Release was
// called), ErrLostCandidacy (the node was deleted), ErrSessionChanged (the
// session expired), or the client's error.
func (h *Held) Err() error {
	select {
	case <-h.lost:
		return h.lostErr
	default:
		return nil
	}
}

// Suspensions returns the channel on which the hold reports each drop of
// the connection carrying its session, as it happens (see Suspension). It
// holds the latest drop not yet received; nobody has to read it.
func (h *Held) Suspensions() <-chan Suspension { return h.susp }

func (h *Held) markLost(err error) {
	h.lostOnce.Do(func() {
		h.lostErr = err
		h.l.track(h.Path, false)
		close(h.lost)
		if errors.Is(err, ErrReleased) {
			h.l.trace.ended(h.Path, locktrace.EndReleased, nil)
		} else {
			h.l.trace.ended(h.Path, locktrace.EndLost, err)
		}
	})
}

// watchConn reports the connection's drops and returns, and ends the hold
// when the connection carries another session.
func (h *Held) watchConn() {
	tick := time.NewTicker(suspendPoll)
	defer tick.Stop()
	var resumed chan struct{} // open while suspended
	for {
		select {
		case <-h.stop:
			return
		case <-h.lost:
			return
		case now := <-tick.C:
			sid, st := h.l.conn.SessionID(), h.l.conn.State()
			switch {
			case sid != 0 && sid != h.session:
				h.markLost(&sessionError{pinned: h.session, now: sid})
				return
			case resumed == nil && st != zk.StateHasSession:
				resumed = make(chan struct{})
				h.suspend(Suspension{Since: now, ExpiresBy: now.Add(h.l.timeout), Resumed: resumed})
			case resumed != nil && st == zk.StateHasSession && sid == h.session:
				close(resumed)
				resumed = nil
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
//   - the server refused the delete (the parent's ACL grants this
//     session no delete): an error wrapping zk.ErrNoAuth. The outcome is
//     known: the node stays, first in the queue, until the session ends;
//     closing the client ends it;
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
		return fmt.Errorf("lock: %s: %w already", h.Path, ErrReleased)
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
	h.markLost(ErrReleased)
	return nil
}

package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/lock/locktrace"
)

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
	// retries counts the connections lost in a row; any answered
	// request resets it. zk.ErrNoServer (no connection yet: nothing was
	// sent) is always tried again, within ctx: the session may well live.
	retries cleanupRetries
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
	var ord []entry
	err := retrying(a.retries.again, func() (err error) { ord, err = a.list(ctx); return err })
	return ord, err
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
	a.retries.reset()
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
	a.retries.reset()
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
	h := newHeld(a)
	a.l.track(a.path, true)
	a.l.trace.held(a.path, h.Token)
	h.start()
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

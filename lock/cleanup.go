package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/lock/locktrace"
)

// abandon deletes the candidate of an acquisition that failed or gave up,
// waiting at most cleanupGrace; a delete the server has not answered by
// then goes on in the background, untraced.
func (l *Locker) abandon(session int64, guid, path string) {
	tr, detach := l.trace.detachable()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = l.cleanup(tr, session, guid, path)
	}()
	grace := time.NewTimer(cleanupGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		detach()
	}
}

// cleanup deletes what an acquisition or hold of session left under the
// parent, and only that: the node at path, or, when no name came back
// from the create, this session's candidate of guid (found as Recover finds
// it). It waits for the server as long as the client does; see deleteOwn
// for when it stops.
func (l *Locker) cleanup(tr tracer, session int64, guid, path string) error {
	if path != "" {
		return l.deleteOwn(tr, session, path)
	}
	var retries cleanupRetries
	owned, _, err := l.matches(context.Background(), tr, session, guid, &retries)
	if err != nil {
		return err
	}
	for _, name := range l.unheld(owned) { // a live hold's node is the hold's
		err = errors.Join(err, l.deleteOwn(tr, session, l.parent+"/"+name))
	}
	return err
}

// deleteOwn deletes path, a node this Locker created in session, and only
// it. After a delete whose answer was lost with the connection it looks
// again, in the same session, and deletes again while the node is still
// there. It stops when the node is known gone, when the session changed
// (the node went with the old one), or when the client is closed. See
// Release for what it returns.
//
// No timer paces it. While the client has no connection, go-zookeeper
// keeps a request queued and fails it with zk.ErrNoServer each time it has
// tried every server (once a second); that only means "not yet", and the
// request is sent again. A request the client sent and lost with its
// connection fails with zk.ErrConnectionClosed; so does every request
// after Close, at once: maxConnRetries of those in a row end the cleanup.
func (l *Locker) deleteOwn(tr tracer, session int64, path string) error {
	var retries cleanupRetries
	for {
		if err := l.checkSession(session); err != nil {
			return fmt.Errorf("lock: release %s: the node went with its session: %w", path, err)
		}
		tr.request(locktrace.OpDelete, path, false)
		err := l.conn.Delete(path, -1)
		tr.reply(locktrace.ReplyInfo{Op: locktrace.OpDelete, Path: path, Err: err})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode):
			return fmt.Errorf("%w: %s was already gone at release", ErrLostCandidacy, path)
		case errors.Is(err, zk.ErrNoAuth):
			return fmt.Errorf("lock: release %s: the server refused the delete (the parent's ACL grants this session none): %w; the node stays until the session ends", path, err)
		case !retries.again(err):
			return fmt.Errorf("%w: release %s: %w", ErrOutcomeUnknown, path, err)
		}
		gone, err := l.resolve(tr, session, path, &retries)
		if gone || err != nil {
			return err
		}
	}
}

// resolve finds out, after a delete whose answer was lost, whether the own
// node is gone: true when it is, false when it must be deleted again.
func (l *Locker) resolve(tr tracer, session int64, path string, retries *cleanupRetries) (bool, error) {
	for {
		tr.request(locktrace.OpExists, path, false)
		ok, st, err := l.conn.Exists(path)
		if serr := l.checkSession(session); serr != nil {
			tr.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: path, Err: serr})
			return true, fmt.Errorf("lock: release %s: the node went with its session: %w", path, serr)
		}
		tr.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: path, Err: err, Exists: ok, Stat: st})
		switch {
		case err == nil:
			retries.reset()
		case retries.again(err):
			continue
		default:
			return false, fmt.Errorf("%w: release %s: %w", ErrOutcomeUnknown, path, err)
		}
		switch {
		case !ok:
			return true, nil
		case st.EphemeralOwner != session:
			return false, fmt.Errorf("%w: release %s: the node there now is owned by session 0x%x, not 0x%x; not deleted", ErrLostCandidacy, path, st.EphemeralOwner, session)
		}
		return false, nil
	}
}

// deleteAnySession deletes path, a node whose create answered after the
// session changed: it bears this acquisition's GUID, so it is nobody
// else's, though the new session owns it. One try, within cleanupGrace.
func (l *Locker) deleteAnySession(tr tracer, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupGrace)
	defer cancel()
	tr.request(locktrace.OpDelete, path, false)
	err := call(ctx, func() error { return l.conn.Delete(path, -1) }, nil)
	tr.reply(locktrace.ReplyInfo{Op: locktrace.OpDelete, Path: path, Err: err})
}

// cleanupRetries is the retry policy of a cleanup, which outlives its
// caller: zk.ErrNoServer (no connection yet) is always tried again, any
// other error as connRetries says.
type cleanupRetries struct{ connRetries }

func (r *cleanupRetries) again(err error) bool {
	return errors.Is(err, zk.ErrNoServer) || r.connRetries.again(err)
}

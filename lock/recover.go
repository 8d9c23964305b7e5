package lock

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock/locktrace"
)

// CreateError reports that the create of a candidate returned no name (for
// example zk.ErrConnectionClosed: the reply may have been lost while the
// server created the node). Nothing was retried. Recover with GUID, on the
// same Locker and in the same session, finds out whether the node exists.
type CreateError struct {
	GUID string
	Err  error
}

func (e *CreateError) Error() string {
	s := fmt.Sprintf("lock: create of candidate %s: %v", e.GUID, e.Err)
	if connectionError(e.Err) {
		s += " (the node may exist: Recover with this GUID in the same session)"
	}
	return s
}

func (e *CreateError) Unwrap() error { return e.Err }

// recoverError is what Recover returns when it cannot name exactly one
// node. It wraps ErrMissing or ErrAmbiguous.
type recoverError struct {
	guid    string
	kind    error
	owned   []string // matches owned by this session, in sequence order
	foreign []string // matches owned by another session (never adopted)
}

func (e *recoverError) Error() string {
	s := fmt.Sprintf("%v: GUID %s", e.kind, e.guid)
	if len(e.owned) > 0 {
		s += "; owned by this session: " + strings.Join(e.owned, ", ")
	}
	if len(e.foreign) > 0 {
		s += "; owned by other sessions (not adopted): " + strings.Join(e.foreign, ", ")
	}
	return s
}

func (e *recoverError) Unwrap() error { return e.kind }

// Recover finds the candidate that a create with guid made in this session
// when its reply was lost, and then waits for the lock with it exactly as
// Acquire does. It syncs and lists the parent and keeps the children named
// exactly <guid>-lock-<10 digits> (a name that merely contains guid is
// somebody else's) whose ephemeralOwner is this session: exactly one is
// adopted; none is ErrMissing, several are ErrAmbiguous, and the error lists
// what was found. Matches owned by another session are never adopted.
// Recover never creates, and deletes nothing while it can still report:
// on ErrMissing and ErrAmbiguous the nodes stay as they were. When ctx ends
// first it abandons the recovery as Acquire abandons an acquisition: the
// node of guid, if this session owns it, is deleted once the server answers.
// It refuses to run in a session other than the one the Locker pinned (on a
// Locker that has not acquired yet, it pins the connection's current
// session).
func (l *Locker) Recover(ctx context.Context, guid string) (*Held, error) {
	if guid == "" || strings.ContainsAny(guid, "/\x00") || strings.Contains(guid, fence.LockInfix) {
		return nil, fmt.Errorf("%w: %q", errBadGUID, guid)
	}
	session, err := l.pin(ctx)
	if err != nil {
		return nil, err
	}
	if err := l.checkSession(session); err != nil {
		return nil, err
	}
	var retries connRetries
	owned, foreign, err := l.matches(ctx, l.trace, session, guid, retries.again)
	if isContextError(err) {
		go func() { _ = l.cleanup(tracer{}, session, guid, "") }()
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if err := l.checkSession(session); err != nil {
		return nil, err
	}
	switch len(owned) {
	case 0:
		return nil, &recoverError{guid: guid, kind: ErrMissing, foreign: foreign}
	case 1:
		path := l.parent + "/" + owned[0]
		l.trace.recovered(path)
		return l.begin(session, guid, path).await(ctx)
	}
	sortBySeq(owned)
	return nil, &recoverError{guid: guid, kind: ErrAmbiguous, owned: owned, foreign: foreign}
}

// ofGUID reports whether name is the name of a candidate of guid:
// <guid>-lock- and ZooKeeper's 10-digit suffix, nothing before or between.
func ofGUID(name, guid string) bool {
	suffix, ok := strings.CutPrefix(name, guid+fence.LockInfix)
	if !ok || len(suffix) != 10 {
		return false
	}
	_, err := fence.ParseSeq(name)
	return err == nil
}

// matches lists the parent's candidates of guid, split by owner: this
// session's and the others'. A call that fails is sent again while again
// says so; each returns when ctx ends (with ctx's error).
func (l *Locker) matches(ctx context.Context, tr tracer, session int64, guid string, again func(error) bool) (owned, foreign []string, err error) {
	do := func(c func() error) error {
		for {
			err := c()
			if err == nil || !again(err) {
				return err
			}
		}
	}
	// The reply was lost, so this session's last zxid does not hold the
	// server it reconnected to to the create: a follower may still lack the
	// node and list the parent without it. Sync first (the article's §2):
	// the server then has every write the leader committed before, and a
	// create still on its way arrives after the session moved and is refused.
	tr.request(locktrace.OpSync, l.parent, false)
	err = do(func() error {
		return call(ctx, func() (err error) { _, err = l.conn.Sync(l.parent); return err }, nil)
	})
	tr.reply(locktrace.ReplyInfo{Op: locktrace.OpSync, Path: l.parent, Err: err})
	if err != nil {
		return nil, nil, fmt.Errorf("lock: recover %s: sync %s: %w", guid, l.parent, err)
	}
	var kids []string
	var pst *zk.Stat
	tr.request(locktrace.OpChildren, l.parent, false)
	err = do(func() error {
		return call(ctx, func() (err error) { kids, pst, err = l.conn.Children(l.parent); return err }, nil)
	})
	tr.reply(locktrace.ReplyInfo{Op: locktrace.OpChildren, Path: l.parent, Err: err, Children: kids, Stat: pst})
	if err != nil {
		return nil, nil, fmt.Errorf("lock: recover %s: children %s: %w", guid, l.parent, err)
	}
	for _, k := range kids {
		if !ofGUID(k, guid) {
			continue
		}
		p := l.parent + "/" + k
		var ok bool
		var st *zk.Stat
		tr.request(locktrace.OpExists, p, false)
		err := do(func() error {
			return call(ctx, func() (err error) { ok, st, err = l.conn.Exists(p); return err }, nil)
		})
		tr.reply(locktrace.ReplyInfo{Op: locktrace.OpExists, Path: p, Err: err, Exists: ok, Stat: st})
		if err != nil {
			return nil, nil, fmt.Errorf("lock: recover %s: exists %s: %w", guid, p, err)
		}
		if !ok {
			continue
		}
		if st.EphemeralOwner == session {
			owned = append(owned, k)
		} else {
			foreign = append(foreign, k)
		}
	}
	return owned, foreign, nil
}

// sortBySeq orders node names by sequence number, for messages; names
// without one keep their place after those with one.
func sortBySeq(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		a, errA := fence.ParseSeq(names[i])
		b, errB := fence.ParseSeq(names[j])
		return errA == nil && (errB != nil || a < b)
	})
}

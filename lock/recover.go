package lock

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock/locktrace"
)

// CreateError reports a create of a candidate that the recipe could not
// settle: the create failed with an error that is not a lost connection
// (nothing was made), or its reply was lost and the recovery that Acquire
// and TryAcquire run by themselves could not decide, or found several
// nodes of the GUID. The fields say what the recovery found, by name under
// the parent; Recovery says why it could not decide (ErrAmbiguous when it
// found several, which it deleted). Cleanup says, as RecoverError's does,
// why not all of those were seen deleted. Nothing is left for the caller
// to undo: a node of the GUID that this session may still own is deleted
// by the recipe once the server answers.
type CreateError struct {
	GUID     string
	Err      error    // the create's error
	Recovery error    // nil: no recovery was needed or it found none; else why it did not adopt
	Owned    []string // nodes of the GUID owned by this session, in sequence order
	Foreign  []string // nodes of the GUID owned by other sessions (never adopted nor deleted)
	Deleted  []string // this session's nodes of the GUID that the recipe deleted
	// Cleanup is nil when every node to delete was seen deleted; otherwise
	// why not (see RecoverError.Cleanup).
	Cleanup error
}

func (e *CreateError) Error() string {
	s := fmt.Sprintf("lock: create of candidate %s: %v", e.GUID, e.Err)
	if e.Recovery != nil {
		s += "; recovery: " + e.Recovery.Error()
	}
	return s + found(e.Owned, e.Foreign, e.Deleted) + notAll(e.Cleanup)
}

func (e *CreateError) Unwrap() []error { return causes(e.Err, e.Recovery, e.Cleanup) }

// RecoverError is what Recover returns when it cannot name exactly one
// node: it wraps Kind, ErrMissing or ErrAmbiguous, and says what it found.
// On ErrAmbiguous, Recover deleted this session's nodes of the GUID that
// no live hold of its Locker owns; Deleted names those it saw deleted, and
// the rest of those are deleted once the server answers. Cleanup says why
// not all were seen deleted, and the error wraps it too.
type RecoverError struct {
	GUID    string
	Kind    error    // ErrMissing or ErrAmbiguous
	Owned   []string // nodes of the GUID owned by this session, in sequence order
	Foreign []string // nodes of the GUID owned by other sessions (never adopted nor deleted)
	Deleted []string // this session's nodes of the GUID that Recover deleted
	// Cleanup is nil when every node to delete was seen deleted.
	// Otherwise it wraps ErrSessionChanged (the nodes went with the
	// session, and so did any hold of it), the context's error (it ended
	// first), ErrOutcomeUnknown (no answer within cleanupGrace; the
	// deletes go on until the server answers), or the server's refusal
	// (zk.ErrNoAuth: the parent's ACL grants no delete; those nodes stay
	// until the session ends).
	Cleanup error
}

func (e *RecoverError) Error() string {
	return fmt.Sprintf("%v: GUID %s", e.Kind, e.GUID) + found(e.Owned, e.Foreign, e.Deleted) + notAll(e.Cleanup)
}

// notAll says why not all the nodes to delete were seen deleted.
func notAll(cleanup error) string {
	if cleanup == nil {
		return ""
	}
	return "; not all deleted: " + cleanup.Error()
}

func (e *RecoverError) Unwrap() []error { return causes(e.Kind, e.Cleanup) }

// causes is what an error of the package wraps: those of errs that are
// not nil.
func causes(errs ...error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

func found(owned, foreign, deleted []string) string {
	s := ""
	if len(owned) > 0 {
		s += "; owned by this session: " + strings.Join(owned, ", ")
	}
	if len(foreign) > 0 {
		s += "; owned by other sessions (not adopted): " + strings.Join(foreign, ", ")
	}
	if len(deleted) > 0 {
		s += "; deleted: " + strings.Join(deleted, ", ")
	}
	return s
}

// Recover finds the candidate that a create with guid made in this session
// when its reply was lost, and then waits for the lock with it exactly as
// Acquire does. Acquire and TryAcquire do this by themselves; Recover is
// for a caller that kept a GUID from an earlier call. It syncs and lists
// the parent and keeps the children named exactly <guid>-lock-<10 digits>
// (a name that merely contains guid is somebody else's) whose
// ephemeralOwner is the connection's session: exactly one is adopted; none
// is ErrMissing, several are ErrAmbiguous, in a *RecoverError that lists
// what was found. Recover never creates. On ErrAmbiguous it deletes this
// session's nodes of the GUID that no live hold of this Locker owns (they
// are its own and nobody holds them); it never deletes another session's
// node, nor the node of a hold. A node that a live hold of this Locker
// owns is that hold's: it is never adopted again, and when it is all that
// Recover finds, the error is ErrMissing (the lost create made no other
// node). When ctx ends first it abandons
// the recovery as Acquire abandons an acquisition: the node of guid, if
// this session owns it, is deleted once the server answers. A node of an
// earlier session is gone with that session: ErrMissing.
func (l *Locker) Recover(ctx context.Context, guid string) (*Held, error) {
	if guid == "" || strings.ContainsAny(guid, "/\x00") || strings.Contains(guid, fence.LockInfix) {
		return nil, fmt.Errorf("%w: %q", errBadGUID, guid)
	}
	session, err := l.pin(ctx)
	if err != nil {
		return nil, err
	}
	var retries cleanupRetries
	owned, foreign, err := l.matches(ctx, l.trace, session, guid, &retries)
	if err = l.settled(session, guid, err); err != nil {
		return nil, err
	}
	free := l.unheld(owned) // a live hold's node is never adopted twice, nor deleted
	switch {
	case len(owned) == 0:
		return nil, &RecoverError{GUID: guid, Kind: ErrMissing, Foreign: foreign}
	case len(free) == 0:
		return nil, &RecoverError{GUID: guid, Kind: ErrMissing, Owned: owned, Foreign: foreign}
	case len(owned) == 1:
		path := l.parent + "/" + owned[0]
		l.trace.recovered(path)
		return l.begin(session, guid, path).await(ctx)
	}
	deleted, cerr := l.deleteNodes(ctx, session, free)
	return nil, &RecoverError{GUID: guid, Kind: ErrAmbiguous, Owned: owned, Foreign: foreign, Deleted: deleted, Cleanup: cerr}
}

// settled turns what a recovery's look-up returned into the recovery's
// error: the session changed (its nodes went with it), or the look-up
// failed, and then a node of guid that this session may own is deleted in
// the background once the server answers.
func (l *Locker) settled(session int64, guid string, err error) error {
	if serr := l.checkSession(session); serr != nil {
		return serr
	}
	if err != nil {
		go func() { _ = l.cleanup(tracer{}, session, guid, "") }()
	}
	return err
}

// recoverCreate settles a create whose reply was lost (ce), in the same
// session: the path of the one node of its GUID this session owns, "" when
// there is none (the create did not happen), or an error when it cannot
// decide. Several nodes are deleted: none is held, all are its own.
func (l *Locker) recoverCreate(ctx context.Context, session int64, ce *CreateError) (string, error) {
	var retries cleanupRetries
	owned, foreign, err := l.matches(ctx, l.trace, session, ce.GUID, &retries)
	ce.Owned, ce.Foreign = owned, foreign
	if err = l.settled(session, ce.GUID, err); err != nil {
		if isContextError(err) || errors.Is(err, ErrSessionChanged) {
			return "", err
		}
		ce.Recovery = err
		return "", ce
	}
	switch len(owned) {
	case 0:
		return "", nil
	case 1:
		path := l.parent + "/" + owned[0]
		l.trace.recovered(path)
		return path, nil
	}
	ce.Deleted, ce.Cleanup = l.deleteNodes(ctx, session, l.unheld(owned))
	ce.Recovery = ErrAmbiguous
	return "", ce
}

// deleteNodes deletes names, nodes of this session under the parent,
// until ctx ends or cleanupGrace has passed; it returns those it saw
// deleted and, when that is not all, why: the session changed, ctx ended,
// a delete failed, or the grace passed. The others are deleted in the
// background once the server answers.
func (l *Locker) deleteNodes(ctx context.Context, session int64, names []string) ([]string, error) {
	tr, detach := l.trace.detachable()
	type outcome struct {
		name string
		err  error
	}
	results := make(chan outcome, len(names))
	for _, name := range names {
		go func() {
			err := l.deleteOwn(tr, session, l.parent+"/"+name)
			if errors.Is(err, ErrLostCandidacy) {
				err = nil // gone already: deleted all the same
			}
			results <- outcome{name, err}
		}()
	}
	grace := time.NewTimer(cleanupGrace)
	defer grace.Stop()
	var deleted []string
	var why error
	for range names {
		select {
		case r := <-results:
			if r.err == nil {
				deleted = append(deleted, r.name)
			} else if why == nil || errors.Is(r.err, ErrSessionChanged) {
				why = r.err
			}
			continue
		case <-ctx.Done():
			why = ctx.Err()
		case <-grace.C:
			why = fmt.Errorf("%w: no answer to the deletes within %v", ErrOutcomeUnknown, cleanupGrace)
		}
		detach()
		break
	}
	sortBySeq(deleted)
	return deleted, why
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
// session's and the others'. A call that fails is sent again while the
// policy says so (an answered call resets its count); each returns when
// ctx ends (with ctx's error).
func (l *Locker) matches(ctx context.Context, tr tracer, session int64, guid string, retries retryPolicy) (owned, foreign []string, err error) {
	do := func(c func() error) error {
		err := retrying(retries.again, c)
		if err == nil {
			retries.reset()
		}
		return err
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
	sortBySeq(owned)
	sortBySeq(foreign)
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

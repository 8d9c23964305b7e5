package chaos

import (
	"fmt"
	"path"
	"sync"

	"github.com/zk19/zk19/internal/server/tb"
)

// readBack lists the lock parent on the server after w's hold began, and
// records what the listing shows of the hold and of every hold it
// overlapped from the lock's view (Read says why a listing taken after
// the hold began shows the server as it was then); the Checker judges it.
// Its own node must be the lowest candidate. An
// overlap is the one the article expects when the earlier holder's node
// is gone: the server removed it when the session expired, and the old
// holder has not learned it yet. Both nodes there is two holders at once.
//
// The observer reads on its own session, whose connections no fault of a
// worker touches (on the worker's session the listing would spend a loss
// armed for the recipe's own listing, and wait out its reconnects), and
// after a sync: a follower that lags would still list a node the leader
// deleted, and count an expected overlap as two holders. A sync is not
// enough to accuse the recipe: a leader that does not know it was deposed
// answers a sync from its own state (ZOOKEEPER-1675, the article's §2,
// claim Y2). So a listing that shows a hold the lock must not give is
// taken again after a write of O's own, which only a quorum commits (the
// article's barrier: a real update in the same session, then read), and
// that listing decides. A node gone cannot come back, so an old listing
// can only err towards "gone".
func (run *chaosRun) readBack(w *chaosWorker, hold Hold, others []Hold) {
	own := path.Base(hold.Node)
	seen, how, err := run.listParent(hold, others, false)
	if err == nil && seen.Broken() {
		w.event("info", "O listed the parent %s: a hold the lock must not give (own node listed %v, lowest %v, overlapped nodes listed %v, candidates below it %v); O writes and lists again", how, seen.Own, seen.Lowest, seen.Present, seen.Ahead)
		seen, how, err = run.listParent(hold, others, true)
	}
	if err != nil {
		w.event("info", "O could not read the hold of %s back: %v", own, err)
		run.anomaly("%s's hold of %s (%v) was not read back on the server: %v", w.name, own, hold.Token, err)
		return
	}
	run.sum.Add(ReadBack, 1)
	switch {
	case !seen.Own:
		run.sum.Add(OwnGone, 1)
		w.event("info", "O listed the parent %s: own node %s gone already (its session ended after the hold began)", how, own)
	case seen.Lowest:
		w.line("ok", "O listed the parent %s: own node %s the lowest candidate", how, own)
	default:
		run.sum.Add(NotLowest, 1)
	}
	rb := &HoldReadBack{Hold: hold, Others: others, Seen: seen, How: how, At: run.since()}
	for i, o := range others {
		kind := seen.Overlap(i)
		run.sum.Add(kind.Counter(), 1)
		switch kind {
		case EarlierGone:
			w.event("info", "overlap with %s's hold of %s (session 0x%x, since %v): O listed the parent %s: its node gone, the overlap the article expects: its session ended and the lock passed on while %s still believes it holds (fencing refuses its late writes)", o.Who, path.Base(o.Node), o.Session, o.Since, how, o.Who)
		case LaterGone:
			w.event("info", "overlap with %s's hold of %s (session 0x%x, since %v): O listed the parent %s: its node there, this hold's own node %s gone: %s is the holder whose session ended", o.Who, path.Base(o.Node), o.Session, o.Since, how, own, w.name)
		case BothThere:
			w.event("fail", "overlap with %s's hold of %s: O listed the parent %s: both nodes there: two holders at once", o.Who, path.Base(o.Node), how)
			if rb.Owners == nil {
				rb.Owners = map[int][2]string{}
			}
			rb.Owners[i] = [2]string{run.owner(o), run.owner(hold)}
		}
	}
	if seen.Own && len(seen.Ahead) > 0 {
		w.event("fail", "O listed the parent %s: candidates %v below own node %s", how, seen.Ahead, own)
	}
	run.record(Event{ReadBack: rb})
}

// listParent lists the lock parent on O's session after a sync, or after
// a write of O's own (the lock parent's data, which nobody reads) when
// write is set, and reads the listing for hold. It says how the listing
// was taken. The request and the listing must be on one session: a new
// session may be on a server behind the old one's.
func (run *chaosRun) listParent(hold Hold, others []Hold, write bool) (Seen, string, error) {
	var mu sync.Mutex // the wait's goroutine writes, this one reads
	var kids []string
	var how string
	what := "O's sync and listing of the lock parent"
	if write {
		what = "O's write and listing of the lock parent"
	}
	err := tb.WaitUntil(chaosServerWithin, what, func() (bool, string) {
		sid := run.O.SessionID()
		h := "after a sync"
		if write {
			st, err := run.O.Set(run.root, []byte("read back "+hold.String()), -1)
			if err != nil {
				return false, "write: " + err.Error()
			}
			h = fmt.Sprintf("after its write at zxid %#x", st.Mzxid)
		} else if _, err := run.O.Sync(run.root); err != nil {
			return false, "sync: " + err.Error()
		}
		k, _, err := run.O.Children(run.root)
		if err != nil {
			return false, "children: " + err.Error()
		}
		if now := run.O.SessionID(); now != sid {
			return false, fmt.Sprintf("session 0x%x, then 0x%x", sid, now)
		}
		mu.Lock()
		kids, how = k, h
		mu.Unlock()
		return true, ""
	})
	if err != nil {
		return Seen{}, "", err
	}
	mu.Lock()
	defer mu.Unlock()
	seen, err := Read(kids, hold, others)
	return seen, how, err
}

// owner says who owns a hold's node, as O reads it now: for the record of
// two holders, whose nodes were listed.
func (run *chaosRun) owner(h Hold) string {
	ok, st, err := run.O.Exists(h.Node)
	switch {
	case err != nil:
		return fmt.Sprintf("%s's %s: owner not read (%v), its Locker's session 0x%x", h.Who, path.Base(h.Node), err, h.Session)
	case !ok:
		return fmt.Sprintf("%s's %s: gone by the time O asked for its owner, its Locker's session 0x%x", h.Who, path.Base(h.Node), h.Session)
	}
	return fmt.Sprintf("%s's %s owned by session 0x%x, %s's Locker's 0x%x", h.Who, path.Base(h.Node), st.EphemeralOwner, h.Who, h.Session)
}

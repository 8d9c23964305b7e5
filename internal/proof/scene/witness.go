package scene

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock/locktrace"
)

// Attempt is one acquisition as the witness saw it. Rounds and Wakeups
// are counted on the wire: the getChildren requests the session sent since
// the candidate existed, and the notifications delivered for the
// predecessors it watched.
type Attempt struct {
	Own      string // the candidate's node name
	Pred     string // the predecessor watched now or last
	Waiting  bool   // blocked on the watch of Pred (per the Trace)
	Rounds   int    // getChildren requests on the wire
	Wakeups  int    // notifications on the wire for the predecessors
	NoNode   int    // exists(pred, watch) answers "no node" (per the Trace)
	Done     bool   // the acquisition has returned
	Acquired bool   // ... as holder
}

// attemptLog is what the Trace reported of one acquisition.
type attemptLog struct {
	own, pred string
	preds     []string       // parent-qualified paths watched, in order
	woke      map[string]int // events the recipe took in, by predecessor path
	waiting   bool
	noNode    int
	done, got bool
	listBase  int // getChildren requests on the wire before the first listing
	listEnd   int // ... when the acquisition returned (valid once done)
	wakeEnd   int // notifications on the wire for its predecessors then
}

// Witness is one session's observer. Its Trace may be combined with a
// scenario's own callbacks (see trace).
type Witness struct {
	name     string
	parent   string
	proxies  []*faultproxy.Proxy
	upstream map[string]string // a proxy's address -> the server behind it
	ref      *referee          // the holds under parent (referee.go)

	mu       sync.Mutex
	attempts []*attemptLog
	cur      *attemptLog // the acquisition whose step runs now
}

// newWitness puts a ZooKeeper-aware proxy of its own in front of each of
// servers and returns the witness and the addresses the session must dial.
func newWitness(t zkserver.TB, name, parent string, servers []string) (*Witness, []string) {
	t.Helper()
	w := &Witness{name: name, parent: parent, upstream: map[string]string{}}
	addrs := make([]string, len(servers))
	for i, s := range servers {
		p, err := faultproxy.New(s, faultproxy.WithName(name+"-wire"), faultproxy.WithZooKeeperFrames())
		if err != nil {
			t.Fatalf("%s: wire proxy: %v", name, err)
		}
		t.Cleanup(func() { _ = p.Close() })
		w.proxies = append(w.proxies, p)
		addrs[i] = p.Addr()
		w.upstream[p.Addr()] = s
	}
	return w, addrs
}

// Server is the server behind addr, the address the session dialled.
func (w *Witness) Server(addr string) string { return w.upstream[addr] }

// listings is the number of getChildren requests on the wire so far.
func (w *Witness) listings() int {
	n := 0
	for _, p := range w.proxies {
		n += p.Requests(jute.OpGetChildren, jute.OpGetChildren2)
	}
	return n
}

// notifications is the number of notifications for path on the wire.
func (w *Witness) notifications(path string) int {
	n := 0
	for _, p := range w.proxies {
		n += p.Notifications(path)
	}
	return n
}

// begin starts the log of the acquisition of own; the listing requests
// already on the wire are not its.
func (w *Witness) begin(own string) {
	base := w.listings()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cur = &attemptLog{own: own, woke: map[string]int{}, listBase: base}
	w.attempts = append(w.attempts, w.cur)
}

// step runs f on the current acquisition's log under the lock.
func (w *Witness) step(f func(a *attemptLog)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil {
		f(w.cur)
	}
}

// trace returns the Trace that feeds w.
func (w *Witness) trace() *locktrace.Trace {
	return &locktrace.Trace{
		Reply: func(r locktrace.ReplyInfo) {
			switch {
			case r.Op == locktrace.OpCreate && r.Err == nil:
				w.begin(r.Node)
			case r.Op == locktrace.OpExists && r.Err == nil && !r.Exists:
				w.step(func(a *attemptLog) {
					if a.pred != "" && r.Path == w.parent+"/"+a.pred {
						a.noNode++
					}
				})
			}
		},
		Recovered: func(n locktrace.NodeInfo) {
			w.begin(path.Base(n.Path))
		},
		Watching: func(i locktrace.WatchInfo) {
			w.step(func(a *attemptLog) { a.pred = i.Predecessor })
		},
		Waiting: func(i locktrace.WatchInfo) {
			w.step(func(a *attemptLog) {
				a.waiting = true
				a.preds = append(a.preds, w.parent+"/"+i.Predecessor)
			})
		},
		Woke: func(i locktrace.WokeInfo) {
			w.step(func(a *attemptLog) { a.waiting = false; a.woke[w.parent+"/"+i.Predecessor]++ })
		},
		Held: func(i locktrace.HeldInfo) {
			end := w.listings()
			w.step(func(a *attemptLog) {
				a.waiting, a.done, a.got, a.listEnd, a.wakeEnd = false, true, true, end, w.wakeups(a)
			})
		},
		Ended: func(i locktrace.EndInfo) {
			if i.End != locktrace.EndReleased {
				end := w.listings()
				w.step(func(a *attemptLog) {
					if path.Base(i.Path) == a.own && !a.done {
						a.waiting, a.done, a.listEnd, a.wakeEnd = false, true, end, w.wakeups(a)
					}
				})
			}
		},
	}
}

// find returns the log of the acquisition of own.
func (w *Witness) find(own string) *attemptLog {
	for _, a := range w.attempts {
		if a.own == own {
			return a
		}
	}
	return nil
}

// view is an acquisition's state with its counts read from the wire.
// Callers hold w.mu.
func (w *Witness) view(a *attemptLog) Attempt {
	at := Attempt{Own: a.own, Pred: a.pred, Waiting: a.waiting, NoNode: a.noNode, Done: a.done, Acquired: a.got}
	if a.done {
		// Frozen when it returned: a watch it left behind may still fire
		// (a cancelled waiter's), and that is no wake-up of this one.
		at.Rounds, at.Wakeups = a.listEnd-a.listBase, a.wakeEnd
	} else {
		at.Rounds, at.Wakeups = w.listings()-a.listBase, w.wakeups(a)
	}
	return at
}

// wakeups is the number of notifications on the wire for the
// predecessors a watched. Callers hold w.mu.
func (w *Witness) wakeups(a *attemptLog) int {
	n := 0
	for _, p := range slices.Compact(slices.Clone(a.preds)) {
		n += w.notifications(p)
	}
	return n
}

// now returns the state of the acquisition of own as it is, not waiting
// for anything; ok is false when there is none.
func (w *Witness) now(own string) (at Attempt, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a := w.find(own); a != nil {
		return w.view(a), true
	}
	return Attempt{}, false
}

// settled reports whether the recipe has taken in every notification the
// wire delivered for a's predecessors and is at a blocking point (waiting
// on a watch) or has returned. Callers hold w.mu.
func (w *Witness) settled(a *attemptLog) (bool, string) {
	if a.done {
		return true, "" // its counts were frozen when it returned
	}
	for _, p := range slices.Compact(slices.Clone(a.preds)) {
		if got, sent := a.woke[p], w.notifications(p); got < sent {
			return false, fmt.Sprintf("%s took in %d of the %d notifications for %s on the wire", a.own, got, sent, path.Base(p))
		}
	}
	if !a.waiting && !a.done {
		return false, fmt.Sprintf("%s is between rounds (neither waiting nor returned)", a.own)
	}
	return true, ""
}

// settle returns the state of the acquisition of own, certain about
// notifications: read is a read on the session's own connection, whose
// answer comes after every notification the server sent the session
// before it, so the wire's counts are final; then it waits until the
// recipe has taken those in and reached a blocking point or returned.
func (w *Witness) settle(t zkserver.TB, read func() error, own string) Attempt {
	t.Helper()
	if err := read(); err != nil {
		t.Fatalf("%s: read to order the notifications: %v", w.name, err)
	}
	return w.await(t, own)
}

// await waits, bounded, until the acquisition of own is settled (see
// settled), and returns its state.
func (w *Witness) await(t zkserver.TB, own string) Attempt {
	t.Helper()
	var at Attempt
	w.waitFor(t, w.name+"'s acquisition of "+own+" to settle", w.name+"'s acquisition of "+own+" settled", func() (bool, string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		a := w.find(own)
		if a == nil {
			return false, fmt.Sprintf("no acquisition of %s among %d", own, len(w.attempts))
		}
		ok, why := w.settled(a)
		at = w.view(a)
		return ok, why
	})
	return at
}

// waitingOn waits until an acquisition of w's session blocks on the watch
// of pred, and returns its state. ok is false when the acquisition
// returned first (returned): the caller says what it did instead.
func (w *Witness) waitingOn(t zkserver.TB, pred string, returned func() bool) (at Attempt, ok bool) {
	t.Helper()
	w.waitFor(t, w.name+" to wait on "+pred, w.name+" waiting on "+pred, func() (bool, string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		var seen []string
		for _, a := range w.attempts {
			if a.waiting && a.pred == pred {
				at, ok = w.view(a), true
				return true, ""
			}
			seen = append(seen, fmt.Sprintf("%s waiting=%v on %q", a.own, a.waiting, a.pred))
		}
		if returned() {
			return true, "" // not waiting on pred: the caller says what it did
		}
		return false, "acquisitions: " + strings.Join(seen, ", ")
	})
	return at, ok
}

// waitFor waits, bounded, until cond holds, as tb.WaitFor does, but fails
// the test at once if the referee sees two holders under w's parent
// meanwhile: what the scene waits for (want) cannot come true as its
// claim describes it, and the cause is named, not a timeout.
func (w *Witness) waitFor(t zkserver.TB, what, want string, cond tb.Cond) {
	t.Helper()
	tb.WaitFor(t, harness.Within, what, func() (bool, string) {
		if w.ref.twoHolders() != "" {
			return true, ""
		}
		return cond()
	})
	if msg := w.ref.twoHolders(); msg != "" {
		t.Fatalf("%s; want %s", msg, want)
	}
}

// All returns the state of every acquisition, in the order they began;
// each must be settled.
func (w *Witness) All(t zkserver.TB) []Attempt {
	t.Helper()
	w.mu.Lock()
	owns := make([]string, len(w.attempts))
	for i, a := range w.attempts {
		owns[i] = a.own
	}
	w.mu.Unlock()
	out := make([]Attempt, len(owns))
	for i, own := range owns {
		out[i] = w.await(t, own)
	}
	return out
}

// renderReply is a reply as one record line's detail.
func renderReply(r locktrace.ReplyInfo) string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Op == locktrace.OpCreate:
		return r.Node
	case r.Op == locktrace.OpChildren:
		return "[" + strings.Join(bySeq(r.Children), " ") + "]"
	case r.Op == locktrace.OpExists && r.Exists && r.Stat != nil && r.Stat.EphemeralOwner != 0:
		return fmt.Sprintf("true ephemeralOwner=0x%x", r.Stat.EphemeralOwner)
	case r.Op == locktrace.OpExists:
		return fmt.Sprint(r.Exists)
	}
	return ""
}

// bySeq orders node names by their lock sequence number; others last.
func bySeq(names []string) []string {
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		x, errA := fence.ParseSeq(a)
		y, errB := fence.ParseSeq(b)
		switch {
		case errA != nil && errB != nil:
			return 0
		case errA != nil:
			return 1
		case errB != nil:
			return -1
		}
		return int(x - y)
	})
	return out
}

// RecordTrace returns a Trace that writes the recipe's steps as record
// lines through line (typ is invoke, ok, fail or info).
func RecordTrace(line func(typ, format string, args ...any)) *locktrace.Trace {
	return &locktrace.Trace{
		Request: func(r locktrace.RequestInfo) {
			switch {
			case r.Op == locktrace.OpCreate:
				line("invoke", "create %s EPHEMERAL_SEQUENTIAL", r.Path)
			case r.Watch:
				line("invoke", "%s %s watch", r.Op, r.Path)
			default:
				line("invoke", "%s %s", r.Op, r.Path)
			}
		},
		Reply: func(r locktrace.ReplyInfo) {
			typ := "ok"
			if r.Err != nil {
				typ = "fail"
			}
			line(typ, "%s", strings.TrimSpace(r.Op.String()+" "+renderReply(r)))
		},
		Waiting:   func(i locktrace.WatchInfo) { line("info", "wait %s", i.Predecessor) },
		Woke:      func(i locktrace.WokeInfo) { line("info", "%s", eventLine(i.Event)) },
		Recovered: func(n locktrace.NodeInfo) { line("info", "recovered %s", n.Path) },
		Held:      func(i locktrace.HeldInfo) { line("info", "acquired %s token %v", i.Path, i.Token) },
		Ended: func(i locktrace.EndInfo) {
			if i.Err != nil {
				line("info", "%s %s: %v", i.End, i.Path, i.Err)
				return
			}
			line("info", "%s %s", i.End, i.Path)
		},
	}
}

// eventLine is a watch event as a record line's detail.
func eventLine(ev zk.Event) string {
	s := "event " + ev.Type.String() + " " + ev.Path
	if ev.Err != nil {
		s += " " + ev.Err.Error()
	}
	return strings.TrimSpace(s)
}

// waitedOn reports whether the acquisition of own has waited on pred.
func (w *Witness) waitedOn(own, pred string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := w.find(own)
	return a != nil && slices.Contains(a.preds, w.parent+"/"+pred)
}

package fencescene

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// CriticalSection holds every write the test starts through it at its
// decision, until the test lets it go. Writes the test did not start
// through it (a scenario's setup) pass. id names the claim in failures.
type CriticalSection struct {
	t       zkserver.TB
	id      string
	mu      sync.Mutex
	writers map[fence.Token]*GatedWrite
}

func NewCriticalSection(t zkserver.TB, id string) *CriticalSection {
	return &CriticalSection{t: t, id: id, writers: map[fence.Token]*GatedWrite{}}
}

// Trace is the Trace to open the resource under test with.
func (cs *CriticalSection) Trace() *fence.Trace {
	return &fence.Trace{Decided: func(d fence.Decision) {
		cs.mu.Lock()
		w := cs.writers[d.Token]
		cs.mu.Unlock()
		if w == nil {
			return
		}
		w.decided <- d
		<-w.release
	}}
}

// GatedWrite is one write running in a goroutine of its own, held at its
// decision until let go.
type GatedWrite struct {
	cs      *CriticalSection
	who     claims.Actor
	tok     fence.Token
	value   string
	gid     int64 // the goroutine that writes, as runtime.Stack names it
	on      fence.Resource
	decided chan fence.Decision
	release chan struct{}
	letGo   sync.Once
	done    harness.Returned

	Decision fence.Decision // what its compare found, once taken in
	reached  bool           // decision was taken in
	res      fence.Result
	err      error
}

// Write starts who's write of value with tok on res, a resource opened with
// cs.trace(). Tokens identify the writes: one held write per token.
// Cleanup lets the write go and waits for it.
func (cs *CriticalSection) Write(res fence.Resource, who claims.Actor, tok fence.Token, value string) *GatedWrite {
	t := cs.t
	t.Helper()
	w := &GatedWrite{cs: cs, who: who, tok: tok, value: value, on: res,
		decided: make(chan fence.Decision, 1), release: make(chan struct{}), done: make(chan struct{})}
	cs.mu.Lock()
	cs.writers[tok] = w
	cs.mu.Unlock()
	gid := make(chan int64, 1)
	who.Invoke("write %q with token %v", value, tok)
	go func() {
		defer close(w.done)
		gid <- goroutineID()
		w.res, w.err = Outcome(res.Write(context.Background(), tok, value))
	}()
	t.Cleanup(func() { w.let(); tb.Receive(t, harness.Within, who.Name+"'s write", w.done) })
	select {
	case w.gid = <-gid:
	case <-time.After(harness.Within):
		claims.NotShown(t, cs.id, "%s's writer did not start within %v", who.Name, harness.Within)
	}
	return w
}

// let lets the write go on from its decision (or pass it, if it has not
// reached it yet).
func (w *GatedWrite) let() { w.letGo.Do(func() { close(w.release) }) }

// take records the decision if the write has reached it.
func (w *GatedWrite) take() bool {
	if !w.reached {
		select {
		case w.Decision = <-w.decided:
			w.reached = true
		default:
		}
	}
	return w.reached
}

// Entered waits until the write has compared its token and is held at its
// decision, inside the resource's critical section, and returns the
// decision.
func (w *GatedWrite) Entered() fence.Decision {
	t := w.cs.t
	t.Helper()
	select {
	case w.Decision = <-w.decided:
		w.reached = true
	case <-w.done:
		claims.NotShown(t, w.cs.id, "%s's write returned (%v) without reaching its decision", w.who.Name, w.err)
	case <-time.After(harness.Within):
		claims.NotShown(t, w.cs.id, "%s's write did not reach its decision within %v", w.who.Name, harness.Within)
	}
	w.who.Info("inside: token %v against mark %v (set: %v), admitted: %v; held before its write", w.Decision.Token, w.Decision.Mark, w.Decision.Marked, w.Decision.Admitted)
	return w.Decision
}

// Whereabouts is where a write was while another was held inside.
type Whereabouts struct {
	Inside   bool           // it reached its own decision: two writers inside
	Decision fence.Decision // its decision, when inside
	Parked   string         // else where it waited: "sync.(*Mutex).Lock in fence.(*Memory).Write"
}

func (wa Whereabouts) String() string { return wa.text().En }

// Chinese is where the write was, in the Chinese record's words.
func (wa Whereabouts) Chinese() string { return wa.text().Zh }

func (wa Whereabouts) text() zh.Text {
	if wa.Inside {
		return zh.Say("inside too: token %v against mark %v, admitted: %v", wa.Decision.Token, wa.Decision.Mark, wa.Decision.Admitted)
	}
	return zh.Say("parked in %s", wa.Parked)
}

// Brief says where the write was without naming the resource's own call
// it parked in: the same words for every resource that keeps it out.
func (wa Whereabouts) Brief() string {
	if wa.Inside {
		return wa.String()
	}
	return "parked outside the section"
}

// Whereabouts waits until the write has either reached its decision or is
// parked in the resource's Write, and says which.
func (w *GatedWrite) Whereabouts(other *GatedWrite) Whereabouts {
	t := w.cs.t
	t.Helper()
	var wa Whereabouts
	var returned error
	tb.WaitFor(t, harness.Within, fmt.Sprintf("%s: %s's write to reach its decision or park in the resource's Write while %s's is inside", w.cs.id, w.who.Name, other.who.Name), func() (bool, string) {
		if w.take() {
			wa.Inside, wa.Decision = true, w.Decision
			return true, ""
		}
		if w.done.Finished() {
			returned = fmt.Errorf("returned %+v, %v", w.res, w.err)
			return true, ""
		}
		where, last := w.parkedIn()
		wa.Parked = where
		return where != "", last
	})
	if returned != nil {
		claims.NotShown(t, w.cs.id, "%s's write %v without reaching its decision while %s's was held inside", w.who.Name, returned, other.who.Name)
	}
	w.who.Info("while %s is inside: %v", other.who.Name, wa)
	return wa
}

// Finish lets the write go and returns its result; the decision is taken
// in as well (a write that was parked reaches it after the release). If
// other, a write started meanwhile, reaches its decision before this one
// has returned, other is let go too: it may hold what this write needs to
// finish (the durable resource's one connection), and its decision says
// whether it saw this write.
func (w *GatedWrite) Finish(other *GatedWrite) fence.Result {
	t := w.cs.t
	t.Helper()
	w.let()
	var early <-chan fence.Decision
	if other != nil && !other.reached {
		early = other.decided
	}
	timeout := time.After(harness.Within)
	for returned := false; !returned; {
		select {
		case <-w.done:
			returned = true
		case d := <-early:
			other.Decision, other.reached, early = d, true, nil
			other.who.Info("reached its decision (token %v against mark %v, admitted: %v) before %s's write returned", d.Token, d.Mark, d.Admitted, w.who.Name)
			other.let()
		case <-timeout:
			claims.NotShown(t, w.cs.id, "%s's write did not return within %v of being let go", w.who.Name, harness.Within)
		}
	}
	if w.err != nil {
		claims.NotShown(t, w.cs.id, "%s's write %q: %v", w.who.Name, w.value, w.err)
	}
	if !w.take() {
		claims.NotShown(t, w.cs.id, "%s's write returned without reaching its decision", w.who.Name)
	}
	w.cs.mu.Lock()
	delete(w.cs.writers, w.tok) // the token may write again, unheld
	w.cs.mu.Unlock()
	logWrite(w.who, w.tok, w.res)
	return w.res
}

// WaitingRead is a Read started while a write is held inside the
// resource's critical section: once that write is let go, it must read the
// value and the mark the write stored, together.
type WaitingRead struct {
	cs   *CriticalSection
	who  claims.Actor
	gid  int64
	done harness.Returned

	value  string
	mark   fence.Token
	marked bool
	err    error
}

// Read starts who's Read of res in a goroutine of its own while held is
// inside, and waits until the read is parked in the resource's Read,
// waiting for the section held keeps. Cleanup lets held go and waits for
// the read.
func (cs *CriticalSection) Read(res fence.Resource, who claims.Actor, held *GatedWrite) *WaitingRead {
	t := cs.t
	t.Helper()
	r := &WaitingRead{cs: cs, who: who, done: make(chan struct{})}
	gid := make(chan int64, 1)
	who.Invoke("read the value and the mark")
	go func() {
		defer close(r.done)
		gid <- goroutineID()
		r.value, r.mark, r.marked, r.err = res.Read(context.Background())
	}()
	t.Cleanup(func() { held.let(); tb.Receive(t, harness.Within, who.Name+"'s read", r.done) })
	r.gid = tb.Receive(t, harness.Within, cs.id+": "+who.Name+"'s reader to start", gid)
	var where string
	tb.WaitFor(t, harness.Within, fmt.Sprintf("%s: %s's read to park in the resource's Read while %s's write is inside", cs.id, who.Name, held.who.Name), func() (bool, string) {
		if r.done.Finished() {
			return true, ""
		}
		w, last := parkedIn(r.gid)
		where = w
		return w != "", last
	})
	if r.done.Finished() {
		// With more than one connection a durable reader could read the
		// last commit beside a writer; the scene needs it to wait.
		claims.NotShown(t, cs.id, "%s's read returned %q with mark %v (%v) while %s's write was held inside; the scene needs it waiting for the section", who.Name, r.value, r.mark, r.err, held.who.Name)
	}
	who.Info("while %s is inside: parked in %s", held.who.Name, where)
	return r
}

// Result waits for the read to return and returns what it read.
func (r *WaitingRead) Result() (value string, mark fence.Token, marked bool) {
	t := r.cs.t
	t.Helper()
	tb.Receive(t, harness.Within, r.cs.id+": "+r.who.Name+"'s read to return", r.done)
	if r.err != nil {
		claims.NotShown(t, r.cs.id, "%s's read: %v", r.who.Name, r.err)
	}
	r.who.Ok("value %q, mark %v (set: %v)", r.value, r.mark, r.marked)
	return r.value, r.mark, r.marked
}

// goroutineID is the calling goroutine's id, read from the first line of
// its own stack ("goroutine 42 [running]:").
func goroutineID() int64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	if len(f) < 2 || f[0] != "goroutine" {
		return -1
	}
	id, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return id
}

// waitsForASection are the calls a write parks in while another holds the
// resource's critical section: Memory's mutex, and database/sql's wait for
// the durable resource's one connection.
var waitsForASection = []string{"sync.(*Mutex).Lock", "database/sql.(*DB).conn"}

// parkedIn finds goroutine gid in a dump of every goroutine and returns
// where it is parked, if it waits for a resource's critical section: its
// state is a blocking one (not running, runnable or in a system call), and
// its frames are in package fence, under one of waitsForASection; or in
// package fencetest, so that a control made atomic by mistake is seen
// parked, and the proof says the control kept A out. Else it returns ""
// and, for the wait's failure message, the state it is in.
func parkedIn(gid int64) (where, last string) {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := fmt.Sprintf("goroutine %d [", gid)
	for _, g := range strings.Split(string(buf), "\n\n") {
		rest, ok := strings.CutPrefix(g, head)
		if !ok {
			continue
		}
		state, frames, _ := strings.Cut(rest, "]:\n")
		state, _, _ = strings.Cut(state, ",") // "select, 2 minutes"
		funcs := stackFuncs(frames)
		var inFence, waiting string
		for _, f := range funcs {
			if short, ok := strings.CutPrefix(f, "github.com/zk19/zk19/fence."); ok {
				inFence = "fence." + short // the outermost: the resource's Write
			} else if short, ok := strings.CutPrefix(f, "github.com/zk19/zk19/fence/fencetest."); ok {
				inFence = "fencetest." + short
			}
			for _, w := range waitsForASection {
				if f == w && waiting == "" {
					waiting = w
				}
			}
		}
		blocking := state != "running" && state != "runnable" && state != "syscall"
		if blocking && inFence != "" && waiting != "" {
			return waiting + " in " + inFence, ""
		}
		top := "no frames"
		if len(funcs) > 0 {
			top = funcs[0]
		}
		return "", fmt.Sprintf("goroutine %d [%s] in %s", gid, state, top)
	}
	return "", fmt.Sprintf("goroutine %d not found", gid)
}

// stackFuncs returns the functions of a goroutine's frames, innermost
// first, without their arguments.
func stackFuncs(frames string) []string {
	var out []string
	for _, l := range strings.Split(frames, "\n") {
		if l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "created by ") {
			continue
		}
		if i := strings.LastIndex(l, "("); i > 0 {
			l = l[:i]
		}
		out = append(out, l)
	}
	return out
}

// Interleaving is what one gated run of Example_s5bCriticalSection saw
// (the interleaving that breaks a resource whose compare and write are two
// steps): A has written "A-first" with token 0, so the mark is A's own
// token. B's "new-owner" with token 1 is held inside at its decision; A's
// late "stale-late" with token 0 starts meanwhile; once A's write is seen
// inside or parked, B is let go, then A.
type Interleaving struct {
	TokA, TokB fence.Token
	BInside    fence.Decision // B's decision, while it was held
	A          Whereabouts    // where A's write was meanwhile
	B, Late    fence.Result   // B's write and A's
	ADecision  fence.Decision // A's decision, whenever it came
	Value      string         // the resource's value at the end
	Mark       fence.Token
}

// LockWaiter is a resource whose writers queue in its database server, not
// in this process: it says how many of its own sessions wait there for a
// lock now (PostgreSQL's pg_stat_activity), which is where a write waits
// while another holds the register's row.
type LockWaiter interface {
	LockWaits(ctx context.Context) (int, error)
}

// parkedIn says where the write waits for the resource's critical section,
// if it does: in this process (parkedIn of its goroutine), or, for a
// LockWaiter, in its database server, where one of the resource's sessions
// waits for a lock while the write has not returned.
func (w *GatedWrite) parkedIn() (where, last string) {
	lw, ok := w.on.(LockWaiter)
	if !ok {
		return parkedIn(w.gid)
	}
	n, err := lw.LockWaits(context.Background())
	if err != nil || n == 0 {
		return "", fmt.Sprintf("%d of the resource's sessions wait for a lock in its server (%v)", n, err)
	}
	return fmt.Sprintf("pg_stat_activity: %d session wait_event_type=Lock", n), ""
}

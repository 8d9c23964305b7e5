package zk19_test

// A window into a resource's critical section (claims F6 and F11, article
// §5 ¶2, sentence 2, and the critical-section flowchart, ¶5). The
// resource's fence.Trace.Decided runs after the compare and before the
// write; the tests hold a write there and start a second one. Where the
// second goes is read from the Go runtime, not guessed from time: it either
// reaches its own decision (two writers between compare and write: the
// resource is not atomic) or is found parked in the resource's Write,
// waiting for the section. Only then is the first write let go.

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkserver"
)

// criticalSection holds every write the test starts through it at its
// decision, until the test lets it go. Writes the test did not start
// through it (a scenario's setup) pass. id names the claim in failures.
type criticalSection struct {
	t       zkserver.TB
	id      string
	mu      sync.Mutex
	writers map[fence.Token]*gatedWrite
}

func newCriticalSection(t zkserver.TB, id string) *criticalSection {
	return &criticalSection{t: t, id: id, writers: map[fence.Token]*gatedWrite{}}
}

// trace is the Trace to open the resource under test with.
func (cs *criticalSection) trace() *fence.Trace {
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

// gatedWrite is one write running in a goroutine of its own, held at its
// decision until let go.
type gatedWrite struct {
	cs      *criticalSection
	who     actor
	tok     fence.Token
	value   string
	gid     int64 // the goroutine that writes, as runtime.Stack names it
	decided chan fence.Decision
	release chan struct{}
	letGo   sync.Once
	done    returned

	decision fence.Decision // what its compare found, once taken in
	reached  bool           // decision was taken in
	res      fence.Result
	err      error
}

// write starts who's write of value with tok on res, a resource opened with
// cs.trace(). Tokens identify the writes: one held write per token.
// Cleanup lets the write go and waits for it.
func (cs *criticalSection) write(res fence.Resource, who actor, tok fence.Token, value string) *gatedWrite {
	t := cs.t
	t.Helper()
	w := &gatedWrite{cs: cs, who: who, tok: tok, value: value,
		decided: make(chan fence.Decision, 1), release: make(chan struct{}), done: make(chan struct{})}
	cs.mu.Lock()
	cs.writers[tok] = w
	cs.mu.Unlock()
	gid := make(chan int64, 1)
	who.invoke("write %q with token %v", value, tok)
	go func() {
		defer close(w.done)
		gid <- goroutineID()
		w.res, w.err = res.Write(context.Background(), tok, value)
	}()
	t.Cleanup(func() { w.let(); wait.Receive(t, within, who.name+"'s write", w.done) })
	select {
	case w.gid = <-gid:
	case <-time.After(within):
		t.Fatalf("%s not shown: %s's writer did not start within %v", cs.id, who.name, within)
	}
	return w
}

// let lets the write go on from its decision (or pass it, if it has not
// reached it yet).
func (w *gatedWrite) let() { w.letGo.Do(func() { close(w.release) }) }

// take records the decision if the write has reached it.
func (w *gatedWrite) take() bool {
	if !w.reached {
		select {
		case w.decision = <-w.decided:
			w.reached = true
		default:
		}
	}
	return w.reached
}

// entered waits until the write has compared its token and is held at its
// decision, inside the resource's critical section, and returns the
// decision.
func (w *gatedWrite) entered() fence.Decision {
	t := w.cs.t
	t.Helper()
	select {
	case w.decision = <-w.decided:
		w.reached = true
	case <-w.done:
		t.Fatalf("%s not shown: %s's write returned (%v) without reaching its decision", w.cs.id, w.who.name, w.err)
	case <-time.After(within):
		t.Fatalf("%s not shown: %s's write did not reach its decision within %v", w.cs.id, w.who.name, within)
	}
	w.who.info("inside: token %v against mark %v (set: %v), admitted: %v; held before its write", w.decision.Token, w.decision.Mark, w.decision.Marked, w.decision.Admitted)
	return w.decision
}

// whereabouts is where a write was while another was held inside.
type whereabouts struct {
	inside   bool           // it reached its own decision: two writers inside
	decision fence.Decision // its decision, when inside
	parked   string         // else where it waited: "sync.(*Mutex).Lock in fence.(*Memory).Write"
}

func (wa whereabouts) String() string {
	if wa.inside {
		return fmt.Sprintf("inside too: token %v against mark %v, admitted: %v", wa.decision.Token, wa.decision.Mark, wa.decision.Admitted)
	}
	return "parked in " + wa.parked
}

// whereabouts waits until the write has either reached its decision or is
// parked in the resource's Write, and says which.
func (w *gatedWrite) whereabouts(other *gatedWrite) whereabouts {
	t := w.cs.t
	t.Helper()
	var wa whereabouts
	var returned error
	wait.For(t, within, fmt.Sprintf("%s: %s's write to reach its decision or park in the resource's Write while %s's is inside", w.cs.id, w.who.name, other.who.name), func() (bool, string) {
		if w.take() {
			wa.inside, wa.decision = true, w.decision
			return true, ""
		}
		if w.done.finished() {
			returned = fmt.Errorf("returned %+v, %v", w.res, w.err)
			return true, ""
		}
		where, last := parkedIn(w.gid)
		wa.parked = where
		return where != "", last
	})
	if returned != nil {
		t.Fatalf("%s not shown: %s's write %v without reaching its decision while %s's was held inside", w.cs.id, w.who.name, returned, other.who.name)
	}
	w.who.info("while %s is inside: %v", other.who.name, wa)
	return wa
}

// finish lets the write go and returns its result; the decision is taken
// in as well (a write that was parked reaches it after the release). If
// other, a write started meanwhile, reaches its decision before this one
// has returned, other is let go too: it may hold what this write needs to
// finish (the durable resource's one connection), and its decision says
// whether it saw this write.
func (w *gatedWrite) finish(other *gatedWrite) fence.Result {
	t := w.cs.t
	t.Helper()
	w.let()
	var early <-chan fence.Decision
	if other != nil && !other.reached {
		early = other.decided
	}
	timeout := time.After(within)
	for returned := false; !returned; {
		select {
		case <-w.done:
			returned = true
		case d := <-early:
			other.decision, other.reached, early = d, true, nil
			other.who.info("reached its decision (token %v against mark %v, admitted: %v) before %s's write returned", d.Token, d.Mark, d.Admitted, w.who.name)
			other.let()
		case <-timeout:
			t.Fatalf("%s not shown: %s's write did not return within %v of being let go", w.cs.id, w.who.name, within)
		}
	}
	if w.err != nil {
		t.Fatalf("%s not shown: %s's write %q: %v", w.cs.id, w.who.name, w.value, w.err)
	}
	if !w.take() {
		t.Fatalf("%s not shown: %s's write returned without reaching its decision", w.cs.id, w.who.name)
	}
	w.cs.mu.Lock()
	delete(w.cs.writers, w.tok) // the token may write again, unheld
	w.cs.mu.Unlock()
	logWrite(w.who, w.tok, w.res)
	return w.res
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

// interleaving is what one gated run saw (the interleaving that breaks a
// resource whose compare and write are two steps): A has written "A-first"
// with token 0, so the mark is A's own token. B's "new-owner" with token 1
// is held inside at its decision; A's late "stale-late" with token 0
// starts meanwhile; once A's write is seen inside or parked, B is let go,
// then A.
type interleaving struct {
	tokA, tokB fence.Token
	bInside    fence.Decision // B's decision, while it was held
	a          whereabouts    // where A's write was meanwhile
	b, late    fence.Result   // B's write and A's
	aDecision  fence.Decision // A's decision, whenever it came
	value      string         // the resource's value at the end
	mark       fence.Token
}

// interleave runs that interleaving on res, opened with cs.trace().
func interleave(cs *criticalSection, res fence.Resource) interleaving {
	t := cs.t
	t.Helper()
	A, B := newActor(t, "A"), newActor(t, "B")
	il := interleaving{tokA: fence.Token{Seq: 0}, tokB: fence.Token{Seq: 1}}
	writeAs(t, A, res, il.tokA, "A-first")
	b := cs.write(res, B, il.tokB, "new-owner")
	il.bInside = b.entered()
	a := cs.write(res, A, il.tokA, "stale-late")
	il.a = a.whereabouts(b)
	il.b = b.finish(a)
	il.late = a.finish(nil)
	il.aDecision = a.decision
	il.value, il.mark, _ = readResource(t, res)
	return il
}

// notAtomic returns why the run shows the compare and the write are not one
// step, or "" when it shows they are: A's write was kept out while B's was
// inside, A's compare then saw B's token as the mark, and A's stale write
// was refused.
func (il interleaving) notAtomic() string {
	switch {
	case il.a.inside:
		return fmt.Sprintf("A's write with token %v reached its decision (against mark %v, admitted: %v) while B's with token %v was held between its compare and its write: two writers inside at once", il.tokA, il.a.decision.Mark, il.a.decision.Admitted, il.tokB)
	case il.aDecision.Mark != il.tokB || il.aDecision.Admitted:
		return fmt.Sprintf("A's compare, once B was let go, found mark %v and admitted: %v; want B's token %v, refused: B's compare and its write were not one step", il.aDecision.Mark, il.aDecision.Admitted, il.tokB)
	case !il.b.Accepted || il.late.Accepted || il.value != "new-owner":
		return fmt.Sprintf("B accepted: %v, then A's stale write accepted: %v; value %q; want B's accepted, A's refused, \"new-owner\"", il.b.Accepted, il.late.Accepted, il.value)
	}
	return ""
}

// sectionInSource reads, from the source of function fn in file (package
// fence, or fencetest for its control), the order of its lock calls (on a
// field named mu), its compare (admits) and its write (apply), and returns
// why the compare and the write are not in one lock section, or "". It is
// the proof for the gap that a run cannot open: a write that lets its
// section go after its decision and takes it again for the write leaves a
// gap of nanoseconds, which Go's mutex gives back to the goroutine that
// let go (it barges ahead of a woken waiter), so no held interleaving sees
// another writer in it. Reading the source sees it.
func sectionInSource(file, recv, fn string) (string, error) {
	methods, err := methodsOf(file, nil, recv)
	if err != nil {
		return "", err
	}
	body := methods[fn]
	if body == nil {
		return "", fmt.Errorf("no func (%s) %s in %s", recv, fn, file)
	}
	var steps []string // "lock", "unlock", "compare", "write", in source order
	deferred := map[*ast.CallExpr]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if d, ok := n.(*ast.DeferStmt); ok {
			deferred[d.Call] = true
		}
		c, ok := n.(*ast.CallExpr)
		if !ok || deferred[c] {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		onMu := strings.HasSuffix(types.ExprString(sel.X), "mu")
		switch {
		case onMu && sel.Sel.Name == "Lock":
			steps = append(steps, "lock")
		case onMu && sel.Sel.Name == "Unlock":
			steps = append(steps, "unlock")
		case sel.Sel.Name == "admits":
			steps = append(steps, "compare")
		case sel.Sel.Name == "apply":
			steps = append(steps, "write")
		}
		return true
	})
	at := fmt.Sprintf("(%s).%s in %s: %s", recv, fn, filepath.Base(file), strings.Join(steps, ", "))
	compare, write := slices.Index(steps, "compare"), slices.Index(steps, "write")
	if compare < 0 || write < compare {
		return "", fmt.Errorf("%s: no compare followed by a write", at)
	}
	if slices.Index(steps[:compare], "lock") < 0 {
		return "compare outside the section: " + at, nil
	}
	if between := steps[compare:write]; slices.Contains(between, "unlock") {
		return "the section is let go between the compare and the write: " + at, nil
	}
	return "", nil
}

// transactionInSource reads the durable resource's source (src, the text
// of fence/durable.go) and returns why its compare and its write are not
// in one transaction, or "": between the decision (Trace.Decided, after
// the row is read and compared) and the UPDATE that writes (fencedUpdate)
// in decideAndWrite, no statement may end or begin a transaction and the
// connection may not be let go; and write runs decideAndWrite inside one
// immediate transaction. As with the memory resource, a run cannot open
// such a gap: the writer that ends its transaction keeps its connection and
// begins the next at once.
func transactionInSource(src string) (string, error) {
	funcs, err := methodsOf("durable.go", src, "*Durable")
	if err != nil {
		return "", err
	}
	if funcs["write"] == nil || funcs["decideAndWrite"] == nil {
		return "", fmt.Errorf("no (*Durable).write and decideAndWrite in fence/durable.go")
	}
	if n := countCalls(funcs["write"], "immediate"); n != 1 {
		return fmt.Sprintf("(*Durable).write runs %d immediate transactions; want its read, compare and write in one", n), nil
	}
	var steps []string // "decided", "update", and what ends a transaction or the connection
	ast.Inspect(funcs["decideAndWrite"], func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch name := sel.Sel.Name; {
		case name == "decided":
			steps = append(steps, "decided")
		case name == "Close" || name == "Conn" || name == "Commit" || name == "BeginTx":
			steps = append(steps, name)
		case (name == "ExecContext" || name == "QueryRowContext" || name == "QueryContext") && len(c.Args) > 1:
			switch a := c.Args[1].(type) {
			case *ast.Ident:
				if a.Name == "fencedUpdate" {
					steps = append(steps, "update")
				}
			case *ast.BasicLit:
				stmt := strings.ToUpper(strings.Trim(a.Value, "`\""))
				for _, tx := range []string{"COMMIT", "END", "BEGIN", "ROLLBACK", "SAVEPOINT", "RELEASE"} {
					if strings.HasPrefix(stmt, tx) {
						steps = append(steps, stmt)
					}
				}
			}
		}
		return true
	})
	at := "(*Durable).decideAndWrite: " + strings.Join(steps, ", ")
	decided, update := slices.Index(steps, "decided"), slices.Index(steps, "update")
	if decided < 0 || update < decided {
		return "", fmt.Errorf("%s: no decision followed by the UPDATE", at)
	}
	if update-decided > 1 {
		return "the transaction or the connection is let go between the compare and the write: " + at, nil
	}
	return "", nil
}

// methodsOf parses file (or src, when not nil, named file) and returns the
// bodies of the methods of receiver type recv ("*Durable"), by name.
func methodsOf(file string, src any, recv string) (map[string]*ast.BlockStmt, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]*ast.BlockStmt{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && types.ExprString(fd.Recv.List[0].Type) == recv {
			out[fd.Name.Name] = fd.Body
		}
	}
	return out, nil
}

// countCalls counts the calls of methods or functions named name in body.
func countCalls(body *ast.BlockStmt, name string) int {
	n := 0
	ast.Inspect(body, func(x ast.Node) bool {
		if c, ok := x.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				n++
			}
		}
		return true
	})
	return n
}

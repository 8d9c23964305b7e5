package harness

import (
	"flag"
	"regexp"
	"strings"
	"sync"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Ahead is something one claim's Example needs that takes long to start
// (Y2's five servers). go test runs the Examples one after another once
// every Test has ended, so a start inside an Example adds its whole time
// to the run. The run's first Example starts it instead, on a goroutine,
// in a held Scope that the claim's Example gets from ExampleScope: the
// start overlaps the Examples before it, and its log lines reach the
// record inside that Example, when it begins. Get returns what was started
// there, and anywhere else (a second -count, a Test) starts one then.
type Ahead[T any] struct {
	claim string
	start func(zkserver.TB) T

	sc   *zkserver.Scope // the Scope it was started in; nil if it was not
	done chan struct{}   // closed when the start has returned or failed
	val  T
	fail any // what the start failed with (a Scope's Fatalf panics)
}

// aheadStart is an Ahead of any type, as the run's list holds it.
type aheadStart interface {
	claimID() string
	begin(sc *zkserver.Scope)
	wait()
}

// aheads is the run's list of starts ahead, and the Scopes they run in,
// by Example, until their Example takes them.
var aheads struct {
	sync.Mutex
	list    []aheadStart
	begun   bool
	waiting map[string]*zkserver.Scope
}

// NewAhead registers start as what claim's Example (the claim index's
// diagram Example) needs started ahead. Call it from a package-level var.
func NewAhead[T any](claim string, start func(zkserver.TB) T) *Ahead[T] {
	a := &Ahead[T]{claim: claim, start: start}
	aheads.Lock()
	defer aheads.Unlock()
	aheads.list = append(aheads.list, a)
	return a
}

func (a *Ahead[T]) claimID() string { return a.claim }

func (a *Ahead[T]) begin(sc *zkserver.Scope) {
	a.sc, a.done = sc, make(chan struct{})
	go func() {
		defer close(a.done)
		defer func() {
			if r := recover(); r != nil {
				a.fail = r
			}
		}()
		a.val = a.start(sc)
	}()
}

func (a *Ahead[T]) wait() { <-a.done }

// Get returns what was started ahead when t is the Scope it was started
// in, once the start has returned, and fails t if it failed; for any other
// t it starts one now.
func (a *Ahead[T]) Get(t zkserver.TB) T {
	t.Helper()
	if sc, ok := t.(*zkserver.Scope); ok && sc == a.sc {
		a.wait()
		if a.fail != nil {
			t.Fatalf("the start ahead of %s failed: %v", a.claim, a.fail)
		}
		t.Logf("started ahead, beside the Examples before this one")
		return a.val
	}
	return a.start(t)
}

// exampleScope is ExampleScope for the Example called name.
func exampleScope(name string) *zkserver.Scope {
	aheads.Lock()
	defer aheads.Unlock()
	if !aheads.begun {
		aheads.begun = true
		beginAheads(name)
	}
	if sc, ok := aheads.waiting[name]; ok {
		delete(aheads.waiting, name)
		sc.Release()
		return sc
	}
	return zkserver.NewScope(name)
}

// beginAheads starts each registered Ahead whose Example this run will
// run, other than first (the Example running now), in a held Scope named
// after its Example. TestMain's Scope closes the Scopes no Example took,
// once their start has returned. The caller holds aheads' lock.
func beginAheads(first string) {
	if mainScope == nil || len(aheads.list) == 0 {
		return
	}
	ix, err := claims.LoadIndex()
	if err != nil {
		return // the Examples start their own
	}
	aheads.waiting = map[string]*zkserver.Scope{}
	for _, a := range aheads.list {
		c := ix.Claim(a.claimID())
		if c == nil || c.Diagram == "" || c.Diagram == first || !willRun(c.Diagram) {
			continue
		}
		sc := zkserver.NewScope(c.Diagram).Hold()
		aheads.waiting[c.Diagram] = sc
		a.begin(sc)
		mainScope.Cleanup(func() { a.wait(); sc.Close() })
	}
}

// willRun reports whether go test's -run and -skip let the top-level test
// or Example name run. It reads their first element only; a name it wrongly
// says runs only has its start made ahead for nothing, and one it wrongly
// says does not starts its own.
func willRun(name string) bool {
	match := func(flagName string) (matched, set bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return false, false
		}
		first, _, _ := strings.Cut(f.Value.String(), "/")
		ok, err := regexp.MatchString(first, name)
		return ok || err != nil, true
	}
	if m, set := match("test.run"); set && !m {
		return false
	}
	skip, set := match("test.skip")
	return !set || !skip
}

package locktest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Recipe is a lock recipe written in Go: how it names its nodes, and a lock
// object for one contender.
type Recipe interface {
	// NodeName is the name the recipe gives a contender's node before the
	// server's sequence suffix, for a GUID of 32 hex digits: the scenarios
	// plant nodes named so, to look like the recipe's own.
	NodeName(guid string) string
	// NewLock makes the recipe's lock object on dir for one contender. conn
	// is the contender's own session, through its own fault proxy; the
	// scenario closes it.
	NewLock(conn *zk.Conn, dir string) Lock
}

// Lock is one contender's lock object.
type Lock interface {
	// Acquire returns once it holds (with the path or name of the node it
	// holds, "" if it does not say), fails, or ctx ends: ctx carries the
	// scenario's timeout and its cancel.
	Acquire(ctx context.Context) (node string, err error)
	// Release gives up the hold.
	Release(ctx context.Context) error
	// Held is the lock object's own account of whether it holds now.
	Held() bool
}

// Uncancellable is implemented by a Recipe whose lock objects' Acquire can
// neither be cancelled nor time out (go-zookeeper's zk.Lock): the scenarios
// about giving up read NoFeature for it, with Uncancellable's text (why),
// instead of cancelling an Acquire that goes on behind the caller's back.
type Uncancellable interface {
	Uncancellable() string
}

// Signal is what a Signaller tells its user about a hold.
type Signal int

const (
	// Suspended: the connection is lost; the session, and the hold, may
	// still live or may be gone. The user should stop starting writes.
	Suspended Signal = iota + 1
	// Resumed: the client is back in the same session; the hold goes on.
	Resumed
)

func (s Signal) String() string {
	switch s {
	case Suspended:
		return "Suspended"
	case Resumed:
		return "Resumed"
	}
	return fmt.Sprintf("Signal(%d)", int(s))
}

// Signaller is implemented by a Lock that warns its user, while its
// connection is lost and before its session can expire, that the hold may be
// gone (scenario "suspended-holding"). A Lock without it cannot keep that
// scenario's promise.
type Signaller interface {
	// Signals delivers Suspended and Resumed, in order, for the hold
	// Acquire returned last.
	Signals() <-chan Signal
}

// Verdict is a scenario's outcome for a recipe.
type Verdict string

const (
	// Kept: the recipe kept the promise the scenario checks.
	Kept Verdict = "kept"
	// Broken: it did not; the Result's Observation says what happened.
	Broken Verdict = "broke"
	// NoFeature: the recipe has no such feature (no cancel, no timeout).
	NoFeature Verdict = "n/a"
	// NotShown: the scenario's setup did not come about (a fault that did
	// not take, a server that did not answer), or the recipe's answer did
	// not come: nothing was shown about the promise.
	NotShown Verdict = "not shown"
)

// Result is one recipe's verdict in one scenario, with the observation that
// decided it.
type Result struct {
	Scenario string // the scenario's ID
	Recipe   string // the column's name
	Version  string // the recipe's version where it says one (drivers, go-zookeeper)
	Verdict  Verdict
	// Observation is what the scenario saw, in a few words; ObservationZh
	// is the same in Chinese (the words of this module's article).
	Observation, ObservationZh string
	// Source cites the recipe's code responsible for a broken or missing
	// feature, where this module knows it ("" elsewhere).
	Source string
}

func (r Result) String() string {
	return fmt.Sprintf("%s: %s: %s", r.Scenario, r.Verdict, r.Observation)
}

// Scenario names one scenario: Scenarios lists them.
type Scenario struct {
	ID string
	// Title says what the scenario does, in English and Chinese.
	Title, TitleZh string
	// Test is the name of the test of package peers that runs it in the
	// peer table.
	Test string
}

// Scenarios lists every scenario, in the order Run runs them.
func Scenarios() []Scenario {
	var out []Scenario
	for _, s := range scenarios {
		out = append(out, s.public())
	}
	return out
}

// Option changes what Run and Check do.
type Option func(*options)

type options struct {
	only   []string
	expect map[string]Verdict
}

// Only runs the scenarios named (by ID) and no other.
func Only(ids ...string) Option {
	return func(o *options) { o.only = append(o.only, ids...) }
}

// Expect tells Run that the recipe's verdict in scenario id is v: a recipe
// that is known to break a promise (zk.Lock breaks several) passes with it,
// and fails once the verdict changes, so that the expectation is never
// stale.
func Expect(id string, v Verdict) Option {
	return func(o *options) {
		if o.expect == nil {
			o.expect = map[string]Verdict{}
		}
		o.expect[id] = v
	}
}

func (o *options) chosen() ([]scenario, error) {
	if len(o.only) == 0 {
		return scenarios, nil
	}
	var out []scenario
	for _, id := range o.only {
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.id == id })
		if i < 0 {
			return nil, fmt.Errorf("locktest: no scenario %q", id)
		}
		out = append(out, scenarios[i])
	}
	return out, nil
}

// Main is the TestMain of a package whose tests call Run or Check: it starts
// the ZooKeeper server the scenarios share (ZK19_BACKEND picks how, as for
// this module's own tests; the process backend needs a ZooKeeper jar, the
// container backend docker), runs the tests, and stops and removes
// everything they started, also on Ctrl-C.
//
//	func TestMain(m *testing.M) { locktest.Main(m) }
func Main(m *testing.M) { harness.KitMain(m) }

// Run runs every scenario against the recipe, each as a subtest of t named
// after it, and fails the subtest of a scenario whose verdict is Broken or
// NotShown, or differs from the one Expect gave for it: "got broke: …; want
// kept". NoFeature passes. name names the recipe in the log.
func Run(t *testing.T, name string, r Recipe, opts ...Option) {
	t.Helper()
	o := &options{}
	for _, f := range opts {
		f(o)
	}
	check(t, name, r, o, judgeInRun(o))
}

// judgeInRun fails a scenario's subtest as Run documents.
func judgeInRun(o *options) func(t *testing.T, res Result) {
	return func(t *testing.T, res Result) {
		t.Helper()
		want, expected := o.expect[res.Scenario]
		switch {
		case expected && res.Verdict != want:
			t.Errorf("scenario %s: got %s: %s; want %s (Expect)", res.Scenario, res.Verdict, res.Observation, want)
		case expected:
		case res.Verdict == Broken || res.Verdict == NotShown:
			t.Errorf("scenario %s: got %s: %s; want %s", res.Scenario, res.Verdict, res.Observation, Kept)
		}
	}
}

// Check is Run without judging: it runs the scenarios as subtests and
// returns every Result, in the order of Scenarios, failing nothing for a
// verdict. A table of verdicts is built from it.
func Check(t *testing.T, name string, r Recipe, opts ...Option) []Result {
	t.Helper()
	o := &options{}
	for _, f := range opts {
		f(o)
	}
	return check(t, name, r, o, nil)
}

// check runs the chosen scenarios for one Go recipe, the parallel ones side
// by side, and returns their Results in order; judge, if set, judges each
// in its subtest.
func check(t *testing.T, name string, r Recipe, o *options, judge func(*testing.T, Result)) []Result {
	t.Helper()
	chosen, err := o.chosen()
	if err != nil {
		t.Fatalf("%v", err)
	}
	col := goRecipe(name, r)
	results := make([]Result, len(chosen))
	var mu sync.Mutex
	t.Run("scenarios", func(t *testing.T) {
		for i, s := range chosen {
			results[i] = Result{Scenario: s.id, Recipe: name, Verdict: NotShown,
				Observation: "the scenario's test ended before a verdict (skipped or failed)"}
			t.Run(s.id, func(t *testing.T) {
				if s.parallel {
					t.Parallel()
				}
				res := playOne(t, s, s.server(t), col, defaultSkip)
				mu.Lock()
				results[i] = res
				mu.Unlock()
				if judge != nil {
					judge(t, res)
				}
			})
		}
	})
	return results
}

// defaultSkip skips t.
func defaultSkip(t zkserver.TB, why zh.Text) { t.Skipf("%s", why.En) }

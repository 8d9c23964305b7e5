package zkserver

import "github.com/zk19/zk19/internal/tb"

// TB is tb.TB: what the harness needs from a test.
type TB = tb.TB

// Scope is tb.Scope: a TB for TestMain and Examples.
type Scope = tb.Scope

// ScopeFailure is what a Scope panics with.
type ScopeFailure = tb.ScopeFailure

// NewScope returns a Scope whose temp dirs lie in the run dir, so the
// interrupt path (KillAll) and the next run's Reap remove them too.
func NewScope(name string) *Scope {
	return tb.NewScope(name, tb.Dirs{Make: newDir, Remove: removeDir})
}

// SafeName is tb.SafeName.
func SafeName(name string) string { return tb.SafeName(name) }

// Package zkserver starts real ZooKeeper servers and ensembles for the zk19
// evidence suite: as local java processes (the process backend), as Docker
// containers through testcontainers-go (the container backend), or by pointing
// at servers that already run (the external backend).
//
// Every constructor takes a TB (a *testing.T, or a Scope for examples and
// TestMain), calls Helper, registers Cleanup as soon as it holds anything,
// fails the test itself, and returns ready objects; the Try forms return
// the error instead, for goroutines other than the test's. Every wait is
// bounded and says what it last saw when it gives up. Every listener is on
// 127.0.0.1.
//
// Ryuk cannot run here, so the harness does its job. Every server is
// registered before it is made; server dirs live in one run dir named after
// the test process (pid and start time); containers carry the same owner
// label. KillAll, on interrupt, stops everything registered, waiting for
// creations in flight, and removes the run dir. internal/server/reaper's Reap, at
// the start of the next run, removes what a process that died without
// cleaning up left.
//
// It also carries a server's output into the test's log (LogWriter), draws
// the servers' ports and reads a process's sockets from /proc (FreePort,
// Sockets), finds the JDK the Java helpers run on (FindJDK), and is the
// TestMain of a package whose tests start servers (RunTests, RunExamples).
// Beside it, internal/server/zklinks puts proxies on an ensemble's
// server-to-server links.
package zkserver

import "github.com/zk19/zk19/internal/server/tb"

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

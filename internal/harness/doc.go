// Package harness is what every proof stands on, and knows no scene:
//
//   - main.go: Main, KitMain and BenchMain, the TestMains of the root, of
//     ./peers and of ./bench: backend, interrupts, reaper, shared server,
//     the record's header (claim E4) and the check that nothing was left.
//   - retell.go: Retell runs a root Example as the body of a Test, its
//     Scope acting for the Test (tb.For), and checks what it printed: the
//     Example is a diagram's one telling and states its claims' verdicts,
//     the Test is its record (S1, S2, Y2, L4, F1–F4, F6, F8, F10, F11).
//     RetellOn tells it again on another fenced resource, which the
//     Example opens with Resource (internal/fencescene's
//     RetellOnEachResource retells it on each).
//   - pool.go, expiry.go, helpers.go: the pool that lends servers to the
//     proofs (LeaseTrio, LeaseServer, Lease of a kind a scene declares with
//     NewKind, ExpiryServer for sessions that run out within seconds), the
//     Cluster fixture (Leader, HoldStream, ReleaseStream), a test's znode
//     root, Parallel and Within, the one bound of a scene's waits.
//   - sharedlog.go, external.go: the shared server's log, and the user's
//     own server (the external backend).
//
// The scenes build on it (internal/scene, internal/replicas,
// internal/fencescene); it imports none of them.
package harness

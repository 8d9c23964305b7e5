// Package harness is what every proof stands on, and knows no scene:
//
//   - main.go: Main, KitMain and BenchMain, the TestMains of the root, of
//     ./peers and of ./bench: backend, interrupts, reaper, shared server,
//     the record's header (claim E4) and the check that nothing was left.
//   - retell.go: an Example that Tests retell is one call of Tell with
//     its scene; the Example is a diagram's one telling and states its
//     claims' verdicts, and each Test that retells it (Retell) is its
//     record (S1, S2, Y2, L4, F1–F4, F6, F8, F10, F11). The scene runs
//     once per go test (per run under -count=N), for the first to take
//     it, on a Scope that acts for a record of its own (tb.For): every
//     Test that retells it, whatever -run selects and in whatever order,
//     takes a Telling it has not taken yet, waits for its one run
//     (sync.Once), gets its lines and attributes as its own and checks
//     what it printed against the Output comment. A scene prints with
//     its Scope's Printf, into its record, so the tellings of different
//     Examples run side by side, never on os.Stdout. go test runs the
//     Examples after the Tests, so the Example runner finds the telling
//     the Tests took already told: the Example prints that telling's
//     record (what its scene printed, and its steps and attributes on
//     standard error), not a run of its own, which would pay every
//     scene's waits (the fencing sequence's natural expiry, the 1675
//     window) a second time for the same observations; alone (go test
//     -run Example_x) it tells the scene itself. RetellOn tells it on
//     another fenced resource, which the Example opens with Resource
//     (internal/fencescene's RetellOnEachResource retells it on each):
//     the tellings of each kind are shared too, and the resource stays
//     open for a Test to inspect (Telling.Resource; F8 restarts it).
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

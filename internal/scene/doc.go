// Package scene holds the harness under the root's proofs (the TestMains,
// the server pool, Retell) and the lock scenes built on it, so that the
// root package reads as the article: each of its files is a section's
// Examples and Tests, and every step they take is a verb of this package
// or of the scenes built on it (internal/replicas, internal/fencescene).
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
//   - pool.go, helpers.go: the pool that lends servers to the proofs
//     (LeaseTrio, LeaseServer), the Cluster fixture (Leader, HoldStream,
//     ReleaseStream), a test's znode root, Parallel and Within, the one
//     bound of a scene's waits.
//   - contenders.go, witness.go, referee.go: the one lock Scene (NewScene,
//     Join, Session, HandOver): O, an observer that may change anything,
//     the test's lock parent and the bound of its lock calls; contenders
//     by name (Session, Locker, Witness, Log) and their acquisitions
//     (WaitsOn, Settled, Result); the witness that sees an acquisition from
//     the recipe's trace and from the wire; the referee that fails a test
//     on two holders at once. The fencing cast, the ACL scene, the election
//     and the lost-reply scene are Scenes with roles and verbs of their own.
//   - The three-server scenes of §1 and §2 (NewTrio, the ZOOKEEPER-1675
//     window) and their porcupine histories are internal/replicas'.
//   - lock.go, lostreply.go, acl.go: the election of L10, the lost create
//     and delete replies of §4 (NewLostReply, LoseCreate), the ACL scene of
//     A1.
//   - The fencing cast of §5, the resources under test and the
//     critical-section gate are internal/fencescene's.
//
// Every constructor takes a TB, registers its cleanup before it creates
// anything, and fails the test itself; every wait is bounded by Within or
// a claim's own constant and names the last state it saw.
package scene

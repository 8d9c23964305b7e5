// Package scene holds the lock scenes of the root's proofs, built on
// internal/proof/harness, so that the root package reads as the article: each of
// its files is a section's Examples and Tests, and every step they take is
// a verb of this package or of its neighbours (internal/proof/harness,
// internal/proof/replicas, internal/proof/fencescene).
//
//   - contenders.go, witness.go, referee.go: the one lock Scene (NewScene,
//     Join, Session, HandOver): O, an observer that may change anything,
//     the test's lock parent and the bound of its lock calls; contenders
//     by name (Session, Locker, Witness, Log) and their acquisitions
//     (WaitsOn, Settled, Result, WaitReturn); the witness that sees an
//     acquisition from the recipe's trace and from the wire; the referee
//     that fails a test on two holders at once. The fencing cast, the ACL
//     scene, the election and the lost-reply scene are Scenes with roles
//     and verbs of their own.
//   - lock.go, lostreply.go, acl.go: the election of L10, the lost create
//     and delete replies of §4 (NewLostReply, LoseCreate), the ACL scene of
//     A1.
//
// Every constructor takes a TB, registers its cleanup before it creates
// anything, and fails the test itself; every wait is bounded by
// harness.Within or a claim's own constant and names the last state it saw.
package scene

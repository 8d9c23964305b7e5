// Package harness is what every proof stands on, and knows no scene:
//
//   - main.go: Main, KitMain and BenchMain, the TestMains of the root, of
//     ./peers and of ./bench: backend, interrupts, reaper, shared server,
//     the record's header (claim E4) and the check that nothing was left.
//   - helpers.go: ExampleScope and EndExample, the frame of every
//     Example that proves a claim: the Example's body holds the diagram's
//     steps, its checks and its prints, and runs once per go test; its
//     lines and attributes go to standard error, where the record reads
//     them, and a cleanup that fails makes it fail.
//   - pool.go, expiry.go, helpers.go: the pool that lends servers to the
//     proofs (LeaseTrio, LeaseServer, LeaseWhenFree, ExpiryServer for
//     sessions that run out within seconds), the
//     Cluster fixture (Leader, HoldStream, ReleaseStream), a test's znode
//     root, Parallel and Within, the one bound of a scene's waits.
//   - sharedlog.go, external.go: the shared server's log, and the user's
//     own server (the external backend).
//
// The scenes build on it (internal/proof/scene, internal/proof/replicas,
// internal/proof/fencescene); it imports none of them.
package harness

// Package peers is the peer table as a conformance kit: every scenario in
// which a lock recipe can break (a stranger's child, a lost create reply,
// an expired session, a wrapped suffix, ...) run against every recipe:
// ours (package lock), go-zookeeper's zk.Lock, kazoo's Lock, Curator's
// InterProcessMutex, and any driver named in ZK19_PEERS. The scenarios
// are package locktest's, where a recipe written in Go takes them from its
// own module (locktest.Run); this package records their cells. Its tests
// prove no claim of the article; they show where each recipe keeps or
// breaks the guarantees the article asks of a lock.
//
//	go test -count=1 -v ./peers              # the table, on the process backend
//	go test -count=1 -v -run TestPeerLostCreateReply ./peers
//
// cmd/evidence reads the run and writes the table into EVIDENCE.md; see
// docs/peers.md, "Test your own lock recipe".
package peers

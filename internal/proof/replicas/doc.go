// Package replicas holds the scenes of the article's §1 and §2, on the
// replicas alone: the three-server Trio (a lagging follower whose leader
// stream is held; S1–S4, Y1 and Y3–Y9) and ZK1675, the five servers of the
// ZOOKEEPER-1675 window (Y2), with their clients, porcupine histories and
// the four-letter-word readings they judge by. It never touches the lock
// recipe. It leases its ensembles from internal/proof/harness's pool (TrioKind,
// and a five-server kind it declares) and waits within harness.Within.
package replicas

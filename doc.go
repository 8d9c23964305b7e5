// Package zk19 is the executable evidence for the article "分布式系统 19:
// ZooKeeper 一致性、锁配方与外部 fencing". It has no API: its Examples and
// Tests are the proofs, each named after the claim it proves, and
// `go test -v` prints the verification record. The claim IDs are those of
// testdata/claims.json.
//
// # Table of contents
//
// §6 Token domains (顺序号只在明确的锁域内比较)
//
//   - T3: czxid is not a unique token. TestT3_CzxidIsNotAUniqueToken
//
// Evidence (三个本机场景的证据)
//
//   - E1: loopback and ephemeral ports only. TestE1_ServersListenOnlyOnLoopback
//   - E4: the record names the backend, version and ensemble sizes. TestE4_RecordStartsWithServerVersionBackendAndSize
package zk19

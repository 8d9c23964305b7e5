// Command evidence turns the zk19 suite's run into EVIDENCE.md, the
// article's claim–evidence table, and keeps the claim index and the table
// of contents in doc.go in step with the root package's tests.
//
// Usage, from the module root:
//
//	go run ./cmd/evidence [-backend process|container|external] [-lang en|zh] [-o EVIDENCE.md] [-save run.json]
//	go run ./cmd/evidence -json run.json [-cmd 'the command that wrote it'] [-lang en|zh] [-o EVIDENCE.md]
//	go run ./cmd/evidence -doc
//	go run ./cmd/evidence -sync
//
// The first form runs "go test -count=1 -json ." for the root package
// (ZK19_BACKEND is passed through, or set by -backend), then, for proofs
// that name a test of another package of the module
// ("internal/server/faultproxy.TestX"), exactly those tests in their packages. The
// second form reads such a stream from a file. Both write EVIDENCE.md:
//
//   - a header: date; the commit the generator ran at (git rev-parse
//     HEAD) and whether the tree had changes (git status --porcelain, the
//     first five named); backend and server version from the record
//     header, Go version, the commands;
//   - a row per claim: its place in the article (§ and ¶), its verdict
//     (holds; holds, partly not run; refuted on 3.x; observed, differs from
//     the article's wording; not run; not shown), the decisive observation
//     and its proofs. Verdicts and observations are read from the test
//     attributes the proofs set (internal/proof/claims: zk19.evidence,
//     zk19.differs, and zk19.verdict.<claim> with "refuted" or
//     "not-shown"), which go test -json reports as "attr" events; an
//     Example's, which has no *testing.T, from the "=== ATTR" lines its
//     zkserver.Scope prints. A failed proof refutes a claim only when its
//     verdict on that claim says "refuted"; any other failure is "not
//     shown", with the reason. No wording of a log line decides anything;
//   - "How other recipes fare": the peer tests (TestPeer…), which prove no
//     claim and change no verdict: a row per scenario and a column per
//     recipe (ours, go-zookeeper's zk.Lock, kazoo's Lock; Curator's says why
//     it is absent), each cell read from the one observation a peer test
//     stated for it (see peers.go), then every peer test's result;
//   - "Not verified here" and "Source dependencies", from the index;
//   - per claim, its proofs' observations and, as context, its operations.
//
// With -lang zh (go run ./cmd/evidence -lang zh -o EVIDENCE.zh.md) the
// file is the article's appendix in Chinese, from the same verdicts
// (appendix.go): first the conclusion (the server this run used, why not
// the article's official 3.9.6, how many claims hold and which do not,
// linked to their rows); then 论断证据表, a table per section of the article
// under its own title, the rows in the article's order, each with the
// claim's sentence (§ ¶ 句), the article's 「terms」, the index's Chinese
// statement, the verdict, one decisive observation of at most 120
// characters (the index's decisive picks it where claims share proofs) and
// links to the claim's record and to its proofs' file:line; then 验证记录:
// each claim's record in the article's order, its logs and the diagrams
// folded in <details>, the peers, 未验证事项 and 源码依赖. Observations are
// in the Chinese their proofs stated (internal/proof/claims/zh), in the article's
// words (testdata/glossary.json). A sentence that reports the article's own
// run (the index's report, E4) is shown beside this run in both files, and
// counted with none of this run's verdicts.
//
// The record claim E4 is judged on the record itself as well: its header
// must come before the first test and name the backend, the server version
// and the ensemble sizes the claims need.
//
// The command exits 1 when any claim was not shown or was refuted, and still
// writes the file.
//
// -doc regenerates doc.go from testdata/claims.json and the positions of
// the proofs in the test files (claims.Index.TableOfContents): each claim's
// sentence, its Chinese and English statements, each proof's file:line.
// -sync first sets every claim's proof list to the root-package Tests and
// Examples that cite it, keeping entries for tests of other packages, then
// regenerates doc.go. Run -doc after moving a proof: the root package's
// TestDocTableOfContentsMatchesIndex compares doc.go byte for byte.
package main

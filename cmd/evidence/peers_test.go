package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/golden"
)

// peerRun parses a "go test -json" stream of peer tests.
func peerRun(t *testing.T, stream string) *Run {
	t.Helper()
	rn, err := parseRun(strings.NewReader(stream), fixtureModule)
	if err != nil {
		t.Fatal(err)
	}
	return rn
}

// fixedSources links the run's peer tests to made-up lines, so the golden
// does not move when peers_test.go does.
func fixedSources(rn *Run) map[string]string {
	out := map[string]string{}
	for i, name := range rn.Order {
		out[name] = fmt.Sprintf("peers_test.go#L%d", 100*(i+1))
	}
	return out
}

// TestKnownRunGivesKnownPeerTable: testdata/peers-run.json is a real run of
// the root package's peer tests (process backend, ZooKeeper 3.8.0),
// reduced to the lines the table reads; the section it gives is
// testdata/peers.golden.md (go test -run TestKnownRunGivesKnownPeerTable
// -update rewrites it).
func TestKnownRunGivesKnownPeerTable(t *testing.T) {
	b, err := os.ReadFile("testdata/peers-run.json")
	if err != nil {
		t.Fatal(err)
	}
	rn := peerRun(t, string(b))
	var got bytes.Buffer
	writePeers(&got, report{run: rn, peers: peers(rn), peerSrc: fixedSources(rn)}, english)
	if golden.FlagUpdate() {
		if err := os.WriteFile("testdata/peers.golden.md", got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/peers.golden.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the peer section differs from testdata/peers.golden.md:\n%s", got.String())
	}
	rows := peerTable(rn)
	if len(rows) < 17 {
		t.Errorf("%d scenarios; want at least 17 (14, and the bug trackers' of issue 22)", len(rows))
	}
	for _, r := range rows {
		for _, c := range peerColumns {
			if _, ok := r.Cells[c]; !ok {
				t.Errorf("scenario %s has no cell for %s: %s", r.ID, c, r.Missing[c])
			}
		}
		if c := r.Cells["ours"]; c.Verdict != cellKept {
			t.Errorf("scenario %s: ours %s (%s); the known run kept every guarantee", r.ID, c.Verdict, c.Outcome)
		}
	}
}

// A stream with one scenario whose kazoo subtest skipped, whose ours
// subtest failed before it logged a cell, a line that is not a cell, no
// Curator subtest, and a column no built-in recipe has (a driver of
// ZK19_PEERS named "mine").
const missingCellsRun = `{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX","Key":"zk19.evidence","Value":"peer x | scenario | a scenario"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX","Output":"=== ATTR  TestPeerX zk19.evidence peer x | scenario | a scenario\n"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX","Key":"zk19.evidence","Value":"peer x | kept"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX","Output":"=== ATTR  TestPeerX zk19.evidence peer x | kept\n"}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours","Output":"    peers_test.go:12: W: got waiting on \"\"; want waiting on H's n-0000000000\n"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours","Output":"    --- FAIL: TestPeerX/ours (0.10s)\n"}
{"Action":"fail","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours","Elapsed":0.1}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper","Key":"zk19.evidence","Value":"peer x | go-zookeeper v1.0.4 | broke | held [twice] | lock.go:7"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper","Output":"=== ATTR  TestPeerX/go-zookeeper zk19.evidence peer x | go-zookeeper v1.0.4 | broke | held [twice] | lock.go:7\n"}
{"Action":"pass","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper","Elapsed":0.1}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Output":"    kazoo.go:1: skipped: kazoo not installed: run scripts/setup (python3-kazoo)\n"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Output":"    --- SKIP: TestPeerX/kazoo (0.00s)\n"}
{"Action":"skip","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Elapsed":0}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/mine"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX/mine","Key":"zk19.evidence","Value":"peer x | mine 0.1 | kept | fine | -"}
{"Action":"pass","Package":"github.com/zk19/zk19","Test":"TestPeerX/mine","Elapsed":0.1}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX","Output":"--- FAIL: TestPeerX (0.20s)\n"}
{"Action":"fail","Package":"github.com/zk19/zk19","Test":"TestPeerX","Elapsed":0.2}
`

func TestMissingPeerCellsSayWhy(t *testing.T) {
	rn := peerRun(t, missingCellsRun)
	rows := peerTable(rn)
	if len(rows) != 1 || rows[0].ID != "x" || rows[0].Title != "a scenario" || len(rows[0].Cells) != 2 {
		t.Fatalf("rows %+v; want scenario x with its title and the cells of go-zookeeper and mine only", rows)
	}
	want := map[string]string{
		"ours":    `no observation: W: got waiting on ""; want waiting on H's n-0000000000`,
		"kazoo":   "not run: skipped: kazoo not installed: run scripts/setup (python3-kazoo)",
		"curator": "not run",
	}
	for recipe, why := range want {
		if got := rows[0].Missing[recipe]; got != why {
			t.Errorf("%s: got %q; want %q", recipe, got, why)
		}
	}
	var b bytes.Buffer
	writePeers(&b, report{run: rn, peers: peers(rn), peerSrc: map[string]string{"TestPeerX": "peers_test.go#L9"}}, english)
	for _, s := range []string{
		"In 1 scenario: ours (`lock`): 1 no cell; go-zookeeper v1.0.4 `zk.Lock`: 1 broke; kazoo `Lock`: 1 no cell; " +
			"Curator `InterProcessMutex`: 1 no cell; mine 0.1: 1 kept.",
		"| **x**: a scenario | no observation: W: got waiting on \"\"; want waiting on H's n-0000000000 | " +
			"**broke**: [held \\[twice\\]](peers_test.go#L9) — [lock.go:7](https://github.com/go-zookeeper/zk/blob/v1.0.4/lock.go#L7) | " +
			"not run: skipped: kazoo not installed: run scripts/setup (python3-kazoo) | not run | kept: [fine](peers_test.go#L9) |",
		// The line that is no cell is shown with the test, not lost.
		"| `TestPeerX` | fail (0.2s) | peer x \\| kept<br>failed: W: got waiting on",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the section lacks %q:\n%s", s, b.String())
		}
	}
}

// A stream whose cells, title and skip carry their Chinese, as the peer
// tests state them (zh.Say, claims.Skip).
const chineseCellsRun = `{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX","Key":"zk19.evidence","Value":"peer x | scenario | a scenario"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX","Key":"zk19.evidence.zh","Value":"peer x | scenario | 一个场景"}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours","Key":"zk19.evidence","Value":"peer x | ours | kept | waited behind it | -"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours","Key":"zk19.evidence.zh","Value":"peer x | ours | kept | 排在它之后等待 | -"}
{"Action":"pass","Package":"github.com/zk19/zk19","Test":"TestPeerX/ours","Elapsed":0.1}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper","Key":"zk19.evidence","Value":"peer x | go-zookeeper v1.0.4 | broke | held [twice] | lock.go:7"}
{"Action":"pass","Package":"github.com/zk19/zk19","Test":"TestPeerX/go-zookeeper","Elapsed":0.1}
{"Action":"run","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo"}
{"Action":"attr","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Key":"zk19.skip.zh","Value":"跳过：没有安装 kazoo"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Output":"    kazoo.go:1: skipped: kazoo not installed\n"}
{"Action":"output","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Output":"    --- SKIP: TestPeerX/kazoo (0.00s)\n"}
{"Action":"skip","Package":"github.com/zk19/zk19","Test":"TestPeerX/kazoo","Elapsed":0}
{"Action":"pass","Package":"github.com/zk19/zk19","Test":"TestPeerX","Elapsed":0.2}
`

// TestPeerCellsAreChineseInChinese: EVIDENCE.zh.md gives a scenario's
// title, a cell's outcome and a skip's reason in the Chinese the test
// stated beside them, and a cell without its Chinese as stated;
// EVIDENCE.md gives them in English.
func TestPeerCellsAreChineseInChinese(t *testing.T) {
	rn := peerRun(t, chineseCellsRun)
	src := map[string]string{"TestPeerX": "peers_test.go#L9"}
	var zh, en bytes.Buffer
	writePeers(&zh, report{run: rn, peers: peers(rn), peerSrc: src}, chinese)
	writePeers(&en, report{run: rn, peers: peers(rn), peerSrc: src}, english)
	for _, c := range []struct {
		out  *bytes.Buffer
		want string
	}{
		{&zh, "| **x**：一个场景 | 守住：[排在它之后等待](peers_test.go#L9) | **破坏**：[held \\[twice\\]](peers_test.go#L9) — " +
			"[lock.go:7](https://github.com/go-zookeeper/zk/blob/v1.0.4/lock.go#L7) | 未运行：跳过：没有安装 kazoo | 未运行 |"},
		{&en, "| **x**: a scenario | kept: [waited behind it](peers_test.go#L9) | **broke**: [held \\[twice\\]](peers_test.go#L9) — " +
			"[lock.go:7](https://github.com/go-zookeeper/zk/blob/v1.0.4/lock.go#L7) | not run: skipped: kazoo not installed | not run |"},
	} {
		if !strings.Contains(c.out.String(), c.want) {
			t.Errorf("the section lacks %q:\n%s", c.want, c.out.String())
		}
	}
}

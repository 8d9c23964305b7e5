package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/server/tb"
)

// streamT is a test that writes what it states and logs as "go test
// -json" events, as testing and test2json would: an attribute as its
// event and its "=== ATTR" line, a failure as a log line, then its end.
type streamT struct {
	tb.TB
	name   string
	events []event
}

func (s *streamT) Helper()      {}
func (s *streamT) Name() string { return s.name }
func (s *streamT) Attr(key, value string) {
	s.events = append(s.events, event{Action: "attr", Test: s.name, Key: key, Value: value},
		event{Action: "output", Test: s.name, Output: claims.AttrLine(s.name, key, value) + "\n"})
}
func (s *streamT) Errorf(format string, args ...any) {
	s.events = append(s.events, event{Action: "output", Test: s.name, Output: "    x_test.go:9: " + fmt.Sprintf(format, args...) + "\n"})
}
func (s *streamT) Fatalf(format string, args ...any) { s.Errorf(format, args...) }

// TestFailureLinesInChinese: a refuted and a not-shown proof, failing
// through claims.Refuted and a Judged wait (NotShown), give EVIDENCE.zh.md
// their failure lines in the catalogue's Chinese, in the verdict cell and
// among the decisive lines; EVIDENCE.md keeps them as logged.
func TestFailureLinesInChinese(t *testing.T) {
	ix, _ := fixture(t)
	var stream bytes.Buffer
	enc := json.NewEncoder(&stream)
	refuted := &streamT{name: "TestS2_StaleHistoryIsNotLinearizable"}
	claims.Refuted(refuted, "S2", "porcupine: got %v for the history with B's stale read; want not linearizable", history.Linearizable)
	notShown := &streamT{name: "TestY2_SyncInTheZK1675WindowReadsStale"}
	claims.Judged(notShown, "Y2", claims.NotShown).Fatalf("timeout hit after %v: waiting for %s; last seen: %s", "10s", "the proxy to hold A's create", "nothing held")
	for _, s := range []*streamT{refuted, notShown} {
		for _, ev := range append(s.events, event{Action: "fail", Test: s.name, Elapsed: 1}) {
			if err := enc.Encode(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	rn, err := parseRun(&stream, fixtureModule)
	if err != nil {
		t.Fatal(err)
	}
	h := Header{Version: "3.8.0"}
	r := report{ix: ix, run: rn, h: h, vs: verdicts(ix, rn, h), m: Meta{Generator: "evidence", Index: "claims.json"}}
	var en, zh bytes.Buffer
	renderMarkdown(&en, r, english)
	renderMarkdown(&zh, r, chinese)
	for _, want := range []string{
		`| 在 3.8.0 上被否定："S2 被否定：porcupine：带有 B 陈旧读的历史得到 可线性化；应为不可线性化" |`,
		"TestS2_StaleHistoryIsNotLinearizable 失败：S2 被否定：porcupine：带有 B 陈旧读的历史得到 可线性化；应为不可线性化",
		"| 未能证明：TestY2_SyncInTheZK1675WindowReadsStale：Y2 未能证明：等了 10s 后超时：等待 the proxy to hold A's create；最后所见：nothing held |",
		"TestY2_SyncInTheZK1675WindowReadsStale 失败：Y2 未能证明：等了 10s 后超时：",
	} {
		if !strings.Contains(zh.String(), want) {
			t.Errorf("EVIDENCE.zh.md lacks %q", want)
		}
	}
	for _, want := range []string{
		`| refuted on 3.8.0: "S2 refuted: porcupine: got linearizable for the history with B's stale read; want not linearizable" |`,
		"| not shown: TestY2_SyncInTheZK1675WindowReadsStale: Y2 not shown: timeout hit after 10s: waiting for the proxy to hold A's create; last seen: nothing held |",
	} {
		if !strings.Contains(en.String(), want) {
			t.Errorf("EVIDENCE.md lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("EVIDENCE.zh.md's rows:\n%s", rowsOf(zh.String(), "S2", "Y2"))
	}
}

// rowsOf are the table rows of md that begin with one of ids.
func rowsOf(md string, ids ...string) string {
	var out []string
	for _, l := range strings.Split(md, "\n") {
		for _, id := range ids {
			if l = rowAnchor.ReplaceAllString(strings.TrimPrefix(l, "| "), ""); strings.HasPrefix(l, id+" ") || strings.HasPrefix(l, id+"（") {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

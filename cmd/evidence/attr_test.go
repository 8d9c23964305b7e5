package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
)

// reworded returns stream with every line a test logged replaced by
// say(n, text), n counting those lines: go test's framing, attribute lines
// and the record header stay as they were.
func reworded(t *testing.T, stream []byte, say func(n int, text string) string) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("fixture line %q: %v", sc.Text(), err)
		}
		if o, ok := ev["Output"].(string); ok && ev["Action"] == "output" {
			l := strings.TrimRight(o, "\n")
			_, _, _, attr := claims.ParseAttr(l)
			if text := claims.LogText(l); text != "" && !attr && !strings.HasPrefix(text, "#") {
				n++
				ev["Output"] = "    x_test.go:1: " + say(n, text) + "\n"
			}
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// table is what a run decides per claim: the verdict kind and the stated
// observations (without what a failed proof failed with, which quotes the
// failure's own words).
func table(t *testing.T, ix *claims.Index, stream []byte) map[string]string {
	t.Helper()
	rn, err := parseRun(bytes.NewReader(stream), fixtureModule)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range verdicts(ix, rn, rn.header()) {
		out[v.Claim.ID] = v.Kind + " | " + strings.Join(observations(gather(v.Claim, rn).attrs), " / ")
	}
	return out
}

// TestRewordingChangesNoVerdict: the verdicts are the attributes' alone.
// The fixture run, with every logged line replaced by neutral words, or by
// words that used to mean a verdict ("S1 violated", "refuted", "check
// broken", "evidence:", "differs:"), gives the same table.
func TestRewordingChangesNoVerdict(t *testing.T) {
	ix, _ := fixture(t)
	stream, err := os.ReadFile("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	want := table(t, ix, stream)
	var ids []string
	for _, c := range ix.Claims {
		ids = append(ids, c.ID)
	}
	for name, say := range map[string]func(int, string) string{
		"neutral": func(n int, _ string) string { return fmt.Sprintf("line %d of the run", n) },
		"provocative": func(n int, _ string) string {
			id := ids[n%len(ids)]
			return fmt.Sprintf("%s violated: %s refuted; check broken; evidence: %d; differs: %d", id, id, n, n)
		},
	} {
		got := table(t, ix, reworded(t, stream, say))
		if !reflect.DeepEqual(got, want) {
			for id := range want {
				if got[id] != want[id] {
					t.Errorf("%s wording: claim %s: %s; want %s", name, id, got[id], want[id])
				}
			}
		}
	}
	// The fixture has a verdict of each kind, so the comparison covers them.
	kinds := map[string]bool{}
	for _, row := range want {
		k, _, _ := strings.Cut(row, " | ")
		kinds[k] = true
	}
	for _, k := range []string{Holds, Partly, Differs, Refuted, NotRun, NotShown} {
		if !kinds[k] {
			t.Errorf("the fixture has no claim that %s; want one of each kind", k)
		}
	}
}

// attrStream is a small run: a Test proving F1-F3 whose F2 is refuted, a
// Test whose fault proxy failed (not-shown) before it observed something
// that would refute its claim, a Test that fails without a verdict
// attribute, and an Example whose Scope printed its attributes.
const attrStream = `{"Action":"run","Test":"TestF1toF3"}
{"Action":"attr","Test":"TestF1toF3","Key":"zk19.evidence","Value":"A's late write accepted=true"}
{"Action":"output","Test":"TestF1toF3","Output":"=== ATTR  TestF1toF3 zk19.evidence A's late write accepted=true\n"}
{"Action":"output","Test":"TestF1toF3","Output":"\u0016=== ATTR  TestF1toF3 zk19.evidence a value too long "}
{"Action":"output","Test":"TestF1toF3","Output":"for test2json's framing\n"}
{"Action":"attr","Test":"TestF1toF3","Key":"zk19.verdict.F2","Value":"refuted"}
{"Action":"output","Test":"TestF1toF3","Output":"=== ATTR  TestF1toF3 zk19.verdict.F2 refuted\n"}
{"Action":"output","Test":"TestF1toF3","Output":"    f_test.go:9: F2: A's late write got accepted=true; want refused\n"}
{"Action":"output","Test":"TestF1toF3","Output":"--- FAIL: TestF1toF3 (1.00s)\n"}
{"Action":"fail","Test":"TestF1toF3","Elapsed":1}
{"Action":"run","Test":"TestR2_X"}
{"Action":"attr","Test":"TestR2_X","Key":"zk19.verdict.R2","Value":"not-shown"}
{"Action":"output","Test":"TestR2_X","Output":"=== ATTR  TestR2_X zk19.verdict.R2 not-shown\n"}
{"Action":"output","Test":"TestR2_X","Output":"    p_test.go:7: R2 not shown: the proxy forwarded the create reply\n"}
{"Action":"attr","Test":"TestR2_X","Key":"zk19.verdict.R2","Value":"refuted"}
{"Action":"output","Test":"TestR2_X","Output":"=== ATTR  TestR2_X zk19.verdict.R2 refuted\n"}
{"Action":"output","Test":"TestR2_X","Output":"    p_test.go:8: R2: session 0x2 after reconnecting; want 0x1\n"}
{"Action":"output","Test":"TestR2_X","Output":"--- FAIL: TestR2_X (1.00s)\n"}
{"Action":"fail","Test":"TestR2_X","Elapsed":1}
{"Action":"run","Test":"TestL4_X"}
{"Action":"output","Test":"TestL4_X","Output":"    l_test.go:7: L4 violated: B's release: got connection closed; want nil\n"}
{"Action":"output","Test":"TestL4_X","Output":"--- FAIL: TestL4_X (1.00s)\n"}
{"Action":"fail","Test":"TestL4_X","Elapsed":1}
{"Action":"run","Test":"Example_x1"}
{"Action":"output","Test":"Example_x1","Output":"=== RUN   Example_x1\n"}
{"Action":"output","Test":"Example_x1","Output":"=== ATTR  Example_x1 zk19.evidence two nodes carry A's GUID\n"}
{"Action":"output","Test":"Example_x1","Output":"=== ATTR  Example_x1 zk19.verdict.X1 refuted\n"}
{"Action":"output","Test":"Example_x1","Output":"    Example_x1: FATAL: X1: got 1 node; want 2\n"}
{"Action":"output","Test":"Example_x1","Output":"--- FAIL: Example_x1 (1.00s)\n"}
{"Action":"fail","Test":"Example_x1","Elapsed":1}
{"Action":"output","Output":"=== ATTR  TestMain zk19.verdict.E3 refuted\n"}
{"Action":"output","Output":"E3: 1 server still runs after the suite\n"}
{"Action":"output","Output":"FAIL\n"}
{"Action":"fail","Elapsed":4}
`

// TestVerdictAttributesNameTheClaimAndTheCause: refuted only where a
// proof's first verdict on that claim says so, with the line it logged
// after it; every other failure is not shown, with its reason; an Example's and
// TestMain's attributes are read from their record lines, as is one too
// long for test2json's framing; an attribute event and the line go test
// prints for it count once.
func TestVerdictAttributesNameTheClaimAndTheCause(t *testing.T) {
	ix := &claims.Index{Claims: []claims.Claim{
		{ID: "F1", Proof: []string{"TestF1toF3"}},
		{ID: "F2", Proof: []string{"TestF1toF3"}},
		{ID: "R2", Proof: []string{"TestR2_X"}},
		{ID: "L4", Proof: []string{"TestL4_X"}},
		{ID: "X1", Proof: []string{"Example_x1"}},
		{ID: "E3", Proof: []string{"TestR2_X"}},
	}}
	rn, err := parseRun(strings.NewReader(attrStream), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ kind, text string }{
		"F1": {NotShown, "not shown: TestF1toF3: F2: A's late write got accepted=true; want refused"},
		"F2": {Refuted, `refuted on 3.8.0: "F2: A's late write got accepted=true; want refused"`},
		"R2": {NotShown, "not shown: TestR2_X: R2 not shown: the proxy forwarded the create reply"},
		// "violated" in a message means nothing: no verdict attribute.
		"L4": {NotShown, "not shown: TestL4_X: L4 violated: B's release: got connection closed; want nil"},
		"X1": {Refuted, `refuted on 3.8.0: "FATAL: X1: got 1 node; want 2"`},
		"E3": {Refuted, `refuted on 3.8.0: "E3: 1 server still runs after the suite"`},
	}
	got := byID(verdicts(ix, rn, Header{Version: "3.8.0"}))
	for id, w := range want {
		if v := got[id]; v.Kind != w.kind || v.Text != w.text {
			t.Errorf("claim %s: %s / %s\nwant       %s / %s", id, v.Kind, v.Text, w.kind, w.text)
		}
	}
	if d := got["F1"].Decisive; len(d) != 3 || d[0] != "A's late write accepted=true" || d[1] != "a value too long for test2json's framing" {
		t.Errorf("F1 decisive %q; want each evidence once (the long one from its line), then the failure", d)
	}
	if d := got["X1"].Decisive; len(d) == 0 || d[0] != "two nodes carry A's GUID" {
		t.Errorf("X1 decisive %q; want the Example's evidence from its Scope's line", d)
	}
}

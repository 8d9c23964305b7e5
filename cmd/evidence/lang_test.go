package main

import (
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
)

// TestEnsembleSizesInChinese: the record header's ensemble sizes read in
// Chinese in EVIDENCE.zh.md and unchanged in EVIDENCE.md.
func TestEnsembleSizesInChinese(t *testing.T) {
	in := "3 servers (S1 Y1); 5 servers (Y2); standalone (L1 E3)"
	if got, want := chinese.sizes(in), "3 台服务器 (S1 Y1); 5 台服务器 (Y2); 单机 (L1 E3)"; got != want {
		t.Fatalf("got %q; want %q", got, want)
	}
	if got := english.sizes(in); got != in {
		t.Fatalf("got %q; want %q unchanged", got, in)
	}
}

// TestLegendPairsEachWordWithItsMeaning: the legend under the evidence
// table gives each verdict word its own meaning, in both languages, and
// the attribute a refuted or not-shown proof sets next to its word. The
// English legend once shifted its words by one (the refuted word named
// "every proof ran and passed").
func TestLegendPairsEachWordWithItsMeaning(t *testing.T) {
	for _, l := range []*lang{english, chinese} {
		var b strings.Builder
		writeLegend(&b, report{}, l)
		var items []string
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "- **") {
				items = append(items, line)
			}
		}
		want := []struct{ kind, meaning, attr string }{
			{Holds, "every proof", ""},
			{Partly, "skipped", ""},
			{Refuted, "3.x", claims.VerdictKey("<claim>") + " " + claims.VerdictRefuted},
			{Differs, claims.AttrDiffers, ""},
			{NotRun, "skipped", ""},
			{NotShown, "", claims.VerdictKey("<claim>") + " " + claims.VerdictNotShown},
			{Documentary, "", ""},
		}
		if l.zh {
			want[0].meaning, want[1].meaning, want[4].meaning = "每个证明", "其余跳过", "跳过"
		}
		if len(items) != len(want) {
			t.Fatalf("zh=%v: got %d legend items; want %d:\n%s", l.zh, len(items), len(want), b.String())
		}
		for i, w := range want {
			word := l.word(w.kind)
			if !strings.Contains(items[i], "**"+word) && !strings.Contains(items[i], word+"**") {
				t.Errorf("zh=%v: legend item %d got %q; want it to name %q", l.zh, i+1, items[i], word)
			}
			for _, s := range []string{w.meaning, w.attr} {
				if !strings.Contains(items[i], s) {
					t.Errorf("zh=%v: legend item for %q got %q; want it to say %q", l.zh, word, items[i], s)
				}
			}
		}
	}
}

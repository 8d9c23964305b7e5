package main

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zk19/zk19/internal/proof/claims"
)

// rowAnchor is the anchor that opens a claim's row.
var rowAnchor = regexp.MustCompile(`^<a id="[^"]*"></a>`)

// zhRows renders the Chinese file for ix and the fixture's run and returns
// it with its table rows by their first cell's ID.
func zhRows(t *testing.T, ix *claims.Index) (string, map[string][]string) {
	t.Helper()
	_, rn := fixture(t)
	h := rn.header()
	var b bytes.Buffer
	renderMarkdown(&b, report{ix: ix, run: rn, h: h, vs: verdicts(ix, rn, h), peers: peers(rn),
		m: Meta{Generator: "go run ./cmd/evidence -lang zh", Index: "testdata/claims.json", GoVersion: "go1.26"}}, chinese)
	rows := map[string][]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(l, "| ") || !strings.HasSuffix(l, " |") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), " | ")
		id, _, _ := strings.Cut(rowAnchor.ReplaceAllString(cells[0], ""), "（")
		rows[id] = cells
	}
	return b.String(), rows
}

// TestChineseTablesNameEveryClaim: with the module's own index, the
// Chinese file has its two parts, a row per claim in 论断证据表 with the
// claim's sentence and its Chinese statement, and a row per documentary
// item in 未验证事项 with its Chinese subject and reason.
func TestChineseTablesNameEveryClaim(t *testing.T) {
	ix, err := claims.Load("../../testdata/claims.json")
	if err != nil {
		t.Fatal(err)
	}
	md, rows := zhRows(t, ix)
	at := func(s string) int { return strings.Index(md, s) }
	if !(0 < at("\n## 论断证据表\n") && at("\n## 论断证据表\n") < at("\n## 验证记录\n") &&
		at("\n## 验证记录\n") < at("\n### 未验证事项\n") && at("\n### 未验证事项\n") < at("\n### 源码依赖\n")) {
		t.Errorf("the parts are not 论断证据表, then 验证记录 with 未验证事项 and 源码依赖:\n%s", md)
	}
	for _, c := range ix.Claims {
		r := rows[c.ID]
		if len(r) != 7 || r[1] != c.Locator().String() || r[2] != termsOf(c) || r[3] != cell(c.Zh) {
			t.Errorf("claim %s: row %q; want its locator %s, its terms and its Chinese statement", c.ID, r, c.Locator())
		}
		if len(r) == 7 && utf8.RuneCountInString(html.UnescapeString(r[5])) > rowObservation {
			t.Errorf("claim %s: its row's observation %q has more than %d characters", c.ID, r[5], rowObservation)
		}
		if !strings.Contains(md, fmt.Sprintf("\n##### %s（%s）：", c.ID, c.Locator())) {
			t.Errorf("claim %s: no record under 各论断的记录", c.ID)
		}
	}
	for _, d := range ix.Documentary {
		if r := rows[d.ID]; len(r) != 5 || r[1] != d.Locator().String() || r[3] != cell(d.Zh) || r[4] != cell(d.ReasonZh) {
			t.Errorf("documentary %s: row %q; want its locator, Chinese subject and reason", d.ID, r)
		}
	}
	for _, s := range ix.Sources {
		if !strings.Contains(md, "| "+cell(s.RoleZh)+" |") {
			t.Errorf("source %s: its Chinese role is not in 源码依赖", s.Code)
		}
	}
}

// TestChineseVerdictWords: each kind of verdict of the fixture's run has
// its Chinese word, followed by what the English cell says after its own.
func TestChineseVerdictWords(t *testing.T) {
	ix, _ := fixture(t)
	for i := range ix.Claims {
		ix.Claims[i].Sentence, ix.Claims[i].Zh = 1, "中文"+ix.Claims[i].ID
	}
	md, rows := zhRows(t, ix)
	for id, want := range map[string]string{
		"S1": "成立",
		"S2": `在 3.8.0 上被否定："S2 被否定：porcupine 说陈旧的历史可线性化`,
		"Y2": "未运行：跳过：外部后端不能注入故障",
		"Y4": "已观察到，与原文措辞不同（3.8.0）",
		"L3": "未能证明：TestL3_EachWaiterWatchesOnlyItsPredecessor：它在本次运行中没有结果",
		"R1": "成立，部分未运行：TestY2_SyncInTheZK1675WindowReadsStale：跳过：",
		"X1": "未能证明：索引中没有证明它的 Test 或 Example",
	} {
		if r := rows[id]; len(r) != 7 || !strings.HasPrefix(r[4], want) || r[3] != "中文"+id {
			t.Errorf("claim %s: row %q; want its verdict to begin %q", id, r, want)
		}
	}
	if w := "`TestS1_PlainReadOnLaggingFollowerIsStale`（通过，2.5s）"; !strings.Contains(rows["S1"][6], w) {
		t.Errorf("S1's proofs %q; want %s", rows["S1"][6], w)
	}
	if w := "- 结论（共 13 条论断，服务器 3.8.0）：成立 4 条；成立，部分未运行 1 条；已观察到，与原文措辞不同 1 条；被否定 2 条；未运行 1 条；未能证明 4 条\n"; !strings.Contains(md, w) {
		t.Errorf("the counts are not %q:\n%s", w, md)
	}
	if w := "\n原文的措辞：the fixture article says it cannot"; !strings.Contains(md, w) {
		t.Errorf("Y4's record lacks the article's wording (differsZh, else differs) %q", w)
	}
}

// TestChineseObservationsAreTheProofsOwn: an observation a proof stated
// with its Chinese beside it (claims.Evidence with an entry in internal/proof/claims/zh)
// appears in Chinese in EVIDENCE.zh.md's claim table and unchanged in
// English; one without stays as stated.
func TestChineseObservationsAreTheProofsOwn(t *testing.T) {
	run := &Run{Results: map[string]*result{}, PkgEnded: true}
	run.Results["TestX"] = &result{Name: "TestX", Action: "pass", Attrs: []attr{
		{Key: claims.AttrEvidence, Value: "B read \"0\" on zk2", at: -1},
		{Key: claims.AttrEvidenceZh, Value: "B 在 zk2 上读到 \"0\"", at: -1},
		{Key: claims.AttrEvidence, Value: "no Chinese for this one", at: -1},
		{Key: claims.AttrDiffers, Value: "the failed update acted as a barrier", at: -1},
		{Key: claims.AttrDiffersZh, Value: "失败的更新起到了屏障的作用", at: -1},
	}}
	v := verdictFor(claims.Claim{ID: "S1", Proof: []string{"TestX"}}, run, Header{Version: "3.8.0"})
	wantEn := []string{`B read "0" on zk2`, "no Chinese for this one", "differs: the failed update acted as a barrier"}
	wantZh := []string{`B 在 zk2 上读到 "0"`, "no Chinese for this one", "与原文措辞不同：失败的更新起到了屏障的作用"}
	if !slices.Equal(v.Decisive, wantEn) || !slices.Equal(v.DecisiveZh, wantZh) {
		t.Errorf("got decisive %q and in Chinese %q; want %q and %q", v.Decisive, v.DecisiveZh, wantEn, wantZh)
	}
	if cell := decisiveCell(v, chinese); !strings.HasPrefix(cell, `B 在 zk2 上读到 "0"<br>`) {
		t.Errorf("got the Chinese cell %q; want the proof's Chinese first", cell)
	}
}

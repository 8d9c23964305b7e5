package claims

import (
	"reflect"
	"strings"
	"testing"
)

// article is a small article in the real one's shape: sections headed by
// their title lines, a sentence of two clauses joined by "；", one that
// ends at "！", a citation with no mark at a paragraph's end, a flowchart
// whose decision asks a question, whose last label holds a mark, and whose
// caption runs on from its last line.
var article = strings.Join([]string{
	"标题",
	"第一节",
	"甲在前驱删除后重新列出；乙继续等待。丙不再等！Hunt 等，§2.3",
	"flowchart TD",
	`A["取得 token"] --> C{"token 小于高水位？"}`,
	`C -- 是 --> R["拒绝；保留"]图注第一句。图注第二句？`,
	"第二节",
	"exists 返回空时立即重新列出。",
}, "\n")

// diagramEnd is where the fixture's diagram ends.
var diagramEnd = []Diagram{{Section: "§1", Paragraph: 2, Last: `R["拒绝；保留"]`}}

// TestSentences: sentences are counted as a reader counts them
// (CountRule): one ends at "。", "？" or "！" and not at "；", so two clauses
// joined by "；" are one sentence; after a diagram, from the text after it,
// and the marks inside the diagram (its decision's "？", its label's "；")
// end no sentence.
func TestSentences(t *testing.T) {
	ix := &Index{Sections: []Section{{Key: "§1", Title: "第一节"}, {Key: "§2", Title: "第二节"}}, Diagrams: diagramEnd}
	got, err := ix.Sentences(article)
	want := map[string][][]string{
		"§1": {
			{"甲在前驱删除后重新列出；乙继续等待。", "丙不再等！", "Hunt 等，§2.3"},
			{"图注第一句。", "图注第二句？"},
		},
		"§2": {{"exists 返回空时立即重新列出。"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Sentences = %q, %v; want %q", got, err, want)
	}
	d, err := ix.DiagramTexts(article)
	wantD := map[string]map[int]string{"§1": {2: "flowchart TD\n" + `A["取得 token"] --> C{"token 小于高水位？"}` + "\n" + `C -- 是 --> R["拒绝；保留"]`}}
	if err != nil || !reflect.DeepEqual(d, wantD) {
		t.Errorf("DiagramTexts = %v, %v; want %v", d, err, wantD)
	}
	twice := &Index{Sections: ix.Sections, Diagrams: []Diagram{{Section: "§1", Paragraph: 2, Last: "图注"}}}
	if _, err := twice.Sentences(article); err == nil || !strings.Contains(err.Error(), "occurs 2 times") {
		t.Errorf("Sentences with a diagram end that occurs twice: %v; want an error", err)
	}
}

// TestCountRule: a mark either ends a sentence or divides one, never both,
// and the rule that doc.go and the record print is one line in each
// language.
func TestCountRule(t *testing.T) {
	for _, r := range ClauseMarks {
		if strings.ContainsRune(SentenceMarks, r) {
			t.Errorf("SentenceMarks = %q holds %q, a mark of ClauseMarks %q: got a sentence that ends where a reader reads on; want each mark in one of the two", SentenceMarks, r, ClauseMarks)
		}
	}
	for _, rule := range []string{CountRule, CountRuleZh} {
		if strings.Contains(rule, "\n") || !strings.Contains(rule, SentenceMarks) || !strings.Contains(rule, ClauseMarks) {
			t.Errorf("count rule %q; want one line that names SentenceMarks %q and ClauseMarks %q", rule, SentenceMarks, ClauseMarks)
		}
	}
}

func TestCheckCitations(t *testing.T) {
	ix := &Index{
		Sections: []Section{{Key: "§1", Title: "第一节"}, {Key: "§2", Title: "第二节"}},
		Diagrams: diagramEnd,
		Claims: []Claim{
			{ID: "L4", Section: "§1", Paragraph: 1, Sentence: 1, Terms: []string{"前驱", "继续等待"}, Zh: "删除只通知下一位。"},
			{ID: "F6", Section: "§1", Paragraph: 2, Sentence: 0, Terms: []string{"高水位", "拒绝"}, Zh: "比较与写入不可分。"},
			{ID: "L8", Section: "§2", Paragraph: 1, Sentence: 1, Terms: []string{"exists", "立即重新列出"}, Zh: "空返回时马上再列。"},
		},
		Documentary: []Documentary{{ID: "D1", Section: "§1", Paragraph: 1, Sentence: 3, Terms: []string{"Hunt", "§2.3"}, Zh: "论文出处。", ReasonZh: "引用。"}},
	}
	if errs := ix.CheckEntries(); len(errs) != 0 {
		t.Errorf("CheckEntries = %v; want none", errs)
	}
	if errs, err := ix.CheckCitations(article); err != nil || len(errs) != 0 {
		t.Errorf("CheckCitations = %v, %v; want none", errs, err)
	}

	// A locator moved by one sentence, one past the paragraph's end, and a
	// Chinese text copied from the article are each caught.
	ix.Claims[0].Sentence = 2
	ix.Claims[1].Sentence = 3
	ix.Documentary[0].Paragraph = 2
	ix.Documentary[0].Sentence = 0
	ix.Documentary[0].Terms = []string{"图注第一句", "拒绝"}
	ix.Claims[2].Zh = "exists 返回空时立即重新列出"
	errs, err := ix.CheckCitations(article)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`claim L4 cites §1 ¶1 句2; term "前驱" is not in that sentence (it begins "丙不再等！")`,
		`claim L4 cites §1 ¶1 句2; term "继续等待" is not in that sentence (it begins "丙不再等！")`,
		`claim F6 cites §1 ¶2 句3; that paragraph has 2 sentences`,
		`claim L8: zh shares "返回空时立即重新" with the article; restate it, do not copy`,
		`documentary D1 cites §1 ¶2 图; term "图注第一句" is not in that sentence (it begins "C -- 是 --> R…")`,
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("CheckCitations with wrong locators = %q, %v; want %q", got, err, want)
	}
	if _, err := (&Index{Sections: []Section{{Key: "§3", Title: "第三节"}}}).CheckCitations(article); err == nil {
		t.Errorf("CheckCitations with a section the article lacks: no error")
	}
}

func TestCheckEntries(t *testing.T) {
	ix := &Index{
		Sections: []Section{{Key: "§1", Title: "第一节"}},
		Claims: []Claim{
			{ID: "S1", Section: "§1", Paragraph: 1, Sentence: -1, Terms: []string{"getData"}, Zh: "普通读", Differs: "the article says less"},
			{ID: "S2", Section: "§9", Paragraph: 1, Sentence: 1, Terms: []string{"前驱", "前驱", "一个很长的中文短语", "a，b", " x"}, Zh: "stale"},
		},
		Pending:     []Claim{{ID: "L12", Section: "§1", Paragraph: 1, Sentence: 1, Terms: []string{"a", "b"}}},
		Documentary: []Documentary{{ID: "D1", Section: "§1", Paragraph: 1, Sentence: 1, Terms: []string{"a", "b"}, Zh: "说明"}},
		Sources:     []Source{{Code: "Leader.processSync", Role: "answers sync"}},
	}
	var got []string
	for _, e := range ix.CheckEntries() {
		got = append(got, e.Error())
	}
	want := []string{
		`claim S1: cites §1 ¶1 句-1; want a section of the index, a paragraph from 1 and a sentence from 1 (0: the paragraph's diagram)`,
		`claim S1: 1 terms ["getData"]; want 2 to 4`,
		`claim S1: differsZh ""; want the Chinese text`,
		`claim S2: cites §9 ¶1 句1; want a section of the index, a paragraph from 1 and a sentence from 1 (0: the paragraph's diagram)`,
		`claim S2: 5 terms ["前驱" "前驱" "一个很长的中文短语" "a，b" " x"]; want 2 to 4`,
		`claim S2: term "前驱" twice`,
		`claim S2: term "一个很长的中文短语" has more than 6 Han characters: a term, not a clause`,
		`claim S2: term "a，b" holds one of "。？！；，、：": a term, not a clause`,
		`claim S2: term " x" is empty or has white space around it`,
		`claim S2: zh "stale"; want the Chinese text`,
		`pending claim L12: zh ""; want the Chinese text`,
		`documentary D1: reasonZh ""; want the Chinese text`,
		`source Leader.processSync: roleZh ""; want the Chinese text`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CheckEntries =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckCoverage: a sentence or a diagram that no entry cites is named;
// a sentence with two context lines is too, and one with a context line
// beside a claim; and a context line says what it is in the words the
// index allows.
func TestCheckCoverage(t *testing.T) {
	ix := &Index{
		Sections: []Section{{Key: "§1", Title: "第一节"}, {Key: "§2", Title: "第二节"}},
		Diagrams: diagramEnd,
		Claims:   []Claim{{ID: "L4", Section: "§1", Paragraph: 1, Sentence: 1, Terms: []string{"前驱", "继续等待"}, Zh: "删除只通知下一位。"}},
		Context: []Context{
			{Section: "§1", Paragraph: 1, Sentence: 2, Kind: KindPremise, Of: "L4", Terms: []string{"丙", "不再等"}},
			{Section: "§1", Paragraph: 1, Sentence: 3, Kind: KindCitation, Terms: []string{"Hunt", "§2.3"}},
			{Section: "§1", Paragraph: 2, Sentence: 0, Kind: KindDiagram, Terms: []string{"高水位", "拒绝"}},
			{Section: "§1", Paragraph: 2, Sentence: 1, Kind: KindReport, Terms: []string{"图注", "第一句"}},
			{Section: "§1", Paragraph: 2, Sentence: 2, Kind: KindQuestion, Terms: []string{"图注", "第二句"}},
			{Section: "§2", Paragraph: 1, Sentence: 1, Kind: KindAnswer, Of: "L4", Terms: []string{"exists", "返回空"}},
		},
	}
	for _, check := range []func() ([]error, error){
		func() ([]error, error) { return ix.CheckCoverage(article) },
		func() ([]error, error) { return ix.CheckCitations(article) },
		func() ([]error, error) { return ix.CheckEntries(), nil },
	} {
		if errs, err := check(); err != nil || len(errs) != 0 {
			t.Errorf("a covered article: %v, %v; want no error", errs, err)
		}
	}

	ix.Context[0].Of = "L9"                                           // a premise of no claim
	ix.Context[1].Of = "L4"                                           // a citation of a claim
	ix.Context[2].Kind = KindPremise                                  // sentence 0 is a diagram
	ix.Context[3].Kind = "aside"                                      // no such kind
	ix.Context[4] = ix.Context[5]                                     // §1 ¶2 句2 left, §2 ¶1 句1 twice
	ix.Context = append(ix.Context[:5], ix.Context[5], ix.Context[5]) // three times
	// a context line on L4's sentence
	ix.Context = append(ix.Context, Context{Section: "§1", Paragraph: 1, Sentence: 1, Kind: KindCitation, Terms: []string{"甲", "乙"}})
	var got []string
	for _, e := range ix.CheckEntries() {
		got = append(got, e.Error())
	}
	errs, err := ix.CheckCoverage(article)
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`context §1 ¶1 句2: a premise of "L9"; want the ID of a claim of the index`,
		`context §1 ¶1 句3: a citation of "L4"; only a premise or an answer belongs to a claim`,
		`context §1 ¶2 图: a premise of ""; want the ID of a claim of the index`,
		`context §1 ¶2 图: kind premise at sentence 0; a diagram is sentence 0, and sentence 0 is a diagram`,
		`context §1 ¶2 句1: kind "aside"; want one of citation, question, diagram, premise, answer, report`,
		`§1 ¶2 句2, which begins "图注第二句？", has no entry; want a claim, a documentary item or a context line`,
		`§2 ¶1 句1 has 3 context lines; want one`,
		`§1 ¶1 句1 has a context line (citation) and a claim or documentary item cites it too; want a context line only on a sentence nothing else cites`,
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("CheckEntries and CheckCoverage =\n%s\n%v\nwant\n%s", strings.Join(got, "\n"), err, strings.Join(want, "\n"))
	}
}

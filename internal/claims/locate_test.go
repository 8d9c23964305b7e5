package claims

import (
	"reflect"
	"strings"
	"testing"
)

// article is a small article in the real one's shape: sections headed by
// their title lines, a citation with no mark at a paragraph's end, a
// flowchart whose decision asks a question and whose caption runs on from
// its last line.
var article = strings.Join([]string{
	"标题",
	"第一节",
	"甲在前驱删除后重新列出；乙继续等待。Hunt 等，§2.3",
	"flowchart TD",
	`A["取得 token"] --> C{"token 小于高水位？"}`,
	`C -- 是 --> R["拒绝"]图注第一句。图注第二句？`,
	"第二节",
	"exists 返回空时立即重新列出。",
}, "\n")

func TestSentences(t *testing.T) {
	ix := &Index{Sections: []Section{{Key: "§1", Title: "第一节"}, {Key: "§2", Title: "第二节"}}}
	got, err := ix.Sentences(article)
	want := map[string][][]string{
		"§1": {
			{"甲在前驱删除后重新列出；", "乙继续等待。", "Hunt 等，§2.3"},
			{"flowchart TD\n" + `A["取得 token"] --> C{"token 小于高水位？"}` + "\n" + `C -- 是 --> R["拒绝"]图注第一句。`, "图注第二句？"},
		},
		"§2": {{"exists 返回空时立即重新列出。"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Sentences = %q, %v; want %q", got, err, want)
	}
}

func TestCheckCitations(t *testing.T) {
	ix := &Index{
		Sections: []Section{{Key: "§1", Title: "第一节"}, {Key: "§2", Title: "第二节"}},
		Claims: []Claim{
			{ID: "L4", Section: "§1", Paragraph: 1, Sentence: 1, Terms: []string{"前驱", "重新列出"}, Zh: "删除只通知下一位。"},
			{ID: "F6", Section: "§1", Paragraph: 2, Sentence: 1, Terms: []string{"高水位", "图注第一句"}, Zh: "比较与写入不可分。"},
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
	ix.Claims[2].Zh = "exists 返回空时立即重新列出"
	errs, err := ix.CheckCitations(article)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`claim L4 cites §1 ¶1 句2; term "前驱" is not in that sentence (it begins "乙继续等待。")`,
		`claim L4 cites §1 ¶1 句2; term "重新列出" is not in that sentence (it begins "乙继续等待。")`,
		`claim F6 cites §1 ¶2 句3; that paragraph has 2 sentences`,
		`claim L8: zh shares "返回空时立即重新" with the article; restate it, do not copy`,
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
			{ID: "S1", Section: "§1", Paragraph: 1, Sentence: 0, Terms: []string{"getData"}, Zh: "普通读", Differs: "the article says less"},
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
		`claim S1: cites §1 ¶1 句0; want a section of the index, a paragraph and a sentence from 1`,
		`claim S1: 1 terms ["getData"]; want 2 to 4`,
		`claim S1: differsZh ""; want the Chinese text`,
		`claim S2: cites §9 ¶1 句1; want a section of the index, a paragraph and a sentence from 1`,
		`claim S2: 5 terms ["前驱" "前驱" "一个很长的中文短语" "a，b" " x"]; want 2 to 4`,
		`claim S2: term "前驱" twice`,
		`claim S2: term "一个很长的中文短语" has more than 6 Han characters: a term, not a clause`,
		`claim S2: term "a，b" holds one of "。？；，、：": a term, not a clause`,
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

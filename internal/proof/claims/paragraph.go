package claims

import (
	"fmt"
	"strings"
)

// The count of the article's sentences (句), as a reader counts them.
const (
	// SentenceMarks are the marks that end a sentence of the article: the
	// full-width full stop, question mark and exclamation mark. (The
	// article writes no ASCII "." "?" "!" at a sentence's end.)
	SentenceMarks = "。？！"
	// ClauseMarks divide a sentence and end none: a reader reads on past
	// a semicolon, and so does Sentences.
	ClauseMarks = "；，、："
	// CountRule is the rule in one line, for doc.go's top line and the
	// record's: what 句 counts.
	CountRule = "句 (sentence) is counted as a reader counts it: a sentence ends at each of " + SentenceMarks +
		" and at none of " + ClauseMarks + "; 图 is a diagram, which is no sentence, and the marks inside it end none."
	// CountRuleZh is CountRule in Chinese, for the Chinese record.
	CountRuleZh = "“句”按读者的数法计数：句子在 " + SentenceMarks + " 处结束，在 " + ClauseMarks +
		" 处都不结束；“图”指图示，不算句子，图内的标点也不断句。"
)

// Paragraphs counts the paragraphs of each of the index's sections in the
// article's text, by section key: the lengths of what Sentences returns.
func (ix *Index) Paragraphs(article string) (map[string]int, error) {
	secs, err := ix.Sentences(article)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for k, ps := range secs {
		out[k] = len(ps)
	}
	return out, nil
}

// Sentences splits the article's text into the index's sections, their
// paragraphs and the paragraphs' sentences: out[key][p-1][s-1] is sentence
// s of paragraph p of the section with that key. This is what a claim's
// Paragraph and Sentence count. A diagram is not a sentence: DiagramTexts
// returns its text, which a locator cites as sentence 0.
//
// Paragraphs. The article file holds one paragraph per line. A section
// begins at the line that is exactly its Title and ends before the next
// section's title line (the last one at the end of the file). Its
// paragraphs are its non-empty lines after the title line, numbered from
// 1, except that a diagram and the text after it are one paragraph: a line
// that is "sequenceDiagram" or begins with "flowchart" opens a diagram, and
// every following line of diagram syntax belongs to it (one that begins
// with "participant ", "Note ", "subgraph " or is "end", or holds an arrow
// "-->", "->>" or ".->"). The article runs the paragraph's text on from the
// diagram's last line, where the index's Diagrams entry for the paragraph
// says the diagram ends (a label of a sequence diagram cannot be told from
// the text after it by its syntax).
//
// Sentences. A sentence ends with each of SentenceMarks (。？！) and
// includes it; a ClauseMarks mark (；，、：) ends none, so two clauses
// joined by "；" are one sentence, as a reader counts them (CountRule).
// What follows the last mark is one more sentence when it is not blank
// (the article ends some paragraphs with a source citation that has no
// mark). Sentences are trimmed of white space and numbered from 1. After a
// diagram they are counted from the end of the diagram, as a reader counts
// them: the marks inside the diagram (a decision's "？", a label's "；")
// end no sentence.
//
// It fails when a section's title is not a line of the article, the titles
// are not in the index's order, or a diagram has no Diagrams entry whose
// Last occurs once on its last line.
func (ix *Index) Sentences(article string) (map[string][][]string, error) {
	secs, err := ix.split(article)
	if err != nil {
		return nil, err
	}
	return sentencesOf(secs), nil
}

// DiagramTexts returns the text of each of the article's diagrams, by section
// key and paragraph number: the text a locator with sentence 0 cites.
func (ix *Index) DiagramTexts(article string) (map[string]map[int]string, error) {
	secs, err := ix.split(article)
	if err != nil {
		return nil, err
	}
	return diagramsOf(secs), nil
}

// sentencesOf is Sentences of an article split into paragraphs.
func sentencesOf(secs map[string][]para) map[string][][]string {
	out := map[string][][]string{}
	for k, ps := range secs {
		var ss [][]string
		for _, p := range ps {
			ss = append(ss, p.sentences)
		}
		out[k] = ss
	}
	return out
}

// diagramsOf is DiagramTexts of an article split into paragraphs.
func diagramsOf(secs map[string][]para) map[string]map[int]string {
	out := map[string]map[int]string{}
	for k, ps := range secs {
		for i, p := range ps {
			if p.diagram == "" {
				continue
			}
			if out[k] == nil {
				out[k] = map[int]string{}
			}
			out[k][i+1] = p.diagram
		}
	}
	return out
}

// para is one paragraph of the article: its diagram, if it opens with
// one, and its sentences.
type para struct {
	diagram   string
	sentences []string
}

func (ix *Index) split(article string) (map[string][]para, error) {
	lines := strings.Split(strings.ReplaceAll(article, "\r\n", "\n"), "\n")
	starts := make([]int, len(ix.Sections))
	from := 0
	for i, s := range ix.Sections {
		at := indexOf(lines, s.Title, from)
		if at < 0 {
			return nil, fmt.Errorf("section %s: no line of the article after line %d is its title %q", s.Key, from, s.Title)
		}
		starts[i], from = at, at+1
	}
	out := map[string][]para{}
	for i, s := range ix.Sections {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		var ps []para
		for n, p := range paragraphs(lines[starts[i]+1 : end]) {
			var pa para
			if len(p) > 1 || isDiagramStart(p[0]) {
				last := p[len(p)-1]
				d := ix.diagram(s.Key, n+1)
				if d == nil {
					return nil, fmt.Errorf("section %s paragraph %d is a diagram; the index names no end for it (diagrams: section, paragraph, last)", s.Key, n+1)
				}
				if c := strings.Count(last, d.Last); c != 1 || d.Last == "" {
					return nil, fmt.Errorf("section %s paragraph %d: the diagram's end %q occurs %d times on its last line; want once", s.Key, n+1, d.Last, c)
				}
				cut := strings.Index(last, d.Last) + len(d.Last)
				pa.diagram = strings.Join(append(p[:len(p)-1:len(p)-1], last[:cut]), "\n")
				p = []string{last[cut:]}
			}
			pa.sentences = sentences(p[0])
			ps = append(ps, pa)
		}
		out[s.Key] = ps
	}
	return out, nil
}

func (ix *Index) diagram(section string, paragraph int) *Diagram {
	for i := range ix.Diagrams {
		if d := &ix.Diagrams[i]; d.Section == section && d.Paragraph == paragraph {
			return d
		}
	}
	return nil
}

func isDiagramStart(l string) bool {
	return l == "sequenceDiagram" || strings.HasPrefix(l, "flowchart")
}

func indexOf(lines []string, title string, from int) int {
	for i := from; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == title {
			return i
		}
	}
	return -1
}

// paragraphs groups a section's lines into paragraphs, each its lines.
func paragraphs(lines []string) [][]string {
	var out [][]string
	inDiagram := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			inDiagram = false
		case isDiagramStart(l):
			inDiagram = true
			out = append(out, []string{l})
		case inDiagram && isDiagramLine(l):
			out[len(out)-1] = append(out[len(out)-1], l)
		default:
			inDiagram = false
			out = append(out, []string{l})
		}
	}
	return out
}

func isDiagramLine(l string) bool {
	for _, p := range []string{"participant ", "Note ", "subgraph "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return l == "end" || strings.Contains(l, "-->") || strings.Contains(l, "->>") || strings.Contains(l, ".->")
}

// sentences splits a paragraph's text into sentences.
func sentences(text string) []string {
	var out []string
	cur := ""
	for _, r := range text {
		cur += string(r)
		if strings.ContainsRune(SentenceMarks, r) {
			out = append(out, strings.TrimSpace(cur))
			cur = ""
		}
	}
	if s := strings.TrimSpace(cur); s != "" {
		out = append(out, s)
	}
	return out
}

package claims

import (
	"fmt"
	"strings"
)

// SentenceMarks are the marks that end a sentence of the article: 。, ？
// and ；.
const SentenceMarks = "。？；"

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
// Paragraph and Sentence count.
//
// Paragraphs. The article file holds one paragraph per line. A section
// begins at the line that is exactly its Title and ends before the next
// section's title line (the last one at the end of the file). Its
// paragraphs are its non-empty lines after the title line, numbered from
// 1, except that a diagram counts as one paragraph: a line that is
// "sequenceDiagram" or begins with "flowchart" opens it, and every
// following line of diagram syntax belongs to it (one that begins with
// "participant ", "Note ", "subgraph " or is "end", or holds an arrow
// "-->", "->>" or ".->"). The article runs its caption on from the
// diagram's last line, so the caption is part of that paragraph.
//
// Sentences. A paragraph's text is its lines joined by "\n". A sentence
// ends with each of SentenceMarks and includes it; what follows the last
// mark is one more sentence when it is not blank (the article ends some
// paragraphs with a source citation that has no mark). Sentences are
// trimmed of white space and numbered from 1. In a diagram, the marks on
// its lines before the last end no sentence (a flowchart's decision asks
// "…？"), so a diagram paragraph's first sentence is the diagram with its
// caption up to the first mark on the diagram's last line.
//
// It fails when a section's title is not a line of the article, or the
// titles are not in the index's order.
func (ix *Index) Sentences(article string) (map[string][][]string, error) {
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
	out := map[string][][]string{}
	for i, s := range ix.Sections {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		var ps [][]string
		for _, p := range paragraphs(lines[starts[i]+1 : end]) {
			ps = append(ps, sentences(p))
		}
		out[s.Key] = ps
	}
	return out, nil
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
		case l == "sequenceDiagram" || strings.HasPrefix(l, "flowchart"):
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

// sentences splits one paragraph, its lines, into sentences. Only the last
// line's marks count in a paragraph of several lines, which is a diagram.
func sentences(lines []string) []string {
	var out []string
	cur := strings.Join(lines[:len(lines)-1], "\n")
	if cur != "" {
		cur += "\n"
	}
	for _, r := range lines[len(lines)-1] {
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

package claims

import (
	"fmt"
	"strings"
)

// Paragraphs counts the paragraphs of each of the index's sections in the
// article's text, by section key. This is what a claim's Paragraph counts:
//
// The article file holds one paragraph per line. A section begins at the
// line that is exactly its Title and ends before the next section's title
// line (the last one at the end of the file). Its paragraphs are its
// non-empty lines after the title line, numbered from 1, except that a
// diagram counts as one paragraph: a line that is "sequenceDiagram" or
// begins with "flowchart" opens it, and every following line of diagram
// syntax belongs to it (one that begins with "participant ", "Note ",
// "subgraph " or is "end", or holds an arrow "-->", "->>" or ".->"). The
// article runs its caption on from the diagram's last line, so the caption
// is part of that paragraph.
//
// It fails when a section's title is not a line of the article, or the
// titles are not in the index's order.
func (ix *Index) Paragraphs(article string) (map[string]int, error) {
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
	out := map[string]int{}
	for i, s := range ix.Sections {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		out[s.Key] = countParagraphs(lines[starts[i]+1 : end])
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

func countParagraphs(lines []string) int {
	n := 0
	inDiagram := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			inDiagram = false
		case l == "sequenceDiagram" || strings.HasPrefix(l, "flowchart"):
			inDiagram = true
			n++
		case inDiagram && isDiagramLine(l):
		default:
			inDiagram = false
			n++
		}
	}
	return n
}

func isDiagramLine(l string) bool {
	for _, p := range []string{"participant ", "Note ", "subgraph "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return l == "end" || strings.Contains(l, "-->") || strings.Contains(l, "->>") || strings.Contains(l, ".->")
}

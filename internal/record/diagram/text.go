package diagram

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	// A test's own znode root, /zk19-<test name>: the same in every path of
	// one diagram, so it is drawn as "~".
	testRoot = regexp.MustCompile(`/zk19-[\w.-]+`)
	// A candidate's GUID: its first eight digits tell candidates apart.
	guid = regexp.MustCompile(`\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
)

// Sizes of the drawn text, in characters.
const (
	lineWidth = 48  // a label's line
	maxLabel  = 150 // a message or note; longer ones keep their head and tail
	longWord  = 16  // how far a word may run past lineWidth before it is split
)

// label is the text an event shows, as lines: the test root and GUIDs
// shortened, overlong text cut in the middle (the tail of a line often
// carries its value, "(reply dropped, xid=2)"), the repetition counted. The
// evidence is never cut.
func label(e event) []string {
	s := guid.ReplaceAllString(testRoot.ReplaceAllString(e.text, "~"), "$1...")
	if e.kind != proof {
		s = clip(s, maxLabel)
	}
	if e.times > 1 {
		s += fmt.Sprintf(" (%d times)", e.times)
	}
	return wrap(s, lineWidth)
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	words := strings.Fields(s)
	head, tail := []string{}, []string{}
	size := func(ws []string) int { return len([]rune(strings.Join(ws, " "))) }
	for len(words) > 0 && size(append(head, words[0])) <= n*2/3 {
		head, words = append(head, words[0]), words[1:]
	}
	for len(words) > 0 && size(append([]string{words[len(words)-1]}, tail...)) <= n-size(head)-5 {
		tail, words = append([]string{words[len(words)-1]}, tail...), words[:len(words)-1]
	}
	if len(head) == 0 { // one overlong word: cut it
		r := []rune(s)
		return string(r[:n*2/3]) + " ... " + string(r[len(r)-(n-n*2/3-5):])
	}
	return strings.Join(head, " ") + " ... " + strings.Join(tail, " ")
}

// wrap breaks s into lines of at most width characters at spaces; a word
// longer than width is split.
func wrap(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		for len([]rune(w)) > width+longWord {
			if cur != "" {
				lines, cur = append(lines, cur), ""
			}
			r := []rune(w)
			lines, w = append(lines, string(r[:width])), string(r[width:])
		}
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) <= width:
			cur += " " + w
		default:
			lines, cur = append(lines, cur), w
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

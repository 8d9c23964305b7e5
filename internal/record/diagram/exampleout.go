// This file reads what go test prints for a failed Example: the "got:"
// block (its output) and the "want:" block (its Output comment), and the
// first line where they differ. cmd/evidence quotes that line in a verdict,
// cmd/mutants in the line of the mutant the Example killed.

package diagram

import "strings"

// ExampleDiff is where a failed Example's output first differs from its Output
// comment: a line of one block and the same line of the other (empty when
// that block is shorter).
type ExampleDiff struct {
	Line      int // 1-based, within the blocks
	Got, Want string
}

// exampleOpens says which block a line exampleOpens: "got:", "want:" or "".
func exampleOpens(l string) string {
	switch t := strings.TrimSpace(l); t {
	case "got:", "want:":
		return t
	}
	return ""
}

// exampleEnds says whether a line exampleEnds a block: a test's framing ("--- FAIL: …",
// "=== RUN …") or the package's "FAIL".
func exampleEnds(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "=== ") || t == "FAIL"
}

// ExampleBlocks returns the "got:" and "want:" blocks of lines, without the
// lines that open them; both nil when lines hold none.
func ExampleBlocks(lines []string) (got, want []string) {
	var cur *[]string
	for _, l := range lines {
		switch {
		case exampleOpens(l) == "got:":
			cur = &got
		case exampleOpens(l) == "want:":
			cur = &want
		case exampleEnds(l):
			cur = nil
		case cur != nil:
			*cur = append(*cur, l)
		}
	}
	return got, want
}

// FirstExampleDiff returns the first line where the blocks differ; ok is false when
// they agree or lines hold none.
func FirstExampleDiff(lines []string) (d ExampleDiff, ok bool) {
	got, want := ExampleBlocks(lines)
	for i := 0; i < max(len(got), len(want)); i++ {
		d = ExampleDiff{Line: i + 1}
		if i < len(got) {
			d.Got = got[i]
		}
		if i < len(want) {
			d.Want = want[i]
		}
		if d.Got != d.Want {
			return d, true
		}
	}
	return ExampleDiff{}, false
}

// WithoutExampleOutput returns lines without the blocks and the lines that open them:
// printed output is no log line.
func WithoutExampleOutput(lines []string) []string {
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case exampleOpens(l) != "":
			in = true
			continue
		case exampleEnds(l):
			in = false
		}
		if !in {
			out = append(out, l)
		}
	}
	return out
}

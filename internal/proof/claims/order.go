package claims

import (
	"cmp"
	"path/filepath"
	"slices"
)

// FirstSentence returns the earliest sentence of the article among the
// claims of the index that ids names (pending claims and unknown IDs
// aside), and false when there is none: a function's place in the
// article's order.
func (ix *Index) FirstSentence(ids []string) (Locator, bool) {
	var first Locator
	found := false
	for _, id := range ids {
		c := ix.Claim(id)
		if c == nil {
			continue
		}
		if l := c.Locator(); !found || ix.CompareSentences(l, first) < 0 {
			first, found = l, true
		}
	}
	return first, found
}

// CompareSentences orders two sentences as the article does: by section
// (in the index's order), paragraph, then sentence, a diagram (sentence 0)
// before its paragraph's first sentence.
func (ix *Index) CompareSentences(a, b Locator) int {
	sec := func(key string) int {
		return slices.IndexFunc(ix.Sections, func(s Section) bool { return s.Key == key })
	}
	return cmp.Or(cmp.Compare(sec(a.Section), sec(b.Section)),
		cmp.Compare(a.Paragraph, b.Paragraph), cmp.Compare(a.Sentence, b.Sentence))
}

// TestOrder is one test file's Tests that cite a claim of the index, as
// the file has them (Got) and in the article's order (Want): by the
// earliest sentence among each Test's claims, ties kept in the file's
// order. At is each one's sentence.
type TestOrder struct {
	File      string // the file's base name
	Got, Want []string
	At        map[string]Locator
}

// TestOrders returns the TestOrder of each *_test.go file of dir that has
// a Test citing a claim, in file name order. Examples, Tests that cite no
// claim of the index (TestMain, the index's own tests, peer tests) and
// other functions have no place in it.
func (ix *Index) TestOrders(dir string) ([]TestOrder, error) {
	proofs, err := ScanProofs(dir)
	if err != nil {
		return nil, err
	}
	var out []TestOrder
	for _, p := range proofs {
		l, ok := ix.FirstSentence(p.Cites)
		if p.Example || !ok {
			continue
		}
		file := filepath.Base(p.Pos.Filename)
		if len(out) == 0 || out[len(out)-1].File != file {
			out = append(out, TestOrder{File: file, At: map[string]Locator{}})
		}
		o := &out[len(out)-1]
		o.Got = append(o.Got, p.Name)
		o.At[p.Name] = l
	}
	for i := range out {
		o := &out[i]
		o.Want = slices.Clone(o.Got)
		slices.SortStableFunc(o.Want, func(a, b string) int { return ix.CompareSentences(o.At[a], o.At[b]) })
	}
	return out, nil
}

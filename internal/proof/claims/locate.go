package claims

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules for an entry's terms and Chinese text.
const (
	// MinTerms and MaxTerms bound an entry's terms.
	MinTerms, MaxTerms = 2, 4
	// maxTermRunes and maxTermHan keep a term a term: a clause of the
	// article is longer, or holds a mark that ends or divides a clause.
	maxTermRunes, maxTermHan = 20, 6
	termBreaks               = SentenceMarks + ClauseMarks
	// CopiedRun is how many Chinese characters in a row (Han characters and
	// full-width punctuation) an entry's Chinese text may not share with
	// the article: the index restates, it does not copy.
	CopiedRun = 8
)

// entry is a claim, a pending claim or a documentary item, as the checks
// see it.
type entry struct {
	what string // "claim S1", "documentary D3"
	loc  Locator
	zh   []zhText
}

// zhText is one Chinese field of an entry.
type zhText struct{ field, text string }

func (ix *Index) entries() []entry {
	var out []entry
	for _, c := range ix.Claims {
		e := entry{"claim " + c.ID, c.Locator(), []zhText{{"zh", c.Zh}}}
		if c.Differs != "" {
			e.zh = append(e.zh, zhText{"differsZh", c.DiffersZh})
		}
		out = append(out, e)
	}
	for _, c := range ix.Pending {
		out = append(out, entry{"pending claim " + c.ID, c.Locator(), []zhText{{"zh", c.Zh}}})
	}
	for _, d := range ix.Documentary {
		out = append(out, entry{"documentary " + d.ID, d.Locator(), []zhText{{"zh", d.Zh}, {"reasonZh", d.ReasonZh}}})
	}
	for _, c := range ix.Context {
		out = append(out, entry{"context " + c.Locator().String(), c.Locator(), nil})
	}
	return out
}

// CheckEntries returns what is wrong with the locators and the Chinese
// texts of the index's claims, pending claims and documentary items,
// without the article: each names a section of the index, a paragraph and
// a sentence from 1, MinTerms to MaxTerms distinct terms (each at most 20
// characters and 6 Han characters, with no mark that ends or divides a
// clause) and its Chinese texts (zh; a documentary item's reasonZh, a
// claim's differsZh where it has differs), each holding Han characters.
// Every source dependency's roleZh holds Han characters too.
func (ix *Index) CheckEntries() []error {
	var errs []error
	bad := func(e entry, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", e.what, fmt.Sprintf(format, args...)))
	}
	for _, e := range ix.entries() {
		l := e.loc
		if ix.Section(l.Section) == nil || l.Paragraph < 1 || l.Sentence < 0 {
			bad(e, "cites %s; want a section of the index, a paragraph from 1 and a sentence from 1 (0: the paragraph's diagram)", l)
		}
		if n := len(l.Terms); n < MinTerms || n > MaxTerms {
			bad(e, "%d terms %q; want %d to %d", n, l.Terms, MinTerms, MaxTerms)
		}
		seen := map[string]bool{}
		for _, term := range l.Terms {
			if why := termProblem(term); why != "" {
				bad(e, "term %q %s", term, why)
			}
			if seen[term] {
				bad(e, "term %q twice", term)
			}
			seen[term] = true
		}
		for _, z := range e.zh {
			if hanCount(z.text) == 0 {
				bad(e, "%s %q; want the Chinese text", z.field, z.text)
			}
		}
	}
	claimIDs := map[string]bool{}
	for _, c := range ix.Claims {
		claimIDs[c.ID] = true
	}
	for _, c := range ix.Context {
		what := "context " + c.Locator().String()
		switch c.Kind {
		case KindPremise, KindAnswer:
			if !claimIDs[c.Of] {
				errs = append(errs, fmt.Errorf("%s: a %s of %q; want the ID of a claim of the index", what, c.Kind, c.Of))
			}
		case KindCitation, KindQuestion, KindDiagram, KindReport:
			if c.Of != "" {
				errs = append(errs, fmt.Errorf("%s: a %s of %q; only a premise or an answer belongs to a claim", what, c.Kind, c.Of))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: kind %q; want one of %s, %s, %s, %s, %s, %s", what, c.Kind, KindCitation, KindQuestion, KindDiagram, KindPremise, KindAnswer, KindReport))
		}
		if (c.Kind == KindDiagram) != (c.Sentence == 0) {
			errs = append(errs, fmt.Errorf("%s: kind %s at sentence %d; a diagram is sentence 0, and sentence 0 is a diagram", what, c.Kind, c.Sentence))
		}
	}
	for _, src := range ix.Sources {
		if hanCount(src.RoleZh) == 0 {
			errs = append(errs, fmt.Errorf("source %s: roleZh %q; want the Chinese text", src.Code, src.RoleZh))
		}
	}
	return errs
}

// termProblem says why term is not a term, or "".
func termProblem(term string) string {
	switch {
	case term == "" || strings.TrimSpace(term) != term:
		return "is empty or has white space around it"
	case utf8.RuneCountInString(term) > maxTermRunes:
		return fmt.Sprintf("is longer than %d characters", maxTermRunes)
	case hanCount(term) > maxTermHan:
		return fmt.Sprintf("has more than %d Han characters: a term, not a clause", maxTermHan)
	case strings.ContainsAny(term, termBreaks):
		return fmt.Sprintf("holds one of %q: a term, not a clause", termBreaks)
	}
	return ""
}

// CheckCitations returns what is wrong with the index's citations of the
// article's text: every claim, pending claim and documentary item cites a
// sentence that exists (Sentences), every one of its terms occurs in that
// sentence as written, and none of its Chinese texts shares CopiedRun
// Chinese characters in a row with the article. Its error is the
// article's: a section title it lacks.
func (ix *Index) CheckCitations(article string) ([]error, error) {
	secs, diagrams, err := ix.texts(article)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, e := range ix.entries() {
		l := e.loc
		ps := secs[l.Section]
		switch {
		case l.Paragraph < 1 || l.Paragraph > len(ps):
			errs = append(errs, fmt.Errorf("%s cites %s; the article's section %s has %d paragraphs", e.what, l, l.Section, len(ps)))
		case l.Sentence == 0 && diagrams[l.Section][l.Paragraph] == "":
			errs = append(errs, fmt.Errorf("%s cites %s; that paragraph has no diagram", e.what, l))
		case l.Sentence < 0 || l.Sentence > len(ps[l.Paragraph-1]):
			errs = append(errs, fmt.Errorf("%s cites %s; that paragraph has %d sentences", e.what, l, len(ps[l.Paragraph-1])))
		default:
			s := diagrams[l.Section][l.Paragraph]
			if l.Sentence > 0 {
				s = ps[l.Paragraph-1][l.Sentence-1]
			}
			for _, term := range l.Terms {
				if !strings.Contains(s, term) {
					errs = append(errs, fmt.Errorf("%s cites %s; term %q is not in that sentence (it begins %q)", e.what, l, term, begins(s)))
				}
			}
		}
		for _, z := range e.zh {
			if run := sharedRun(z.text, article, CopiedRun); run != "" {
				errs = append(errs, fmt.Errorf("%s: %s shares %q with the article; restate it, do not copy", e.what, z.field, run))
			}
		}
	}
	return errs, nil
}

// CheckCoverage returns a sentence of the article (or a diagram) that no
// claim, pending claim, documentary item or context entry cites, one error
// each, a sentence that more than one context entry cites, and a context
// entry on a sentence that a claim, pending claim or documentary item
// cites: every sentence has an entry, so a reader can tell a premise from
// a forgotten sentence, and a context line is the one entry of a sentence
// nothing else cites. Its error is Sentences'.
func (ix *Index) CheckCoverage(article string) ([]error, error) {
	secs, diagrams, err := ix.texts(article)
	if err != nil {
		return nil, err
	}
	type at struct {
		section         string
		paragraph, sent int
	}
	cited := map[at]int{}
	key := func(l Locator) at { return at{l.Section, l.Paragraph, l.Sentence} }
	for _, e := range ix.entries() {
		cited[key(e.loc)]++
	}
	contexts := map[at]int{}
	for _, c := range ix.Context {
		contexts[key(c.Locator())]++
	}
	var errs []error
	for _, sec := range ix.Sections {
		for p, ss := range secs[sec.Key] {
			if d := diagrams[sec.Key][p+1]; d != "" {
				l := Locator{Section: sec.Key, Paragraph: p + 1}
				if cited[key(l)] == 0 {
					errs = append(errs, fmt.Errorf("%s, the diagram that begins %q, has no entry; want a claim, a documentary item or a context line (kind diagram)", l, strings.SplitN(d, "\n", 3)[min(1, strings.Count(d, "\n"))]))
				}
			}
			for i, s := range ss {
				l := Locator{Section: sec.Key, Paragraph: p + 1, Sentence: i + 1}
				if cited[key(l)] == 0 {
					errs = append(errs, fmt.Errorf("%s, which begins %q, has no entry; want a claim, a documentary item or a context line", l, begins(s)))
				}
			}
		}
	}
	for _, c := range ix.Context {
		k := key(c.Locator())
		n := contexts[k]
		if n > 1 {
			errs = append(errs, fmt.Errorf("%s has %d context lines; want one", c.Locator(), n))
		}
		if n > 0 && cited[k] > n {
			errs = append(errs, fmt.Errorf("%s has a context line (%s) and a claim or documentary item cites it too; want a context line only on a sentence nothing else cites", c.Locator(), c.Line()))
		}
		contexts[k] = 0
	}
	return errs, nil
}

// texts returns the article's sentences and its diagrams' texts, from
// one split of the article.
func (ix *Index) texts(article string) (map[string][][]string, map[string]map[int]string, error) {
	secs, err := ix.split(article)
	if err != nil {
		return nil, nil, err
	}
	return sentencesOf(secs), diagramsOf(secs), nil
}

// begins is the start of a sentence, for a message: enough to find it.
func begins(s string) string {
	s = s[strings.LastIndex(s, "\n")+1:] // a diagram's sentence: its last line
	if r := []rune(s); len(r) > 12 {
		return string(r[:12]) + "…"
	}
	return s
}

// isChinese reports whether r is a Han character or full-width
// punctuation: what a copied Chinese clause is made of.
func isChinese(r rune) bool {
	return unicode.Is(unicode.Han, r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef) || r == '“' || r == '”'
}

func hanCount(s string) int {
	n := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			n++
		}
	}
	return n
}

// sharedRun returns the first n Chinese characters in a row of text that
// also occur in a row in article, or "".
func sharedRun(text, article string, n int) string {
	rs := []rune(text)
	for i := 0; i+n <= len(rs); i++ {
		w := rs[i : i+n]
		if !all(w, isChinese) {
			continue
		}
		if strings.Contains(article, string(w)) {
			return string(w)
		}
	}
	return ""
}

func all(rs []rune, f func(rune) bool) bool {
	for _, r := range rs {
		if !f(r) {
			return false
		}
	}
	return true
}

package claims

import (
	"fmt"
	"slices"
	"strings"
)

// GlossaryFile is the article's terms, relative to the module root.
const GlossaryFile = "testdata/glossary.json"

// Glossary is the article's words and the words the Chinese record must
// not use in their place (testdata/glossary.json).
type Glossary struct {
	About string `json:"about"`
	Terms []Term `json:"terms"`
}

// Term is one of the article's words, with the words that must not stand
// in for it.
type Term struct {
	// Article are the article's words, as it writes them.
	Article []string `json:"article"`
	// Pair are the record's own words, made as the article makes its word,
	// for what the article has no word for (持久资源 beside 内存资源).
	Pair []string `json:"pair,omitempty"`
	// Avoid are words the record must not use in their place; one inside
	// an Article word or an Allow form is no finding.
	Avoid []string `json:"avoid,omitempty"`
	// Allow are forms that contain an Avoid word and are still right (the
	// article's own quotation of the client's belief, “还持有锁”, closed by its quotation mark).
	Allow []string `json:"allow,omitempty"`
	// MustUse: the claims' Chinese statements use an Article word at least once.
	MustUse bool   `json:"mustUse,omitempty"`
	Where   string `json:"where"`
}

// LoadGlossary reads the glossary at path; an unknown field is an error.
func LoadGlossary(path string) (*Glossary, error) {
	var g Glossary
	if err := decodeFile(path, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// Misused returns, for each avoided word that text uses outside an
// article word and an allowed form, one finding: the word, the article's
// word for it, and the text around its first use.
func (g *Glossary) Misused(text string) []string {
	var out []string
	for _, t := range g.Terms {
		for _, bad := range t.Avoid {
			if at := firstOutside(text, bad, slices.Concat(t.Article, t.Pair, t.Allow)); at >= 0 {
				out = append(out, fmt.Sprintf("%q (the article says %s, %s) in …%s…", bad, strings.Join(t.Article, "/"), t.Where, around(text, at, len(bad))))
			}
		}
	}
	return out
}

// firstOutside is where text first uses bad outside every occurrence of
// the good words, or -1.
func firstOutside(text, bad string, good []string) int {
	for from := 0; ; {
		i := strings.Index(text[from:], bad)
		if i < 0 {
			return -1
		}
		i += from
		if !inside(text, i, len(bad), good) {
			return i
		}
		from = i + len(bad)
	}
}

// inside reports whether text[i:i+n] lies within an occurrence of one of
// the good words.
func inside(text string, i, n int, good []string) bool {
	for _, w := range good {
		for start := max(0, i+n-len(w)); start <= i && start+len(w) <= len(text); start++ {
			if text[start:start+len(w)] == w {
				return true
			}
		}
	}
	return false
}

// around is up to 30 bytes of text on each side of text[i:i+n], cut at
// whole characters.
func around(text string, i, n int) string {
	from, to := max(0, i-30), min(len(text), i+n+30)
	for from > 0 && !utf8Start(text[from]) {
		from--
	}
	for to < len(text) && !utf8Start(text[to]) {
		to++
	}
	return strings.ReplaceAll(text[from:to], "\n", " ")
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Unused returns the MustUse terms none of whose words texts use.
func (g *Glossary) Unused(texts []string) []string {
	all := strings.Join(texts, "\n")
	var out []string
	for _, t := range g.Terms {
		if !t.MustUse {
			continue
		}
		used := false
		for _, w := range t.Article {
			used = used || strings.Contains(all, w)
		}
		if !used {
			out = append(out, fmt.Sprintf("%s (%s)", strings.Join(t.Article, "/"), t.Where))
		}
	}
	return out
}

// ZhTexts are the index's Chinese texts: each claim's and documentary
// item's statement, its differs note and reason, each source's role, each
// keyed by where it is ("claim S1 zh").
func (ix *Index) ZhTexts() map[string]string {
	out := map[string]string{}
	for _, c := range ix.Claims {
		out["claim "+c.ID+" zh"] = c.Zh
		out["claim "+c.ID+" differsZh"] = c.DiffersZh
	}
	for _, d := range ix.Documentary {
		out["documentary "+d.ID+" zh"] = d.Zh
		out["documentary "+d.ID+" reasonZh"] = d.ReasonZh
	}
	for _, s := range ix.Sources {
		out["source "+s.Code+" roleZh"] = s.RoleZh
	}
	return out
}

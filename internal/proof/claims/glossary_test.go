package claims

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims/zh"
)

// TestTheChineseUsesTheArticlesWords: the zh catalogue and the Chinese
// fields of the index use none of the words the glossary says the article
// has its own word for (a regenerated EVIDENCE.zh.md is then clean of
// them; cmd/evidence checks the record itself), the claims' Chinese uses
// each word the glossary says it must, and every word of the glossary is
// the article's.
func TestTheChineseUsesTheArticlesWords(t *testing.T) {
	g, err := LoadGlossary("../../../" + GlossaryFile)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Load("../../../" + IndexPath)
	if err != nil {
		t.Fatal(err)
	}
	ix.ArticleFile = "../../../" + ix.ArticleFile
	texts := ix.ZhTexts()
	for k, v := range zh.Entries() {
		texts["catalogue "+k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(texts)) {
		for _, f := range g.Misused(texts[k]) {
			t.Errorf("%s: got %s; want the article's word", k, f)
		}
	}
	var statements []string
	for _, c := range ix.Claims {
		statements = append(statements, c.Zh)
	}
	for _, w := range g.Unused(statements) {
		t.Errorf("no claim's Chinese statement uses %s; want the article's word used", w)
	}
	CheckArticle(t, ix, func(article string) ([]error, error) {
		var errs []error
		for _, term := range g.Terms {
			for _, w := range term.Article {
				if !strings.Contains(article, w) {
					errs = append(errs, fmt.Errorf("glossary: the article has no %q; want only the article's words as its words", w))
				}
			}
		}
		for _, f := range g.Misused(article) {
			errs = append(errs, fmt.Errorf("glossary: the article itself uses %s", f))
		}
		return errs, nil
	})
}

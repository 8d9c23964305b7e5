package zk19_test

// The index's own tests: they hold the claim index (testdata/claims.json),
// the root package's Tests and Examples, the article and the table of
// contents in doc.go to each other. They read files only: no server, no
// Java, and they pass under -short. The index is kept in step by
// "go run ./cmd/evidence -sync"; these tests are the rules it must meet.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
)

// TestEveryClaimHasEvidence: the index names exactly the catalogue's
// claims, those whose proofs have not landed among its pending ones, each
// placed in a section of the index and proved by at least one
// Test or Example that exists and cites it (a root package test) or is
// named by the index alone (a test of another package, such as
// "internal/server/faultproxy.TestX"); every Test and Example here cites a claim
// of the index and is listed as its proof, except the peer tests
// (TestPeer…), which prove nothing and are in no proof list. The index's
// documentary items and source dependencies name what exists.
func TestEveryClaimHasEvidence(t *testing.T) {
	ix := claims.LoadClaimIndex(t)
	funcs := claims.ScanTests(t, ".")
	var keys []string
	for _, s := range ix.Sections {
		keys = append(keys, s.Key)
	}
	if want := []string{"§1", "§2", "§3", "§4", "§5", "§6", "§7", "§8"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("index sections are %v; want %v", keys, want)
	}
	indexed := claims.CheckCatalogue(t, ix)
	for _, c := range ix.Claims {
		claims.CheckClaimEntry(t, ix, c)
		claims.CheckProofList(t, c, funcs)
	}
	for _, c := range ix.Pending {
		claims.CheckClaimEntry(t, ix, c) // its proofs are planned, not there yet
	}
	claims.CheckEveryTestCites(t, funcs, indexed)
	claims.CheckDocumentary(t, ix)
	claims.CheckSources(t, ix)
	if !t.Failed() {
		n, peers := 0, 0
		for _, rf := range funcs {
			switch {
			case rf.Peer:
				peers++
			case !claims.MetaTests[rf.Name]:
				n++
			}
		}
		claims.Evidence(t, "%d claims, each proved by at least one of the %d Tests and Examples of the root package or a named test of another; %d peer tests prove none",
			len(ix.Claims), n, peers)
	}
}

// TestClaimsCiteTheirParagraphs: every claim, pending claim and
// documentary item of the index cites one sentence of the article
// (section, paragraph, sentence, counted as a reader counts them, by
// claims.CountRule: a sentence ends at 。？！, not at ；) with two to four
// terms that occur in that sentence as written, so a locator moved by one
// sentence fails, and so does a count that splits at ； again (33 claims
// and documentary items then miss a term of theirs); and its Chinese
// statement restates, sharing no claims.CopiedRun Chinese characters in a
// row with the article. The article is not in the repository; ZK19_ARTICLE
// names it, else the index's articleFile (relative to the module root) is
// read. The test skips only where that file does not exist, and says so;
// the index's own rules (claims.Index.CheckEntries) are checked first,
// article or not.
func TestClaimsCiteTheirParagraphs(t *testing.T) {
	ix := claims.LoadClaimIndex(t)
	for _, err := range ix.CheckEntries() {
		t.Error(err)
	}
	name := claims.CheckArticle(t, ix, ix.CheckCitations)
	if !t.Failed() {
		t.Logf("evidence: %d claims, %d pending and %d documentary statements cite sentences of %s that hold their terms",
			len(ix.Claims), len(ix.Pending), len(ix.Documentary), name)
	}
}

// TestEverySentenceHasAnEntry: every sentence of the article, and every
// diagram, has an entry in the index: a claim, a documentary item, or one
// line of context (a citation, a question, a diagram, a report of the
// article's own run, the premise of a claim, an exercise's answer), so
// that a reader can tell the premise of L8 from a sentence forgotten.
func TestEverySentenceHasAnEntry(t *testing.T) {
	ix := claims.LoadClaimIndex(t)
	name := claims.CheckArticle(t, ix, ix.CheckCoverage)
	if !t.Failed() {
		t.Logf("every sentence and diagram of %s has an entry: %d claims, %d documentary, %d context lines",
			name, len(ix.Claims), len(ix.Documentary), len(ix.Context))
	}
}

// TestDocTableOfContentsMatchesIndex: doc.go's package comment is the
// article's table of contents, exactly as claims.Index.TableOfContents
// generates it from the index and the positions of the proofs in the test
// files today: per section, each claim's sentence, its Chinese and English
// statements and its proofs with their file and line. A renamed claim, a
// moved locator or a proof that moved by a line fails it. Regenerate with
// "go run ./cmd/evidence -doc".
func TestDocTableOfContentsMatchesIndex(t *testing.T) {
	ix := claims.LoadClaimIndex(t)
	at, err := ix.ProofPositions(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ix.TableOfContents(at)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(claims.DocFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) == string(want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		g, w := "(end of file)", "(end of file)"
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s:%d: %q; the index and the tests give %q (regenerate: go run ./cmd/evidence -doc)", claims.DocFile, i+1, g, w)
		}
	}
}

// TestProofsFollowTheArticle keeps the root package in the article's
// order, on its page and in its files. A function's place is the earliest
// sentence (section, paragraph, sentence) among the claims of the index it
// cites, as claims.Index.FirstSentence finds it: a Test or Example that
// proves several claims stands at its first.
//
// Examples: pkg.go.dev lists package Examples by name, so sorted by name
// the root Examples must come in their places' order, the §1 diagram
// first; every Example cites a claim. And each body reads as its diagram's
// steps: it opens with no call that wraps the body in a function literal.
//
// Tests: in each file, the Tests that cite a claim come in their places'
// order, Tests of one place in any order (claims.Index.TestOrders). Tests
// that cite none (TestMain, these tests of the index) have no place and
// are not checked; nor are helpers, Examples and other declarations. The
// first Test out of order fails, with the one its place wants. To reorder,
// "go run ./cmd/evidence -reorder" moves the cited Tests among the places
// they fill in their file, each whole with its doc comment, and leaves
// everything else where it is; then it does as -sync.
func TestProofsFollowTheArticle(t *testing.T) {
	ix := claims.LoadClaimIndex(t)
	proofs := claims.ScanTests(t, ".")
	var names []string
	first := map[string]claims.Locator{}
	for _, p := range proofs {
		if !p.Example {
			continue
		}
		names = append(names, p.Name)
		if l, ok := ix.FirstSentence(p.Cites); ok {
			first[p.Name] = l
		}
	}
	if len(names) == 0 {
		t.Fatal("no root Example found")
	}
	checkExampleBodies(t)
	slices.Sort(names)
	prev := ""
	for _, name := range names {
		l, ok := first[name]
		if !ok {
			t.Errorf("%s proves no claim of the index; want every root Example cited", name)
			continue
		}
		if prev != "" && ix.CompareSentences(l, first[prev]) < 0 {
			t.Errorf("pkg.go.dev lists %s (%s) before %s (%s); want the article's order: rename one", prev, first[prev], name, l)
		}
		prev = name
	}
	t.Logf("root Examples in pkg.go.dev's order: %s", strings.Join(names, ", "))
	checkTestOrder(t, ix)
}

// checkTestOrder fails on the first Test out of the article's order in
// each root test file.
func checkTestOrder(t *testing.T, ix *claims.Index) {
	orders, err := ix.TestOrders(".")
	if err != nil {
		t.Fatal(err)
	}
	n, out := 0, 0
	for _, o := range orders {
		n += len(o.Got)
		for i := range o.Got {
			if g, w := o.Got[i], o.Want[i]; g != w {
				out++
				t.Errorf("%s: Test %d of %d in the article's order: got %s (%s); want %s (%s), whose claim the article states first (reorder: go run ./cmd/evidence -reorder)",
					o.File, i+1, len(o.Got), g, o.At[g], w, o.At[w])
				break
			}
		}
	}
	if n == 0 {
		t.Fatal("no root Test cites a claim of the index")
	}
	if out == 0 {
		t.Logf("%d root Tests in %d files, each file's in the order of its claims' sentences", n, len(orders))
	}
}

// checkExampleBodies: each root Example opens with its diagram's first
// step, not with a call that wraps its body in a function literal.
func checkExampleBodies(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Example_") || len(fd.Body.List) == 0 {
				continue
			}
			if es, ok := fd.Body.List[0].(*ast.ExprStmt); ok {
				if call, ok := es.X.(*ast.CallExpr); ok {
					for _, arg := range call.Args {
						if _, ok := arg.(*ast.FuncLit); ok {
							t.Errorf("%s: %s opens with a call that wraps its body in a function literal; want the diagram's steps in the body itself", fset.Position(fd.Pos()), fd.Name.Name)
						}
					}
				}
			}
		}
	}
}

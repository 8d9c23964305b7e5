package zk19_test

// The meta tests: they hold the claim index (testdata/claims.json), the root
// package's Tests and Examples, the article and the table of contents in
// doc.go to each other, and check claim E2 on the source. They read files
// only: no server, no Java, and they pass under -short.
//
// The index is kept in step by "go run ./cmd/evidence -sync" (proof lists
// from the tests, then doc.go); these tests are the rules it must meet.

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

	"github.com/zk19/zk19/internal/claims"
)

// TestEveryClaimHasEvidence: the index names exactly the catalogue's
// claims, those whose proofs have not landed among its pending ones, each
// placed in a section of the index and proved by at least one
// Test or Example that exists and cites it (a root package test) or is
// named by the index alone (a test of another package, such as
// "internal/faultproxy.TestX"); every Test and Example here cites a claim
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
// documentary item of the index cites one sentence of the article (section,
// paragraph, sentence, counted as claims.Sentences defines them) with two
// to four terms that occur in that sentence as written, so a locator moved
// by one sentence fails; and its Chinese statement restates, sharing no
// claims.CopiedRun Chinese characters in a row with the article. The
// article is not in the repository; ZK19_ARTICLE names it, else the index's
// articleFile (relative to the module root) is read. The test skips only
// where that file does not exist, and says so; the index's own rules
// (claims.Index.CheckEntries) are checked first, article or not.
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

// TestE2_NoSleepGuessesAWindow: no proof, and no step of a scene a proof
// plays (internal/scene, internal/chaos, ./peers), waits a guessed time for a
// window to open (claim E2, "三个本机场景的证据"). A wait on time alone
// (time.Sleep, a bare receive from time.After or a timer's channel, a select
// whose only cases are timers, a range over a ticker, time.AfterFunc) must
// be for a named constant of this package that is a session timeout. A
// bounded wait is a select with a real event beside its timer, or
// internal/wait and poll, which call no timer here. The check is first shown
// to refuse such waits in sources written for it.
func TestE2_NoSleepGuessesAWindow(t *testing.T) {
	claims.Open(t, "E2")
	t.Run("the check refuses waits on time alone", func(t *testing.T) {
		for _, tc := range claims.E2Bites {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x_test.go", "package x\nimport \"time\"\nconst aSessionTimeout = time.Second\n"+tc.Src, 0)
			if err != nil {
				t.Fatalf("%s: %v", tc.Name, err)
			}
			_, refused := claims.E2Scan(fset, []*ast.File{f}, []*ast.File{f})
			if (len(refused) > 0) != tc.Refused {
				claims.BrokenCheck(t, "E2", "%s: refused %q; want refused=%v", tc.Name, refused, tc.Refused)
			}
		}
	})
	// The root's proofs, and the rooms that hold their scenes' steps (the
	// fixtures, C1's workers, the peer table): in the root and ./peers the
	// test files, in the rooms every file.
	var allowed, refused []string
	files := 0
	for _, dir := range []string{".", "internal/scene", "internal/chaos", "peers"} {
		fset := token.NewFileSet()
		var all, scanned []*ast.File
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range names {
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", name, err)
			}
			all = append(all, f)
			if strings.HasSuffix(name, "_test.go") == (dir == "." || dir == "peers") {
				scanned = append(scanned, f)
			}
		}
		a, r := claims.E2Scan(fset, all, scanned)
		allowed, refused, files = append(allowed, a...), append(refused, r...), files+len(scanned)
	}
	for _, r := range refused {
		claims.Refuted(t, "E2", "%s", r)
	}
	for _, a := range allowed {
		t.Logf("%s", a)
	}
	if !t.Failed() {
		claims.Evidence(t, "%d waits on time alone in %d files of the proofs and their scenes, each for a named session-timeout constant; none guesses a window", len(allowed), files)
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

// TestExamplesFollowTheArticle keeps the root package's page in the
// article's order: pkg.go.dev lists package Examples by name, so sorted by
// name the root Examples must come in the order of the first sentence each
// proves (section, paragraph, sentence), the §1 diagram first. And each
// body reads as its diagram's steps: it opens with no call that wraps the
// body in a function literal.
func TestExamplesFollowTheArticle(t *testing.T) {
	ix := claims.LoadClaimIndex(t)
	section := map[string]int{}
	for i, s := range ix.Sections {
		section[s.Key] = i
	}
	type place struct{ sec, para, sent int }
	before := func(a, b place) bool {
		return a.sec < b.sec || a.sec == b.sec && (a.para < b.para || a.para == b.para && a.sent < b.sent)
	}
	first := map[string]place{}
	for _, c := range ix.Claims {
		p := place{section[c.Section], c.Paragraph, c.Sentence}
		for _, name := range c.Proof {
			if !strings.HasPrefix(name, "Example_") {
				continue
			}
			if q, ok := first[name]; !ok || before(p, q) {
				first[name] = p
			}
		}
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Example_") {
				continue
			}
			names = append(names, fd.Name.Name)
			if len(fd.Body.List) == 0 {
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
	if len(names) == 0 {
		t.Fatal("no root Example found")
	}
	slices.Sort(names)
	prev := ""
	for _, name := range names {
		p, ok := first[name]
		if !ok {
			t.Errorf("%s proves no claim of the index; want every root Example cited", name)
			continue
		}
		if prev != "" && before(p, first[prev]) {
			q := first[prev]
			t.Errorf("pkg.go.dev lists %s (%s ¶%d 句%d) before %s (%s ¶%d 句%d); want the article's order: rename one", prev, ix.Sections[q.sec].Key, q.para, q.sent, name, ix.Sections[p.sec].Key, p.para, p.sent)
		}
		prev = name
	}
	t.Logf("root Examples in pkg.go.dev's order: %s", strings.Join(names, ", "))
}

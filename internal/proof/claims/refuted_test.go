package claims

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// claimsPath is this package's import path.
const claimsPath = "github.com/zk19/zk19/internal/proof/claims"

// verdictsOutsideTheRoot returns, as file:line, every use of Refuted or
// RefutedNow (a call, or the function passed as a value) in f, which
// imports this package under whatever name.
func verdictsOutsideTheRoot(fset *token.FileSet, f *ast.File) []string {
	name := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == claimsPath {
			name = "claims"
			if im.Name != nil {
				name = im.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var at []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && (sel.Sel.Name == "Refuted" || sel.Sel.Name == "RefutedNow") {
			at = append(at, fset.Position(sel.Pos()).String()+": "+name+"."+sel.Sel.Name)
		}
		return true
	})
	return at
}

// eachSource parses every non-test Go file under root, leaving out testdata,
// hidden folders and the folders skip names (by their path below root),
// and hands each to visit; a file that does not parse fails t.
func eachSource(t *testing.T, root string, skip func(rel string) bool, visit func(*token.FileSet, *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, p); skip(rel) || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRefutationsAreTheRootsOwn: a scene in internal/ returns what it
// observed, and the proof in the root's test files judges it; no file of
// internal/ states a refutation itself, save this package (C1's checker in
// internal/proof/chaos returns findings, and the root states them). A scene may
// still say "not shown" about its own setup.
// The scan is first shown to find such uses in a source written for it.
func TestRefutationsAreTheRootsOwn(t *testing.T) {
	src := `package x
import c "` + claimsPath + `"
func f(t T) { c.Refuted(t, "L1", "got"); wait(c.Judged(t, "L1", c.RefutedNow)); c.NotShown(t, "L1", "setup") }`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := verdictsOutsideTheRoot(fset, f); len(got) != 2 {
		t.Fatalf("the scan found %q in a source with a call of Refuted and RefutedNow passed as a value; want both and nothing else", got)
	}
	root := filepath.Join("..", "..", "..", "internal")
	scanned := 0
	eachSource(t, root, func(rel string) bool { return rel == "proof/claims" }, func(fset *token.FileSet, f *ast.File) {
		scanned++
		for _, at := range verdictsOutsideTheRoot(fset, f) {
			t.Errorf("%s: got a refutation stated in internal/; want the scene to return what it observed and the root's proof to judge it", at)
		}
	})
	if scanned == 0 {
		t.Fatalf("scanned no Go file under %s", root)
	}
}

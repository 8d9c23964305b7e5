package housecheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// misnamed returns, as file:line: name, every exported function, method,
// type, constant or variable declared in the non-test Go files under dir
// whose doc comment does not start with its own name (Go's convention: a
// doc comment is a sentence about the name it documents). A grouped
// declaration's own comment counts; one that has none is documented by the
// group's.
func misnamed(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	check := func(name string, doc *ast.CommentGroup) {
		if doc == nil || !ast.IsExported(name) {
			return
		}
		text := doc.Text()
		for _, lead := range []string{"A ", "An ", "The "} {
			text = strings.TrimPrefix(text, lead)
		}
		if !strings.HasPrefix(text, name) {
			first, _, _ := strings.Cut(strings.TrimSpace(doc.Text()), " ")
			out = append(out, fset.Position(doc.Pos()).String()+": "+name+" (its comment starts with "+first+")")
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				check(d.Name.Name, d.Doc)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						doc := s.Doc
						if doc == nil && len(d.Specs) == 1 {
							doc = d.Doc
						}
						check(s.Name.Name, doc)
					case *ast.ValueSpec:
						if len(s.Names) == 1 && (s.Doc != nil || len(d.Specs) == 1) {
							doc := s.Doc
							if doc == nil {
								doc = d.Doc
							}
							check(s.Names[0].Name, doc)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocCommentsStartWithTheirName: every exported name of cmd/,
// internal/, lock/, fence/, locktest/ and zktest/ whose declaration has a
// doc comment is named first in it ("ExpireA cuts A off", not "expireA cuts
// A off", a comment left from the unexported name it had). The check is first shown to find
// such a comment in testdata.
func TestDocCommentsStartWithTheirName(t *testing.T) {
	if got := misnamed(t, filepath.Join("testdata", "doc")); len(got) != 2 {
		t.Fatalf("got %q in testdata/doc; want its two misnamed comments (a function's and a type's)", got)
	}
	root := filepath.Join("..", "..", "..")
	for _, dir := range trees {
		for _, m := range misnamed(t, filepath.Join(root, dir)) {
			t.Errorf("%s; want the comment to start with the name it documents", m)
		}
	}
}

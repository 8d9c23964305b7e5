// This file measures functions: Long lists the function declarations
// of a tree's non-test Go files that are longer than a bound, counted from
// the line of "func" to the line of the closing brace. Its test holds cmd/,
// internal/, lock/ and fence/ to 60 lines.

package housecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Func is one function declaration and its length in lines.
type Func struct {
	File  string // slash-separated, relative to the root given to Long
	Line  int
	Name  string // Recv.Name for a method
	Lines int
}

// Long returns the functions of the non-test .go files under root/dir
// (testdata and hidden directories below it aside) longer than max lines,
// longest first.
func Long(root, dir string, max int) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	top := filepath.Join(root, dir)
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != top && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, long(fset, filepath.ToSlash(rel), f, max)...)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Lines > out[j].Lines })
	return out, err
}

func long(fset *token.FileSet, file string, f *ast.File, max int) []Func {
	var out []Func
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := end - start + 1; n > max {
			out = append(out, Func{File: file, Line: start, Name: name(fd), Lines: n})
		}
	}
	return out
}

func name(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

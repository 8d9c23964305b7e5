package housecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// modulePath reads the module path from root's go.mod.
func modulePath(root string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(gomod), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}

// addImports notes what f imports of the module, as a test file or not,
// and whether a non-test file declares anything.
func (p *Package) addImports(f *ast.File, module string, test bool) {
	into := p.Code
	if test {
		into = p.Tests
	} else if hasNonImportDecl(f) {
		p.HasCode = true
	}
	for _, s := range f.Imports {
		path, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue
		}
		switch {
		case path == module:
			path = "."
		case strings.HasPrefix(path, module+"/"):
			path = strings.TrimPrefix(path, module+"/")
		default:
			continue
		}
		if path != p.Dir {
			into[path] = true
		}
	}
}

func hasNonImportDecl(f *ast.File) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
			return true
		}
	}
	return false
}

// Uses is what places a package among the layers: its code's imports, or,
// for a package whose non-test files declare nothing (the root, peers,
// bench: they are their tests), its tests' imports.
func (p *Package) Uses() map[string]bool {
	if p.HasCode {
		return p.Code
	}
	return p.Tests
}

// Layers puts each package one layer above the highest it uses (Uses),
// a package that uses none of the module on layer 0.
func (ix *Index) Layers() map[string]int {
	layer := map[string]int{}
	var place func(dir string, seen map[string]bool) int
	place = func(dir string, seen map[string]bool) int {
		if l, ok := layer[dir]; ok {
			return l
		}
		p := ix.ByDir[dir]
		if seen[dir] || p == nil { // a cycle through tests, or not a package here
			return 0
		}
		seen[dir] = true
		l := 0
		for q := range p.Uses() {
			l = max(l, place(q, seen)+1)
		}
		layer[dir] = l
		return l
	}
	for dir := range ix.ByDir {
		place(dir, map[string]bool{})
	}
	return layer
}

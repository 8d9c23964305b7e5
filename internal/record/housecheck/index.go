package housecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Package is what one directory of the module declares, its test files
// included: the names at package level, and the fields and methods of each
// type (interface methods as well).
type Package struct {
	Dir     string // relative to the module root, "." for the root
	Name    string // the package clause, without _test
	Top     map[string]bool
	Types   map[string]bool
	Members map[string]map[string]bool // type name → field and method names
	Embeds  map[string][]string        // type name → the types it embeds

	// What it imports of the module, by directory, from its code and
	// from its tests; and whether its non-test files declare anything.
	Code, Tests map[string]bool
	HasCode     bool

	// CodeLines is the lines of its non-test files (as wc -l counts
	// them); Command, whether they are package main.
	CodeLines int
	Command   bool
}

// Index is every package of the module, by directory and by name.
type Index struct {
	Module string // the module path, from go.mod
	ByDir  map[string]*Package
	ByName map[string][]*Package
}

// Load parses every .go file under root, skipping testdata, hidden
// directories and nested modules (a directory with a go.mod of its own).
func Load(root string) (*Index, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	ix := &Index{Module: module, ByDir: map[string]*Package{}, ByName: map[string][]*Package{}}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, path, d)
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		test := strings.HasSuffix(path, "_test.go")
		p := ix.add(filepath.ToSlash(rel), f, test)
		if !test {
			p.CodeLines += fset.File(f.Pos()).LineCount()
			p.Command = f.Name.Name == "main"
		}
		return nil
	})
	return ix, err
}

func skipDir(root, path string, d fs.DirEntry) error {
	if path == root {
		return nil
	}
	name := d.Name()
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir // a module of its own (tools/d2svg)
	}
	return nil
}

func (ix *Index) add(dir string, f *ast.File, test bool) *Package {
	p := ix.ByDir[dir]
	if p == nil {
		p = &Package{Dir: dir, Top: map[string]bool{}, Types: map[string]bool{},
			Members: map[string]map[string]bool{}, Embeds: map[string][]string{},
			Code: map[string]bool{}, Tests: map[string]bool{}}
		ix.ByDir[dir] = p
	}
	p.addImports(f, ix.Module, test)
	if p.Name == "" {
		p.Name = strings.TrimSuffix(f.Name.Name, "_test")
		ix.ByName[p.Name] = append(ix.ByName[p.Name], p)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			p.addFunc(d)
		case *ast.GenDecl:
			p.addGen(d)
		}
	}
	return p
}

func (p *Package) addFunc(d *ast.FuncDecl) {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		p.Top[d.Name.Name] = true
		return
	}
	p.member(receiverType(d.Recv.List[0].Type), d.Name.Name)
}

func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func (p *Package) member(typ, name string) {
	if p.Members[typ] == nil {
		p.Members[typ] = map[string]bool{}
	}
	p.Members[typ][name] = true
}

func (p *Package) addGen(d *ast.GenDecl) {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.ValueSpec:
			for _, n := range s.Names {
				p.Top[n.Name] = true
			}
		case *ast.TypeSpec:
			p.Top[s.Name.Name] = true
			p.Types[s.Name.Name] = true
			p.addFields(s.Name.Name, s.Type)
		}
	}
}

func (p *Package) addFields(typ string, e ast.Expr) {
	var fields *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 { // embedded: its name is its type's
			if n := receiverType(f.Type); n != "" {
				p.Embeds[typ] = append(p.Embeds[typ], n)
				p.member(typ, n)
			} else if sel, ok := f.Type.(*ast.SelectorExpr); ok {
				p.member(typ, sel.Sel.Name)
			}
			continue
		}
		for _, n := range f.Names {
			p.member(typ, n.Name)
		}
	}
}

// HasMember says whether typ, declared in p, has a field or method name,
// its own or promoted from a type it embeds that p declares.
func (p *Package) HasMember(typ, name string) bool {
	seen := map[string]bool{}
	var has func(string) bool
	has = func(t string) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		if p.Members[t][name] {
			return true
		}
		for _, e := range p.Embeds[t] {
			if has(e) {
				return true
			}
		}
		return false
	}
	return has(typ)
}

// Declares says whether p declares name at package level or as a field or
// method of one of its types.
func (p *Package) Declares(name string) bool {
	if p.Top[name] {
		return true
	}
	for _, m := range p.Members {
		if m[name] {
			return true
		}
	}
	return false
}

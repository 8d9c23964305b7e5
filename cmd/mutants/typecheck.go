package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"time"
)

// A mutant can compile in a schema and not alone: a removed call that was
// the only use of a variable leaves it unused, but the schema keeps the
// call. So every mutant of a schema is first type-checked alone, its file
// mutated in its package, against the export data of the package's
// imports (go list -export); one that does not type-check is run as
// before, on a go test build of its own, which reports it "does not
// build" with the compiler's words.

// typeChecker type-checks a target package with one file mutated.
type typeChecker struct {
	root    string
	exports map[string]string      // import path → export data file
	pkgs    map[string]*checkedPkg // package dir (slash, relative) → its files
	imp     types.ImporterFrom
	fset    *token.FileSet
}

// checkedPkg is a package's import path and parsed non-test files.
type checkedPkg struct {
	path  string
	files map[string]*ast.File // file (relative to the root) → syntax
	order []string
}

// newTypeChecker lists the export data of the dirs' packages and their
// dependencies (building what the build cache lacks).
func newTypeChecker(ctx context.Context, r *runner, dirs []string) (*typeChecker, error) {
	args := []string{"list", "-deps", "-export", "-json=ImportPath,Export,Dir,GoFiles"}
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = r.root
	cmd.Env = r.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w: %s", err, lastLines(stderr.String(), 3))
	}
	tc := &typeChecker{root: r.root, exports: map[string]string{}, pkgs: map[string]*checkedPkg{}, fset: token.NewFileSet()}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Export, Dir string
			GoFiles                 []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		tc.exports[p.ImportPath] = p.Export
		rel, err := filepath.Rel(r.root, p.Dir)
		if err != nil || !contains(dirs, filepath.ToSlash(rel)) {
			continue
		}
		cp := &checkedPkg{path: p.ImportPath, files: map[string]*ast.File{}}
		for _, f := range p.GoFiles {
			name := path.Join(filepath.ToSlash(rel), f)
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				return nil, err
			}
			if cp.files[name], err = parser.ParseFile(tc.fset, name, src, parser.SkipObjectResolution); err != nil {
				return nil, err
			}
			cp.order = append(cp.order, name)
		}
		tc.pkgs[filepath.ToSlash(rel)] = cp
	}
	tc.imp = importer.ForCompiler(tc.fset, "gc", func(p string) (io.ReadCloser, error) {
		e := tc.exports[p]
		if e == "" {
			return nil, fmt.Errorf("no export data of %s", p)
		}
		return os.Open(e)
	}).(types.ImporterFrom)
	return tc, nil
}

// check type-checks m's package with m made; nil if it type-checks.
func (tc *typeChecker) check(m Mutant) error {
	cp := tc.pkgs[path.Dir(m.File)]
	if cp == nil || cp.files[m.File] == nil {
		return fmt.Errorf("%s: not a file of a listed package", m.File)
	}
	src, err := os.ReadFile(filepath.Join(tc.root, filepath.FromSlash(m.File)))
	if err != nil {
		return err
	}
	mf, err := parser.ParseFile(tc.fset, m.File, m.Apply(src), parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	files := make([]*ast.File, 0, len(cp.order))
	for _, f := range cp.order {
		if f == m.File {
			files = append(files, mf)
		} else {
			files = append(files, cp.files[f])
		}
	}
	return checkFiles(tc.imp, cp.path, tc.fset, files)
}

// checkFiles type-checks the files of package path; its first error.
func checkFiles(imp types.Importer, path string, fset *token.FileSet, files []*ast.File) error {
	var first error
	conf := types.Config{Importer: imp, Error: func(err error) {
		if first == nil {
			first = err
		}
	}}
	_, _ = conf.Check(path, fset, files, nil)
	return first
}

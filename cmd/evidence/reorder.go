package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"slices"

	"github.com/zk19/zk19/internal/proof/claims"
)

// reorderTests puts the Tests of each root test file in the article's
// order (claims.Index.TestOrders: by the first sentence among each Test's
// claims), rewriting only the files whose order is not that already. The
// Tests that cite a claim trade the places they fill; everything else in
// the file (Examples, TestMain, helpers, types, comments between
// declarations) stays where it is, and no Test's text changes.
func reorderTests(o options, ix *claims.Index, stderr io.Writer) error {
	orders, err := ix.TestOrders(o.dir)
	if err != nil {
		return err
	}
	for _, to := range orders {
		if slices.Equal(to.Got, to.Want) {
			continue
		}
		name := o.at(to.File)
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		out, err := moveFuncs(name, src, to.Want)
		if err != nil {
			return err
		}
		if err := os.WriteFile(name, out, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "evidence: reordered %s: %d Tests in the article's order\n", name, len(to.Want))
	}
	return nil
}

// moveFuncs returns src with its top-level functions named in want, found
// in the file in some order, put in want's order into the places they
// fill. Each moves whole: from its doc comment's first line to the end of
// its closing brace's line, bytes unchanged. The text between the places
// is kept.
func moveFuncs(name string, src []byte, want []string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	type span struct{ from, to int }
	text := map[string]span{}
	var places []span
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !slices.Contains(want, fd.Name.Name) {
			continue
		}
		start := fd.Pos()
		if fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		s := span{lineStart(src, fset.Position(start).Offset), lineEnd(src, fset.Position(fd.End()).Offset)}
		text[fd.Name.Name] = s
		places = append(places, s)
	}
	if len(places) != len(want) || len(text) != len(want) {
		return nil, fmt.Errorf("%s: found %d of the %d functions to order, want each once", name, len(text), len(want))
	}
	var b bytes.Buffer
	last := 0
	for i, p := range places {
		w := text[want[i]]
		b.Write(src[last:p.from])
		b.Write(src[w.from:w.to])
		last = p.to
	}
	b.Write(src[last:])
	if _, err := format.Source(b.Bytes()); err != nil {
		return nil, fmt.Errorf("%s: reordered, it no longer parses: %w", name, err)
	}
	return b.Bytes(), nil
}

// lineStart is the offset of the first byte of the line holding off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// lineEnd is the offset just past the end of the line holding off (its
// newline included), or the file's end.
func lineEnd(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(src)
}

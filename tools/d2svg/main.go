// Command d2svg draws D2 source files as SVG with oss.terrastruct.com/d2,
// offline: the dagre or ELK layout engines d2 embeds, d2's own fonts.
//
// It lives in its own module so that the root module of zk19, and so
// "go test ./..." there, never compiles d2 and its dependencies.
//
//	go -C tools/d2svg run . -o ../../docs/diagrams ../../docs/diagrams/S1.d2 ...
//
// Each input a/b/NAME.d2 is written as NAME.svg in the -o directory, or
// beside the input without -o. Relative paths are relative to tools/d2svg
// when run with go -C.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"oss.terrastruct.com/d2/d2graph"
	"oss.terrastruct.com/d2/d2layouts/d2dagrelayout"
	"oss.terrastruct.com/d2/d2layouts/d2elklayout"
	"oss.terrastruct.com/d2/d2lib"
	"oss.terrastruct.com/d2/d2renderers/d2svg"
	"oss.terrastruct.com/d2/lib/log"
	"oss.terrastruct.com/d2/lib/textmeasure"
	"oss.terrastruct.com/util-go/go2"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("d2svg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "directory for the SVGs (default: beside each input)")
	layout := fs.String("layout", "dagre", "layout engine: dagre or elk")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: d2svg [-o dir] [-layout dagre|elk] file.d2...")
		return 2
	}
	r, err := newRenderer(*layout)
	if err != nil {
		fmt.Fprintf(stderr, "d2svg: %v\n", err)
		return 2
	}
	status := 0
	for _, in := range fs.Args() {
		dir := *out
		if dir == "" {
			dir = filepath.Dir(in)
		}
		dst := filepath.Join(dir, strings.TrimSuffix(filepath.Base(in), ".d2")+".svg")
		if err := r.file(in, dst); err != nil {
			fmt.Fprintf(stderr, "d2svg: %s: %v\n", in, err)
			status = 1
			continue
		}
		fmt.Fprintf(stderr, "d2svg: wrote %s\n", dst)
	}
	return status
}

type renderer struct {
	ruler  *textmeasure.Ruler
	layout d2graph.LayoutGraph
	ctx    context.Context
}

func newRenderer(engine string) (*renderer, error) {
	ruler, err := textmeasure.NewRuler()
	if err != nil {
		return nil, err
	}
	r := &renderer{ruler: ruler}
	switch engine {
	case "dagre":
		r.layout = d2dagrelayout.DefaultLayout
	case "elk":
		r.layout = d2elklayout.DefaultLayout
	default:
		return nil, fmt.Errorf("unknown layout %q: want dagre or elk", engine)
	}
	// d2 logs its progress at info level; only its warnings are news.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r.ctx = log.With(context.Background(), quiet)
	return r, nil
}

func (r *renderer) file(in, dst string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	svg, err := r.render(string(src))
	if err != nil {
		return err
	}
	return os.WriteFile(dst, svg, 0o644)
}

func (r *renderer) render(src string) ([]byte, error) {
	renderOpts := &d2svg.RenderOpts{Pad: go2.Pointer(int64(16)), OmitVersion: go2.Pointer(true)}
	compileOpts := &d2lib.CompileOptions{
		Ruler:          r.ruler,
		LayoutResolver: func(string) (d2graph.LayoutGraph, error) { return r.layout, nil },
	}
	diagram, _, err := d2lib.Compile(r.ctx, src, compileOpts, renderOpts)
	if err != nil {
		return nil, err
	}
	return d2svg.Render(diagram, renderOpts)
}

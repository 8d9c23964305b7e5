package housecheck_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/record/housecheck"
)

const architecture = "docs/architecture.md"

// TestArchitectureNamesEveryPackage: docs/architecture.md, the house's
// map, names every package of the module in backticks (by its directory;
// the root package as zk19), so a package added, moved or folded without
// the map fails here; a path it names that is gone fails
// TestDocsNameWhatExists.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	ix := load(t)
	_, ss := spans(t, filepath.Join(root, architecture))
	named, missing := ix.Named(ss)
	slices.Sort(missing)
	t.Logf("%s names %d of the module's %d packages", architecture, len(named), len(ix.ByDir))
	for _, dir := range missing {
		t.Errorf("%s: package %s is not named; want every package of the module on the map", architecture, dir)
	}
}

var layerRow = regexp.MustCompile(`^\|\s*([0-9]+)\s*\|(.*)\|\s*$`)

// A placed package is one the map's table of layers draws: on which
// layer, at which line.
type placed struct {
	dir         string
	layer, line int
}

// layersDrawn reads the table of layers: the rows "| N | `pkg`, ... |"
// under the heading that says which way the imports run.
func layersDrawn(t *testing.T) []placed {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, architecture))
	if err != nil {
		t.Fatal(err)
	}
	var out []placed
	in := false
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			in = strings.HasPrefix(l, "## Which way the imports run")
		}
		m := layerRow.FindStringSubmatch(l)
		if !in || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, s := range housecheck.Spans(m[2]) {
			dir := s.Text
			if dir == housecheck.Root {
				dir = "."
			}
			out = append(out, placed{dir: dir, layer: n, line: i + 1})
		}
	}
	return out
}

// TestArchitectureDrawsTheLayers: the map's table of layers puts each
// package where the module's imports put it (Index.Layers: one layer
// above the highest it imports), and names each package once.
func TestArchitectureDrawsTheLayers(t *testing.T) {
	ix := load(t)
	want := ix.Layers()
	drawn := map[string]int{}
	for _, p := range layersDrawn(t) {
		w, ok := want[p.dir]
		switch l, twice := drawn[p.dir]; {
		case twice:
			t.Errorf("%s:%d: %s on layer %d and on layer %d; want it once", architecture, p.line, show(p.dir), l, p.layer)
		case !ok:
			t.Errorf("%s:%d: %s on layer %d: got no such package; want the packages of the module", architecture, p.line, show(p.dir), p.layer)
		case w != p.layer:
			t.Errorf("%s:%d: %s on layer %d; want layer %d, one above the highest it imports: %s", architecture, p.line, show(p.dir), p.layer, w, highest(ix.ByDir[p.dir], want))
		}
		drawn[p.dir] = p.layer
	}
	for _, dir := range slices.Sorted(maps.Keys(want)) {
		if _, ok := drawn[dir]; !ok {
			t.Errorf("%s: package %s is on no layer; want it on layer %d", architecture, show(dir), want[dir])
		}
	}
	t.Logf("%s: %d packages drawn, on %d layers", architecture, len(drawn), slices.Max(slices.Collect(maps.Values(want)))+1)
}

// show names a package by its directory, the root by its name.
func show(dir string) string {
	if dir == "." {
		return housecheck.Root + " (the root)"
	}
	return dir
}

// highest names the packages p uses on the highest layer.
func highest(p *housecheck.Package, layer map[string]int) string {
	var top []string
	best := -1
	for q := range p.Uses() {
		switch {
		case layer[q] > best:
			best, top = layer[q], []string{q}
		case layer[q] == best:
			top = append(top, q)
		}
	}
	for i := range top {
		top[i] = show(top[i])
	}
	if best < 0 {
		return "none of the module"
	}
	slices.Sort(top)
	return fmt.Sprintf("%s (layer %d)", strings.Join(top, ", "), best)
}

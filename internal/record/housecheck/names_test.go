package housecheck_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zk19/zk19/internal/record/housecheck"
)

var root = filepath.Join("..", "..", "..")

// pages is README.md, README.zh.md and every docs/*.md: each is checked
// alike, whatever it is (a page that quotes a run's code of another commit
// does not belong in docs/: the run's report stays outside the tree).
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "README.zh.md")}, docs...)
}

func load(t *testing.T) *housecheck.Index {
	t.Helper()
	ix, err := housecheck.Load(root)
	if err != nil {
		t.Fatalf("reading the module's source: %v", err)
	}
	return ix
}

func spans(t *testing.T, path string) (string, []housecheck.Span) {
	t.Helper()
	rel, _ := filepath.Rel(root, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel), housecheck.Spans(string(b))
}

// TestDocsNameWhatExists: every Go name that README.md, README.zh.md and
// docs/*.md write in backticks and that looks like this module's is
// declared in it, and every path they write under one of the module's top
// directories exists.
func TestDocsNameWhatExists(t *testing.T) {
	ix := load(t)
	t.Logf("read %d packages of the module", len(ix.ByDir))
	for _, path := range pages(t) {
		rel, ss := spans(t, path)
		stale := append(ix.Check(rel, ss), housecheck.CheckPaths(root, rel, ss)...)
		t.Logf("%s: %d backticked spans, %d names or paths that do not exist", rel, len(ss), len(stale))
		for _, l := range stale {
			t.Errorf("%s; got a name or path the module does not have, want the docs to name what exists", l)
		}
	}
}

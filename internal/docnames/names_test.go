package docnames_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zk19/zk19/internal/docnames"
)

// Records: docs generated from a run at one commit. The names they quote
// are that commit's (mutated lines included), so they are not checked.
var records = map[string]bool{
	"docs/mutants-before-the-move.md": true,
	"docs/mutants-after-the-move.md":  true,
	"docs/mutants-rerun.md":           true,
	"docs/mutants-issue39.md":         true,
	"docs/mutants-issue42.md":         true,
	"docs/mutants-issue39-stop45.md":  true,
}

// TestDocsNameWhatExists: every Go name that README.md, README.zh.md and
// docs/*.md write in backticks and that looks like this module's is
// declared in it.
func TestDocsNameWhatExists(t *testing.T) {
	root := filepath.Join("..", "..")
	ix, err := docnames.Load(root)
	if err != nil {
		t.Fatalf("reading the module's source: %v", err)
	}
	t.Logf("read %d packages of the module", len(ix.ByDir))
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "README.zh.md")}, docs...)
	for _, path := range docs {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if records[rel] {
			t.Logf("%s: a record of one run, its names are that commit's: not checked", rel)
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		spans := docnames.Spans(string(b))
		stale := ix.Check(rel, spans)
		t.Logf("%s: %d backticked spans, %d names that do not exist", rel, len(spans), len(stale))
		for _, l := range stale {
			t.Errorf("%s; got a name the module does not declare, want the docs to name what exists", l)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/history"
)

// realPages has the history package write porcupine's pages of two
// verdicts, as the suite does under cmd/evidence, into dir.
func realPages(t *testing.T, dir string) []string {
	t.Setenv(history.EnvVisualize, dir)
	for _, v := range []string{"1", "2"} {
		r := history.NewRecorder("0")
		r.Invoke(1, history.Write, v).Ok("")
		r.Invoke(2, history.Read, "").Ok(v)
		history.RequireLinearizable(t, r, "V"+v)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(pages) != 2 {
		t.Fatalf("porcupine's pages: got %v (%v); want 2", pages, err)
	}
	return pages
}

// inline puts the shared viewer back into a split page: the page a browser
// assembles from the links.
func inline(page, css, js []byte) []byte {
	link := regexp.MustCompile(`<link rel="stylesheet" href="[^"]*porcupine\.css" />`)
	src := regexp.MustCompile(`<script src="[^"]*porcupine\.js"></script>\s*<script>`)
	page = link.ReplaceAllLiteral(page, append(append([]byte("<style>"), css...), "</style>"...))
	return src.ReplaceAllLiteral(page, append(append([]byte("<script>"), js...), '\n'))
}

// The committed pages share one viewer: each page keeps only its data, and
// with the shared files put back it is porcupine's page again.
func TestPorcupinePagesShareOneViewer(t *testing.T) {
	root := t.TempDir()
	o := options{dir: root, out: "EVIDENCE.md"}
	dir := o.home(picturesDir("porcupine", o.out))
	pages := realPages(t, dir)
	var before [][]byte
	var viz []visualization
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, b)
		rel, _ := filepath.Rel(root, p)
		viz = append(viz, visualization{Claim: "V", Path: rel})
	}
	// A retold Example's page is named once by each Test that retells it:
	// every page comes twice.
	if err := shareViewer(o, append(viz, viz...)); err != nil {
		t.Fatalf("shareViewer: %v", err)
	}
	css, err := os.ReadFile(filepath.Join(root, "docs", "porcupine", viewerCSS))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(root, "docs", "porcupine", viewerJS))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		after, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(after, []byte("\n")); n > 4 {
			t.Errorf("%s: got %d lines after the split; want the viewer out of it (at most 4)", filepath.Base(p), n)
		}
		if !bytes.Contains(after, []byte(`href="../porcupine.css"`)) || !bytes.Contains(after, []byte(`src="../porcupine.js"`)) {
			t.Errorf("%s does not link the shared viewer beside its directory:\n%s", filepath.Base(p), after)
		}
		if got, want := string(oneLine(inline(after, css, js))), string(oneLine(before[i])); got != want {
			t.Errorf("%s with the viewer put back is not porcupine's page:\ngot  %.300s\nwant %.300s", filepath.Base(p), got, want)
		}
	}
	if err := shareViewer(o, viz[:1]); err == nil || !strings.Contains(err.Error(), "porcupine changed") {
		t.Errorf("a page of another shape: got %v; want it refused, naming porcupine's change", err)
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// porcupine writes each verdict as a whole page: its viewer (about 1,000
// lines of CSS and script, the same in every page) and one line of data.
// Committed as they are, the evidence files' 20-odd pages are 20-odd copies
// of the viewer. shareViewer keeps one copy, porcupine.css and porcupine.js
// beside the evidence directories, and rewrites each page to link them and
// carry only its data, so a page is four lines and opens as before.

// The shared files, in docs/porcupine/.
const (
	viewerCSS = "porcupine.css"
	viewerJS  = "porcupine.js"
)

// pageShape is porcupine's page as its template writes it: the style in
// the head, the markup, then one script that defines the viewer and ends
// with the data and the call that draws it. A page of another shape (a new
// porcupine) is refused rather than guessed at.
var pageShape = regexp.MustCompile(`(?s)^(.*?<head>.*?)<style>(.*?)</style>(.*?</head>\s*<body>)(.*?)<script>(.*?)\n(\s*const data = [^\n]*\n)(.*?)</script>(.*)$`)

// viewerPage is one page split into the shared viewer and its own part.
type viewerPage struct {
	css, js []byte // the shared viewer
	page    []byte // the page, linking the shared files
}

// splitViewer splits one porcupine page; rel is the directory of the shared
// files relative to the page's.
func splitViewer(page []byte, rel string) (viewerPage, error) {
	m := pageShape.FindSubmatch(page)
	if m == nil {
		return viewerPage{}, fmt.Errorf("not porcupine's page shape (style in the head, then one script ending in \"const data = ...\"): porcupine changed, and splitViewer must follow it")
	}
	head, css, body, markup, js, data, draw, tail := m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]
	// Four lines: what every page has (head, links and markup) joined on
	// one line, as it is no page's own; the viewer's script; the data; the
	// call that draws it.
	link := fmt.Sprintf(`<link rel="stylesheet" href="%s" />`, filepath.ToSlash(filepath.Join(rel, viewerCSS)))
	var p bytes.Buffer
	fmt.Fprintf(&p, "%s\n", oneLine(head, []byte(link), body, markup))
	fmt.Fprintf(&p, "<script src=\"%s\"></script>\n", filepath.ToSlash(filepath.Join(rel, viewerJS)))
	fmt.Fprintf(&p, "<script>%s\n", bytes.TrimSpace(data))
	fmt.Fprintf(&p, "%s\n", oneLine(draw, []byte("</script>"), tail))
	return viewerPage{css: css, js: js, page: p.Bytes()}, nil
}

// oneLine joins parts of a page with single spaces, as HTML reads them.
func oneLine(parts ...[]byte) []byte {
	return bytes.Join(bytes.Fields(bytes.Join(parts, []byte(" "))), []byte(" "))
}

// shareViewer rewrites the pages (paths relative to the evidence file's
// directory) to share one viewer, written to the parent of their directory.
// All pages must carry the same viewer.
func shareViewer(o options, viz []visualization) error {
	var css, js []byte
	shared := o.home(filepath.Dir(picturesDir("porcupine", o.out)))
	done := map[string]bool{} // a retold Example's page is named by each Test that retells it
	for _, v := range viz {
		path := o.home(v.Path)
		if done[path] {
			continue
		}
		done[path] = true
		page, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(filepath.Dir(path), shared)
		if err != nil {
			return err
		}
		s, err := splitViewer(page, rel)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Path, err)
		}
		if css == nil {
			css, js = s.css, s.js
		} else if !bytes.Equal(css, s.css) || !bytes.Equal(js, s.js) {
			return fmt.Errorf("%s: its viewer differs from the first page's; one shared copy cannot serve both", v.Path)
		}
		if err := os.WriteFile(path, s.page, 0o644); err != nil {
			return err
		}
	}
	if css == nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(shared, viewerCSS), css, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(shared, viewerJS), js, 0o644)
}

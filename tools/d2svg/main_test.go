package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The known diagram of internal/record/diagram's golden files renders, with both
// layout engines, and the SVG carries its values.
func TestKnownDiagramRenders(t *testing.T) {
	for _, layout := range []string{"dagre", "elk"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			var stderr bytes.Buffer
			if code := run([]string{"-layout", layout, "-o", dir, "../../internal/record/diagram/testdata/known.d2"}, &stderr); code != 0 {
				t.Fatalf("d2svg exited %d; want 0\n%s", code, &stderr)
			}
			svg, err := os.ReadFile(filepath.Join(dir, "known.svg"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"<svg", "reply dropped, xid=7", "0x100000abc0000", "C-proxy", "hold 3-&gt;2", "${budget}", "100% of"} {
				if !bytes.Contains(svg, []byte(want)) {
					t.Errorf("got no %q in the SVG; want it", want)
				}
			}
		})
	}
}

func TestBadInputFailsWithItsName(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.d2")
	if err := os.WriteFile(bad, []byte("a: {shape: sequence_diagram\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run([]string{bad}, &stderr); code != 1 || !strings.Contains(stderr.String(), "bad.d2") {
		t.Errorf("got exit %d, stderr %q; want 1 and the file named", code, &stderr)
	}
	if code := run([]string{"-layout", "nope", bad}, &stderr); code != 2 {
		t.Errorf("unknown layout: got exit %d; want 2", code)
	}
}

package main

import "testing"

// TestEnsembleSizesInChinese: the record header's ensemble sizes read in
// Chinese in EVIDENCE.zh.md and unchanged in EVIDENCE.md.
func TestEnsembleSizesInChinese(t *testing.T) {
	in := "3 servers (S1 Y1); 5 servers (Y2); standalone (L1 E3)"
	if got, want := chinese.sizes(in), "3 台服务器 (S1 Y1); 5 台服务器 (Y2); 单机 (L1 E3)"; got != want {
		t.Fatalf("got %q; want %q", got, want)
	}
	if got := english.sizes(in); got != in {
		t.Fatalf("got %q; want %q unchanged", got, in)
	}
}

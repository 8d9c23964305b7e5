package tb

import (
	"io"
	"os"
	"testing"
)

// TestHeldScopeWritesItsLinesAtRelease: a held Scope writes nothing; at
// Release it writes what it kept, in order, and then each line as it comes.
func TestHeldScopeWritesItsLinesAtRelease(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	t.Cleanup(func() { os.Stderr = stderr })
	read := func() string { // what was written so far; the pipe's buffer holds it
		_ = w.Close()
		b, _ := io.ReadAll(r)
		r, w, _ = os.Pipe()
		os.Stderr = w
		return string(b)
	}
	s := NewScope("Example_x", Dirs{}).Hold()
	s.Logf("started %d", 5)
	s.Attr("k", "v")
	if got := read(); got != "" {
		t.Fatalf("a held Scope wrote %q; want nothing until Release", got)
	}
	s.Release()
	s.Logf("after")
	want := "    Example_x: started 5\n=== ATTR  Example_x k v\n    Example_x: after\n"
	if got := read(); got != want {
		t.Fatalf("after Release: got %q; want %q", got, want)
	}
	_ = w.Close()
}

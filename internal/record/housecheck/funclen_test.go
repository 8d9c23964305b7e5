package housecheck_test

import (
	"path/filepath"
	"testing"

	"github.com/zk19/zk19/internal/record/housecheck"
)

// The house rule: no function over 60 lines in the non-test code of these
// trees (the module root's, which are tests, aside); the doc comments of
// their exported names start with the name (TestDocCommentsStartWithTheirName).
const most = 60

var trees = []string{"cmd", "internal", "lock", "fence", "locktest", "zktest"}

// TestFunctionsAreShort: every function declared in the non-test files of
// cmd/, internal/, lock/, fence/, locktest/ and zktest/ is at most 60 lines
// long.
func TestFunctionsAreShort(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	for _, dir := range trees {
		long, err := housecheck.Long(root, dir, most)
		if err != nil {
			t.Fatalf("reading %s: %v", dir, err)
		}
		t.Logf("%s/: %d functions over %d lines", dir, len(long), most)
		for _, f := range long {
			t.Errorf("%s:%d: %s is %d lines; want at most %d (split it into named steps)", f.File, f.Line, f.Name, f.Lines, most)
		}
	}
}

// TestLongFindsALongFunction: the measure counts from "func" to the
// closing brace, and leaves test files and testdata out.
func TestLongFindsALongFunction(t *testing.T) {
	long, err := housecheck.Long(".", "testdata", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) != 1 || long[0].Name != "T.six" || long[0].Lines != 6 || long[0].Line != 5 {
		t.Fatalf("got %+v; want one function, T.six at line 5, 6 lines", long)
	}
}

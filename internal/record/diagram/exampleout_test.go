package diagram_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/record/diagram"
)

// What go test -v prints for an Example whose second line differs.
const failed = `=== RUN   Example_s1
--- FAIL: Example_s1 (0.01s)
got:
A wrote 1
B read "0"
want:
A wrote 1
B read "1"
FAIL
exit status 1`

func TestFirstQuotesTheFirstDifferingLine(t *testing.T) {
	d, ok := diagram.FirstExampleDiff(strings.Split(failed, "\n"))
	want := diagram.ExampleDiff{Line: 2, Got: `B read "0"`, Want: `B read "1"`}
	if !ok || d != want {
		t.Fatalf("got %+v, %v; want %+v, true", d, ok, want)
	}
}

func TestFirstOfAShorterBlock(t *testing.T) {
	lines := []string{"got:", "a", "want:", "a", "b", "--- FAIL: X"}
	d, ok := diagram.FirstExampleDiff(lines)
	want := diagram.ExampleDiff{Line: 2, Got: "", Want: "b"}
	if !ok || d != want {
		t.Fatalf("got %+v, %v; want %+v, true", d, ok, want)
	}
}

func TestFirstWithoutBlocks(t *testing.T) {
	if d, ok := diagram.FirstExampleDiff([]string{"=== RUN TestX", "x_test.go:3: got 1; want 2"}); ok {
		t.Fatalf("got %+v, true; want no difference from lines without blocks", d)
	}
}

func TestWithoutKeepsTheFramingDropsTheBlocks(t *testing.T) {
	got := diagram.WithoutExampleOutput(strings.Split(failed, "\n"))
	want := []string{"=== RUN   Example_s1", "--- FAIL: Example_s1 (0.01s)", "FAIL", "exit status 1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q; want %q", got, want)
	}
}

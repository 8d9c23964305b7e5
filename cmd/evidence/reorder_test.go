package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
)

// unordered is a section's test file with its Tests out of the article's
// order: A2 is stated before A1, A3 last; TestMain and the helper cite
// nothing and stay where they are.
const unordered = `package x_test

import "testing"

func TestMain(m *testing.M) { m.Run() }

// TestA3_Last proves A3, the section's last sentence.
func TestA3_Last(t *testing.T) {
	helper(t)
} // A3's end

// helper is no Test.
func helper(t *testing.T) { t.Helper() }

// TestA1_Second proves A1.
//
// Its comment has two paragraphs.
func TestA1_Second(t *testing.T) {}

/* a comment of the file, between the Tests */

func TestA2_First(t *testing.T) { helper(t) }
`

// ordered is unordered after -reorder: A2, A1, A3 trade places, each with
// its doc comment and its closing line's comment; the rest, the
// comment between A1's and A2's places too, is where it was.
const ordered = `package x_test

import "testing"

func TestMain(m *testing.M) { m.Run() }

func TestA2_First(t *testing.T) { helper(t) }

// helper is no Test.
func helper(t *testing.T) { t.Helper() }

// TestA1_Second proves A1.
//
// Its comment has two paragraphs.
func TestA1_Second(t *testing.T) {}

/* a comment of the file, between the Tests */

// TestA3_Last proves A3, the section's last sentence.
func TestA3_Last(t *testing.T) {
	helper(t)
} // A3's end
`

func TestReorderTestsFollowsTheArticle(t *testing.T) {
	ix := &claims.Index{
		Sections: []claims.Section{{Key: "§1"}, {Key: "§2"}},
		Claims: []claims.Claim{
			{ID: "A1", Section: "§1", Paragraph: 2, Sentence: 1},
			{ID: "A2", Section: "§1", Paragraph: 1, Sentence: 3},
			{ID: "A3", Section: "§2", Paragraph: 1, Sentence: 0},
		},
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "x_test.go")
	if err := os.WriteFile(file, []byte(unordered), 0o644); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ { // the second run finds nothing to move
		if err := reorderTests(options{dir: dir}, ix, io.Discard); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != ordered {
			t.Fatalf("run %d: got\n%s\nwant\n%s", run, b, ordered)
		}
	}
	orders, err := ix.TestOrders(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 1 || !slices.Equal(orders[0].Got, orders[0].Want) {
		t.Errorf("got the orders %+v after -reorder; want one file, in the article's order", orders)
	}
}

func TestMoveFuncsWantsEachFunctionOnce(t *testing.T) {
	if _, err := moveFuncs("x_test.go", []byte(unordered), []string{"TestA1_Second", "TestA9_Gone", "TestA2_First"}); err == nil {
		t.Error("got no error for a function that is not in the file; want one")
	}
}

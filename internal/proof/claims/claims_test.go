package claims

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCitations(t *testing.T) {
	tests := map[string][]string{
		"TestS1_PlainRead":          {"S1"},
		"TestL10_Election":          {"L10"},
		"TestL6R8_SessionExpiry":    {"L6", "R8"},
		"TestR3toR6_Recover":        {"R3", "R4", "R5", "R6"},
		"TestF1toF3_Fenced":         {"F1", "F2", "F3"},
		"TestE2":                    {"E2"},
		"TestMain":                  nil,
		"TestEveryClaimHasEvidence": nil,
		"TestSyncWorks":             nil,
	}
	for name, want := range tests {
		got, err := citesOfTest(name)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("citesOfTest(%s) = %v, %v; want %v", name, got, err, want)
		}
	}
	examples := map[string][]string{
		"is the first diagram (claims S1 and S2, §1): A writes":          {"S1", "S2"},
		"Claims R3-R6 (section \"create\"): after a create":              {"R3", "R4", "R5", "R6"},
		"handle zero and many\nmatches (claim X1).":                      {"X1"},
		"Claim L10 (section x): candidates L1 and L2 join; claim L2 too": {"L10", "L2"},
		"mentions R1/R2 without the word":                                nil,
	}
	for doc, want := range examples {
		got, err := citesOfExample(doc)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("citesOfExample(%q) = %v, %v; want %v", doc, got, err, want)
		}
	}
	for _, name := range []string{"TestR6toR3_x", "TestR3toL6_x"} {
		if _, err := citesOfTest(name); err == nil {
			t.Errorf("citesOfTest(%s): no error; want the range refused", name)
		}
	}
	got, err := citesOfExample("claims R6-R3 and claim X1")
	if err == nil || !reflect.DeepEqual(got, []string{"X1"}) {
		t.Errorf("citesOfExample with a backwards range = %v, %v; want X1 and an error", got, err)
	}
}

func TestScanProofs(t *testing.T) {
	dir := t.TempDir()
	src := `package x_test

import "testing"

func TestS1_x(t *testing.T) {}

func Testhelper(t *testing.T) {}

func TestR6toR3_x(t *testing.T) {}

func TestPeerGoZookeeperLock_x(t *testing.T) {}

// Example_y shows it (claims L2 and L3).
func Example_y() {}

func helper() {}
`
	if err := os.WriteFile(filepath.Join(dir, "x_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n\nfunc TestNot() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := ScanProofs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%s %s %s:%d", p.Name, strings.Join(p.Cites, ","), filepath.Base(p.Pos.Filename), p.Pos.Line))
		if (p.Err != nil) != (p.Name == "TestR6toR3_x") {
			t.Errorf("%s: error %v", p.Name, p.Err)
		}
		if p.Example != (p.Name == "Example_y") {
			t.Errorf("%s: Example is %v", p.Name, p.Example)
		}
		if p.Peer != strings.HasPrefix(p.Name, "TestPeer") {
			t.Errorf("%s: Peer is %v", p.Name, p.Peer)
		}
	}
	if want := []string{"TestS1_x S1 x_test.go:5", "TestR6toR3_x  x_test.go:9", "TestPeerGoZookeeperLock_x  x_test.go:11", "Example_y L2,L3 x_test.go:14"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ScanProofs = %q; want %q", got, want)
	}

	if err := os.WriteFile(filepath.Join(dir, "bad_test.go"), []byte("package x_test\nfunc {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ScanProofs(dir); err == nil || !strings.Contains(err.Error(), "bad_test.go") {
		t.Errorf("ScanProofs with a broken file: %v; want a parse error naming it", err)
	}
}

func TestLoadIsStrictAndMarshalRoundTrips(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "claims.json")
	in := `{"article": "a <b>", "sections": [{"key": "§1", "title": "one"}],
		"claims": [{"id": "S1", "section": "§1", "paragraph": 2, "sentence": 3, "terms": ["getData", "前驱"], "statement": "s", "zh": "陈述", "beyond": true, "proof": null, "needs": ["faults"]}]}`
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := ix.Claim("S1"); c == nil || ix.Section(c.Section) != &ix.Sections[0] || c.Where() != "§1 ¶2" || c.Locator().String() != "§1 ¶2 句3" || ix.Claim("S2") != nil {
		t.Errorf("Claim(S1) = %+v, Claim(S2) = %+v; want S1 at §1 ¶2 句3 of section %q and no S2", c, ix.Claim("S2"), ix.Sections[0].Name())
	}
	b, err := ix.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "article": "a <b>",
  "sections": [
    {
      "key": "§1",
      "title": "one"
    }
  ],
  "claims": [
    {
      "id": "S1",
      "section": "§1",
      "paragraph": 2,
      "sentence": 3,
      "terms": [
        "getData",
        "前驱"
      ],
      "statement": "s",
      "zh": "陈述",
      "beyond": true,
      "proof": [],
      "needs": [
        "faults"
      ]
    }
  ]
}
`
	if string(b) != want {
		t.Errorf("Marshal = %s; want %s", b, want)
	}

	if err := os.WriteFile(path, []byte(`{"article": "a", "extra": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("Load with an unknown field: %v; want an error naming the file and the field", err)
	}
}

func TestPeersCiteNothing(t *testing.T) {
	for name, want := range map[string]bool{
		"TestPeerGoZookeeperLock_FailsOnAStranger": true,
		"TestPeerKazoo": true,
		"TestPeer":      true,
		"TestL2_PeerGoZookeeperLockFailsOnAStrangerAndLeavesItsNode": true, // the name before the rename
		"TestL6R8_PeerX":                         true,
		"TestPeerless":                           false,
		"TestL2_SequenceSuffixOrdersCandidates":  false,
		"TestL2_ThePeerIsNotFirst":               false,
		"BenchmarkPeerGoZookeeperLockThroughput": false,
	} {
		if got := IsPeer(name); got != want {
			t.Errorf("IsPeer(%s) = %v; want %v", name, got, want)
		}
	}
}

func TestCitationsOfTheSecondWaveLetters(t *testing.T) {
	for name, want := range map[string][]string{"TestA1_OpenACL": {"A1"}, "TestC1_Chaos": {"C1"}, "TestClaimsX": nil} {
		if got, err := citesOfTest(name); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("citesOfTest(%s) = %v, %v; want %v", name, got, err, want)
		}
	}
}

func TestSplitProof(t *testing.T) {
	for in, want := range map[string][2]string{
		"TestR7_x": {"", "TestR7_x"},
		"internal/server/faultproxy.TestZKNeverDecodesCreateReplyBody": {"internal/server/faultproxy", "TestZKNeverDecodesCreateReplyBody"},
	} {
		if dir, test := SplitProof(in); dir != want[0] || test != want[1] {
			t.Errorf("SplitProof(%s) = %q, %q; want %q", in, dir, test, want)
		}
	}
}

func TestParagraphs(t *testing.T) {
	ix := &Index{Sections: []Section{{Key: "§1", Title: "One"}, {Key: "§2", Title: "Two"}},
		Diagrams: []Diagram{{Section: "§1", Paragraph: 3, Last: "A: z"}, {Section: "§2", Paragraph: 1, Last: `".-> A`}}}
	article := strings.Join([]string{
		"Title of the article",
		"An introduction, in no section.",
		"One",
		"First paragraph.",
		"",
		"Second paragraph.",
		"sequenceDiagram",
		"participant A as a",
		"A->>B: x",
		"Note over A: y",
		"B-->>A: z and the caption run on",
		"Fourth paragraph.",
		"Two",
		"flowchart TD",
		"subgraph S[\"s\"]",
		"A -->|\"x\"| B",
		"end",
		"R -.\"y\".-> A a caption",
		"Second of two.",
	}, "\n")
	got, err := ix.Paragraphs(article)
	if want := map[string]int{"§1": 4, "§2": 2}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Paragraphs = %v, %v; want %v", got, err, want)
	}
	noEnd := &Index{Sections: ix.Sections, Diagrams: ix.Diagrams[:1]}
	if _, err := noEnd.Paragraphs(article); err == nil || !strings.Contains(err.Error(), "section §2 paragraph 1 is a diagram") {
		t.Errorf("Paragraphs with a diagram whose end the index does not name: %v; want an error naming §2's paragraph 1", err)
	}
	ix.Sections = append(ix.Sections, Section{Key: "§3", Title: "Three"})
	if _, err := ix.Paragraphs(article); err == nil || !strings.Contains(err.Error(), "§3") {
		t.Errorf("Paragraphs with a title the article lacks: %v; want an error naming §3", err)
	}
	ix.Sections = []Section{{Key: "§2", Title: "Two"}, {Key: "§1", Title: "One"}}
	if _, err := ix.Paragraphs(article); err == nil {
		t.Errorf("Paragraphs with the sections out of the article's order: no error")
	}
}

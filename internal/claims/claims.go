// Package claims reads the zk19 claim index (testdata/claims.json) and the
// claim IDs that the root package's Tests and Examples cite. The root
// package's meta tests and cmd/evidence share it, so both apply the same
// rules.
package claims

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Index is the claim index: the article's sections and, per claim, its
// section, a one-line statement, the "(beyond)" marker, the root-package
// Tests and Examples that prove it, and what a backend must offer to run them.
type Index struct {
	Article  string    `json:"article"`
	Sections []Section `json:"sections"`
	Claims   []Claim   `json:"claims"`
}

// Section is one part of the article.
type Section struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

// Name is the string claims use to name the section: Key + " " + Title.
func (s Section) Name() string { return s.Key + " " + s.Title }

// Marks that open a log line of a claim's record. Tests write them through
// the root package's evidence and differs helpers; cmd/evidence shows the
// lines they open as the decisive observations. No other wording of a log
// line has a meaning to the evidence table.
const (
	// EvidenceMark opens the observation that would differ if the claim
	// were false.
	EvidenceMark = "evidence: "
	// DiffersMark opens an observation that differs from the article's
	// wording although the test's assertions hold (claim Y4's failed
	// conditional update acting as a barrier).
	DiffersMark = "differs: "
)

// Claim is one entry of the index.
type Claim struct {
	ID      string `json:"id"`
	Section string `json:"section"`
	// Paragraph is the paragraph of the section that makes the claim,
	// counted from 1 at the section's first paragraph after its heading;
	// 0 where the index has not placed it yet.
	Paragraph int      `json:"paragraph,omitempty"`
	Statement string   `json:"statement"`
	Beyond    bool     `json:"beyond"`
	Proof     []string `json:"proof"`
	Needs     []string `json:"needs,omitempty"`
}

// Load reads the index at path. A field the index types do not know is an
// error; a decoding error names path.
func Load(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ix Index
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &ix, nil
}

// Marshal returns the index as the file holds it: indented by two spaces,
// HTML left unescaped, and a nil proof list set to an empty one.
func (ix *Index) Marshal() ([]byte, error) {
	for i := range ix.Claims {
		if ix.Claims[i].Proof == nil {
			ix.Claims[i].Proof = []string{}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ix); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Where is the claim's place in the article: its section and, when known,
// its paragraph ("§3 ¶2").
func (c Claim) Where() string {
	key, _, _ := strings.Cut(c.Section, " ")
	if c.Paragraph > 0 {
		return fmt.Sprintf("%s ¶%d", key, c.Paragraph)
	}
	return key
}

// Claim returns the claim with the given ID, or nil.
func (ix *Index) Claim(id string) *Claim {
	for i := range ix.Claims {
		if ix.Claims[i].ID == id {
			return &ix.Claims[i]
		}
	}
	return nil
}

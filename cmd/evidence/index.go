package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Index is testdata/claims.json: the article's sections and, per claim, its
// section, a one-line statement, the "(beyond)" marker, the root-package
// Tests and Examples that prove it, and what a backend must offer to run them.
type Index struct {
	Article  string    `json:"article"`
	Sections []Section `json:"sections"`
	Claims   []Claim   `json:"claims"`
}

// Section is one part of the article. A claim's Section field is Key + " " +
// Title.
type Section struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

// Name is the string claims use to name the section.
func (s Section) Name() string { return s.Key + " " + s.Title }

// Claim is one entry of the index.
type Claim struct {
	ID        string   `json:"id"`
	Section   string   `json:"section"`
	Statement string   `json:"statement"`
	Beyond    bool     `json:"beyond"`
	Proof     []string `json:"proof"`
	Needs     []string `json:"needs,omitempty"`
}

func loadIndex(path string) (*Index, error) {
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

func (ix *Index) marshal() ([]byte, error) {
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

func (ix *Index) claim(id string) *Claim {
	for i := range ix.Claims {
		if ix.Claims[i].ID == id {
			return &ix.Claims[i]
		}
	}
	return nil
}

// Proof is a root-package Test or Example and the claim IDs it cites.
type Proof struct {
	Name    string
	Example bool
	Cites   []string
	Pos     token.Position
}

// The citation rules. They are the same as those of the root package's
// TestEveryClaimHasEvidence, which checks this generator's -sync output.
var (
	// A Test cites the IDs right after "Test": TestS1_x, TestL6R8_x,
	// TestR3toR6_x (R3, R4, R5, R6).
	testIDs = regexp.MustCompile(`^Test((?:[SYLRFTEX][0-9]{1,2}(?:to[SYLRFTEX][0-9]{1,2})?)+)(?:_|$|[A-Z])`)
	// An Example cites the IDs that follow "claim" or "claims" in its doc
	// comment: "(claims S1 and S2, §1)", "Claims R3-R6 (...)", "(claim X1)".
	exampleIDs = regexp.MustCompile(`\b[Cc]laims?\s+([SYLRFTEX][0-9]{1,2}(?:\s*(?:,\s*and|,|and|&|/|-|–|—|to|through)\s*[SYLRFTEX][0-9]{1,2})*)`)
	oneID      = regexp.MustCompile(`[SYLRFTEX][0-9]{1,2}`)
)

// expandRange returns from..to when both have the same letter.
func expandRange(from, to string) ([]string, error) {
	if from[0] != to[0] {
		return nil, fmt.Errorf("range %s-%s spans two letters", from, to)
	}
	a, _ := strconv.Atoi(from[1:])
	b, _ := strconv.Atoi(to[1:])
	if a > b {
		return nil, fmt.Errorf("range %s-%s runs backwards", from, to)
	}
	var out []string
	for i := a; i <= b; i++ {
		out = append(out, fmt.Sprintf("%c%d", from[0], i))
	}
	return out, nil
}

// citesOfList reads "S1 and S2", "R3-R6", "L2, L3" or "R3toR6L6".
func citesOfList(s string) ([]string, error) {
	locs := oneID.FindAllStringIndex(s, -1)
	var out []string
	for i := 0; i < len(locs); i++ {
		id := s[locs[i][0]:locs[i][1]]
		if i+1 < len(locs) {
			sep := strings.TrimSpace(s[locs[i][1]:locs[i+1][0]])
			if sep == "to" || sep == "-" || sep == "–" || sep == "—" || sep == "through" {
				r, err := expandRange(id, s[locs[i+1][0]:locs[i+1][1]])
				if err != nil {
					return nil, err
				}
				out = append(out, r...)
				i++
				continue
			}
		}
		out = append(out, id)
	}
	return out, nil
}

func citesOfTest(name string) ([]string, error) {
	m := testIDs.FindStringSubmatch(name)
	if m == nil {
		return nil, nil
	}
	return citesOfList(m[1])
}

func citesOfExample(doc string) ([]string, error) {
	var out []string
	for _, m := range exampleIDs.FindAllStringSubmatch(strings.Join(strings.Fields(doc), " "), -1) {
		ids, err := citesOfList(m[1])
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return dedupe(out), nil
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// scanProofs parses the *_test.go files of dir and returns every Test and
// Example function with the claim IDs it cites, in file and line order.
func scanProofs(dir string) ([]Proof, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	fset := token.NewFileSet()
	var out []Proof
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			name := fd.Name.Name
			p := Proof{Name: name, Pos: fset.Position(fd.Pos())}
			switch {
			case isTestName(name, "Test"):
				p.Cites, err = citesOfTest(name)
			case isTestName(name, "Example"):
				p.Example = true
				p.Cites, err = citesOfExample(fd.Doc.Text())
			default:
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", p.Pos, name, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// isTestName is go test's rule: the prefix, then the end or a character
// that is not a lower-case letter.
func isTestName(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	rest := name[len(prefix):]
	return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
}

// syncProofs sets every claim's proof list to the Tests and Examples that
// cite it: Tests before Examples, a test of fewer claims before one of more,
// then in file and line order. It returns what a reader should know: claims
// without proof, citations of IDs that are not in the index.
func syncProofs(ix *Index, proofs []Proof) (warnings []string) {
	proofs = append([]Proof(nil), proofs...)
	sort.SliceStable(proofs, func(i, j int) bool {
		a, b := proofs[i], proofs[j]
		if a.Example != b.Example {
			return !a.Example
		}
		return len(a.Cites) < len(b.Cites)
	})
	byID := map[string][]string{}
	for _, p := range proofs {
		for _, id := range p.Cites {
			if ix.claim(id) == nil {
				warnings = append(warnings, fmt.Sprintf("%s:%d: %s cites %s, which is not in the index", filepath.Base(p.Pos.Filename), p.Pos.Line, p.Name, id))
				continue
			}
			byID[id] = append(byID[id], p.Name)
		}
	}
	for i := range ix.Claims {
		c := &ix.Claims[i]
		c.Proof = dedupe(byID[c.ID])
		if c.Proof == nil {
			c.Proof = []string{}
			warnings = append(warnings, fmt.Sprintf("claim %s has no Test or Example yet", c.ID))
		}
	}
	return warnings
}

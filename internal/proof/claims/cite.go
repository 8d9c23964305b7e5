package claims

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Proof is a Test or Example function and the claim IDs it cites.
type Proof struct {
	Name    string
	Example bool
	// Peer marks a Test of another recipe (see IsPeer); it cites nothing.
	Peer  bool
	Cites []string
	Pos   token.Position // of the func keyword
	// Err reports a malformed citation, such as a backwards range; Cites
	// then holds the IDs that could be read.
	Err error
}

// ScanProofs parses the *_test.go files of dir and returns every Test and
// Example function with the claim IDs it cites, in file and line order.
// Its error is one of reading or parsing; a bad citation is a Proof's Err.
func ScanProofs(dir string) ([]Proof, error) {
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
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			p := Proof{Name: fd.Name.Name, Pos: fset.Position(fd.Pos())}
			switch {
			case IsPeer(p.Name):
				p.Peer = true
			case isTestName(p.Name, "Test"):
				p.Cites, p.Err = citesOfTest(p.Name)
			case isTestName(p.Name, "Example"):
				p.Example = true
				p.Cites, p.Err = citesOfExample(fd.Doc.Text())
			default:
				continue
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// isTestName is go test's rule: the prefix, then the end of the name or a
// character that is not a lower-case letter.
func isTestName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	return ok && (rest == "" || rest[0] < 'a' || rest[0] > 'z')
}

// The citation rules. A claim ID is a letter of the catalogue and a number.
const (
	idPattern     = `[SYLRFTEXAC][0-9]{1,2}`
	idListPattern = `(?:` + idPattern + `(?:to` + idPattern + `)?)+`
)

var (
	// A Test cites the IDs right after "Test": TestS1_x, TestL6R8_x,
	// TestR3toR6_x (R3, R4, R5, R6).
	testIDs = regexp.MustCompile(`^Test(` + idListPattern + `)(?:_|$|[A-Z])`)
	// An Example cites the IDs that follow "claim" or "claims" in its doc
	// comment: "(claims S1 and S2, §1)", "Claims R3-R6 (...)", "(claim X1)".
	exampleIDs = regexp.MustCompile(`\b[Cc]laims?\s+(` + idPattern + `(?:\s*(?:,\s*and|,|and|&|/|-|–|—|to|through)\s*` + idPattern + `)*)`)
	oneID      = regexp.MustCompile(idPattern)
	// A peer Test is named TestPeer...; TestL2_Peer... is the form the peer
	// tests had before the rename and reads the same until it is gone.
	peerName = regexp.MustCompile(`^Test(?:` + idListPattern + `_)?Peer(?:$|[A-Z_0-9])`)
)

// IsPeer reports whether the named Test runs another recipe (go-zookeeper's
// zk.Lock, kazoo) beside ours. A peer's finding is reported on its own and
// proves no claim: its verdict would otherwise hang on another project's
// bugs.
func IsPeer(name string) bool { return peerName.MatchString(name) }

// citesOfTest returns the IDs a Test's name cites.
func citesOfTest(name string) ([]string, error) {
	m := testIDs.FindStringSubmatch(name)
	if m == nil {
		return nil, nil
	}
	return citesOfList(m[1])
}

// citesOfExample returns the IDs an Example's doc comment cites, each once.
// On a malformed list it returns the first error and the IDs of the others.
func citesOfExample(doc string) ([]string, error) {
	var out []string
	var first error
	for _, m := range exampleIDs.FindAllStringSubmatch(strings.Join(strings.Fields(doc), " "), -1) {
		ids, err := citesOfList(m[1])
		if err != nil && first == nil {
			first = err
		}
		out = append(out, ids...)
	}
	return dedupe(out), first
}

// citesOfList reads "S1 and S2", "R3-R6", "L2, L3", "R3toR6" or "L6R8".
func citesOfList(s string) ([]string, error) {
	locs := oneID.FindAllStringIndex(s, -1)
	var out []string
	for i := 0; i < len(locs); i++ {
		id := s[locs[i][0]:locs[i][1]]
		if i+1 < len(locs) {
			switch strings.TrimSpace(s[locs[i][1]:locs[i+1][0]]) {
			case "to", "through", "-", "–", "—":
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

// expandRange returns from..to, which must share a letter and run upwards.
func expandRange(from, to string) ([]string, error) {
	a, _ := strconv.Atoi(from[1:])
	b, _ := strconv.Atoi(to[1:])
	if from[0] != to[0] || a > b {
		return nil, fmt.Errorf("%q is not a range of one letter", from+"-"+to)
	}
	var out []string
	for i := a; i <= b; i++ {
		out = append(out, fmt.Sprintf("%c%d", from[0], i))
	}
	return out, nil
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

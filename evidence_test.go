package zk19_test

// The meta tests: they hold the claim index (testdata/claims.json), the root
// package's Tests and Examples, and the table of contents in doc.go to each
// other, and check claim E2 on the source. They read files only: no server,
// no Java, and they pass under -short.
//
// The index is kept in step by "go run ./cmd/evidence -sync" (proof lists
// from the tests, then doc.go); these tests are the rules it must meet.

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/claims"
)

// catalogue is the claim catalogue's list of IDs (S1–S3, Y1–Y6, L1–L10,
// R1–R8, F1–F10, T1–T3, E1–E4, X1–X2), the article section each letter
// belongs to, and the claims it marks "(beyond)".
var catalogue = struct {
	ranges  []struct{ letter, n int }
	section map[byte]string
	beyond  map[string]bool
}{
	ranges: []struct{ letter, n int }{{'S', 3}, {'Y', 6}, {'L', 10}, {'R', 8}, {'F', 10}, {'T', 3}, {'E', 4}, {'X', 2}},
	section: map[byte]string{
		'S': "§1", 'Y': "§2", 'L': "§3", 'R': "§4", 'F': "§5", 'T': "§6", 'E': "evidence", 'X': "exercises",
	},
	beyond: map[string]bool{"S1": true, "S2": true, "S3": true, "Y1": true, "Y2": true, "Y3": true,
		"Y4": true, "Y5": true, "Y6": true, "F8": true},
}

func catalogueIDs() []string {
	var ids []string
	for _, r := range catalogue.ranges {
		for i := 1; i <= r.n; i++ {
			ids = append(ids, fmt.Sprintf("%c%d", r.letter, i))
		}
	}
	return ids
}

// metaTests prove no claim of the article; they check the evidence itself.
// TestE2_NoSleepGuessesAWindow is not among them: it is claim E2's proof.
var metaTests = map[string]bool{
	"TestMain":                           true,
	"TestEveryClaimHasEvidence":          true,
	"TestDocTableOfContentsMatchesIndex": true,
}

var knownNeeds = map[string]bool{"faults": true, "ensemble-3": true, "ensemble-5": true}

// loadClaimIndex reads the claim index or stops the test.
func loadClaimIndex(t *testing.T) *claims.Index {
	t.Helper()
	ix, err := claims.Load(claimIndexPath)
	if _, ok := errors.AsType[*fs.PathError](err); ok {
		t.Fatalf("the claim index: %v", err)
	}
	if err != nil {
		t.Fatal(err) // it names the file
	}
	return ix
}

// rootFuncs returns the root package's Tests and Examples with the claims
// they cite (cmd/evidence -sync reads them the same way).
func rootFuncs(t *testing.T) []claims.Proof {
	t.Helper()
	funcs, err := claims.ScanProofs(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) == 0 {
		t.Fatal("no Test or Example in the root package's *_test.go files")
	}
	for _, rf := range funcs {
		if rf.Err != nil {
			t.Errorf("%s: %s: %v", where(rf), rf.Name, rf.Err)
		}
	}
	return funcs
}

func where(rf claims.Proof) string {
	return fmt.Sprintf("%s:%d", filepath.Base(rf.Pos.Filename), rf.Pos.Line)
}

// TestEveryClaimHasEvidence: the index names exactly the catalogue's 46
// claims, each with at least one Test or Example of this package that
// exists and cites it; and every Test and Example here cites a claim of the
// index and is listed as its proof.
func TestEveryClaimHasEvidence(t *testing.T) {
	ix := loadClaimIndex(t)
	funcs := rootFuncs(t)
	byName := map[string]claims.Proof{}
	for _, rf := range funcs {
		byName[rf.Name] = rf
	}

	sections := map[string]string{} // section name -> key
	for _, s := range ix.Sections {
		sections[s.Name()] = s.Key
	}
	var keys []string
	for _, s := range ix.Sections {
		keys = append(keys, s.Key)
	}
	if want := []string{"§1", "§2", "§3", "§4", "§5", "§6", "evidence", "exercises"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("index sections are %v; want %v", keys, want)
	}

	want := catalogueIDs()
	var got []string
	indexed := map[string]claims.Claim{}
	for _, c := range ix.Claims {
		if _, dup := indexed[c.ID]; dup {
			t.Errorf("claim %s appears twice in the index", c.ID)
		}
		indexed[c.ID] = c
		got = append(got, c.ID)
	}
	if !reflect.DeepEqual(got, want) {
		for _, id := range want {
			if _, ok := indexed[id]; !ok {
				t.Errorf("claim %s is missing from the index", id)
			}
		}
		wanted := map[string]bool{}
		for _, id := range want {
			wanted[id] = true
		}
		for _, id := range got {
			if !wanted[id] {
				t.Errorf("claim %s is in the index but not in the catalogue", id)
			}
		}
		if len(got) == len(want) {
			t.Errorf("the index lists the claims in the order %v; want the catalogue's %v", got, want)
		}
	}

	for _, c := range ix.Claims {
		if key, ok := sections[c.Section]; !ok {
			t.Errorf("claim %s: section %q is not one of the index's sections", c.ID, c.Section)
		} else if wantKey := catalogue.section[c.ID[0]]; key != wantKey {
			t.Errorf("claim %s: section %q; want the %s section", c.ID, c.Section, wantKey)
		}
		if strings.TrimSpace(c.Statement) == "" || strings.ContainsAny(c.Statement, "\n\r") {
			t.Errorf("claim %s: statement %q; want one non-empty line", c.ID, c.Statement)
		}
		if c.Beyond != catalogue.beyond[c.ID] {
			t.Errorf("claim %s: beyond is %v; the catalogue says %v", c.ID, c.Beyond, catalogue.beyond[c.ID])
		}
		for _, n := range c.Needs {
			if !knownNeeds[n] {
				t.Errorf("claim %s: needs %q; want one of faults, ensemble-3, ensemble-5", c.ID, n)
			}
		}
		if len(c.Proof) == 0 {
			t.Errorf("claim %s: no Test or Example proves it (its proof list is empty)", c.ID)
		}
		seen := map[string]bool{}
		for _, name := range c.Proof {
			if seen[name] {
				t.Errorf("claim %s: proof %s is listed twice", c.ID, name)
			}
			seen[name] = true
			rf, ok := byName[name]
			switch {
			case !ok:
				t.Errorf("claim %s: proof %s is not a Test or Example of the root package", c.ID, name)
			case !containsString(rf.Cites, c.ID) && rf.Example:
				t.Errorf("claim %s: proof %s (%s) does not name %s in its doc comment (cites %v)", c.ID, name, where(rf), c.ID, rf.Cites)
			case !containsString(rf.Cites, c.ID):
				t.Errorf("claim %s: proof %s (%s) does not carry %s in its name (cites %v)", c.ID, name, where(rf), c.ID, rf.Cites)
			}
		}
	}

	for _, rf := range funcs {
		if metaTests[rf.Name] {
			continue
		}
		kind := "Test " + rf.Name + " carries no claim ID in its name (TestS1_..., TestL6R8_..., TestR3toR6_...)"
		if rf.Example {
			kind = "Example " + rf.Name + " names no claim in its doc comment (\"(claim X1)\", \"(claims S1 and S2, §1)\")"
		}
		if len(rf.Cites) == 0 {
			t.Errorf("%s: %s", where(rf), kind)
		}
		for _, id := range rf.Cites {
			c, ok := indexed[id]
			switch {
			case !ok:
				t.Errorf("%s: %s cites %s, which is not a claim of the index", where(rf), rf.Name, id)
			case !containsString(c.Proof, rf.Name):
				t.Errorf("%s: %s cites %s, but claim %s's proof list lacks it (run: go run ./cmd/evidence -sync)", where(rf), rf.Name, id, id)
			}
		}
	}
	if !t.Failed() {
		n := 0
		for _, rf := range funcs {
			if !metaTests[rf.Name] {
				n++
			}
		}
		t.Logf("evidence: %d claims, each proved by at least one of the %d Tests and Examples of the root package", len(ix.Claims), n)
	}
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// allowedSleeps are the named constants a sleep may wait for. A session
// timeout is what some claims are about (E2); pollInterval is the pause
// between the checks of a bounded wait (waitFor), which gives up with what it
// last saw and never guesses that a window is open.
var allowedSleeps = []*regexp.Regexp{
	regexp.MustCompile(`SessionTimeout`),
	regexp.MustCompile(`^pollInterval$`),
}

// TestE2_NoSleepGuessesAWindow: no root test sleeps to guess that a window
// has opened (claim E2, "三个本机场景的证据"). Every time.Sleep, and every bare
// "<-time.After(d)" statement (a sleep by another name), must wait for a
// named constant of this package whose name says what it is: a session
// timeout, or a bounded wait's pollInterval. time.Sleep used as a value
// (passed or assigned) is refused too, because its argument cannot be seen.
func TestE2_NoSleepGuessesAWindow(t *testing.T) {
	claim(t, "E2", "三个本机场景的证据", "timing comes from hooks, gates and bounded waits; the only sleeps are named session-timeout constants")
	fset := token.NewFileSet()
	type parsed struct {
		name string
		file *ast.File
	}
	var files []parsed
	// Without type checking, a name counts as a constant when the root
	// package declares it with const and nowhere as anything else (a var,
	// a parameter, a := or a range variable that could shadow it).
	consts, others := map[string]bool{}, map[string]bool{}
	all, _ := filepath.Glob("*.go")
	for _, f := range all {
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				for _, s := range n.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for _, id := range vs.Names {
							if n.Tok == token.CONST {
								consts[id.Name] = true
							} else {
								others[id.Name] = true
							}
						}
					}
				}
			case *ast.Field:
				for _, id := range n.Names {
					others[id.Name] = true
				}
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					for _, e := range n.Lhs {
						if id, ok := e.(*ast.Ident); ok {
							others[id.Name] = true
						}
					}
				}
			case *ast.RangeStmt:
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						others[id.Name] = true
					}
				}
			}
			return true
		})
		if strings.HasSuffix(f, "_test.go") {
			files = append(files, parsed{f, af})
		}
	}

	// named reports whether e is an allowed named constant.
	named := func(e ast.Expr) (string, bool) {
		id, ok := e.(*ast.Ident)
		if !ok {
			return "", false
		}
		if !consts[id.Name] || others[id.Name] {
			return id.Name, false
		}
		for _, re := range allowedSleeps {
			if re.MatchString(id.Name) {
				return id.Name, true
			}
		}
		return id.Name, false
	}
	src := func(n ast.Node) string {
		p0, p1 := fset.Position(n.Pos()), fset.Position(n.End())
		b, err := os.ReadFile(p0.Filename)
		if err != nil || p1.Offset > len(b) {
			return "?"
		}
		return string(b[p0.Offset:p1.Offset])
	}

	sleeps := 0
	for _, pf := range files {
		timePkg := ""
		for _, im := range pf.file.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "time" {
				timePkg = "time"
				if im.Name != nil {
					timePkg = im.Name.Name
				}
			}
		}
		if timePkg == "" || timePkg == "_" || timePkg == "." {
			continue
		}
		isTimeFunc := func(e ast.Expr, fn string) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != fn {
				return false
			}
			x, ok := sel.X.(*ast.Ident)
			return ok && x.Name == timePkg
		}
		check := func(call *ast.CallExpr, what string) {
			sleeps++
			pos := fset.Position(call.Pos())
			at := fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)
			if len(call.Args) != 1 {
				t.Errorf("E2 violated: %s: %s has %d arguments", at, src(call), len(call.Args))
				return
			}
			if name, ok := named(call.Args[0]); ok {
				t.Logf("%s: %s waits for the named constant %s", at, what, name)
				return
			}
			stmt := src(call)
			if what == "<-time.After" {
				stmt = "<-" + stmt
			}
			t.Errorf("E2 violated: %s: %s guesses a window; want a named constant: a session timeout (name contains SessionTimeout) or a bounded wait's pollInterval", at, stmt)
		}
		calls := map[*ast.SelectorExpr]bool{}
		inSelect := map[ast.Stmt]bool{} // "case <-time.After(d):" is a bounded wait
		ast.Inspect(pf.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CommClause:
				inSelect[n.Comm] = true
			case *ast.CallExpr:
				if isTimeFunc(n.Fun, "Sleep") {
					calls[n.Fun.(*ast.SelectorExpr)] = true
					check(n, "time.Sleep")
				}
			case *ast.ExprStmt:
				// "<-time.After(d)" on its own is a sleep.
				if u, ok := n.X.(*ast.UnaryExpr); ok && u.Op == token.ARROW && !inSelect[n] {
					if call, ok := u.X.(*ast.CallExpr); ok && isTimeFunc(call.Fun, "After") {
						check(call, "<-time.After")
					}
				}
			}
			return true
		})
		ast.Inspect(pf.file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && isTimeFunc(sel, "Sleep") && !calls[sel] {
				pos := fset.Position(sel.Pos())
				t.Errorf("E2 violated: %s:%d: time.Sleep is used as a value, so what it waits for cannot be checked", filepath.Base(pos.Filename), pos.Line)
			}
			return true
		})
	}
	if !t.Failed() {
		t.Logf("evidence: %d sleeps in %d root test files; each one waits for a named constant, none guesses a window", sleeps, len(files))
	}
}

// TestDocTableOfContentsMatchesIndex: doc.go's package comment is the
// article's table of contents and says what the index says: one "# "
// heading per section in the index's order, and under its section one
// bullet per claim, "ID (beyond): statement. Proof: TestX, ExampleY", with
// the index's statement and proof list. Regenerate with
// "go run ./cmd/evidence -doc".
func TestDocTableOfContentsMatchesIndex(t *testing.T) {
	ix := loadClaimIndex(t)
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatalf("parse doc.go: %v", err)
	}
	if af.Name.Name != "zk19" || af.Doc == nil {
		t.Fatalf("doc.go: package %s with doc %v; want package zk19 with a package comment", af.Name.Name, af.Doc != nil)
	}
	const regen = " (regenerate: go run ./cmd/evidence -doc)"

	// Read headings and bullets; a bullet's wrapped lines are indented four
	// spaces.
	type bullet struct {
		text, heading string
	}
	var headings []string
	var bullets []bullet
	heading := ""
	for _, l := range strings.Split(af.Doc.Text(), "\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			heading = strings.TrimPrefix(l, "# ")
			headings = append(headings, heading)
		case strings.HasPrefix(l, "  - "):
			bullets = append(bullets, bullet{strings.TrimPrefix(l, "  - "), heading})
		case strings.HasPrefix(l, "    ") && len(bullets) > 0:
			bullets[len(bullets)-1].text += " " + strings.TrimSpace(l)
		}
	}

	var wantHeadings []string
	for _, s := range ix.Sections {
		wantHeadings = append(wantHeadings, s.Name())
	}
	if !reflect.DeepEqual(headings, wantHeadings) {
		t.Errorf("doc.go headings %q; want the index's sections %q%s", headings, wantHeadings, regen)
	}

	line := regexp.MustCompile(`^([A-Z][0-9]{1,2})( \(beyond\))?: (.*)$`)
	found := map[string]bool{}
	for _, c := range ix.Claims {
		var b *bullet
		for i := range bullets {
			if m := line.FindStringSubmatch(bullets[i].text); m != nil && m[1] == c.ID {
				if b != nil {
					t.Errorf("doc.go: claim %s has two bullets%s", c.ID, regen)
				}
				b = &bullets[i]
			}
		}
		if b == nil {
			t.Errorf("doc.go: claim %s has no bullet%s", c.ID, regen)
			continue
		}
		found[c.ID] = true
		m := line.FindStringSubmatch(b.text)
		if b.heading != c.Section {
			t.Errorf("doc.go: claim %s is under %q; want %q%s", c.ID, b.heading, c.Section, regen)
		}
		if (m[2] != "") != c.Beyond {
			t.Errorf("doc.go: claim %s beyond marker %v; want %v%s", c.ID, m[2] != "", c.Beyond, regen)
		}
		i := strings.LastIndex(m[3], ". Proof: ")
		if i < 0 {
			t.Errorf("doc.go: claim %s: bullet %q has no \". Proof: \"%s", c.ID, b.text, regen)
			continue
		}
		if stmt := m[3][:i]; stmt != strings.TrimSuffix(c.Statement, ".") {
			t.Errorf("doc.go: claim %s says %q; the index says %q%s", c.ID, stmt, c.Statement, regen)
		}
		var proof []string
		if p := m[3][i+len(". Proof: "):]; p != "none yet" {
			proof = strings.Split(p, ", ")
		}
		if !reflect.DeepEqual(proof, c.Proof) && (len(proof) != 0 || len(c.Proof) != 0) {
			t.Errorf("doc.go: claim %s is proved by %v; the index says %v%s", c.ID, proof, c.Proof, regen)
		}
	}
	for _, b := range bullets {
		if m := line.FindStringSubmatch(b.text); m == nil || !found[m[1]] {
			t.Errorf("doc.go: bullet %q names no claim of the index%s", b.text, regen)
		}
	}
}

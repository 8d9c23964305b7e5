package claims

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// catalogue is the claim catalogue's list of IDs, first wave (S1–S3,
// Y1–Y6, L1–L10, R1–R8, F1–F10, T1–T3, E1–E4, X1–X2) and second (S4, Y7,
// Y8, L11, F11, F12, T4, T5, E5, A1, C1) and third (Y9, L12), the article section each letter
// belongs to, and the claims it marks "(beyond)".
var catalogue = struct {
	ranges  []struct{ letter, n int }
	section map[byte]string
	beyond  map[string]bool
	// placed are the claims the article makes outside their letter's
	// section: F10's two observations are stated with the evidence.
	placed map[string]string
}{
	ranges: []struct{ letter, n int }{{'S', 4}, {'Y', 9}, {'L', 12}, {'R', 8}, {'F', 12}, {'T', 5}, {'E', 5}, {'X', 2}, {'A', 1}, {'C', 1}},
	section: map[byte]string{
		'S': "§1", 'Y': "§2", 'L': "§3", 'R': "§4", 'F': "§5", 'T': "§6", 'E': "§7", 'X': "§8", 'A': "§7", 'C': "§5",
	},
	beyond: map[string]bool{"S1": true, "S2": true, "S3": true, "Y1": true, "Y2": true, "Y3": true,
		"Y4": true, "Y5": true, "Y6": true, "F8": true, "Y7": true, "T5": true, "E5": true, "A1": true, "C1": true, "Y9": true},
	// E5 is about the proxy's codec, which the article describes in §4.
	placed: map[string]string{"F10": "§7", "E5": "§4"},
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

// MetaTests prove no claim of the article; they check the evidence itself.
// TestE2_NoSleepGuessesAWindow is not among them: it is claim E2's proof.
var MetaTests = map[string]bool{
	"TestMain":                           true,
	"TestEveryClaimHasEvidence":          true,
	"TestClaimsCiteTheirParagraphs":      true,
	"TestDocTableOfContentsMatchesIndex": true,
	"TestProofsFollowTheArticle":         true,
	"TestEverySentenceHasAnEntry":        true,
}

var knownNeeds = map[string]bool{"faults": true, "ensemble-3": true, "ensemble-5": true, "jdk": true}

// LoadClaimIndex reads the claim index or stops the test.
func LoadClaimIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := Load(IndexPath)
	if _, ok := errors.AsType[*fs.PathError](err); ok {
		t.Fatalf("the claim index: %v", err)
	}
	if err != nil {
		t.Fatal(err) // it names the file
	}
	return ix
}

// ScanTests returns the Tests and Examples of the package in dir with the
// claims they cite (cmd/evidence -sync reads them the same way).
func ScanTests(t *testing.T, dir string) []Proof {
	t.Helper()
	funcs, err := ScanProofs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) == 0 {
		t.Fatalf("no Test or Example in the *_test.go files of %s", dir)
	}
	for _, rf := range funcs {
		if rf.Err != nil {
			t.Errorf("%s: %s: %v", proofWhere(rf), rf.Name, rf.Err)
		}
	}
	return funcs
}

func proofWhere(rf Proof) string {
	return fmt.Sprintf("%s:%d", filepath.Base(rf.Pos.Filename), rf.Pos.Line)
}

// CheckCatalogue holds the index's IDs to the catalogue's and returns the
// claims by ID. A catalogue ID missing from the claims must be pending; a
// pending ID among the claims is a rewording that waits for its proof.
func CheckCatalogue(t *testing.T, ix *Index) map[string]Claim {
	t.Helper()
	var want, pending []string
	for _, c := range ix.Pending {
		if !slices.Contains(catalogueIDs(), c.ID) || slices.Contains(pending, c.ID) {
			t.Errorf("pending claim %s is not in the catalogue, or pending twice", c.ID)
		}
		pending = append(pending, c.ID)
	}
	for _, id := range catalogueIDs() {
		if ix.Claim(id) != nil || !slices.Contains(pending, id) {
			want = append(want, id)
		}
	}
	var got []string
	indexed := map[string]Claim{}
	for _, c := range ix.Claims {
		if _, dup := indexed[c.ID]; dup {
			t.Errorf("claim %s appears twice in the index", c.ID)
		}
		indexed[c.ID] = c
		got = append(got, c.ID)
	}
	if reflect.DeepEqual(got, want) {
		return indexed
	}
	for _, id := range want {
		if _, ok := indexed[id]; !ok {
			t.Errorf("claim %s is missing from the index", id)
		}
	}
	for _, id := range got {
		if !slices.Contains(want, id) {
			t.Errorf("claim %s is in the index but not in the catalogue", id)
		}
	}
	if len(got) == len(want) {
		t.Errorf("the index lists the claims in the order %v; want the catalogue's %v", got, want)
	}
	return indexed
}

// CheckClaimEntry checks one claim's fields other than its proofs.
func CheckClaimEntry(t *testing.T, ix *Index, c Claim) {
	t.Helper()
	wantKey := catalogue.section[c.ID[0]]
	if k, ok := catalogue.placed[c.ID]; ok {
		wantKey = k
	}
	switch {
	case ix.Section(c.Section) == nil:
		t.Errorf("claim %s: section %q is not a key of the index's sections", c.ID, c.Section)
	case c.Section != wantKey:
		t.Errorf("claim %s: section %q; want %s", c.ID, c.Section, wantKey)
	}
	if c.Paragraph < 1 {
		t.Errorf("claim %s: paragraph %d; want the paragraph of %s that makes it, from 1", c.ID, c.Paragraph, c.Section)
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
}

// CheckProofList checks that each proof of c exists and cites c; a test of
// another package is found in its directory.
func CheckProofList(t *testing.T, c Claim, funcs []Proof) {
	t.Helper()
	if len(c.Proof) == 0 {
		t.Errorf("claim %s: no Test or Example proves it (its proof list is empty)", c.ID)
	}
	for i, name := range c.Proof {
		if slices.Contains(c.Proof[:i], name) {
			t.Errorf("claim %s: proof %s is listed twice", c.ID, name)
		}
		dir, test := SplitProof(name)
		if dir != "" {
			if !slices.ContainsFunc(ScanTests(t, dir), func(p Proof) bool { return p.Name == test && !p.Example }) {
				t.Errorf("claim %s: proof %s: %s has no Test %s", c.ID, name, dir, test)
			}
			continue
		}
		at := slices.IndexFunc(funcs, func(p Proof) bool { return p.Name == name })
		switch {
		case at < 0:
			t.Errorf("claim %s: proof %s is not a Test or Example of the root package", c.ID, name)
		case funcs[at].Peer:
			t.Errorf("claim %s: proof %s (%s) is a peer test; a peer proves no claim", c.ID, name, proofWhere(funcs[at]))
		case !slices.Contains(funcs[at].Cites, c.ID) && funcs[at].Example:
			t.Errorf("claim %s: proof %s (%s) does not name %s in its doc comment (cites %v)", c.ID, name, proofWhere(funcs[at]), c.ID, funcs[at].Cites)
		case !slices.Contains(funcs[at].Cites, c.ID):
			t.Errorf("claim %s: proof %s (%s) does not carry %s in its name (cites %v)", c.ID, name, proofWhere(funcs[at]), c.ID, funcs[at].Cites)
		}
	}
}

// CheckEveryTestCites checks that every root Test and Example but the meta and peer
// tests cites a claim of the index and is in its proof list.
func CheckEveryTestCites(t *testing.T, funcs []Proof, indexed map[string]Claim) {
	t.Helper()
	for _, rf := range funcs {
		if MetaTests[rf.Name] || rf.Peer {
			continue
		}
		kind := "Test " + rf.Name + " carries no claim ID in its name (TestS1_..., TestL6R8_..., TestR3toR6_...) and is no peer test (TestPeer...)"
		if rf.Example {
			kind = "Example " + rf.Name + " names no claim in its doc comment (\"(claim X1)\", \"(claims S1 and S2, §1)\")"
		}
		if len(rf.Cites) == 0 {
			t.Errorf("%s: %s", proofWhere(rf), kind)
		}
		for _, id := range rf.Cites {
			c, ok := indexed[id]
			switch {
			case !ok:
				t.Errorf("%s: %s cites %s, which is not a claim of the index", proofWhere(rf), rf.Name, id)
			case !slices.Contains(c.Proof, rf.Name):
				t.Errorf("%s: %s cites %s, but claim %s's proof list lacks it (run: go run ./cmd/evidence -sync)", proofWhere(rf), rf.Name, id, id)
			}
		}
	}
}

var documentaryID = regexp.MustCompile(`^D[0-9]+$`)

// CheckDocumentary checks that each statement the index records as not executable has
// an ID, a place in the article, a subject and a reason.
func CheckDocumentary(t *testing.T, ix *Index) {
	t.Helper()
	if len(ix.Documentary) == 0 {
		t.Errorf("the index records no documentary statement; want the article's statements that are not executable here")
	}
	seen := map[string]bool{}
	for _, d := range ix.Documentary {
		if !documentaryID.MatchString(d.ID) || seen[d.ID] {
			t.Errorf("documentary %q: want a unique ID D1, D2, ...", d.ID)
		}
		seen[d.ID] = true
		if ix.Section(d.Section) == nil || d.Paragraph < 1 {
			t.Errorf("documentary %s: at %q; want a section key of the index and a paragraph from 1", d.ID, d.Where())
		}
		if strings.TrimSpace(d.Subject) == "" || strings.TrimSpace(d.Reason) == "" {
			t.Errorf("documentary %s: subject %q, reason %q; want both", d.ID, d.Subject, d.Reason)
		}
	}
}

// CheckSources checks that each source dependency names claims of the index, tests
// that prove them, and where it was read at each version.
func CheckSources(t *testing.T, ix *Index) {
	t.Helper()
	if len(ix.Sources) == 0 {
		t.Errorf("the index lists no source dependency; want the server code the claims rest on")
	}
	for _, s := range ix.Sources {
		var proofs []string
		for _, id := range s.Claims {
			c := ix.Claim(id)
			if c == nil {
				t.Errorf("source %s: claim %s is not in the index", s.Code, id)
				continue
			}
			proofs = append(proofs, c.Proof...)
		}
		for _, name := range s.Tests {
			if !slices.Contains(proofs, name) {
				t.Errorf("source %s: test %s proves none of its claims %v", s.Code, name, s.Claims)
			}
		}
		if s.File == "" || s.Role == "" || len(s.Tests) == 0 || len(s.Read) == 0 {
			t.Errorf("source %s: want a file, a role, tests and where it was read", s.Code)
		}
		for _, r := range s.Read {
			if r.Version == "" || r.Tag == "" || r.Method == "" || r.Line < 1 {
				t.Errorf("source %s: read at %+v; want a version, a tag, a method and a line", s.Code, r)
			}
		}
	}
}

// CheckArticle runs check on the article's text, ZK19_ARTICLE or where the
// index says it is, and reports each error it finds; it returns the
// article's file name. A test that checks it skips where it is not.
func CheckArticle(t *testing.T, ix *Index, check func(article string) ([]error, error)) string {
	t.Helper()
	path := os.Getenv("ZK19_ARTICLE")
	if path == "" {
		path = ix.ArticleFile
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		Skip(t, "skipped: the article is not at %q (%v); set ZK19_ARTICLE to its path to check the index against it", path, err)
	}
	if err != nil {
		t.Fatalf("the article: %v", err)
	}
	errs, err := check(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, err := range errs {
		t.Errorf("%s: %v", filepath.Base(path), err)
	}
	return filepath.Base(path)
}

// sessionTimeoutConst is how a constant that a sleep may wait for is named:
// a session timeout is what some claims are about (E2).
var sessionTimeoutConst = regexp.MustCompile(`SessionTimeout`)

// SleepBites are sources the E2 check must refuse, and bounded waits it must
// let pass.
var SleepBites = []struct {
	Name, Src string
	Refused   bool
}{
	{"a guessed sleep", "func f() { time.Sleep(50 * time.Millisecond) }", true},
	{"a sleep of a session timeout", "func f() { time.Sleep(aSessionTimeout) }", false},
	{"a select on a timer alone", "func f() { select { case <-time.After(time.Second): } }", true},
	{"a select on two timers", "func f() { select { case <-time.After(1): case <-time.After(2): } }", true},
	{"a bare timer receive", "func f() { tm := time.NewTimer(time.Second); <-tm.C }", true},
	{"a receive from a saved time.After", "func f() { d := time.After(time.Second); <-d }", true},
	{"a receive from a declared time.After", "func f() { var d = time.After(time.Second); <-d }", true},
	{"a bare time.After receive", "func f() { <-time.After(time.Second) }", true},
	{"a range over a ticker", "func f() { for range time.Tick(time.Second) {} }", true},
	{"a guessed AfterFunc", "func f(g func()) { time.AfterFunc(time.Second, g) }", true},
	{"time.Sleep as a value", "func f() { s := time.Sleep; s(1) }", true},
	{"a bounded wait on a real event", "func f(ch chan int) { select { case <-ch: case <-time.After(time.Second): } }", false},
	{"a bounded wait with a saved timer", "func f(ch chan int) { d := time.After(time.Second); select { case v := <-ch: _ = v; case <-d: } }", false},
	{"a bounded send", "func f(ch chan int) { select { case ch <- 1: case <-time.After(time.Second): } }", false},
}

// ScanSleeps finds the waits on time alone in files: allowed ones (for a named
// session-timeout constant) and refused ones, each with its place. Names
// count as constants when decls, of the whole package, declare them with
// const and nowhere as anything else (a var, a parameter, a := or a range
// variable that could shadow them): the check has no type information.
func ScanSleeps(fset *token.FileSet, decls, files []*ast.File) (allowed, refused []string) {
	consts := packageConsts(decls)
	for _, f := range files {
		s := &e2File{fset: fset, consts: consts, timePkg: timeImport(f), timers: map[string]bool{}, inSelect: map[ast.Expr]bool{}}
		if s.timePkg == "" {
			continue
		}
		ast.Inspect(f, s.visit)
		allowed, refused = append(allowed, s.allowed...), append(refused, s.refused...)
	}
	return allowed, refused
}

func packageConsts(files []*ast.File) map[string]bool {
	consts, others := map[string]bool{}, map[string]bool{}
	note := func(isConst bool, ids ...*ast.Ident) {
		for _, id := range ids {
			if id == nil {
				continue
			}
			if isConst {
				consts[id.Name] = true
			} else {
				others[id.Name] = true
			}
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				for _, s := range n.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						note(n.Tok == token.CONST, vs.Names...)
					}
				}
			case *ast.Field:
				note(false, n.Names...)
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					for _, e := range n.Lhs {
						id, _ := e.(*ast.Ident)
						note(false, id)
					}
				}
			case *ast.RangeStmt:
				for _, e := range []ast.Expr{n.Key, n.Value} {
					id, _ := e.(*ast.Ident)
					note(false, id)
				}
			}
			return true
		})
	}
	for name := range others {
		delete(consts, name)
	}
	return consts
}

// timeImport is the name file f imports package time as, or "".
func timeImport(f *ast.File) string {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "time" {
			if im.Name == nil {
				return "time"
			}
			if n := im.Name.Name; n != "_" && n != "." {
				return n
			}
		}
	}
	return ""
}

// e2File is the E2 check of one file.
type e2File struct {
	fset             *token.FileSet
	consts           map[string]bool
	timePkg          string
	timers           map[string]bool     // variables holding time.After or time.Tick channels
	inSelect         map[ast.Expr]bool   // receives that are cases of a select with a real event
	sleepCalls       []*ast.SelectorExpr // time.Sleep called, not used as a value
	allowed, refused []string
}

func (s *e2File) at(n ast.Node) string {
	p := s.fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

func (s *e2File) isTime(e ast.Expr, fn string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != fn {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == s.timePkg
}

// timerChan reports whether e is a channel that only time fills: a call of
// time.After or time.Tick, a variable set from one, or a timer's or
// ticker's C.
func (s *e2File) timerChan(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		return s.isTime(e.Fun, "After") || s.isTime(e.Fun, "Tick")
	case *ast.Ident:
		return s.timers[e.Name]
	case *ast.SelectorExpr:
		return e.Sel.Name == "C"
	case *ast.ParenExpr:
		return s.timerChan(e.X)
	}
	return false
}

// commRecv returns the channel a select case receives from, or nil for a
// send or the default case.
func commRecv(st ast.Stmt) ast.Expr {
	var e ast.Expr
	switch st := st.(type) {
	case *ast.ExprStmt:
		e = st.X
	case *ast.AssignStmt:
		if len(st.Rhs) == 1 {
			e = st.Rhs[0]
		}
	}
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		return u
	}
	return nil
}

func (s *e2File) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.AssignStmt:
		for i, r := range n.Rhs {
			if id, ok := n.Lhs[min(i, len(n.Lhs)-1)].(*ast.Ident); ok && s.timerChan(r) {
				s.timers[id.Name] = true
			}
		}
	case *ast.ValueSpec:
		for i, v := range n.Values {
			if i < len(n.Names) && s.timerChan(v) {
				s.timers[n.Names[i].Name] = true
			}
		}
	case *ast.SelectStmt:
		s.selectStmt(n)
	case *ast.UnaryExpr:
		if n.Op == token.ARROW && !s.inSelect[n] && s.timerChan(n.X) {
			s.timeAlone(n, "a receive from a timer outside a select", timerArg(n.X))
		}
	case *ast.RangeStmt:
		if s.timerChan(n.X) {
			s.refuse(n, "a range over a ticker waits on time alone; use internal/server/tb")
		}
	case *ast.CallExpr:
		switch {
		case s.isTime(n.Fun, "Sleep"):
			s.sleepCalls = append(s.sleepCalls, n.Fun.(*ast.SelectorExpr))
			s.timeAlone(n, "time.Sleep", n.Args...)
		case s.isTime(n.Fun, "AfterFunc") && len(n.Args) > 0:
			s.timeAlone(n, "time.AfterFunc", n.Args[0])
		}
	case *ast.SelectorExpr:
		if s.isTime(n, "Sleep") && !slices.Contains(s.sleepCalls, n) {
			s.refuse(n, "time.Sleep is used as a value, so what it waits for cannot be checked")
		}
	}
	return true
}

// selectStmt lets a select's timer cases pass when another case waits for
// a real event (a send, or a receive from a channel time does not fill);
// a select on timers alone is a sleep.
func (s *e2File) selectStmt(n *ast.SelectStmt) {
	var timers []ast.Expr
	event := false
	for _, c := range n.Body.List {
		cc := c.(*ast.CommClause)
		switch recv := commRecv(cc.Comm); {
		case cc.Comm == nil:
		case recv == nil:
			event = true // a send
		case s.timerChan(recv.(*ast.UnaryExpr).X):
			timers = append(timers, recv)
		default:
			event = true
		}
	}
	if len(timers) > 0 && !event {
		s.refuse(n, "a select whose only cases are timers is a sleep by another name; want a real event beside the timer")
	}
	for _, r := range timers {
		s.inSelect[r] = true // judged with its select
	}
}

// timerArg is the duration of a time.After call, or nil where it cannot be
// seen (a timer's C, a saved channel).
func timerArg(e ast.Expr) ast.Expr {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		return call.Args[0]
	}
	return nil
}

// timeAlone judges a wait on time alone by its duration.
func (s *e2File) timeAlone(n ast.Node, what string, args ...ast.Expr) {
	if len(args) != 1 || args[0] == nil {
		s.refuse(n, what+" waits on time alone for a duration this check cannot see; want a named session-timeout constant")
		return
	}
	if id, ok := args[0].(*ast.Ident); ok && s.consts[id.Name] && sessionTimeoutConst.MatchString(id.Name) {
		s.allowed = append(s.allowed, fmt.Sprintf("%s: %s waits for the named session timeout %s", s.at(n), what, id.Name))
		return
	}
	s.refuse(n, fmt.Sprintf("%s(%s) guesses a window; want a named constant that is a session timeout (its name contains SessionTimeout)", what, s.src(args[0])))
}

func (s *e2File) refuse(n ast.Node, why string) {
	s.refused = append(s.refused, s.at(n)+": "+why)
}

// src is e as written, for the message.
func (s *e2File) src(e ast.Expr) string {
	p0, p1 := s.fset.Position(e.Pos()), s.fset.Position(e.End())
	b, err := os.ReadFile(p0.Filename)
	if err != nil || p1.Offset > len(b) {
		return "…"
	}
	return string(b[p0.Offset:p1.Offset])
}

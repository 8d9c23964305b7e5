package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Target is a file whose code is mutated: its path relative to the module
// root (slash-separated) and, if set, the only functions mutated in it
// (a method is named by its name alone).
type Target struct {
	File  string
	Funcs []string
}

// targets are the files of the operator run: the recipe, the resources, and
// the parts of the fault proxy that decide what is lost or held.
var targets = []Target{
	{File: "lock/lock.go"},
	{File: "lock/attempt.go"},
	{File: "lock/held.go"},
	{File: "lock/cleanup.go"},
	{File: "lock/recover.go"},
	{File: "lock/order.go"},
	{File: "lock/trace.go"},
	{File: "lock/link.go"},
	{File: "lock/locktrace/locktrace.go"},
	{File: "fence/token.go"},
	{File: "fence/tokentext.go"},
	{File: "fence/resource.go"},
	{File: "fence/marks.go"},
	{File: "fence/durable.go"},
	{File: "fence/dialect.go"},
	{File: "fence/fencehttp/fencehttp.go"},
	{File: "fence/fencetest/fencetest.go"},
	// The matching of LoseReply and LoseRequest, and which drop waits for a
	// reply; HoldCommit's matching and hold; what a reply does to a drop.
	{File: "internal/server/faultproxy/drop.go", Funcs: []string{"check", "request", "under", "matchingDrops", "bindFirst", "boundDrop"}},
	{File: "internal/server/faultproxy/quorum.go", Funcs: []string{"check", "readTxn", "matches", "holdPacket"}},
	{File: "internal/server/faultproxy/pipe.go", Funcs: []string{"replyArrived"}},
}

// notTargets are the non-test files of lock/ and fence/ (subpackages
// included) that the operator run leaves out, each with the reason; a
// file of those packages that is neither a target nor here fails
// TestEveryFileOfLockAndFenceIsATarget, and so does one here that has an
// operator to mutate.
var notTargets = map[string]string{
	"fence/mark.go":               "no operator applies: an init that sets mark.Clear, and clearMark's type switch of returns",
	"fence/internal/mark/mark.go": "no function: the declaration of mark.Clear, set by package fence",
}

// Operators, as the report names them.
const (
	opBoundary = "conditional-boundary" // < <=, > >=
	opNegate   = "negate-conditional"   // == !=, < >=, > <=
	opLogical  = "logical"              // && ||
	opNot      = "remove-not"           // !x → x
	opArith    = "arithmetic"           // + -, += -=
	opIncDec   = "increment-decrement"  // ++ --
	opBool     = "return-bool"          // return true ↔ return false
	opCall     = "remove-call"          // a call statement → {}
)

// Mutant is one change of one operator at one place. Start and End are
// byte offsets into the file's source; the mutant replaces them with Repl.
type Mutant struct {
	File   string `json:"file"` // relative to the module root, slash-separated
	Line   int    `json:"line"`
	Col    int    `json:"col"`
	Op     string `json:"op"`
	Func   string `json:"func"`
	Orig   string `json:"orig"` // the expression or statement before
	Mut    string `json:"mut"`  // and after
	Start  int    `json:"-"`
	End    int    `json:"-"`
	Repl   string `json:"-"`
	CoverL int    `json:"coverLine"` // the position whose coverage decides: line
	CoverC int    `json:"coverCol"`  // and column
	// What a schema (schema.go) needs: the byte offsets of the node the
	// mutant changes, whether that node is a statement, and whether the
	// statement stands where only a simple statement may (a for's init or
	// post, an if's or a switch's init).
	NodeStart int  `json:"-"`
	NodeEnd   int  `json:"-"`
	Stmt      bool `json:"-"`
	Simple    bool `json:"-"`
}

// ID names the mutant uniquely within one source tree.
func (m Mutant) ID() string {
	return fmt.Sprintf("%s:%d:%d %s %s → %s", m.File, m.Line, m.Col, m.Op, m.Orig, m.Mut)
}

// Apply returns src with the mutation made.
func (m Mutant) Apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.Repl))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Repl...)
	return append(out, src[m.End:]...)
}

// skippedCalls are call statements not removed: logging, the locks of a
// critical section (their removal is a deadlock or a data race the Go race
// detector, not a claim, is for) and the recipe's test seam (its calls only
// tell a test what happened).
func skippedCall(call *ast.CallExpr) bool {
	name := ""
	switch f := call.Fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
		if x, ok := f.X.(*ast.SelectorExpr); ok && x.Sel.Name == "trace" {
			return true
		}
		if x, ok := f.X.(*ast.Ident); ok && (x.Name == "tr" || x.Name == "trace") {
			return true
		}
	}
	switch {
	case strings.HasPrefix(name, "log"), strings.HasPrefix(name, "Log"):
		return true
	case name == "Lock", name == "Unlock", name == "RLock", name == "RUnlock":
		return true
	}
	return false
}

// Generate returns the mutants of the targets, read from root, in file
// order, then position, then operator.
func Generate(root string, ts []Target) ([]Mutant, error) {
	var out []Mutant
	for _, t := range ts {
		ms, err := generateFile(root, t)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// pkgTypes type-checks the package of file (its non-test files) as far as
// it can without the module's dependencies, to tell string + from number +.
func pkgTypes(fset *token.FileSet, dir string, file *ast.File, name string) *types.Info {
	files := []*ast.File{file}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if n == name || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err == nil && f.Name.Name == file.Name.Name {
			files = append(files, f)
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: importer.Default(), Error: func(error) {}}
	_, _ = conf.Check(file.Name.Name, fset, files, info)
	return info
}

func generateFile(root string, t Target) ([]Mutant, error) {
	path := filepath.Join(root, filepath.FromSlash(t.File))
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return generateSrc(t, src, func(fset *token.FileSet, f *ast.File) *types.Info {
		return pkgTypes(fset, filepath.Dir(path), f, filepath.Base(path))
	})
}

// generateSrc makes the mutants of one file's source; types, if not nil,
// gives what the type checker knows of its expressions.
func generateSrc(t Target, src []byte, typesOf func(*token.FileSet, *ast.File) *types.Info) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, t.File, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var info *types.Info
	if typesOf != nil {
		info = typesOf(fset, f)
	}
	g := &gen{t: t, fset: fset, src: src, info: info}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if len(t.Funcs) > 0 && !contains(t.Funcs, fd.Name.Name) {
			continue
		}
		g.fn = funcName(fd)
		g.caseLists = caseLists(fd.Body)
		g.simple = simpleSlots(fd.Body)
		ast.Inspect(fd.Body, g.visit)
	}
	sort.SliceStable(g.out, func(i, j int) bool {
		a, b := g.out[i], g.out[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.Op < b.Op
	})
	return g.out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

type gen struct {
	t         Target
	fset      *token.FileSet
	src       []byte
	info      *types.Info
	fn        string
	caseLists []caseList
	simple    map[ast.Stmt]bool
	out       []Mutant
}

// simpleSlots is the statements of body that stand where Go allows only a
// simple statement: a for's init and post, an if's or a switch's init.
func simpleSlots(body *ast.BlockStmt) map[ast.Stmt]bool {
	out := map[ast.Stmt]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ForStmt:
			out[n.Init], out[n.Post] = true, true
		case *ast.IfStmt:
			out[n.Init] = true
		case *ast.SwitchStmt:
			out[n.Init] = true
		case *ast.TypeSwitchStmt:
			out[n.Init] = true
		}
		return true
	})
	return out
}

// caseList is the expressions of a case clause (or a select's comm
// clause), from..to, and the switch (or select) they belong to.
type caseList struct {
	from, to, sw token.Pos
}

// caseLists returns the case clauses' expression lists in body. The
// coverage of a case expression is not a block of its own: cover counts
// the statements before the switch, then each clause's body. Whether the
// expression ran is whether the switch was reached (the first clause's
// expression always runs; a later one at least may), so its coverage is
// the switch statement's.
func caseLists(body *ast.BlockStmt) []caseList {
	var out []caseList
	ast.Inspect(body, func(n ast.Node) bool {
		var sw ast.Node
		var clauses []ast.Stmt
		switch n := n.(type) {
		case *ast.SwitchStmt:
			sw, clauses = n, n.Body.List
		case *ast.TypeSwitchStmt:
			sw, clauses = n, n.Body.List
		case *ast.SelectStmt:
			sw, clauses = n, n.Body.List
		default:
			return true
		}
		for _, c := range clauses {
			switch c := c.(type) {
			case *ast.CaseClause:
				out = append(out, caseList{from: c.Pos(), to: c.Colon, sw: sw.Pos()})
			case *ast.CommClause:
				out = append(out, caseList{from: c.Pos(), to: c.Colon, sw: sw.Pos()})
			}
		}
		return true
	})
	return out
}

func (g *gen) off(p token.Pos) int { return g.fset.Position(p).Offset }

// text is the source of n on one line, shortened for the report.
func (g *gen) text(n ast.Node) string { return oneLine(string(g.src[g.off(n.Pos()):g.off(n.End())])) }

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}

// add records a mutant of node n that replaces [start, end) with repl.
func (g *gen) add(op string, n ast.Node, at token.Pos, start, end int, repl string) {
	pos := g.fset.Position(at)
	cover := pos
	for _, c := range g.caseLists {
		if at >= c.from && at < c.to {
			cover = g.fset.Position(c.sw) // the innermost comes last
		}
	}
	nStart, nEnd := g.off(n.Pos()), g.off(n.End())
	mut := string(g.src[nStart:start]) + repl + string(g.src[end:nEnd])
	m := Mutant{
		File: g.t.File, Line: pos.Line, Col: pos.Column, Op: op, Func: g.fn,
		Orig: g.text(n), Mut: oneLine(mut),
		Start: start, End: end, Repl: repl, CoverL: cover.Line, CoverC: cover.Column,
		NodeStart: nStart, NodeEnd: nEnd,
	}
	if st, ok := n.(ast.Stmt); ok {
		m.Stmt, m.Simple = true, g.simple[st]
	}
	if op == opBool { // the schema flips the literal alone
		m.NodeStart, m.NodeEnd, m.Stmt = start, end, false
	}
	g.out = append(g.out, m)
}

var (
	boundary = map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}
	negate   = map[token.Token]token.Token{token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR}
	logical  = map[token.Token]token.Token{token.LAND: token.LOR, token.LOR: token.LAND}
	arith    = map[token.Token]token.Token{token.ADD: token.SUB, token.SUB: token.ADD, token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN}
)

// stringy reports whether e is (or may be, by its look) a string, whose +
// has no - to turn into.
func (g *gen) stringy(e ast.Expr) bool {
	if g.info != nil {
		if tv, ok := g.info.Types[e]; ok && tv.Type != nil {
			if b, ok := tv.Type.Underlying().(*types.Basic); ok {
				return b.Info()&types.IsString != 0
			}
			return false
		}
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return g.stringy(e.X) || g.stringy(e.Y)
	case *ast.ParenExpr:
		return g.stringy(e.X)
	}
	return false
}

func (g *gen) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.BinaryExpr:
		opStart := g.off(n.OpPos)
		opEnd := opStart + len(n.Op.String())
		if to, ok := boundary[n.Op]; ok {
			g.add(opBoundary, n, n.OpPos, opStart, opEnd, to.String())
		}
		if to, ok := negate[n.Op]; ok {
			g.add(opNegate, n, n.OpPos, opStart, opEnd, to.String())
		}
		if to, ok := logical[n.Op]; ok {
			g.add(opLogical, n, n.OpPos, opStart, opEnd, to.String())
		}
		if to, ok := arith[n.Op]; ok && !g.stringy(n) {
			g.add(opArith, n, n.OpPos, opStart, opEnd, to.String())
		}
	case *ast.UnaryExpr:
		if n.Op == token.NOT {
			s := g.off(n.OpPos)
			g.add(opNot, n, n.OpPos, s, s+1, "")
		}
	case *ast.AssignStmt:
		if to, ok := arith[n.Tok]; ok && len(n.Lhs) == 1 && !g.stringy(n.Lhs[0]) {
			s := g.off(n.TokPos)
			g.add(opArith, n, n.TokPos, s, s+len(n.Tok.String()), to.String())
		}
	case *ast.IncDecStmt:
		to := token.DEC
		if n.Tok == token.DEC {
			to = token.INC
		}
		s := g.off(n.TokPos)
		g.add(opIncDec, n, n.TokPos, s, s+2, to.String())
	case *ast.ReturnStmt:
		for _, r := range n.Results {
			if id, ok := r.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
				to := "false"
				if id.Name == "false" {
					to = "true"
				}
				g.add(opBool, n, id.Pos(), g.off(id.Pos()), g.off(id.End()), to)
			}
		}
	case *ast.ExprStmt:
		if call, ok := n.X.(*ast.CallExpr); ok && !skippedCall(call) {
			g.add(opCall, n, n.Pos(), g.off(n.Pos()), g.off(n.End()), "{}")
		}
	}
	return true
}

// packageFiles is the non-test Go files under the dirs of the module at
// root (relative to it, slash-separated), testdata/ left out.
func packageFiles(root string, dirs ...string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && e.Name() == "testdata" {
				return filepath.SkipDir
			}
			if e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

package claims

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"testing"
)

// sceneDirs are the packages of internal/ that play the proofs' scenes
// and return what they observed: the ones a verdict must not come from.
// C1's checker (internal/proof/chaos) is a judge by design, and is not here.
var sceneDirs = []string{"scene", "fencescene", "replicas", "harness", "history"}

// judged is a name that says a bool answers for a claim: it names one, or
// says the thing holds, is atomic, is safe, or is not.
var judged = regexp.MustCompile(`[SYLRFTEXAC][0-9]{1,2}|Holds|Atomic|Refut|Violat|Verdict|Correct|Valid|Safe|Wrong|Broke`)

// verdictShaped returns the names of the functions and methods declared in
// the Go files of dirs (tests aside) whose one result could carry a verdict
// rather than an observation, by the shape of the result: "why" for a
// string or a zh.Text (why it does not hold), "bool" for a bool whose name
// says it answers for a claim (judged).
func verdictShaped(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	visit := func(_ *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Type.Results == nil || fd.Type.Results.NumFields() != 1 {
				continue // an answer among others is an observation's part
			}
			switch types(fd.Type.Results.List[0].Type) {
			case "string", "zh.Text":
				out[fd.Name.Name] = "why"
			case "bool":
				if out[fd.Name.Name] == "" && judged.MatchString(fd.Name.Name) {
					out[fd.Name.Name] = "bool"
				}
			}
		}
	}
	for _, dir := range dirs {
		eachSource(t, dir, func(string) bool { return false }, visit)
	}
	return out
}

// types is the written form of a simple type expression.
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	}
	return ""
}

// passedOn returns, as file:line, every refutation in f (a call of
// claims.Refuted or RefutedNow inside an if) whose condition only passes on
// the answer of a function of shaped: the condition tests that answer for
// truth ("x", "!x", "why != \"\"", "why.En != \"\"") instead of comparing an
// observation with what the claim wants. The answer is the call itself, or
// a variable the function assigned it to. A "why" is never the proof's to
// pass on; a bool is an observation when the proof records it (an
// argument of claims.Evidence in the same function), and a verdict when it
// is decisive unrecorded.
func passedOn(fset *token.FileSet, f *ast.File, shaped map[string]string) []string {
	var at []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		from := map[string]string{} // variable -> the function whose answer it holds
		assigned := func(n *ast.AssignStmt) {
			for i, lhs := range n.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok {
					continue
				}
				rhs := n.Rhs[0]
				if len(n.Rhs) == len(n.Lhs) {
					rhs = n.Rhs[i]
				}
				from[id.Name] = callee(rhs)
			}
		}
		recorded := evidenced(fd.Body)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				assigned(n)
			case *ast.IfStmt:
				if init, ok := n.Init.(*ast.AssignStmt); ok {
					assigned(init)
				}
				if !refutes(n.Body) {
					return true
				}
				for _, x := range truths(n.Cond) {
					name, said := callee(x), callee(x)
					if id, ok := x.(*ast.Ident); ok {
						name, said = from[id.Name], id.Name
					}
					if shape := shaped[name]; shape == "why" || shape == "bool" && !recorded[said] {
						at = append(at, fset.Position(n.Pos()).String()+": "+name)
					}
				}
			}
			return true
		})
	}
	return at
}

// evidenced are the variables and the functions called in the arguments
// of the claims.Evidence calls in body: what the proof records.
func evidenced(body *ast.BlockStmt) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Evidence" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "claims" {
			return true
		}
		for _, a := range c.Args {
			ast.Inspect(a, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					out[n.Name] = true
				case *ast.CallExpr:
					out[callee(n)] = true
				}
				return true
			})
		}
		return true
	})
	return out
}

// callee is the name of the function e calls, or "".
func callee(e ast.Expr) string {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// truths are the operands cond tests for truth.
func truths(cond ast.Expr) []ast.Expr {
	switch e := cond.(type) {
	case *ast.ParenExpr:
		return truths(e.X)
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return truths(e.X)
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND, token.LOR:
			return append(truths(e.X), truths(e.Y)...)
		case token.EQL, token.NEQ:
			if lit, ok := e.Y.(*ast.BasicLit); ok && lit.Value == `""` {
				if sel, ok := e.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "En" {
					return []ast.Expr{sel.X}
				}
				return []ast.Expr{e.X}
			}
		}
		return nil
	case *ast.Ident, *ast.CallExpr:
		return []ast.Expr{e}
	}
	return nil
}

// refutes says whether body calls Refuted or RefutedNow of this package.
func refutes(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Refuted" || sel.Sel.Name == "RefutedNow") {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "claims" {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestNoVerdictComesFromOutsideTheRoot: a proof in the root compares what
// a scene observed with what its claim wants; it never refutes on the
// answer of a scene's function (sceneDirs) that is tested only for truth:
// a string or zh.Text ("why it is not atomic"), or a bool named for a
// claim or a judgement ("it holds") that the proof does not record:
// such a function would be the judge, and the root would pass its verdict
// on, so a wrong judge could make a claim hold while its observation says
// otherwise. The scan is first shown to find that shape in a source
// written for it, and to let a comparison of observations pass.
func TestNoVerdictComesFromOutsideTheRoot(t *testing.T) {
	src := `package x
func f(t T) {
	if !fencescene.EqualTokenHolds(res) { claims.Refuted(t, "F7", "no") }
	if why := il.NotAtomic(); why != "" { claims.RefutedNow(t, "F6", "%s", why) }
	caught := control.NotAtomic()
	if caught.En == "" { claims.RefutedNow(t, "F6", "x") }
	read := B.Get()
	if read != "0" { claims.RefutedNow(t, "S1", "x") }
	if ok := B.Seen(); ok && read == "1" { claims.NotShown(t, "S1", "x") }
	seen := B.Seen()
	claims.Evidence(t, "B saw it: %v", seen)
	if !seen { claims.RefutedNow(t, "S1", "x") }
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	planted := map[string]string{"EqualTokenHolds": "bool", "NotAtomic": "why", "Get": "why", "Seen": "bool"}
	if got := passedOn(fset, f, planted); len(got) != 3 {
		t.Fatalf("the scan found %q in a source with three refutations on a judge's answer, a comparison and a recorded observation; want the three", got)
	}
	var dirs []string
	for _, d := range sceneDirs {
		dirs = append(dirs, filepath.Join("..", d))
	}
	shaped := verdictShaped(t, dirs...)
	if shaped["Mode"] != "why" {
		t.Fatalf("the scan of internal/ found no function returning a string named Mode (replicas.ZK1675.Mode); want it among %d", len(shaped))
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("got the root's test files %v (%v); want some", files, err)
	}
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range passedOn(fset, f, shaped) {
			t.Errorf("%s: got a refutation on the answer of a function of internal/; want the scene to return what it observed and the proof to compare it with what the claim wants", at)
		}
	}
}

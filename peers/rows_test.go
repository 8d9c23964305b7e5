package peers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/zk19/zk19/locktest"
)

// TestEveryScenarioHasARow: each of locktest's scenarios, those to come
// too, has its test here, named as the scenario says, running that
// scenario (peerTable(t, "<id>")), so no scenario is missing from the
// table.
func TestEveryScenarioHasARow(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "table_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]string{} // test name → scenario ID it passes to peerTable
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if id, isIdent := callee(c); ok && isIdent && id == "peerTable" && len(c.Args) == 2 {
				if lit, ok := c.Args[1].(*ast.BasicLit); ok {
					runs[fd.Name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
			return true
		})
	}
	for _, s := range locktest.Scenarios() {
		if got := runs[s.Test]; got != s.ID {
			t.Errorf("scenario %s: got %s running %q; want it to run %q (a test of its own in table_test.go)", s.ID, s.Test, got, s.ID)
		}
	}
	if got, want := len(runs), len(locktest.Scenarios()); got != want {
		t.Errorf("got %d tests calling peerTable; want %d, one a scenario", got, want)
	}
}

// callee is the name a call calls, if it is a plain identifier.
func callee(c *ast.CallExpr) (string, bool) {
	if c == nil {
		return "", false
	}
	id, ok := c.Fun.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

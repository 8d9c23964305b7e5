package zh

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// verbs returns, for each argument of format (from 1), the verbs that
// format it, flags included ("#x", "q", ".0f"); explicit indexes ([n]) are
// followed as fmt follows them.
func verbs(format string) (map[int][]string, error) {
	out := map[int][]string{}
	next := 1
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		var spec strings.Builder
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			spec.WriteByte(format[i])
			i++
		}
		for i < len(format) && (format[i] == '[' || format[i] == '.' || format[i] >= '0' && format[i] <= '9') {
			if format[i] == '[' {
				end := strings.IndexByte(format[i:], ']')
				if end < 0 {
					return nil, fmt.Errorf("unclosed [ in %q", format)
				}
				n, err := strconv.Atoi(format[i+1 : i+end])
				if err != nil {
					return nil, fmt.Errorf("index %q in %q", format[i+1:i+end], format)
				}
				next, i = n, i+end+1
				continue
			}
			spec.WriteByte(format[i])
			i++
		}
		if i >= len(format) {
			return nil, fmt.Errorf("a verb is missing at the end of %q", format)
		}
		spec.WriteByte(format[i])
		out[next] = append(out[next], spec.String())
		next++
	}
	return out, nil
}

// TestEveryChineseFormatShowsTheEnglishArguments: each entry of the
// catalogue (observations, failures, phrases) formats every argument of
// its English format, and only those, with the same verb; filled with
// distinct sample values, the Chinese shows them in the English order
// (a Chinese that must reorder says it another way: indexes swapped by
// mistake read as well as right ones), and a value named as a participant's
// ("A's %v") is the same participant's in the Chinese ("A 的 %v"): "A's
// %v, B's %v" said as "B 的 %v，A 的 %v" would give each token to the other.
func TestEveryChineseFormatShowsTheEnglishArguments(t *testing.T) {
	for _, catalogue := range []map[string]string{observations, failures, phrases} {
		for en, zh := range catalogue {
			if err := sameArguments(en, zh); err != nil {
				t.Error(err)
			}
		}
	}
}

// sameArguments reports how zh shows en's arguments differently, if it
// does: another verb for one, one missing or extra (sameVerbs), a value
// out of the English order, or a value given to another participant.
func sameArguments(en, zh string) error {
	if err := sameVerbs(en, zh); err != nil {
		return err
	}
	ve, _ := verbs(en)
	args := samples(ve)
	got, want := fmt.Sprintf(zh, args...), fmt.Sprintf(en, args...)
	if strings.Contains(got, "%!") || strings.Contains(want, "%!") {
		return fmt.Errorf("filled with samples, %q gives %q and %q gives %q; want no %%! (a bad verb or index)", en, want, zh, got)
	}
	rendered := make([]string, len(args))
	for n := range args {
		rendered[n] = fmt.Sprintf("%"+ve[n+1][0], args[n])
	}
	oe, oz := valueOrder(want, rendered), valueOrder(got, rendered)
	if !slices.Equal(oe, oz) {
		return fmt.Errorf("filled with distinct samples, %q shows the arguments in the order %v; want the English order %v, as %q shows them", got, oz, oe, want)
	}
	for n, r := range rendered {
		if pe, pz := owner(want, r, ownerEn), owner(got, r, ownerZh); pe != "" && pz != "" && pe != pz {
			return fmt.Errorf("filled with distinct samples, %q gives argument %d (%s) to %s; want it %s's, as %q", got, n+1, r, pz, pe, want)
		}
	}
	return nil
}

// sameVerbs reports how zh's verbs differ from en's, if they do.
func sameVerbs(en, zh string) error {
	ve, err := verbs(en)
	if err != nil {
		return err
	}
	vz, err := verbs(zh)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(vz)) {
		vs := slices.Compact(slices.Sorted(slices.Values(vz[n])))
		if len(vs) != 1 || len(ve[n]) != 1 || vs[0] != ve[n][0] {
			errs = append(errs, fmt.Errorf("argument %d: got verbs %v in %q; want %v, as in %q", n, vs, zh, ve[n], en))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ve)) {
		if _, ok := vz[n]; !ok {
			errs = append(errs, fmt.Errorf("argument %d (%v of %q): got no verb for it in %q; want every argument shown", n, ve[n], en, zh))
		}
	}
	return errors.Join(errs...)
}

// samples are distinct values for the arguments whose verbs are ve: an
// integer for an integer verb, a float for a float verb, a string else;
// none is a part of another as printed.
func samples(ve map[int][]string) []any {
	args := make([]any, len(ve))
	for n := range args {
		verb := ve[n+1][0]
		switch verb[len(verb)-1] {
		case 'd', 'x', 'X', 'o', 'b', 'c':
			args[n] = 4000 + 37*(n+1)
		case 'f', 'g', 'e':
			args[n] = 600 + 11.25*float64(n+1)
		case 't':
			args[n] = n%2 == 0
		default:
			args[n] = fmt.Sprintf("q%dq", n+1)
		}
	}
	return args
}

// valueOrder is the arguments (from 1) in the order their rendered
// values first show in s; a bool's value is not told apart, and is left out.
func valueOrder(s string, rendered []string) []int {
	var at []int
	for n, r := range rendered {
		if r != "true" && r != "false" && strings.Contains(s, r) {
			at = append(at, n+1)
		}
	}
	slices.SortFunc(at, func(a, b int) int { return strings.Index(s, rendered[a-1]) - strings.Index(s, rendered[b-1]) })
	return at
}

// owners find the participant a value belongs to, named right before it
// in a possessive ("A's token %v", "A 的 token %v"), with at most a few
// words between and no mark that ends a clause.
var (
	ownerEn = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])([A-Z])'s(?: [A-Za-z-]+){0,2} $`)
	ownerZh = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])([A-Z]) 的 ?[^，；：。（）、,;:()A-Z]{0,8}$`)
)

// owner is the participant whose possessive comes right before value r
// in s, "" for none.
func owner(s, r string, possessive *regexp.Regexp) string {
	i := strings.Index(s, r)
	if i < 0 || r == "true" || r == "false" {
		return ""
	}
	if m := possessive.FindStringSubmatch(strings.TrimSuffix(s[:i], `"`)); m != nil {
		return m[1]
	}
	return ""
}

// TestEveryObservationHasItsChinese: every format the module's proofs pass
// to Evidence and Differs has a Chinese entry in observations, every format
// of a failure line (Refuted, RefutedNow, NotShown, BrokenCheck, and the
// Fatalf a Judged test reaches) one in failures or observations, and every
// entry is used.
func TestEveryObservationHasItsChinese(t *testing.T) {
	used := scanFormats(t, "../../../..")
	if len(used.observed) < 100 || len(used.failed) < 300 {
		t.Fatalf("found %d formats of Evidence and Differs calls and %d of failure lines; want the proofs' (over 100, over 300)", len(used.observed), len(used.failed))
	}
	for _, format := range slices.Sorted(maps.Keys(used.observed)) {
		if _, ok := observations[format]; !ok {
			t.Errorf("%s: got no Chinese entry for the observation %q; want one in observations", used.observed[format], format)
		}
	}
	for _, format := range slices.Sorted(maps.Keys(used.failed)) {
		if _, ok := failures[format]; !ok && observations[format] == "" {
			t.Errorf("%s: got no Chinese entry for the failure line %q; want one in failures", used.failed[format], format)
		}
	}
	for format := range observations {
		if _, ok := used.observed[format]; !ok && used.failed[format] == "" {
			t.Errorf("observations has %q, which no proof uses; want it removed", format)
		}
	}
	for format := range failures {
		if _, ok := used.failed[format]; !ok {
			t.Errorf("failures has %q, which no failure line uses; want it removed", format)
		}
		if _, ok := observations[format]; ok {
			t.Errorf("%q is in both observations and failures; want it once", format)
		}
	}
	everyPhraseHasItsChinese(t, used)
}

// everyPhraseHasItsChinese: every format given to Say (a peer cell, a
// skip reason, a summary's words) is a literal with an entry in phrases,
// and every entry is used. (Say reads phrases only, and Of never does: a
// format may be in both, as "%s" is, with a Chinese of its own in each.)
func everyPhraseHasItsChinese(t *testing.T, used formatUses) {
	if len(used.said) < 100 {
		t.Fatalf("found %d formats said with Say; want the peer cells', skip reasons' and summaries' (over 100)", len(used.said))
	}
	for _, at := range used.notLiteral {
		t.Errorf("%s: got a format for Say that is no literal; want a literal, so that the catalogue can have its Chinese", at)
	}
	for _, format := range slices.Sorted(maps.Keys(used.said)) {
		if _, ok := phrases[format]; !ok {
			t.Errorf("%s: got no Chinese entry for the phrase %q; want one in phrases", used.said[format], format)
		}
	}
	for format := range phrases {
		if _, ok := used.said[format]; !ok {
			t.Errorf("phrases has %q, which nothing says; want it removed", format)
		}
	}
}

// formatUses are the formats the module's Go files pass to the claims
// helpers, each with where one call is.
type formatUses struct {
	observed   map[string]string // Evidence, Differs
	failed     map[string]string // Refuted, RefutedNow, NotShown, BrokenCheck, a Judged test's Fatalf
	said       map[string]string // Say, directly or through a function that passes its format on
	notLiteral []string          // where a format said is neither a literal nor passed on
}

// scanFormats reads every Go file of the module under root (testdata and
// hidden directories aside). A Judged test is followed by name, without
// types: an expression claims.Judged(...), a variable assigned one, and
// the parameter of any function of that name it is passed to, on and on;
// the format of every Fatalf called on it is a failure line's.
func scanFormats(t *testing.T, root string) formatUses {
	fset := token.NewFileSet()
	funcs := map[string][]*ast.FuncDecl{}
	var files []*ast.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs[fd.Name.Name] = append(funcs[fd.Name.Name], fd)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	u := formatUses{observed: map[string]string{}, failed: map[string]string{}, said: map[string]string{}}
	s := &judgedScan{fset: fset, u: u, seen: map[string]bool{}}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				s.direct(c)
			}
			if fd, ok := n.(*ast.FuncDecl); ok && fd.Body != nil {
				s.body(fd.Body, judgedVars(fd.Body))
			}
			return true
		})
	}
	for len(s.todo) > 0 {
		next := s.todo[0]
		s.todo = s.todo[1:]
		for _, fd := range funcs[next.name] {
			if p := paramName(fd, next.arg); p != "" && p != "_" {
				s.body(fd.Body, map[string]bool{p: true})
			}
		}
	}
	scanSaid(fset, files, funcs, &u)
	return u
}

// scanSaid notes the formats given to Say. A function that passes its
// parameter i on as the format of Say (or of such a function) is a
// sayer at i, by name as Judged tests are followed; every call of Say or
// of a sayer gives a literal there, or passes on a sayer's own parameter;
// so does every call outside functions (a package's var).
func scanSaid(fset *token.FileSet, files []*ast.File, funcs map[string][]*ast.FuncDecl, u *formatUses) {
	sayers := map[string]map[int]bool{}
	formatAt := func(c *ast.CallExpr) (ast.Expr, bool) {
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
			if x, isID := selX(sel); isID && x == "zh" && sel.Sel.Name == "Say" {
				return c.Args[0], len(c.Args) > 0
			}
		}
		for i := range sayers[calleeName(c.Fun)] {
			if i < len(c.Args) {
				return c.Args[i], true
			}
		}
		return nil, false
	}
	// passedOn is the index of fd's parameter that e names, -1 for none.
	passedOn := func(fd *ast.FuncDecl, e ast.Expr) int {
		id, ok := e.(*ast.Ident)
		ok = ok && fd != nil
		for i := 0; ok && paramName(fd, i) != ""; i++ {
			if paramName(fd, i) == id.Name {
				return i
			}
		}
		return -1
	}
	each := func(f func(fd *ast.FuncDecl, c *ast.CallExpr, format ast.Expr)) {
		in := func(fd *ast.FuncDecl, n ast.Node) {
			ast.Inspect(n, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if format, ok := formatAt(c); ok {
						f(fd, c, format)
					}
				}
				return true
			})
		}
		for _, name := range slices.Sorted(maps.Keys(funcs)) {
			for _, fd := range funcs[name] {
				in(fd, fd.Body)
			}
		}
		for _, file := range files {
			for _, d := range file.Decls {
				if gd, ok := d.(*ast.GenDecl); ok {
					in(nil, gd)
				}
			}
		}
	}
	for grew := true; grew; {
		grew = false
		each(func(fd *ast.FuncDecl, _ *ast.CallExpr, format ast.Expr) {
			if i := passedOn(fd, format); i >= 0 && !sayers[fd.Name.Name][i] {
				if sayers[fd.Name.Name] == nil {
					sayers[fd.Name.Name] = map[int]bool{}
				}
				sayers[fd.Name.Name][i], grew = true, true
			}
		})
	}
	each(func(fd *ast.FuncDecl, c *ast.CallExpr, format ast.Expr) {
		at := fset.Position(c.Pos()).String()
		if f, ok := literal(format); ok {
			u.said[f] = at
		} else if passedOn(fd, format) < 0 {
			u.notLiteral = append(u.notLiteral, at)
		}
	})
}

// judgedScan follows Judged tests through the module's functions.
type judgedScan struct {
	fset *token.FileSet
	u    formatUses
	seen map[string]bool // "name/arg" already queued
	todo []passed
}

// passed is a Judged test passed as argument arg of the functions named name.
type passed struct {
	name string
	arg  int
}

// direct notes the format of a call of the claims helpers.
func (s *judgedScan) direct(c *ast.CallExpr) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if x, isID := selX(sel); !ok || !isID || x != "claims" {
		return
	}
	at := s.fset.Position(c.Pos()).String()
	switch sel.Sel.Name {
	case "Evidence", "Differs":
		if len(c.Args) >= 2 {
			if f, ok := literal(c.Args[1]); ok {
				s.u.observed[f] = at
			}
		}
	case "Refuted", "RefutedNow", "NotShown", "BrokenCheck":
		if len(c.Args) >= 3 {
			if f, ok := literal(c.Args[2]); ok {
				s.u.failed[f] = at
			}
		}
	}
}

func selX(sel *ast.SelectorExpr) (string, bool) {
	if sel == nil {
		return "", false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	return x.Name, true
}

// judgedVars are the variables of body assigned a claims.Judged(...).
func judgedVars(body *ast.BlockStmt) map[string]bool {
	vars := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
			for i, r := range as.Rhs {
				if id, ok := as.Lhs[i].(*ast.Ident); ok && isJudgedCall(r) {
					vars[id.Name] = true
				}
			}
		}
		return true
	})
	return vars
}

func isJudgedCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, _ := c.Fun.(*ast.SelectorExpr)
	x, ok := selX(sel)
	return ok && x == "claims" && sel.Sel.Name == "Judged"
}

// body notes, in body, the formats of Fatalf called on a Judged test (a
// claims.Judged call, or a name in vars) and queues the functions it is
// passed to.
func (s *judgedScan) body(body *ast.BlockStmt, vars map[string]bool) {
	judged := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return isJudgedCall(e) || ok && vars[id.Name]
	}
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Fatalf" && judged(sel.X) && len(c.Args) > 0 {
			if f, ok := literal(c.Args[0]); ok {
				s.u.failed[f] = s.fset.Position(c.Pos()).String()
			}
		}
		for i, a := range c.Args {
			if name := calleeName(c.Fun); judged(a) && name != "" && !s.seen[fmt.Sprint(name, "/", i)] {
				s.seen[fmt.Sprint(name, "/", i)] = true
				s.todo = append(s.todo, passed{name, i})
			}
		}
		return true
	})
}

func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return calleeName(e.X)
	case *ast.IndexListExpr:
		return calleeName(e.X)
	}
	return ""
}

// paramName is the name of fd's parameter i, "" when it has none.
func paramName(fd *ast.FuncDecl, i int) string {
	var names []string
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			names = append(names, "")
		}
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	if i < len(names) {
		return names[i]
	}
	return ""
}

func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		v, err := strconv.Unquote(e.Value)
		return v, err == nil
	case *ast.BinaryExpr:
		a, ok := literal(e.X)
		b, ok2 := literal(e.Y)
		return a + b, ok && ok2 && e.Op == token.ADD
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}

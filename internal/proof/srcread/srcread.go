// Package srcread reads the resources' Go source the way F6's proofs need
// it: it follows a write method through every call it makes (go/ast, with
// the types of receivers and fields resolved by hand) and says whether its
// compare and its write sit in one lock section (SectionInSource), one
// transaction (TransactionInSource) or one statement of the caller's
// transaction (AdvanceInSource). ReadSource reads a file as the build under
// test sees it, through the mutation run's overlay. It starts nothing and
// imports nothing of the module.
package srcread

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims/zh"
)

// SectionInSource reads the write method fn ("Memory.Write") of the
// package in dir (fence, or fencetest for its control; replace as for
// parsePackage) with every call it makes, and returns why its compare
// (admits) and its write (apply) are not in one section of the lock on a
// field named mu, or "".
func SectionInSource(dir, fn string, replace map[string]string) (zh.Text, error) {
	p, err := parsePackage(dir, replace)
	if err != nil {
		return zh.Text{}, err
	}
	calls, err := p.calls(fn)
	if err != nil {
		return zh.Text{}, err
	}
	steps := sectionSteps(calls)
	var seen []string
	for _, s := range steps {
		seen = append(seen, s.what+"@"+s.in)
	}
	at := zh.Say("%s in %s, following its calls: %s", fn, dir, strings.Join(seen, ", "))
	return judgeSection(steps, at)
}

// sectionStep is a call of a write method that matters to its section:
// what it does (lock, unlock, compare, write) and where.
type sectionStep struct{ what, in string }

// sectionSteps keeps the calls that lock or unlock a field named mu,
// compare (admits) or write (apply), in the order they run.
func sectionSteps(calls []reachedCall) []sectionStep {
	var steps []sectionStep
	for _, rc := range calls {
		name, onMu := calledName(rc.call), false
		if sel, ok := rc.call.Fun.(*ast.SelectorExpr); ok {
			onMu = strings.HasSuffix(types.ExprString(sel.X), "mu")
		}
		var what string
		switch {
		case onMu && (name == "Lock" || name == "RLock"):
			what = "lock"
		case onMu && (name == "Unlock" || name == "RUnlock"):
			what = "unlock"
		case name == "admits":
			what = "compare"
		case name == "apply":
			what = "write"
		default:
			continue
		}
		steps = append(steps, sectionStep{what, rc.where()})
	}
	return steps
}

// judgeSection says why the compare and the write of steps are not in one
// section (at says where), or "".
func judgeSection(steps []sectionStep, at zh.Text) (zh.Text, error) {
	compare := slices.IndexFunc(steps, func(s sectionStep) bool { return s.what == "compare" })
	write := -1
	if compare >= 0 {
		if i := slices.IndexFunc(steps[compare:], func(s sectionStep) bool { return s.what == "write" }); i >= 0 {
			write = compare + i
		}
	}
	if write < 0 {
		return zh.Text{}, fmt.Errorf("%s: no compare followed by a write", at)
	}
	held := 0
	for _, s := range steps[:compare] {
		switch s.what {
		case "lock":
			held++
		case "unlock":
			held--
		}
	}
	if held <= 0 {
		return zh.Say("compare outside the section: %v", at), nil
	}
	for _, s := range steps[compare:write] {
		if s.what == "unlock" {
			return zh.Say("the section is let go between the compare and the write (unlock@%s): %v", s.in, at), nil
		}
	}
	return zh.Text{}, nil
}

// TransactionInSource reads the durable resource's write, (*Durable).write
// in package fence with replace giving files' texts in place of theirs (a
// control; nil for the source as it is), with every call it makes, and
// returns why its compare and its write are not in one transaction, or "":
// write runs one immediate transaction; no statement reached from it runs
// outside a transaction (as a value stored after the COMMIT would); and
// between the decision (Trace.Decided, after the mark is read and compared)
// and the statement that compares and writes the mark (fencedUpdate) no
// statement ends or begins a transaction and the connection is not let go.
func TransactionInSource(replace map[string]string) (zh.Text, error) {
	p, err := parsePackage("fence", replace)
	if err != nil {
		return zh.Text{}, err
	}
	calls, err := p.calls("Durable.write")
	if err != nil {
		return zh.Text{}, err
	}
	w := p.walkTransaction(calls)
	immediates, outside, steps := w.immediates, w.outside, w.steps
	if immediates != 1 {
		return zh.Say("(*Durable).write runs %d immediate transactions; want its read, compare and write in one", immediates), nil
	}
	if len(outside) > 0 {
		return zh.Say("(*Durable).write runs %s with no transaction open: the resource is read or written outside the transaction that compares", strings.Join(outside, ", ")), nil
	}
	at := zh.Say("(*Durable).write, following its calls: %s", strings.Join(steps, ", "))
	decided, update := slices.Index(steps, "decided"), slices.Index(steps, "update")
	if decided < 0 || update < decided {
		return zh.Text{}, fmt.Errorf("%s: no decision followed by the UPDATE", at)
	}
	if update-decided > 1 {
		return zh.Say("the transaction or the connection is let go between the compare and the write: %v", at), nil
	}
	return zh.Text{}, nil
}

// txWalk is what (*Durable).write's calls do to transactions, in order.
type txWalk struct {
	immediates int
	open       bool     // a transaction is open at this point of the walk
	outside    []string // statements run with no transaction open
	steps      []string // "decided", "update", and what ends a transaction or the connection
}

// walkTransaction follows calls and notes the immediate transactions, the
// statements run outside one, and the steps between the decision and the
// update.
func (p *pkgSource) walkTransaction(calls []reachedCall) txWalk {
	var w txWalk
	for _, rc := range calls {
		name := calledName(rc.call)
		if name == "immediate" {
			w.immediates++
		}
		if name == "decided" {
			w.steps = append(w.steps, "decided")
		}
		if name == "Close" || name == "Conn" || name == "Commit" || name == "Rollback" || name == "BeginTx" || name == "Begin" {
			w.steps = append(w.steps, name+"@"+rc.where())
		}
		stmt, ok := p.statement(rc.call)
		if !ok {
			continue
		}
		verb := strings.ToUpper(strings.Fields(stmt + " ?")[0])
		switch {
		case verb == "BEGIN" || verb == "SAVEPOINT":
			w.open = true
			w.steps = append(w.steps, stmt+"@"+rc.where())
			continue
		case verb == "COMMIT" || verb == "END" || verb == "ROLLBACK" || verb == "RELEASE":
			w.steps = append(w.steps, stmt+"@"+rc.where())
			w.open = false
			continue
		case strings.Contains(stmt, "fencedUpdate"):
			w.steps = append(w.steps, "update")
		}
		if !w.open {
			w.outside = append(w.outside, fmt.Sprintf("%q@%s", stmt, rc.where()))
		}
	}
	return w
}

// AdvanceInSource reads fence.AdvanceMark, the fence a service runs in its
// own transaction, with replace as in TransactionInSource, and returns why
// its compare and its advance of the mark are not one step of the caller's
// transaction, or "": one statement compares and writes the mark
// (fencedUpdate, whose WHERE compares the token with the mark) and nothing
// reached from AdvanceMark begins, ends or leaves the caller's transaction
// (no BEGIN, COMMIT, ROLLBACK, Commit, Rollback, Begin, Conn or Close), nor
// writes the mark in another statement.
func AdvanceInSource(replace map[string]string) (zh.Text, error) {
	p, err := parsePackage("fence", replace)
	if err != nil {
		return zh.Text{}, err
	}
	calls, err := p.calls("AdvanceMark")
	if err != nil {
		return zh.Text{}, err
	}
	var updates, others []string
	for _, rc := range calls {
		name := calledName(rc.call)
		if name == "Close" || name == "Conn" || name == "Commit" || name == "Rollback" || name == "BeginTx" || name == "Begin" {
			others = append(others, name+"@"+rc.where())
		}
		stmt, ok := p.statement(rc.call)
		if !ok {
			continue
		}
		verb := strings.ToUpper(strings.Fields(stmt + " ?")[0])
		switch {
		case strings.Contains(stmt, "fencedUpdate"):
			updates = append(updates, "compare-and-advance@"+rc.where())
		case verb == "BEGIN" || verb == "SAVEPOINT" || verb == "COMMIT" || verb == "END" || verb == "ROLLBACK" || verb == "RELEASE":
			others = append(others, stmt+"@"+rc.where())
		case verb == "UPDATE" || verb == "INSERT" || verb == "DELETE" || verb == "REPLACE":
			others = append(others, fmt.Sprintf("%q@%s", stmt, rc.where()))
		}
	}
	at := zh.Say("fence.AdvanceMark, following its calls: %s", strings.Join(append(updates, others...), ", "))
	if len(updates) != 1 {
		return zh.Text{}, fmt.Errorf("%s: %d compare-and-advance statements; want 1", at, len(updates))
	}
	update := strings.ToUpper(strings.Join(strings.Fields(p.consts["fencedUpdate"]), " "))
	if !strings.Contains(update, "WHERE") || !strings.Contains(update, "MARK_SEQ <=") {
		return zh.Say("the statement that advances the mark does not compare the token with it (no WHERE … mark_seq <= …): %v", at), nil
	}
	if len(others) > 0 {
		return zh.Say("the caller's transaction is begun, ended or left, or the mark written apart: %v", at), nil
	}
	return zh.Text{}, nil
}

// pkgSource is one package's source, parsed, with what following its calls
// takes without type checking: its functions and methods by name, the
// named types of the package that its struct fields have, and its string
// constants (the statements of the durable resource).
type pkgSource struct {
	funcs  map[string]*ast.FuncDecl     // "applied", "state.write", "Durable.immediate"
	fields map[string]map[string]string // struct type -> field -> the field's type of this package ("Memory" -> "s" -> "state")
	embeds map[string][]string          // struct type -> its embedded types of this package
	consts map[string]string            // string constant -> its text
}

// parsePackage parses the Go files of dir but its tests; replace gives,
// by base name, a file's text in place of the file's (a control: a copy
// changed on purpose).
func parsePackage(dir string, replace map[string]string) (*pkgSource, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	p := &pkgSource{funcs: map[string]*ast.FuncDecl{}, fields: map[string]map[string]string{}, embeds: map[string][]string{}, consts: map[string]string{}}
	fset := token.NewFileSet()
	replaced := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		var src any
		if r, ok := replace[filepath.Base(name)]; ok {
			src, replaced = r, replaced+1
		} else if b, err := ReadSource(name); err != nil {
			return nil, err
		} else {
			src = b
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil {
					key = namedType(d.Recv.List[0].Type) + "." + key
				}
				p.funcs[key] = d
			case *ast.GenDecl:
				p.addDecl(d)
			}
		}
	}
	if replaced != len(replace) {
		return nil, fmt.Errorf("%s: replaced %d of the files %v", dir, replaced, slices.Collect(maps.Keys(replace)))
	}
	return p, nil
}

// addDecl takes in a declaration's struct types and string constants.
func (p *pkgSource) addDecl(d *ast.GenDecl) {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			st, ok := s.Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := map[string]string{}
			for _, fl := range st.Fields.List {
				t := namedType(fl.Type)
				if len(fl.Names) == 0 && t != "" {
					p.embeds[s.Name.Name] = append(p.embeds[s.Name.Name], t)
					fields[t] = t
				}
				for _, n := range fl.Names {
					fields[n.Name] = t
				}
			}
			p.fields[s.Name.Name] = fields
		case *ast.ValueSpec:
			for i, n := range s.Names {
				if i >= len(s.Values) {
					break
				}
				if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						p.consts[n.Name] = v
					}
				}
			}
		}
	}
}

// namedType is the name of the type t of this package, without a pointer
// or type arguments, or "" for any other type.
func namedType(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.StarExpr:
		return namedType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return namedType(t.X)
	case *ast.IndexListExpr:
		return namedType(t.X)
	}
	return ""
}

// funcName names fd as a stack trace would: "(*state).write", "applied".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil {
		return fd.Name.Name
	}
	return "(" + types.ExprString(fd.Recv.List[0].Type) + ")." + fd.Name.Name
}

// calledName is the name of the function or method c calls.
func calledName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return types.ExprString(c.Fun)
}

// scopeOf is what fd's receiver and parameters are named, with their types
// of this package ("" for any other).
func scopeOf(fd *ast.FuncDecl) map[string]string {
	scope := map[string]string{}
	var lists []*ast.Field
	if fd.Recv != nil {
		lists = append(lists, fd.Recv.List...)
	}
	lists = append(lists, fd.Type.Params.List...)
	for _, f := range lists {
		for _, n := range f.Names {
			scope[n.Name] = namedType(f.Type)
		}
	}
	return scope
}

// paramNames are fd's parameters in order.
func paramNames(fd *ast.FuncDecl) []string {
	var out []string
	for _, f := range fd.Type.Params.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
	}
	return out
}

// typeOf is the type of this package that x has, as far as the receiver,
// the parameters and the struct fields tell it, or "".
func (p *pkgSource) typeOf(x ast.Expr, scope map[string]string) string {
	switch x := x.(type) {
	case *ast.Ident:
		return scope[x.Name]
	case *ast.ParenExpr:
		return p.typeOf(x.X, scope)
	case *ast.StarExpr:
		return p.typeOf(x.X, scope)
	case *ast.SelectorExpr:
		if t := p.typeOf(x.X, scope); t != "" {
			return p.field(t, x.Sel.Name, 0)
		}
	}
	return ""
}

// field is the type of field name of struct type t, promoted fields
// included.
func (p *pkgSource) field(t, name string, depth int) string {
	if f, ok := p.fields[t][name]; ok || depth > 4 {
		return f
	}
	for _, e := range p.embeds[t] {
		if f := p.field(e, name, depth+1); f != "" {
			return f
		}
	}
	return ""
}

// method is method name of type t, promoted methods included.
func (p *pkgSource) method(t, name string, depth int) *ast.FuncDecl {
	if fd := p.funcs[t+"."+name]; fd != nil || depth > 4 {
		return fd
	}
	for _, e := range p.embeds[t] {
		if fd := p.method(e, name, depth+1); fd != nil {
			return fd
		}
	}
	return nil
}

// callee is the function or method of the package that c calls, or nil.
func (p *pkgSource) callee(c *ast.CallExpr, scope map[string]string) *ast.FuncDecl {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		if _, local := scope[f.Name]; !local {
			return p.funcs[f.Name]
		}
	case *ast.SelectorExpr:
		if t := p.typeOf(f.X, scope); t != "" {
			return p.method(t, f.Sel.Name, 0)
		}
	}
	return nil
}

// statement is the SQL that c runs, if c runs a statement on a database,
// connection or transaction: its text, or the name of the package's
// constant that holds it ("fencedUpdate"), or the expression.
func (p *pkgSource) statement(c *ast.CallExpr) (string, bool) {
	arg := -1
	switch calledName(c) {
	case "ExecContext", "QueryContext", "QueryRowContext", "PrepareContext":
		arg = 1
	case "Exec", "Query", "QueryRow", "Prepare":
		arg = 0
	}
	if arg < 0 || len(c.Args) <= arg {
		return "", false
	}
	switch a := c.Args[arg].(type) {
	case *ast.BasicLit:
		if v, err := strconv.Unquote(a.Value); err == nil {
			return strings.Join(strings.Fields(v), " "), true
		}
	case *ast.Ident:
		if v, ok := p.consts[a.Name]; ok && a.Name != "fencedUpdate" {
			return strings.Join(strings.Fields(v), " "), true
		}
		return a.Name, true
	}
	return types.ExprString(c.Args[arg]), true
}

// reachedCall is a call the walk reached, with the functions it was reached
// through, outermost first: "(*Memory).Write", "(*state).write", and for
// a func literal, "a func literal passed to immediate".
type reachedCall struct {
	call *ast.CallExpr
	in   []string
}

// where is the innermost function the call is in.
func (r reachedCall) where() string { return r.in[len(r.in)-1] }

// calls returns the calls fn ("state.write") makes, in the order they run
// as far as the source tells it: a call after the calls in its arguments;
// a function or method of the package walked into where it is called,
// transitively, but not one the walk is already in (a recursion is read
// once); a func literal passed to such a function read where that function
// calls it (else where it stands); both branches of an if in source order.
// Deferred calls and go statements are not read: they run at the return or
// beside the write, not between its steps.
func (p *pkgSource) calls(fn string) ([]reachedCall, error) {
	fd := p.funcs[fn]
	if fd == nil || fd.Body == nil {
		return nil, fmt.Errorf("no %s in the package", fn)
	}
	w := &callWalk{p: p, active: map[ast.Node]bool{fd: true}}
	w.inspect(fd.Body, scopeOf(fd), []string{funcName(fd)}, nil)
	return w.out, nil
}

// callWalk is one walk of calls: what it found and the functions it is in.
type callWalk struct {
	p      *pkgSource
	out    []reachedCall
	active map[ast.Node]bool
}

// closure is a func literal passed to a function of the package, read
// where that function calls it, in its caller's scope.
type closure struct {
	lit    *ast.FuncLit
	scope  map[string]string
	bound  map[string]*closure // the caller's
	frame  string
	called bool
}

// inspect reads body, in scope, as part of frames; bound are the func
// literals its function's parameters hold.
func (w *callWalk) inspect(body ast.Node, scope map[string]string, frames []string, bound map[string]*closure) {
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch top := top.(type) {
			case *ast.FuncLit:
				frames = frames[:len(frames)-1]
			case *ast.CallExpr:
				w.reach(top, scope, frames, bound)
			}
			return true
		}
		switch n := n.(type) {
		case *ast.DeferStmt, *ast.GoStmt:
			return false
		case *ast.FuncLit:
			if len(stack) > 0 {
				if c, ok := stack[len(stack)-1].(*ast.CallExpr); ok && w.passes(c, n, scope) {
					return false // read where the callee calls it
				}
			}
			frames = append(slices.Clip(frames), "a func literal")
		}
		stack = append(stack, n)
		return true
	})
}

// passes reports whether c passes lit to a function of the package the
// walk will enter, as a parameter it can call.
func (w *callWalk) passes(c *ast.CallExpr, lit *ast.FuncLit, scope map[string]string) bool {
	g := w.p.callee(c, scope)
	if g == nil || g.Body == nil || w.active[g] {
		return false
	}
	i := slices.Index(c.Args, ast.Expr(lit))
	return i >= 0 && i < len(paramNames(g))
}

// reach records c and walks into what it calls: a func literal bound to
// the parameter it calls, or a function or method of the package.
func (w *callWalk) reach(c *ast.CallExpr, scope map[string]string, frames []string, bound map[string]*closure) {
	w.out = append(w.out, reachedCall{c, frames})
	if id, ok := c.Fun.(*ast.Ident); ok {
		if cl := bound[id.Name]; cl != nil && !w.active[cl.lit] {
			cl.called = true
			w.active[cl.lit] = true
			w.inspect(cl.lit.Body, cl.scope, append(slices.Clip(frames), cl.frame), cl.bound)
			delete(w.active, cl.lit)
			return
		}
	}
	g := w.p.callee(c, scope)
	if g == nil || g.Body == nil || w.active[g] {
		return
	}
	params := paramNames(g)
	passed := map[string]*closure{}
	for i, a := range c.Args {
		if lit, ok := a.(*ast.FuncLit); ok && i < len(params) {
			passed[params[i]] = &closure{lit: lit, scope: scope, bound: bound, frame: "a func literal passed to " + calledName(c)}
		}
	}
	w.active[g] = true
	w.inspect(g.Body, scopeOf(g), append(slices.Clip(frames), funcName(g)), passed)
	delete(w.active, g)
	for _, cl := range passed {
		if !cl.called { // kept, not called: read after the call, as the least it can do
			w.inspect(cl.lit.Body, cl.scope, append(slices.Clip(frames), cl.frame), bound)
		}
	}
}

// ReadSource reads a source file of the module as the build under test
// sees it: through the build overlay named by ZK19_SOURCE_OVERLAY (the
// JSON that go build -overlay takes), when the mutation run
// (cmd/mutants) sets it, so a fault it plants reaches the proofs that read
// the source as well as the compiler.
func ReadSource(name string) ([]byte, error) {
	if ov := os.Getenv("ZK19_SOURCE_OVERLAY"); ov != "" {
		b, err := os.ReadFile(ov)
		if err != nil {
			return nil, fmt.Errorf("ZK19_SOURCE_OVERLAY: %w", err)
		}
		var o struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &o); err != nil {
			return nil, fmt.Errorf("ZK19_SOURCE_OVERLAY %s: %w", ov, err)
		}
		abs, err := filepath.Abs(name)
		if err != nil {
			return nil, err
		}
		if r, ok := o.Replace[abs]; ok {
			return os.ReadFile(r)
		}
	}
	return os.ReadFile(name)
}

package harness

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/tb"
	"github.com/zk19/zk19/internal/zkserver"
)

// A Telling is one run of a retold Example's scene and its record: what
// its Scope logged and stated (lines and attributes, in order) and what
// it printed. It is told once for all who take it (Tell, Retell): the
// first to take it runs the scene, the others wait for it and reuse it.
// Each taker takes a Telling it has not taken yet, so go test -count=N
// tells the scene N times, and a Test never needs another to have run.
type Telling struct {
	example string          // the Example it tells
	gen     int             // 1 for the first telling of its Example and resource, 2 for the next
	first   string          // who took it first, and so ran its scene
	takers  map[string]bool // who took it; guarded by tellings.mu
	once    sync.Once

	steps   []step         // the record: what the scene's Scope logged and stated
	printed string         // what the scene printed, untrimmed
	res     fence.Resource // the fenced resource the scene opened with Resource, or nil
}

// Resource is the fenced resource the telling's Example opened with
// Resource (nil when it opened none). One opened by an Opener is still
// open: it is closed when the test binary ends, unless a Test that takes
// the telling closes it first (F8 restarts it).
func (tl *Telling) Resource() fence.Resource { return tl.res }

// tellingKey names the tellings of one Example on one resource: kind is
// the Opener's ("" for the Example's own resource).
type tellingKey struct{ example, kind string }

// tellings are the Tellings of the run, oldest first, by key.
var tellings struct {
	mu sync.Mutex
	by map[tellingKey][]*Telling
}

// take hands taker the oldest Telling of k it has not taken, or a new one.
func take(k tellingKey, taker string) *Telling {
	tellings.mu.Lock()
	defer tellings.mu.Unlock()
	for _, tl := range tellings.by[k] {
		if !tl.takers[taker] {
			tl.takers[taker] = true
			return tl
		}
	}
	if tellings.by == nil {
		tellings.by = map[tellingKey][]*Telling{}
	}
	tl := &Telling{example: k.example, gen: len(tellings.by[k]) + 1, first: taker, takers: map[string]bool{taker: true}}
	tellings.by[k] = append(tellings.by[k], tl)
	return tl
}

// Tell is the whole body of an Example that Tests retell, before its
// Output comment: scene holds the Example's steps, checks and prints, on
// the Scope it is given (it prints with the Scope's Printf and Println). Run by go test's Example runner, Tell prints the
// record of a telling of the Example on its own resource that no Example
// run has printed yet: the Tests that retold it ran before the Examples
// (go test runs Tests first), so the scene is not run again; with no such
// telling (go test -run Example_x) it tells the scene now. Either way the
// Example prints what the scene printed and writes its steps and
// attributes to standard error as an Example's own Scope does ("=== ATTR"
// lines), under a first line naming the telling.
func Tell(scene func(sc *zkserver.Scope)) {
	name := callerName(1)
	if handOver(name, scene) {
		return
	}
	k := tellingKey{example: name}
	tl := take(k, name)
	tl.once.Do(func() { tl.tell(k, scene, nil) })
	sc := zkserver.NewScope(name)
	sc.Logf("%s%s", claims.HarnessNote, tl.about())
	for _, s := range tl.steps {
		if s.key != "" {
			sc.Attr(s.key, s.value)
			continue
		}
		sc.Logf("%s", strings.TrimSuffix(s.text, "\n"))
	}
	fmt.Print(tl.printed)
}

// about names the telling whose record a taker reuses.
func (tl *Telling) about() string {
	return fmt.Sprintf("the record of %s's telling %d, run once for all who retell it, first for %s", tl.example, tl.gen, tl.first)
}

// Retell runs example, an Example of the root package whose body is Tell,
// for the Test t: t takes a telling of it (Telling), which the first
// taker ran, and its record becomes t's. Its steps are t's lines, from
// which the evidence draws the diagram; its claims, evidence and verdicts
// are t's attributes. What it printed is checked against its "Output:"
// comment, as go test checks the Example itself; a line that differs
// fails t with got and want.
func Retell(t *testing.T, example func()) *Telling {
	t.Helper()
	return RetellOn(t, example, "", nil)
}

// Opener opens a fenced resource with opts (a Trace, for one); t is the
// telling's, whose cleanups run when the test binary ends.
type Opener func(t zkserver.TB, opts ...fence.Option) fence.Resource

// RetellOn is Retell with the fenced resource the Example writes to
// (Resource) opened by open, a resource of kind: the same steps and
// checks, on another resource; the tellings of one kind are shared.
// Kind "" with a nil open is the Example's own resource.
func RetellOn(t *testing.T, example func(), kind string, open Opener) *Telling {
	t.Helper()
	name := funcName(example)
	if (kind == "") != (open == nil) {
		t.Fatalf("retelling %s: kind %q with opener %v; want both or neither", name, kind, open != nil)
	}
	want, err := tellingExample(".", name)
	if err != nil {
		t.Fatalf("retelling %s: %v", name, err)
	}
	scene := sceneOf(name, example)
	if scene == nil {
		t.Fatalf("retelling %s: it called no harness.Tell", name)
	}
	k := tellingKey{example: name, kind: kind}
	tl := take(k, t.Name())
	tl.once.Do(func() { tl.tell(k, scene, open) })
	tl.replay(t, name, want)
	return tl
}

// replay makes tl's record t's and checks what the scene printed against
// want, the Example's Output comment.
func (tl *Telling) replay(t *testing.T, name, want string) {
	t.Helper()
	t.Logf("%s%s", claims.HarnessNote, tl.about())
	if tl.example != name || tl.steps == nil {
		t.Errorf("got the record of %q's telling with %d steps; want one of %s's, with its steps", tl.example, len(tl.steps), name)
	}
	out := t.Output()
	for _, s := range tl.steps {
		if s.key != "" {
			t.Attr(s.key, s.value)
			continue
		}
		_, _ = io.WriteString(out, s.text)
	}
	got := strings.TrimSpace(tl.printed)
	for _, line := range strings.Split(got, "\n") {
		t.Logf("%s%s printed: %s", claims.HarnessNote, name, line) // for the reader, not a step of the diagram
		if reason, ok := strings.CutPrefix(line, failedPrefix); ok {
			t.Errorf("%s", strings.TrimPrefix(reason, name+": ")) // the step that stopped it, with its verdict, first
		}
	}
	if got != want {
		t.Errorf("%s printed:\n%s\nwant (its Output comment):\n%s", name, got, want)
	}
}

// recordings are the tellings whose scenes run now, by their Scope, with
// the Opener of their resource (Resource). Tellings of different Examples
// or resources run side by side: a scene prints with its Scope's Printf,
// into its record, never to os.Stdout.
var recordings struct {
	mu sync.Mutex
	by map[*zkserver.Scope]recordingOf
}

type recordingOf struct {
	tl   *Telling
	open Opener
	rec  *record
}

// tell runs scene on a Scope that acts for a record of its own, keeps
// what it logged, stated and printed, and closes what it opened: a step
// that stops the scene (the Scope's Fatalf panics) is printed as a
// "FAILED: " line, as EndExample prints it.
func (tl *Telling) tell(k tellingKey, scene func(sc *zkserver.Scope), open Opener) {
	name := "Told"
	if k.kind != "" {
		name += "_" + k.kind
	}
	if tl.gen > 1 {
		name += fmt.Sprintf("_%d", tl.gen)
	}
	rec := &record{Scope: zkserver.NewScope(name)}
	sc := tb.For(rec, k.example)
	recordings.mu.Lock()
	if recordings.by == nil {
		recordings.by = map[*zkserver.Scope]recordingOf{}
	}
	recordings.by[sc] = recordingOf{tl: tl, open: open, rec: rec}
	recordings.mu.Unlock()
	defer func() {
		recordings.mu.Lock()
		delete(recordings.by, sc)
		recordings.mu.Unlock()
	}()
	func() {
		defer rec.close()
		defer rec.failed()
		scene(sc)
	}()
	tl.steps, tl.printed = rec.freeze()
}

// A step of a record: text the Scope logged (a line with its place), or
// an attribute (key, value).
type step struct{ text, key, value string }

// record is the test a telling's Scope acts for (tb.For): it keeps the
// Scope's lines and attributes in order, and what it prints; its cleanups
// and temp dirs are its own Scope's, closed when the telling ends.
type record struct {
	*zkserver.Scope
	mu      sync.Mutex
	steps   []step
	printed strings.Builder
	frozen  bool
}

// Output takes the Scope's lines, each with the place of its step.
func (r *record) Output() io.Writer { return recordWriter{r, false} }

// Stdout takes what the Scope prints (Printf).
func (r *record) Stdout() io.Writer { return recordWriter{r, true} }

// Logf keeps a line (the Scope writes to Output; a cleanup may call Logf).
func (r *record) Logf(format string, args ...any) {
	r.add(step{text: fmt.Sprintf(format, args...) + "\n"})
}

// Attr keeps an attribute.
func (r *record) Attr(key, value string) { r.add(step{key: key, value: value}) }

func (r *record) add(s step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen { // a goroutine of the scene outlived it: said, not kept
		fmt.Fprintf(os.Stderr, "    %s: after its telling ended: %q %s=%s\n", r.Name(), s.text, s.key, s.value)
		return
	}
	r.steps = append(r.steps, s)
}

// failed, deferred, prints a panic as the "FAILED: " line of EndExample.
func (r *record) failed() {
	if p := recover(); p != nil {
		fmt.Fprintf(r.Stdout(), "%s%v\n", failedPrefix, p)
	}
}

// close runs the cleanups of the telling, last first, and removes its
// temp dirs; a cleanup that panics is printed as a "FAILED: " line.
func (r *record) close() {
	defer r.failed()
	r.Close()
}

// freeze ends the record and returns its steps and what was printed.
func (r *record) freeze() ([]step, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frozen = true
	return r.steps, r.printed.String()
}

// recordWriter writes to r's log, or to what it printed.
type recordWriter struct {
	r       *record
	printed bool
}

func (w recordWriter) Write(p []byte) (int, error) {
	if !w.printed {
		w.r.add(step{text: string(p)})
		return len(p), nil
	}
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	if w.r.frozen {
		fmt.Fprintf(os.Stderr, "    %s: printed after its telling ended: %q\n", w.r.Name(), p)
		return len(p), nil
	}
	return w.r.printed.Write(p)
}

// scenes are the scenes of the Examples, handed over by their Tell when
// sceneOf calls the Example asking for it.
var scenes struct {
	ask    sync.Mutex // one asking at a time
	mu     sync.Mutex // guards asking and by
	asking string
	by     map[string]func(*zkserver.Scope)
}

// sceneOf is the scene of Example name: example hands it over (Tell) the
// first time it is asked, without running it.
func sceneOf(name string, example func()) func(*zkserver.Scope) {
	scenes.ask.Lock()
	defer scenes.ask.Unlock()
	scenes.mu.Lock()
	scene, ok := scenes.by[name]
	if !ok {
		scenes.asking = name
	}
	scenes.mu.Unlock()
	if ok {
		return scene
	}
	example()
	scenes.mu.Lock()
	defer scenes.mu.Unlock()
	scenes.asking = ""
	return scenes.by[name]
}

// handOver keeps scene as Example name's when sceneOf is asking for it.
func handOver(name string, scene func(*zkserver.Scope)) bool {
	scenes.mu.Lock()
	defer scenes.mu.Unlock()
	if scenes.asking != name {
		return false
	}
	if scenes.by == nil {
		scenes.by = map[string]func(*zkserver.Scope){}
	}
	scenes.by[name] = scene
	return true
}

// Resource opens the fenced resource the Example of sc writes to, with
// opts: fence.NewMemory(opts...), or, when a Test retells the Example on
// another resource (RetellOn, fencescene.RetellOnEachResource), the one
// its Opener opens, kept open after the telling (Telling.Resource).
func Resource(sc *zkserver.Scope, opts ...fence.Option) fence.Resource {
	recordings.mu.Lock()
	r, ok := recordings.by[sc]
	recordings.mu.Unlock()
	if !ok {
		return fence.NewMemory(opts...)
	}
	var res fence.Resource = fence.NewMemory(opts...)
	if r.open != nil {
		kept := zkserver.NewScope(r.rec.Name() + "_resource")
		if mainScope != nil {
			mainScope.Cleanup(kept.Close) // when the test binary ends
		} else {
			r.rec.Cleanup(kept.Close)
		}
		res = r.open(kept, opts...)
		sc.Logf("the fenced resource is the retelling's: %T", res)
	}
	r.tl.res = res
	return res
}

// Retold says whether sc is the Scope of a telling (Tell, Retell): its
// steps are then a record that Tests retell.
func Retold(sc *zkserver.Scope) bool {
	recordings.mu.Lock()
	defer recordings.mu.Unlock()
	_, ok := recordings.by[sc]
	return ok
}

// funcName is the name of f without its package.
func funcName(f any) string {
	fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	return fn[strings.LastIndex(fn, ".")+1:]
}

// callerName is the name, without its package, of the function skip
// frames above the caller of callerName.
func callerName(skip int) string {
	pc, _, _, ok := runtime.Caller(skip + 1)
	if !ok {
		return "Example"
	}
	fn := runtime.FuncForPC(pc).Name()
	return fn[strings.LastIndex(fn, ".")+1:]
}

// tellingExample reads the "Output:" comment of Example name from the
// test files in dir, trimmed as go test trims it, and checks that its body
// is one call of harness.Tell: asking it for its scene runs nothing.
func tellingExample(dir, name string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return "", err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != name {
				continue
			}
			if !callsTellOnly(fd.Body) {
				return "", fmt.Errorf("%s's body is not one call of harness.Tell", name)
			}
			return outputComment(af, fd)
		}
	}
	return "", fmt.Errorf("no Example %s in %s", name, dir)
}

// callsTellOnly says whether body is one statement, a call of harness.Tell.
func callsTellOnly(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	es, ok := body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "harness" && sel.Sel.Name == "Tell"
}

// outputComment is the text after "Output:" in fd's body, trimmed.
func outputComment(af *ast.File, fd *ast.FuncDecl) (string, error) {
	for _, cg := range af.Comments {
		if cg.Pos() < fd.Body.Lbrace || cg.End() > fd.Body.Rbrace {
			continue
		}
		if rest, ok := strings.CutPrefix(cg.Text(), "Output:"); ok {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("%s has no Output comment", fd.Name.Name)
}

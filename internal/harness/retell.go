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

// retelling is the Test that is running an Example (Retell), by the
// Example's name; ExampleScope hands that Example a Scope acting for it.
var retelling struct {
	serial sync.Mutex // one retelling at a time: it takes os.Stdout
	mu     sync.Mutex // guards name and t
	name   string
	t      zkserver.TB
	open   Opener // opens the fenced resource the Example writes to (RetellOn), or nil
}

// Retell runs example, an Example of the root package, as the body of the
// Test t: the Example is the one telling of its diagram, and the Test is
// its record. While it runs, the Example's Scope acts for t (tb.For): its
// steps are logged as t's lines, from which the evidence draws the
// diagram; its claims, evidence and verdicts are t's attributes; its
// cleanups are t's. What it prints is checked against its "Output:"
// comment, as go test checks the Example itself; a line that differs fails
// t with got and want.
func Retell(t *testing.T, example func()) {
	t.Helper()
	RetellOn(t, example, nil)
}

// Opener opens a fenced resource with opts (a Trace, for one).
type Opener func(opts ...fence.Option) fence.Resource

// RetellOn is Retell with the fenced resource the Example writes to
// (Resource) opened by open: the same steps and checks, on another
// resource.
func RetellOn(t *testing.T, example func(), open Opener) {
	t.Helper()
	fn := runtime.FuncForPC(reflect.ValueOf(example).Pointer()).Name()
	name := fn[strings.LastIndex(fn, ".")+1:]
	want, err := exampleOutput(".", name)
	if err != nil {
		t.Fatalf("retelling %s: %v", name, err)
	}
	retelling.serial.Lock()
	defer retelling.serial.Unlock()
	retelling.mu.Lock()
	retelling.name, retelling.t, retelling.open = name, t, open
	retelling.mu.Unlock()
	defer func() {
		retelling.mu.Lock()
		retelling.name, retelling.t, retelling.open = "", nil, nil
		retelling.mu.Unlock()
	}()

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("retelling %s: %v", name, err)
	}
	stdout := os.Stdout
	os.Stdout = w
	printed := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		printed <- b
	}()
	func() {
		defer func() { os.Stdout = stdout; _ = w.Close() }()
		example()
	}()
	got := strings.TrimSpace(string(<-printed))
	_ = r.Close()
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

// scopeFor is the Scope of the Example name: one acting for the Test that
// retells it, or a Scope of its own.
func scopeFor(name string) *zkserver.Scope {
	retelling.mu.Lock()
	defer retelling.mu.Unlock()
	if retelling.name == name && retelling.t != nil {
		return tb.For(retelling.t, name)
	}
	return zkserver.NewScope(name)
}

// Resource opens the fenced resource the Example of sc writes to, with
// opts: fence.NewMemory(opts...), or, when a Test retells the Example on
// another resource (RetellOn, RetellOnEachResource), the one it opens.
func Resource(sc *zkserver.Scope, opts ...fence.Option) fence.Resource {
	open, ok := retellingOf(sc)
	if !ok || open == nil {
		return fence.NewMemory(opts...)
	}
	res := open(opts...)
	sc.Logf("the fenced resource is the retelling's: %T", res)
	return res
}

// Retold says whether sc acts for a Test that retells its Example.
func Retold(sc *zkserver.Scope) bool {
	_, ok := retellingOf(sc)
	return ok
}

// retellingOf says whether sc acts for a Test that retells its Example,
// and with which opener of the fenced resource (nil: the Example's own).
func retellingOf(sc *zkserver.Scope) (open Opener, ok bool) {
	retelling.mu.Lock()
	defer retelling.mu.Unlock()
	if retelling.t == nil || retelling.name != sc.Name() {
		return nil, false
	}
	return retelling.open, true
}

// exampleOutput reads the "Output:" comment of Example name from the test
// files in dir, trimmed as go test trims it.
func exampleOutput(dir, name string) (string, error) {
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
			for _, cg := range af.Comments {
				if cg.Pos() < fd.Body.Lbrace || cg.End() > fd.Body.Rbrace {
					continue
				}
				text := cg.Text()
				if rest, ok := strings.CutPrefix(text, "Output:"); ok {
					return strings.TrimSpace(rest), nil
				}
			}
			return "", fmt.Errorf("%s has no Output comment", name)
		}
	}
	return "", fmt.Errorf("no Example %s in %s", name, dir)
}

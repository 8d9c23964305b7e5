package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTheSchemaOfTheTargetsBuilds: every mutant of the targets compiles
// into one schema, but the few whose place cannot (each left to a build of
// its own, with the compiler's reason).
func TestTheSchemaOfTheTargetsBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lock, fence and the proxy")
	}
	ms, err := Generate("../..", targets)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{tmp: t.TempDir(), backend: "process"}
	if r.root, err = filepath.Abs("../.."); err != nil {
		t.Fatal(err)
	}
	sr, err := buildSchema(context.Background(), r, ms, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for id, why := range sr.fallback {
		t.Logf("left out: %s: %s", id, why)
	}
	// Without its sort, order.go no longer uses the package it imports.
	const unusedImport = "lock/order.go:51:2 remove-call sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq }) → {}"
	if why := sr.fallback[unusedImport]; !strings.HasPrefix(why, "does not type-check alone") {
		t.Errorf("%s: got %q; want it left to a build of its own, since it does not type-check alone", unusedImport, why)
	}
	if len(sr.fallback) > len(ms)/20 {
		t.Errorf("got %d of %d mutants left out of the schema; want at most 5%%", len(sr.fallback), len(ms))
	}
}

// TestTheSchemaRunsEachMutantAsItsOwnBuildDoes: a program made of every
// operator the generator knows (testdata/schema.go.txt) prints the same,
// mutant by mutant, built once as a schema and run with the mutant's
// number as it does built with the mutant alone; and with no number, as
// the program itself does.
func TestTheSchemaRunsEachMutantAsItsOwnBuildDoes(t *testing.T) {
	src, err := os.ReadFile("testdata/schema.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := generateSrc(Target{File: "main.go"}, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	nums := make([]int, len(ms))
	for i, m := range ms {
		nums[i], ops[m.Op] = i+1, true
	}
	if len(ops) != 8 {
		t.Fatalf("testdata/schema.go.txt: got mutants of %d operators, %v; want all 8", len(ops), ops)
	}
	schema := newSchemaFile(src, ms, nums, nil).render()
	helper := fmt.Sprintf(schemaHelper, "main", schemaVar, schemaEnv)
	bin := buildProgram(t, map[string]string{"main.go": schema, "zz_zk19_schema.go": helper})
	want := runProgram(t, buildProgram(t, map[string]string{"main.go": string(src)}), "")
	if got := runProgram(t, bin, ""); got != want {
		t.Errorf("the schema with no mutant: got output %q; want the program's %q", got, want)
	}
	fset := token.NewFileSet()
	for i, m := range ms {
		mutated := string(m.Apply(src))
		f, err := parser.ParseFile(fset, "main.go", mutated, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkErr := checkFiles(importer.Default(), "main", fset, []*ast.File{f})
		own, buildErr := buildOwn(t, mutated)
		if (checkErr == nil) != (buildErr == nil) {
			t.Errorf("%s: type-checked alone: got error %v; want the error of its own build, %v", m.ID(), checkErr, buildErr)
		}
		if buildErr != nil {
			continue
		}
		want := runProgram(t, own, "")
		if got := runProgram(t, bin, fmt.Sprint(nums[i])); got != want {
			t.Errorf("%s: the schema with %s=%d: got output %q; want the mutant's own build's %q", m.ID(), schemaEnv, nums[i], got, want)
		}
	}
}

// buildOwn builds the program of main.go src, or says why it does not build.
func buildOwn(t *testing.T, src string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module schematest\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", "prog")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return filepath.Join(dir, "prog"), nil
}

// buildProgram builds a main package of files in a module of its own.
func buildProgram(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module schematest\n\ngo 1.22\n"
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-o", "prog")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	return filepath.Join(dir, "prog")
}

func runProgram(t *testing.T, bin, mutant string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), schemaEnv+"="+mutant)
	out, err := cmd.CombinedOutput()
	if err != nil {
		// A panic's trace names addresses and the build's directory.
		text, _, _ := strings.Cut(string(out), "\ngoroutine ")
		return fmt.Sprintf("%s (%v)", text, err)
	}
	return string(out)
}

// TestABinaryThatDoesNotStartIsNoVerdict: when a schema's test binary
// cannot be run at all (the reader test2json missing, as when the
// toolchain no longer ships it prebuilt), the mutant is not run, never
// killed: a run once counted every such mutant killed by "(package)".
func TestABinaryThatDoesNotStartIsNoVerdict(t *testing.T) {
	dir := t.TempDir()
	r := &runner{root: dir, tmp: dir, backend: "process"}
	sr := &schemaRun{r: r, dir: dir, nums: map[string]int{"m": 1}, test2j: filepath.Join(dir, "no-test2json"),
		bins: map[string]string{".": filepath.Join(dir, "x.test")}, binErr: map[string]error{}}
	o := sr.goTest(context.Background(), Mutant{}, ".", []string{"TestX"}, "", time.Minute)
	if !o.NotRun || o.Killed {
		t.Errorf("a test binary that does not start: got outcome %+v; want not run, not killed", o)
	}
}

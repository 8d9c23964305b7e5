package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// modulePath is the import path of the module root.
const modulePath = "github.com/zk19/zk19"

// testPkgs are the packages whose tests may kill a mutant, in the order a
// mutant runs them: the packages' own tests first (fast), the root claim
// proofs last (the peer table, ./peers, before them).
var testPkgs = []string{"./fence", "./fence/fencehttp", "./fence/fencetest", "./lock", "./internal/server/faultproxy", "./peers", "."}

// coverPkgs is -coverpkg of the coverage runs: the packages of the targets.
const coverPkgs = "./lock,./lock/locktrace,./fence,./fence/fencehttp,./fence/fencetest,./internal/server/faultproxy"

// Block is a coverage block: start line, start column, end line, end column.
type Block [4]int

// TestCover is what one top-level test covered, run alone.
type TestCover struct {
	Pkg     string             `json:"pkg"`  // "./lock", or "." for the root claim proofs
	Name    string             `json:"name"` // TestX or ExampleX
	Passed  bool               `json:"passed"`
	Seconds float64            `json:"seconds"`
	Blocks  map[string][]Block `json:"blocks"` // file (relative to the module root) → blocks run at least once
	all     map[string][]Block // while the map is made: every block of the profile
}

// CoverMap is which test covers which block, for one source tree.
type CoverMap struct {
	Key     string             `json:"key"`
	Commit  string             `json:"commit"`
	Made    time.Time          `json:"made"`
	Backend string             `json:"backend"`
	Seconds float64            `json:"seconds"`
	All     map[string][]Block `json:"all"` // every block of every target file
	Tests   []TestCover        `json:"tests"`
}

// treeKey hashes what the coverage depends on: every Go file of the module
// (tests included) but those of the commands under cmd/, which no test
// imports, and go.mod and go.sum, as in the work tree. A commit that
// changes only documentation or a command keeps the key.
func treeKey(root string) (string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.go", "go.mod", "go.sum").Output()
	if err != nil {
		return "", fmt.Errorf("git ls-files: %w", err)
	}
	files := strings.Fields(string(out))
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		if strings.HasPrefix(f, "cmd/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// cacheDir is where coverage maps and operator results are kept between runs.
func cacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	d = filepath.Join(d, "zk19-mutants")
	return d, os.MkdirAll(d, 0o755)
}

// listTests returns the top-level tests and examples of the package in dir,
// in source order: every func TestX(*testing.T) and every ExampleX with an
// output comment (one without is compiled, not run).
func listTests(dir string) ([]string, error) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			n := fd.Name.Name
			switch {
			case n == "TestMain":
			case strings.HasPrefix(n, "Test") && fd.Type.Params.NumFields() == 1:
				names = append(names, n)
			case strings.HasPrefix(n, "Example") && hasOutput(f, fd):
				names = append(names, n)
			}
		}
	}
	return names, nil
}

// hasOutput reports whether an example function has an "Output:" comment.
func hasOutput(f *ast.File, fd *ast.FuncDecl) bool {
	for _, cg := range f.Comments {
		if cg.Pos() < fd.Body.Lbrace || cg.End() > fd.Body.Rbrace {
			continue
		}
		t := strings.TrimSpace(cg.Text())
		if strings.HasPrefix(t, "Output:") || strings.HasPrefix(t, "Unordered output:") {
			return true
		}
	}
	return false
}

// parseProfile reads a coverage profile: the blocks of the target files, and
// which of them ran.
func parseProfile(r io.Reader, files map[string]bool) (all, hit map[string][]Block, err error) {
	all, hit = map[string][]Block{}, map[string][]Block{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "mode:") || l == "" {
			continue
		}
		// github.com/zk19/zk19/lock/lock.go:63.84,64.15 1 0
		colon := strings.LastIndex(l, ":")
		if colon < 0 {
			return nil, nil, fmt.Errorf("coverage profile: bad line %q", l)
		}
		file := strings.TrimPrefix(l[:colon], modulePath+"/")
		if !files[file] {
			continue
		}
		f := strings.FieldsFunc(l[colon+1:], func(r rune) bool { return r == '.' || r == ',' || r == ' ' })
		if len(f) != 6 {
			return nil, nil, fmt.Errorf("coverage profile: bad line %q", l)
		}
		var v [6]int
		for i := range f {
			if v[i], err = strconv.Atoi(f[i]); err != nil {
				return nil, nil, fmt.Errorf("coverage profile: bad line %q", l)
			}
		}
		b := Block{v[0], v[1], v[2], v[3]}
		all[file] = append(all[file], b)
		if v[5] > 0 {
			hit[file] = append(hit[file], b)
		}
	}
	return all, hit, sc.Err()
}

// before reports whether position (l, c) comes before (l2, c2).
func before(l, c, l2, c2 int) bool { return l < l2 || l == l2 && c < c2 }

// blockOf returns the block that decides whether the code at (line, col)
// ran: the block holding it, or, for code between blocks (the expression
// of a case clause), the nearest block that ends before it, whose run the
// code's run needs. ok is false for a position before every block.
func blockOf(all []Block, line, col int) (Block, bool) {
	var best Block
	found := false
	for _, b := range all {
		if !before(line, col, b[0], b[1]) && !before(b[2], b[3], line, col) {
			// Inside b. Blocks do not nest: b is the one.
			return b, true
		}
		if !before(line, col, b[2], b[3]) && (!found || before(best[2], best[3], b[2], b[3])) {
			best, found = b, true
		}
	}
	return best, found
}

// covering returns the tests of pkg that ran the code of m.
func (cm *CoverMap) covering(m Mutant, pkg string) []TestCover {
	b, ok := blockOf(cm.All[m.File], m.CoverL, m.CoverC)
	if !ok {
		return nil
	}
	var out []TestCover
	for _, t := range cm.Tests {
		if t.Pkg != pkg || !t.Passed {
			continue
		}
		for _, h := range t.Blocks[m.File] {
			if h == b {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// computeCover runs each top-level test of each test package alone, with a
// coverage profile of the target packages, and returns the map. The tests
// run r.jobs at a time (each alone in its own test binary, as with one),
// and take their places in the map in package and source order.
func computeCover(ctx context.Context, r *runner, key string, logf func(string, ...any)) (*CoverMap, error) {
	start := time.Now()
	files := map[string]bool{}
	for _, t := range targets {
		files[t.File] = true
	}
	cm := &CoverMap{Key: key, Commit: r.commit, Made: start.UTC(), Backend: r.backend, All: map[string][]Block{}}
	type job struct {
		pkg, name, bin string
		i, n           int
	}
	var jobs []job
	for k, pkg := range testPkgs {
		names, err := listTests(filepath.Join(r.root, filepath.FromSlash(pkg)))
		if err != nil {
			return nil, err
		}
		bin := filepath.Join(r.tmp, fmt.Sprintf("cover%d.test", k))
		if err := r.goCmd(ctx, 5*time.Minute, "test", "-c", "-o", bin, "-cover", "-covermode=set", "-coverpkg="+coverPkgs, pkg); err != nil {
			return nil, fmt.Errorf("build %s with coverage: %w", pkg, err)
		}
		for i, name := range names {
			jobs = append(jobs, job{pkg, name, bin, i, len(names)})
		}
	}
	tcs := make([]TestCover, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(r.jobs, 1))
	for k, j := range jobs {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			var state string
			tcs[k], state, errs[k] = coverOne(ctx, r, j.pkg, j.name, j.bin, fmt.Sprintf("cover%d.out", k), files)
			if errs[k] == nil {
				logf("cover %s %d/%d %s %.1fs %s", j.pkg, j.i+1, j.n, j.name, tcs[k].Seconds, state)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, tc := range tcs {
		for file, bs := range tc.all {
			if len(cm.All[file]) == 0 {
				cm.All[file] = bs
			}
		}
		cm.Tests = append(cm.Tests, tc)
	}
	cm.Seconds = time.Since(start).Seconds()
	return cm, nil
}

// coverOne runs test name of pkg alone, from the coverage binary bin, and
// reads what it covered of files from its profile (prof, in r.tmp); state
// says whether it passed.
func coverOne(ctx context.Context, r *runner, pkg, name, bin, prof string, files map[string]bool) (TestCover, string, error) {
	prof = filepath.Join(r.tmp, prof)
	t0 := time.Now()
	tctx, cancel := context.WithTimeout(ctx, 11*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(tctx, bin, "-test.run", "^"+name+"$", "-test.count=1",
		"-test.coverprofile="+prof, "-test.timeout=10m")
	cmd.Dir = filepath.Join(r.root, filepath.FromSlash(pkg))
	cmd.Env = r.env()
	setGroup(cmd)
	out, runErr := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return TestCover{}, "", ctx.Err()
	}
	tc := TestCover{Pkg: pkg, Name: name, Passed: runErr == nil, Seconds: time.Since(t0).Seconds()}
	if f, err := os.Open(prof); err == nil {
		all, hit, perr := parseProfile(f, files)
		f.Close()
		_ = os.Remove(prof)
		if perr != nil {
			return tc, "", perr
		}
		tc.all, tc.Blocks = all, hit
	}
	state := "ok"
	if !tc.Passed {
		state = "FAILED on the unmutated tree (never used to judge a mutant): " + lastLines(string(out), 3)
	}
	return tc, state, nil
}

// cachedCover returns the cached coverage map of tree key, or nil.
func cachedCover(key string) *CoverMap {
	dir, err := cacheDir()
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "cover-"+key+".json"))
	if err != nil {
		return nil
	}
	var cm CoverMap
	if json.Unmarshal(b, &cm) != nil || cm.Key != key {
		return nil
	}
	return &cm
}

// loadOrComputeCover returns the cached coverage map of the tree, or makes it.
func loadOrComputeCover(ctx context.Context, r *runner, fresh bool, logf func(string, ...any)) (*CoverMap, bool, error) {
	dir, err := cacheDir()
	if err != nil {
		return nil, false, err
	}
	path := filepath.Join(dir, "cover-"+r.key+".json")
	if !fresh {
		if cm := cachedCover(r.key); cm != nil {
			return cm, true, nil
		}
	}
	logf("coverage map %s: running each test alone with -coverpkg=%s (cached in %s)", r.key, coverPkgs, path)
	cm, err := computeCover(ctx, r, r.key, logf)
	if err != nil {
		return nil, false, err
	}
	b, err := json.Marshal(cm)
	if err != nil {
		return nil, false, err
	}
	return cm, false, os.WriteFile(path, b, 0o644)
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " ⏎ ")
}

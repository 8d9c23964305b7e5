package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A schema is every mutant of the run compiled into one overlaid copy of
// each target file (mutant schemata): each mutant's place holds the
// original code and each of its mutants, and the one that runs is chosen
// by schemaVar, which a file the overlay adds to the package reads once,
// at init, from the environment variable schemaEnv (the mutant's number;
// none when unset). Each test package is built once with the schema (go
// test -c), and each mutant runs that binary with its number: the run
// spends its time in the tests, not in a build per mutant. A mutant whose
// place does not compile in the schema (a removed call that ended its
// function, a constant expression made a call) is left to the build of
// its own (runner.goTest), which says "does not build" if it does not.
const (
	schemaEnv = "ZK19_MUTANT"
	schemaVar = "zk19Mutant"
)

// schemaHelper is the file the overlay adds to each package of a target:
// the mutant's number and the arithmetic whose operator a mutant flips.
const schemaHelper = `package %s

import (
	"os"
	"strconv"
)

var %s, _ = strconv.Atoi(os.Getenv(%q))

type zk19Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64
}

// zk19Arith is x+y (add) or x-y, the other one when on.
func zk19Arith[T zk19Number](on bool, x, y T, add bool) T {
	if on != add {
		return x + y
	}
	return x - y
}
`

// site is the mutants of one node of a file, by their index in the file's
// mutants.
type site struct {
	start, end int
	ms         []int
}

// schemaFile renders one file's schema.
type schemaFile struct {
	src   []byte
	ms    []Mutant
	nums  []int // each mutant's number
	sites []site
}

func newSchemaFile(src []byte, ms []Mutant, nums []int, skip map[string]bool) *schemaFile {
	f := &schemaFile{src: src, ms: ms, nums: nums}
	at := map[[2]int]int{}
	for i, m := range ms {
		if skip[m.ID()] {
			continue
		}
		k := [2]int{m.NodeStart, m.NodeEnd}
		j, ok := at[k]
		if !ok {
			j = len(f.sites)
			at[k] = j
			f.sites = append(f.sites, site{start: m.NodeStart, end: m.NodeEnd})
		}
		f.sites[j].ms = append(f.sites[j].ms, i)
	}
	sort.Slice(f.sites, func(i, j int) bool {
		a, b := f.sites[i], f.sites[j]
		if a.start != b.start {
			return a.start < b.start
		}
		return a.end > b.end
	})
	return f
}

// render is the whole file's schema.
func (f *schemaFile) render() string { return f.text(0, len(f.src), -1) }

// text is src[from:to] with the sites inside it written as schemata, but
// the site outer (whose own text this is).
func (f *schemaFile) text(from, to, outer int) string {
	var b strings.Builder
	pos := from
	for j, s := range f.sites {
		if j == outer || s.start < pos || s.end > to {
			continue
		}
		b.Write(f.src[pos:s.start])
		fmt.Fprintf(&b, "/*zk19:%d{*/%s/*}*/", j, f.wrap(j))
		pos = s.end
	}
	b.Write(f.src[pos:to])
	return b.String()
}

// on is the Go condition "mutant i is the one that runs".
func (f *schemaFile) on(i int) string { return fmt.Sprintf("%s == %d", schemaVar, f.nums[i]) }

// variant is site j's node with mutant i made.
func (f *schemaFile) variant(j, i int) string {
	s, m := f.sites[j], f.ms[i]
	return f.text(s.start, m.Start, j) + m.Repl + f.text(m.End, s.end, j)
}

// wrap is site j's schema: its original node and each of its mutants, one
// chosen by the mutant's number.
func (f *schemaFile) wrap(j int) string {
	s := f.sites[j]
	m := f.ms[s.ms[0]]
	orig := f.text(s.start, s.end, j)
	switch {
	case m.Stmt:
		var st string
		if m.Op == opCall {
			st = fmt.Sprintf("if !(%s) { %s }", f.on(s.ms[0]), orig)
		} else {
			st = fmt.Sprintf("if %s { %s } else { %s }", f.on(s.ms[0]), f.variant(j, s.ms[0]), orig)
		}
		if m.Simple {
			return "func() { " + st + " }()"
		}
		return st
	case m.Op == opBool:
		if m.Repl == "false" {
			return fmt.Sprintf("(!(%s))", f.on(s.ms[0]))
		}
		return fmt.Sprintf("(%s)", f.on(s.ms[0]))
	case m.Op == opNot:
		return fmt.Sprintf("((%s) != %s)", f.on(s.ms[0]), orig)
	case m.Op == opArith:
		add := strings.TrimSpace(string(f.src[m.Start:m.End])) == "+"
		return fmt.Sprintf("zk19Arith(%s, %s, %s, %v)", f.on(s.ms[0]), f.text(s.start, m.Start, j), f.text(m.End, s.end, j), add)
	}
	var b strings.Builder
	b.WriteString("(")
	var offs []string
	for _, i := range s.ms {
		fmt.Fprintf(&b, "%s && (%s) || ", f.on(i), f.variant(j, i))
		offs = append(offs, fmt.Sprintf("%s != %d", schemaVar, f.nums[i]))
	}
	fmt.Fprintf(&b, "%s && (%s))", strings.Join(offs, " && "), orig)
	return b.String()
}

var siteMark = regexp.MustCompile(`/\*zk19:(\d+)\{\*/|/\*\}\*/`)

// siteAt is the innermost site of a rendered schema that holds offset off;
// failing that, the last statement site that ends before it (a removed
// call that ended its function is an error at the function's end).
func (f *schemaFile) siteAt(rendered string, off int) (int, bool) {
	type open struct{ j, at int }
	var stack []open
	best, bestLen, lastStmt := -1, 0, -1
	for _, loc := range siteMark.FindAllStringSubmatchIndex(rendered, -1) {
		if loc[2] >= 0 {
			j, _ := strconv.Atoi(rendered[loc[2]:loc[3]])
			stack = append(stack, open{j, loc[0]})
			continue
		}
		if len(stack) == 0 {
			continue
		}
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if o.at <= off && off < loc[1] && (best < 0 || loc[1]-o.at < bestLen) {
			best, bestLen = o.j, loc[1]-o.at
		}
		if loc[1] <= off && f.ms[f.sites[o.j].ms[0]].Stmt {
			lastStmt = o.j
		}
	}
	if best >= 0 {
		return best, true
	}
	return lastStmt, lastStmt >= 0
}

// schemaRun is the schema of a run's mutants: the overlay that holds it,
// each mutant's number, the mutants left to a build of their own, and the
// test binaries built with it.
type schemaRun struct {
	r        *runner
	dir      string
	overlay  string
	nums     map[string]int
	fallback map[string]string // mutant ID → why it is not in the schema
	mu       sync.Mutex        // held while a test binary is built
	bins     map[string]string // test package → binary
	binErr   map[string]error
	test2j   string
}

// compileErr is a compiler error's place: file, line, column.
var compileErr = regexp.MustCompile(`(?m)^(?:\./)?([\w./-]+\.go):(\d+):(\d+): (.*)$`)

// buildSchema writes the schema of ms and builds their packages with it;
// the mutants whose places do not compile in it are left out, in rounds,
// until it builds.
func buildSchema(ctx context.Context, r *runner, ms []Mutant, logf func(string, ...any)) (*schemaRun, error) {
	sr := &schemaRun{r: r, dir: filepath.Join(r.tmp, "schema"), nums: map[string]int{}, fallback: map[string]string{}, bins: map[string]string{}, binErr: map[string]error{}}
	if err := os.MkdirAll(sr.dir, 0o755); err != nil {
		return nil, err
	}
	// go test -json's reader, built once (the toolchain builds it on demand).
	sr.test2j = filepath.Join(sr.dir, "test2json")
	if err := r.goCmd(ctx, 5*time.Minute, "build", "-o", sr.test2j, "cmd/test2json"); err != nil {
		return nil, err
	}
	files, byFile := groupByFile(ms)
	for _, m := range ms {
		sr.nums[m.ID()] = len(sr.nums) + 1
	}
	if err := sr.typeCheck(ctx, files, byFile); err != nil {
		return nil, err
	}
	srcs := map[string][]byte{}
	for _, f := range files {
		var err error
		if srcs[f], err = os.ReadFile(filepath.Join(r.root, filepath.FromSlash(f))); err != nil {
			return nil, err
		}
	}
	for round := 1; ; round++ {
		rendered, err := sr.write(files, byFile, srcs)
		if err != nil {
			return nil, err
		}
		out, err := sr.build(ctx, files)
		if err == nil {
			logf("schema: %d mutants in one build of %d files (round %d), %d left to builds of their own", len(ms)-len(sr.fallback), len(files), round, len(sr.fallback))
			return sr, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if n := sr.leaveOut(out, files, byFile, srcs, rendered); n == 0 || round == 10 {
			// An error no site explains: every mutant goes its own way.
			for _, m := range ms {
				sr.fallback[m.ID()] = "the schema did not build: " + lastLines(out, 2)
			}
			logf("schema: does not build (%s); every mutant is built on its own", lastLines(out, 2))
			return sr, nil
		}
	}
}

// write renders each file's schema and writes the overlay: the schemata
// and a helper file in each of their packages.
func (sr *schemaRun) write(files []string, byFile map[string][]Mutant, srcs map[string][]byte) (map[string]*schemaFile, error) {
	ov := map[string]string{}
	rendered := map[string]*schemaFile{}
	pkgs := map[string]string{}
	for i, file := range files {
		ms := byFile[file]
		nums := make([]int, len(ms))
		for k, m := range ms {
			nums[k] = sr.nums[m.ID()]
		}
		sf := newSchemaFile(srcs[file], ms, nums, sr.skipped())
		rendered[file] = sf
		p := filepath.Join(sr.dir, fmt.Sprintf("%d-%s", i, path.Base(file)))
		if err := os.WriteFile(p, []byte(sf.render()), 0o644); err != nil {
			return nil, err
		}
		ov[filepath.Join(sr.r.root, filepath.FromSlash(file))] = p
		pf, err := parser.ParseFile(token.NewFileSet(), file, srcs[file], parser.PackageClauseOnly)
		if err != nil {
			return nil, err
		}
		pkgs[path.Dir(file)] = pf.Name.Name
	}
	for dir, name := range pkgs {
		p := filepath.Join(sr.dir, strings.ReplaceAll(dir, "/", "_")+"-zk19_schema.go")
		if err := os.WriteFile(p, []byte(fmt.Sprintf(schemaHelper, name, schemaVar, schemaEnv)), 0o644); err != nil {
			return nil, err
		}
		ov[filepath.Join(sr.r.root, filepath.FromSlash(dir), "zz_zk19_schema.go")] = p
	}
	sr.overlay = filepath.Join(sr.dir, "overlay.json")
	return rendered, writeOverlay(sr.overlay, ov)
}

func (sr *schemaRun) skipped() map[string]bool {
	s := map[string]bool{}
	for id := range sr.fallback {
		s[id] = true
	}
	return s
}

// build builds the packages of files with the schema; its output on failure.
func (sr *schemaRun) build(ctx context.Context, files []string) (string, error) {
	seen := map[string]bool{}
	args := []string{"build", "-gcflags=-e", "-overlay", sr.overlay}
	for _, f := range files {
		if d := "./" + path.Dir(f); !seen[d] {
			seen[d] = true
			args = append(args, d)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = sr.r.root
	cmd.Env = sr.r.env()
	setGroup(cmd)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// leaveOut takes out of the schema the sites the build's errors point
// at, and returns how many mutants it left out.
func (sr *schemaRun) leaveOut(out string, files []string, byFile map[string][]Mutant, srcs map[string][]byte, rendered map[string]*schemaFile) int {
	n := 0
	for _, e := range compileErr.FindAllStringSubmatch(out, -1) {
		file := ""
		for _, f := range files {
			if strings.HasSuffix(e[1], f) || strings.HasSuffix(e[1], path.Base(f)) && strings.Contains(e[1], sr.dir) {
				file = f
			}
		}
		sf := rendered[file]
		if sf == nil {
			continue
		}
		text := sf.render()
		line, _ := strconv.Atoi(e[2])
		col, _ := strconv.Atoi(e[3])
		off := offsetOf(text, line, col)
		j, ok := sf.siteAt(text, off)
		if !ok {
			continue
		}
		for _, i := range sf.sites[j].ms {
			id := sf.ms[i].ID()
			if _, done := sr.fallback[id]; !done {
				sr.fallback[id] = "does not compile in the schema: " + e[4]
				n++
			}
		}
	}
	return n
}

// offsetOf is the byte offset of line:col (1-based, col in bytes) in text.
func offsetOf(text string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return min(off+col-1, len(text))
}

// binary is test package pkg built with the schema, built on first use.
func (sr *schemaRun) binary(ctx context.Context, pkg string) (string, error) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if b, ok := sr.bins[pkg]; ok {
		return b, sr.binErr[pkg]
	}
	b := filepath.Join(sr.dir, strings.NewReplacer("/", "_", ".", "root").Replace(pkg)+".test")
	err := sr.r.goCmd(ctx, 5*time.Minute, "test", "-c", "-vet=off", "-overlay", sr.overlay, "-o", b, pkg)
	sr.bins[pkg], sr.binErr[pkg] = b, err
	return b, err
}

// goTest runs the tests of pkg named in tests against mutant m of the
// schema: its test binary, with m's number and the mutated file as the
// source overlay the proofs that read the source read.
func (sr *schemaRun) goTest(ctx context.Context, m Mutant, pkg string, tests []string, srcOverlay string, limit time.Duration) Outcome {
	t0 := time.Now()
	bin, err := sr.binary(ctx, pkg)
	if err != nil {
		return Outcome{Invalid: true, Line: err.Error(), Seconds: time.Since(t0).Seconds()}
	}
	ip := modulePath
	if pkg != "." {
		ip += "/" + strings.TrimPrefix(pkg, "./")
	}
	args := []string{"-t", "-p", ip, bin, "-test.v=test2json", "-test.paniconexit0", "-test.count=1", "-test.failfast",
		"-test.timeout=" + limit.String(), "-test.run", "^(" + strings.Join(tests, "|") + ")$"}
	ctx2, cancel := context.WithTimeout(ctx, limit+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx2, sr.test2j, args...)
	cmd.Dir = filepath.Join(sr.r.root, filepath.FromSlash(pkg))
	cmd.Env = append(sr.r.env(), fmt.Sprintf("%s=%d", schemaEnv, sr.nums[m.ID()]), "ZK19_SOURCE_OVERLAY="+srcOverlay)
	setGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && ctx2.Err() == nil {
		// The binary never ran: no verdict, and the run stops.
		return Outcome{NotRun: true, Line: err.Error(), Seconds: time.Since(t0).Seconds()}
	}
	return judge(ctx, ctx2, pkg, out, stderr.String(), err, limit+time.Minute, t0)
}

// fallbackOf says whether m runs on a build of its own, and why: no schema
// (-schema=false), or m's place did not compile in it.
func (sr *schemaRun) fallbackOf(m Mutant) (string, bool) {
	if sr == nil {
		return "no schema", true
	}
	why, ok := sr.fallback[m.ID()]
	return why, ok
}

// typeCheck leaves to builds of their own the mutants that do not
// type-check alone (see typecheck.go).
func (sr *schemaRun) typeCheck(ctx context.Context, files []string, byFile map[string][]Mutant) error {
	var dirs []string
	for _, f := range files {
		if d := path.Dir(f); !contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	tc, err := newTypeChecker(ctx, sr.r, dirs)
	if err != nil {
		return err
	}
	for _, f := range files {
		for _, m := range byFile[f] {
			if err := tc.check(m); err != nil {
				sr.fallback[m.ID()] = "does not type-check alone: " + err.Error()
			}
		}
	}
	return nil
}

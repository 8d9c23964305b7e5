package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Statuses of an operator mutant.
const (
	stKilled     = "killed"
	stLived      = "lived"
	stTimedOut   = "timed out"
	stUncovered  = "not covered"
	stInvalid    = "does not build"
	stEquivalent = "equivalent"
	stNotRun     = "not run"
)

// Result is what became of one operator mutant.
type Result struct {
	Mutant
	ID      string   `json:"id"`
	Status  string   `json:"status"`
	Pkg     string   `json:"pkg,omitempty"` // the package whose test killed it
	Outcome Outcome  `json:"outcome"`
	Stages  []string `json:"stages,omitempty"` // what ran: "./lock: 3 tests, 4.1s"
	Root    []string `json:"root,omitempty"`   // the root claim proofs that cover its code
	Reason  string   `json:"reason,omitempty"` // an equivalent mutant's reason
	Seconds float64  `json:"seconds"`
}

// Equivalent is a mutant that changes no behaviour, listed by hand with
// the reason (testdata/mutants/equivalent.json).
type Equivalent struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Op     string `json:"op"`
	Orig   string `json:"orig"`
	Mut    string `json:"mut"`
	Reason string `json:"reason"`
}

func (e Equivalent) matches(m Mutant) bool {
	return e.File == m.File && e.Line == m.Line && e.Op == m.Op && e.Orig == m.Orig && e.Mut == m.Mut
}

func loadEquivalents(path string) ([]Equivalent, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var eq []Equivalent
	if err := json.Unmarshal(b, &eq); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range eq {
		if e.Reason == "" {
			return nil, fmt.Errorf("%s: %s:%d %s has no reason", path, e.File, e.Line, e.Op)
		}
	}
	return eq, nil
}

// stageLimit bounds one go test run of tests that took secs seconds in
// all when each ran alone in the coverage run.
func stageLimit(pkg string, secs float64) time.Duration {
	d := time.Duration(2*secs)*time.Second + 90*time.Second
	if pkg == "." || pkg == "./peers" { // the root proofs and the peer table run side by side (parallel(t))
		d = time.Duration(secs)*time.Second + 150*time.Second
	}
	return min(d, 12*time.Minute)
}

// plan is the tests a mutant runs, package by package, in testPkgs order.
type plan struct {
	pkg   string
	tests []string
	secs  float64
	each  []float64 // each test's seconds
	slow  bool      // one slow test, in a stage of its own (run side by side, runStages)
}

// quickTest is how long, at most, a quick test took in the coverage run.
const quickTest = 3.0

// plan is the stages of m's covering tests, package by package. With
// quickFirst (the schema's binaries, which cost no build per stage) the
// quick tests of every package run first, one stage a package, then each
// slow one in a stage of its own: the same tests run on a mutant that
// lives, and one that a quick test kills does not wait for lock's matrix
// or the peer table. With a history (kills, the run's own: which tests
// killed the mutants of m's function so far), the packages and tests that
// killed there run first, the slow ones else by their time in the
// coverage run, shortest first, the root's proofs after the packages'.
func (cm *CoverMap) plan(m Mutant, quickFirst bool, kills *history) []plan {
	if !quickFirst {
		return cm.packagePlans(m, func(TestCover) bool { return true })
	}
	quick := cm.packagePlans(m, func(t TestCover) bool { return t.Seconds <= quickTest })
	sort.SliceStable(quick, func(i, j int) bool {
		if ki, kj := kills.ofPlan(m, quick[i]), kills.ofPlan(m, quick[j]); ki != kj {
			return ki > kj
		}
		return ownPackage(m, quick[i].pkg) && !ownPackage(m, quick[j].pkg)
	})
	var slow []plan
	for _, p := range cm.packagePlans(m, func(t TestCover) bool { return t.Seconds > quickTest }) {
		for i, name := range p.tests {
			slow = append(slow, plan{pkg: p.pkg, tests: []string{name}, secs: p.each[i], slow: true})
		}
	}
	sort.SliceStable(slow, func(i, j int) bool {
		a, b := slow[i], slow[j]
		if ka, kb := kills.ofPlan(m, a), kills.ofPlan(m, b); ka != kb {
			return ka > kb
		}
		if (a.pkg == ".") != (b.pkg == ".") {
			return b.pkg == "."
		}
		return a.secs < b.secs
	})
	return append(quick, slow...)
}

// ownPackage reports whether pkg holds the tests of m's own package (or,
// for a subpackage such as lock/locktrace, of its parent's): the tests
// most likely to kill it, tried first among the quick ones.
func ownPackage(m Mutant, pkg string) bool {
	dir := path.Dir(m.File)
	p := strings.TrimPrefix(pkg, "./")
	return p == dir || p != "." && strings.HasPrefix(dir, p+"/")
}

// packagePlans is one stage a package, in testPkgs order, of m's covering
// tests that in keeps.
func (cm *CoverMap) packagePlans(m Mutant, in func(TestCover) bool) []plan {
	var out []plan
	for _, pkg := range testPkgs {
		p := plan{pkg: pkg}
		for _, t := range cm.covering(m, pkg) {
			if in(t) {
				p.tests = append(p.tests, t.Name)
				p.each = append(p.each, t.Seconds)
				p.secs += t.Seconds
			}
		}
		if len(p.tests) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// history is which tests killed the mutants of each function so far in
// a run: the order of a mutant's stages puts them first (plan). It
// changes which test is tried first, never which tests a mutant that
// lives runs. A nil history knows nothing.
type history struct {
	mu    sync.Mutex
	kills map[string]map[string]int // file and function → "pkg test" → kills
}

func newHistory() *history { return &history{kills: map[string]map[string]int{}} }

func (h *history) record(m Mutant, pkg, test string) {
	if h == nil || test == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := m.File + " " + m.Func
	if h.kills[k] == nil {
		h.kills[k] = map[string]int{}
	}
	h.kills[k][pkg+" "+test]++
}

// ofPlan is how many mutants of m's function the tests of p killed.
func (h *history) ofPlan(m Mutant, p plan) int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, t := range p.tests {
		n += h.kills[m.File+" "+m.Func][p.pkg+" "+t]
	}
	return n
}

// runMutant applies m through an overlay and runs its tests, stage by
// stage, until one kills it: the test binaries of the schema sr when m is
// in it, else a go test build of m's own.
func (r *runner) runMutant(ctx context.Context, cm *CoverMap, sr *schemaRun, m Mutant) Result {
	t0 := time.Now()
	res := Result{Mutant: m, ID: m.ID()}
	_, own := sr.fallbackOf(m)
	plans := cm.plan(m, !own, r.kills)
	for _, p := range plans {
		if p.pkg == "." {
			res.Root = append(res.Root, p.tests...)
		}
	}
	if len(plans) == 0 {
		res.Status = stUncovered
		return res
	}
	src, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(m.File)))
	if err != nil {
		res.Status, res.Outcome.Line = stInvalid, err.Error()
		return res
	}
	ov, err := r.overlay(map[string][]byte{m.File: m.Apply(src)})
	if err != nil {
		res.Status, res.Outcome.Line = stInvalid, err.Error()
		return res
	}
	defer os.RemoveAll(filepath.Dir(ov))
	res.Status = stLived
	run := func(ctx context.Context, p plan) Outcome {
		if own {
			return r.goTest(ctx, p.pkg, p.tests, ov, stageLimit(p.pkg, p.secs))
		}
		return sr.goTest(ctx, m, p.pkg, p.tests, ov, stageLimit(p.pkg, p.secs))
	}
	first := len(plans) // the first slow stage: those from it on run side by side
	for i, p := range plans {
		if p.slow {
			first = i
			break
		}
	}
	done, notRun := runStages(ctx, plans[:first], 1, run)
	if !notRun && !verdict(done) {
		var slow []stageResult
		slow, notRun = runStages(ctx, plans[first:], slowStages, run)
		done = append(done, slow...)
	}
	if notRun {
		res.Status = stNotRun
		if len(done) > 0 {
			res.Outcome.Line = done[len(done)-1].o.Line
		}
		return res
	}
	r.settle(&res, done)
	res.Seconds = time.Since(t0).Seconds()
	return res
}

// settle reads the stages that ran into res: each one's line, and the
// verdict of the last, if it gave one (else res lived).
func (r *runner) settle(res *Result, done []stageResult) {
	for _, d := range done {
		res.Stages = append(res.Stages, fmt.Sprintf("%s: %d tests, %.0fs", d.p.pkg, len(d.p.tests), d.o.Seconds))
		res.Outcome = d.o
		switch {
		case d.o.Invalid:
			res.Status = stInvalid
		case d.o.TimedOut:
			res.Status, res.Pkg = stTimedOut, d.p.pkg
		case d.o.Killed:
			res.Status, res.Pkg = stKilled, d.p.pkg
			r.kills.record(res.Mutant, d.p.pkg, killerOf(d.o, d.p))
		}
	}
	if res.Status == stLived {
		res.Outcome = Outcome{}
	}
}

// slowStages is how many slow stages of one mutant run side by side: they
// mostly wait (for a reconnect, a session's expiry, a bound), so a mutant
// that lives takes about the time of its slowest ones, not their sum.
const slowStages = 3

// stageResult is one stage that ran and what it did.
type stageResult struct {
	p plan
	o Outcome
}

// verdict reports whether the last of done decided the mutant: killed,
// timed out or did not build.
func verdict(done []stageResult) bool {
	if len(done) == 0 {
		return false
	}
	o := done[len(done)-1].o
	return o.Killed || o.TimedOut || o.Invalid
}

// runStages runs ps, par at a time in their order, until one gives a
// verdict (killed, timed out, does not build); then the others still
// running are stopped and left out. It returns the stages that ended, in
// the order they ended (the verdict's last), and whether the run stopped
// (ctx ended, or a test binary could not start): then no verdict holds.
func runStages(ctx context.Context, ps []plan, par int, run func(context.Context, plan) Outcome) ([]stageResult, bool) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	results := make(chan stageResult)
	next, running, decided, notRun := 0, 0, false, false
	start := func() {
		p := ps[next]
		next, running = next+1, running+1
		go func() { results <- stageResult{p, run(sctx, p)} }()
	}
	for running < par && next < len(ps) {
		start()
	}
	var done []stageResult
	for running > 0 {
		d := <-results
		running--
		switch {
		case decided || notRun:
			continue // stopped by the verdict, or the run is over
		case ctx.Err() != nil || d.o.NotRun:
			notRun = true
			done = append(done, d)
			stop()
			continue
		}
		done = append(done, d)
		if d.o.Killed || d.o.TimedOut || d.o.Invalid {
			decided = true
			stop()
		} else if next < len(ps) {
			start()
		}
	}
	return done, notRun
}

// killerOf is the test of stage p that killed: the one that failed, or,
// when the package failed outside a test (a panic), the stage's one test.
func killerOf(o Outcome, p plan) string {
	for _, t := range p.tests {
		if t == o.Test {
			return t
		}
	}
	if len(p.tests) == 1 {
		return p.tests[0]
	}
	return ""
}

// resultCache keeps operator results of one source tree between runs, so
// that an interrupted run goes on where it stopped.
type resultCache struct {
	path string
	m    map[string]Result
}

func openResults(key string, fresh bool) (*resultCache, error) {
	dir, err := cacheDir()
	if err != nil {
		return nil, err
	}
	c := &resultCache{path: filepath.Join(dir, "results-"+key+".json"), m: map[string]Result{}}
	if fresh {
		return c, nil
	}
	if b, err := os.ReadFile(c.path); err == nil {
		_ = json.Unmarshal(b, &c.m)
	}
	return c, nil
}

func (c *resultCache) put(r Result) error {
	c.m[r.ID] = r
	b, err := json.Marshal(c.m)
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.path)
}

// sample keeps at most n mutants of each file, spread evenly over it; n
// of 0 keeps all.
func sample(ms []Mutant, n int) []Mutant {
	if n <= 0 {
		return ms
	}
	files, byFile := groupByFile(ms)
	var out []Mutant
	for _, f := range files {
		fm := byFile[f]
		if len(fm) <= n {
			out = append(out, fm...)
			continue
		}
		for i := 0; i < n; i++ {
			out = append(out, fm[i*len(fm)/n])
		}
	}
	return out
}

// spread returns the order in which to run ms: files interleaved, and
// within a file the mutants in bit-reversed order of their place, so that
// a run stopped by its budget has run an even sample of every file.
func spread(ms []Mutant) []Mutant {
	type ranked struct {
		m    Mutant
		rank float64
		file int
	}
	fileIdx := map[string]int{}
	count := map[string]int{}
	for _, m := range ms {
		if _, ok := fileIdx[m.File]; !ok {
			fileIdx[m.File] = len(fileIdx)
		}
		count[m.File]++
	}
	seen := map[string]int{}
	rs := make([]ranked, 0, len(ms))
	for _, m := range ms {
		i := seen[m.File]
		seen[m.File]++
		rs = append(rs, ranked{m: m, rank: vanDerCorput(i), file: fileIdx[m.File]})
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].rank != rs[j].rank {
			return rs[i].rank < rs[j].rank
		}
		return rs[i].file < rs[j].file
	})
	out := make([]Mutant, len(rs))
	for i, r := range rs {
		out[i] = r.m
	}
	return out
}

// vanDerCorput is i's bits mirrored behind the binary point: 0, .5, .25, .75, …
func vanDerCorput(i int) float64 {
	v, f := 0.0, 0.5
	for ; i > 0; i >>= 1 {
		if i&1 == 1 {
			v += f
		}
		f /= 2
	}
	return v
}

// groupByFile is ms's files in their first mutant's order, and each
// file's mutants.
func groupByFile(ms []Mutant) ([]string, map[string][]Mutant) {
	byFile := map[string][]Mutant{}
	var files []string
	for _, m := range ms {
		if _, ok := byFile[m.File]; !ok {
			files = append(files, m.File)
		}
		byFile[m.File] = append(byFile[m.File], m)
	}
	return files, byFile
}

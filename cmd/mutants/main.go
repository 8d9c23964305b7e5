// Command mutants measures whether the project's proofs can fail: it makes
// faults in the recipe (lock), the resources (fence) and the fault proxy's
// matching (internal/server/faultproxy), applies each through go test -overlay,
// runs the tests that cover it, and writes a report: by default to
// $TMPDIR/zk19-mutants-<commit>.md, outside the tree, whose path the run
// prints (a CI artifact, never a committed file); -o MUTANTS.md makes it the
// project's current measurement.
//
// Two parts:
//
//   - Operator mutants, generated with go/ast (see gen.go). Tests are chosen
//     per mutant by coverage: every top-level test of fence, lock,
//     internal/server/faultproxy and the root package is run alone once with
//     -coverpkg, and the map is cached per source tree (the hash of its Go
//     files) under the user cache dir, with the results, so an interrupted
//     run goes on where it stopped.
//   - A catalogue of hand-written faults (testdata/mutants/*.fault), each
//     with the tests that must fail. -fast runs the part CI runs and exits 1
//     when one of its faults is not killed.
//
// Usage:
//
//	go run ./cmd/mutants                      # both parts, every mutant; prints where its report is
//	go run ./cmd/mutants -o MUTANTS.md        # the same, as the project's current measurement
//	go run ./cmd/mutants -catalogue -fast     # CI: the fast catalogue; exit 1 if a fault lives
//	go run ./cmd/mutants -operators -files fence/token.go -sample 10
//	go run ./cmd/mutants -list                # print the operator mutants
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	root, out, backend, files, lines, faults, faultDir, equivalent string
	operators, catalogue, fast, list, freshCover, fresh            bool
	coverOnly, check, cached, noSchema                             bool
	sample, jobs                                                   int
	faultTimeout, budget                                           time.Duration
	outSet                                                         bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "C", ".", "the module root")
	fs.StringVar(&o.out, "o", "", "the report to write, relative to -C (default: $TMPDIR/zk19-mutants-<commit>.md, outside the tree; with -fast: only if given)")
	fs.StringVar(&o.backend, "backend", "process", "ZK19_BACKEND of every test run")
	fs.BoolVar(&o.operators, "operators", false, "run the operator mutants (default: both parts)")
	fs.BoolVar(&o.catalogue, "catalogue", false, "run the catalogue of hand-written faults (default: both parts)")
	fs.BoolVar(&o.fast, "fast", false, "with -catalogue: only its fast part (CI); exit 1 if one of its faults is not killed")
	fs.StringVar(&o.files, "files", "", "comma-separated target files to mutate (default: all)")
	fs.StringVar(&o.lines, "lines", "", "comma-separated file:line places: run only the operator mutants there (e.g. a live mutant's place, to rerun it after a new proof)")
	fs.IntVar(&o.jobs, "jobs", 1, "operator mutants, tests of the coverage map and faults of the catalogue run at once, each with its own test binaries and servers (2 for a full run on 2 cores, see docs/mutants.md)")
	fs.IntVar(&o.sample, "sample", 0, "run at most this many mutants per file, spread evenly (0: all)")
	fs.StringVar(&o.faults, "faults", "", "comma-separated fault ids to run (default: all, or the fast part)")
	fs.StringVar(&o.faultDir, "dir", "testdata/mutants", "the catalogue's directory, relative to -C")
	fs.StringVar(&o.equivalent, "equivalent", "testdata/mutants/equivalent.json", "the equivalent mutants, relative to -C")
	fs.DurationVar(&o.faultTimeout, "fault-timeout", 6*time.Minute, "go test -timeout of each run line of a fault")
	fs.DurationVar(&o.budget, "budget", 0, "start no operator mutant after this long (0: no bound); mutants run in an order spread evenly over every file, and those not reached are reported as not run")
	fs.BoolVar(&o.list, "list", false, "print the operator mutants and exit")
	fs.BoolVar(&o.cached, "cached", false, "run nothing: write the report from the results this tree's earlier runs cached (operator mutants, and the catalogue's faults whose file is unchanged)")
	fs.BoolVar(&o.check, "check", false, "apply every fault of the catalogue and build the packages with it (no test runs), then exit")
	fs.BoolVar(&o.coverOnly, "cover", false, "make (or load) the coverage map, print which tests cover what, and exit")
	fs.BoolVar(&o.freshCover, "fresh-cover", false, "make the coverage map again even if it is cached")
	fs.BoolVar(&o.fresh, "fresh", false, "run every mutant again instead of taking cached results")
	schema := fs.Bool("schema", true, "compile the operator mutants into one schema and build each test package once (false: a go test -overlay build per mutant and package, as before)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.noSchema = !*schema
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "o" {
			o.outSet = true
		}
	})
	if !o.operators && !o.catalogue && !o.list && !o.coverOnly && !o.check {
		o.operators, o.catalogue = true, true
	}
	if o.fast && o.operators && !o.catalogue {
		return o, fmt.Errorf("-fast is a part of the catalogue: use it with -catalogue")
	}
	if o.fast {
		o.operators, o.catalogue = false, true
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	status, err := runParsed(o, args, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	return status
}

// runParsed does what the flags ask and returns the exit status; an error
// means status 2.
func runParsed(o options, args []string, stdout, stderr io.Writer) (int, error) {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "mutants: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return 2, err
	}
	ts, err := chooseTargets(o.files)
	if err != nil {
		return 2, err
	}
	if o.list {
		return 0, listMutants(stdout, root, ts, o)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now()
	tmp, err := os.MkdirTemp("", "zk19-mutants-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(tmp)
	defer sweepRunDirs(started, logf)
	r := &runner{root: root, tmp: tmp, backend: o.backend, kills: newHistory(), jobs: o.jobs}
	r.commit = gitDescribe(root)
	if r.key, err = treeKey(root); err != nil {
		return 2, err
	}
	rp, err := newReport(r, o, args, started)
	if err != nil {
		return 2, err
	}
	switch {
	case o.check:
		return checkFaults(ctx, r, o, stdout)
	case o.coverOnly:
		return 0, printCover(ctx, r, o, stdout, logf)
	}
	return runParts(ctx, r, o, ts, rp, started, logf)
}

// chooseTargets is the target files of -files (all when it is empty).
func chooseTargets(files string) ([]Target, error) {
	if files == "" {
		return targets, nil
	}
	var ts []Target
	for _, f := range strings.Split(files, ",") {
		t, ok := findTarget(strings.TrimSpace(f))
		if !ok {
			return nil, fmt.Errorf("%s is not a target file (see -list)", f)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// listMutants prints the operator mutants (-list), each with the tests
// that cover it when this tree's coverage map is cached.
func listMutants(stdout io.Writer, root string, ts []Target, o options) error {
	ms, err := Generate(root, ts)
	if err == nil {
		ms, err = atLines(ms, o.lines)
	}
	if err != nil {
		return err
	}
	var cm *CoverMap
	if key, err := treeKey(root); err == nil {
		cm = cachedCover(key)
	}
	for _, m := range sample(ms, o.sample) {
		plan := ""
		if cm != nil {
			for _, p := range cm.plan(m, false, nil) {
				plan += fmt.Sprintf("\t%s:%d tests %.0fs", p.pkg, len(p.tests), p.secs)
			}
			if plan == "" {
				plan = "\tnot covered"
			}
		}
		fmt.Fprintf(stdout, "%s:%d:%d\t%s\t%s\t%s → %s%s\n", m.File, m.Line, m.Col, m.Func, m.Op, m.Orig, m.Mut, plan)
	}
	return nil
}

// newReport is the report's header: what ran, where and when.
func newReport(r *runner, o options, args []string, started time.Time) (*Report, error) {
	rp := &Report{
		Commit: r.commit, Date: started.UTC().Format("2006-01-02 15:04 UTC"), Backend: o.backend,
		Server:    serverOf(o.backend),
		Command:   "go run ./cmd/mutants " + strings.Join(args, " "),
		GoVersion: runtime.Version(), Machine: fmt.Sprintf("%d cores (runtime.NumCPU)", runtime.NumCPU()),
		Sample: o.sample, Fast: o.fast, Budget: o.budget, NoSchema: o.noSchema,
	}
	if len(args) == 0 {
		rp.Command = "go run ./cmd/mutants"
	}
	if o.files != "" {
		rp.Files = strings.Split(o.files, ",")
	}
	if o.lines != "" {
		rp.Lines = strings.Split(o.lines, ",")
	}
	var err error
	rp.Claims, err = loadClaims(filepath.Join(r.root, "testdata/claims.json"))
	return rp, err
}

// checkFaults applies every fault of the catalogue and builds the
// packages with it (-check): status 1 when one does not apply or build.
func checkFaults(ctx context.Context, r *runner, o options, stdout io.Writer) (int, error) {
	faults, err := loadFaults(filepath.Join(r.root, o.faultDir))
	if err != nil {
		return 2, err
	}
	status := 0
	for _, f := range faults {
		files, err := f.apply(r.root)
		if err == nil {
			var ov string
			if ov, err = r.overlay(files); err == nil {
				err = r.goCmd(ctx, 5*time.Minute, "build", "-overlay", ov, "./lock", "./fence", "./fence/fencehttp", "./internal/server/faultproxy")
			}
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", f.ID, err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: builds\n", f.ID)
	}
	return status, nil
}

// printCover makes (or loads) the coverage map and prints which tests
// cover what (-cover).
func printCover(ctx context.Context, r *runner, o options, stdout io.Writer, logf func(string, ...any)) error {
	cm, cached, err := loadOrComputeCover(ctx, r, o.freshCover, logf)
	if err != nil {
		return err
	}
	for _, t := range cm.Tests {
		n := 0
		for _, bs := range t.Blocks {
			n += len(bs)
		}
		fmt.Fprintf(stdout, "%s\t%s\tpassed=%v\t%.1fs\t%d blocks\n", t.Pkg, t.Name, t.Passed, t.Seconds, n)
	}
	fmt.Fprintf(stdout, "coverage map %s (cached: %v), made in %s\n", cm.Key, cached, secs(cm.Seconds))
	return nil
}

// runParts runs the operator mutants and the catalogue, as asked, and
// writes the report (with -fast only if -o is given).
func runParts(ctx context.Context, r *runner, o options, ts []Target, rp *Report, started time.Time, logf func(string, ...any)) (int, error) {
	status := 0
	if o.operators {
		if err := runOperators(ctx, r, o, ts, rp, logf); err != nil {
			return 2, err
		}
	}
	if o.catalogue {
		st, err := runCatalogue(ctx, r, o, rp, logf)
		if err != nil {
			return 2, err
		}
		status = st
	}
	if ctx.Err() != nil {
		return 2, errors.New("interrupted; no report written")
	}
	if !o.fast || o.outSet {
		path := reportPath(r.root, o.out, r.commit)
		if err := writeReport(path, rp); err != nil {
			return 2, err
		}
		logf("wrote %s (%s in all)", path, time.Since(started).Round(time.Second))
	}
	return status, nil
}

// reportPath is where the report goes: -o, relative to the module root,
// or without it a file outside the tree named after the commit, so that a
// run leaves no file to commit by accident.
func reportPath(root, out, commit string) string {
	if out == "" {
		return filepath.Join(os.TempDir(), "zk19-mutants-"+reportName(commit)+".md")
	}
	if filepath.IsAbs(out) {
		return out
	}
	return filepath.Join(root, out)
}

// reportName is the commit as a file name: its first 12 digits, and
// "-changes" when the work tree differed from it (see gitDescribe).
func reportName(commit string) string {
	hash, changes := strings.CutSuffix(commit, " + uncommitted changes")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if changes {
		hash += "-changes"
	}
	return hash
}

func writeReport(path string, rp *Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rp.Write(f)
	return f.Close()
}

// atLines keeps the mutants at the file:line places of lines ("" keeps
// all); a place where no mutant is made is an error.
func atLines(ms []Mutant, lines string) ([]Mutant, error) {
	if lines == "" {
		return ms, nil
	}
	want := map[string]bool{}
	for _, l := range strings.Split(lines, ",") {
		want[strings.TrimSpace(l)] = false
	}
	var out []Mutant
	for _, m := range ms {
		at := fmt.Sprintf("%s:%d", m.File, m.Line)
		if _, ok := want[at]; ok {
			want[at] = true
			out = append(out, m)
		}
	}
	for at, found := range want {
		if !found {
			return nil, fmt.Errorf("-lines: no mutant at %s", at)
		}
	}
	return out, nil
}

func findTarget(f string) (Target, bool) {
	for _, t := range targets {
		if t.File == f {
			return t, true
		}
	}
	return Target{}, false
}

func runOperators(ctx context.Context, r *runner, o options, ts []Target, rp *Report, logf func(string, ...any)) error {
	rp.Operators = true
	all, err := Generate(r.root, ts)
	if err != nil {
		return err
	}
	if all, err = atLines(all, o.lines); err != nil {
		return err
	}
	eqs, err := loadEquivalents(filepath.Join(r.root, o.equivalent))
	if err != nil {
		return err
	}
	cm, cached, err := loadOrComputeCover(ctx, r, o.freshCover, logf)
	if err != nil {
		return err
	}
	rp.Cover, rp.CoverCached = cm, cached
	cache, err := openResults(r.key, o.fresh)
	if err != nil {
		return err
	}
	chosen := sample(all, o.sample)
	t0 := time.Now()
	ops := sortMutants(all, chosen, eqs, cache, rp)
	if o.cached {
		rp.FromCache = true
		rp.OpInfo, _ = loadRunInfo(r.key)
		ops.toRun = nil
	}
	cpu0 := childCPU()
	if err := ops.run(ctx, r, o, cm, cache, rp, t0, logf); err != nil {
		return err
	}
	ops.collect(all, eqs, rp)
	rp.OpSeconds, rp.OpCPU, rp.Jobs = time.Since(t0).Seconds(), childCPU()-cpu0, o.jobs
	if !o.cached && ctx.Err() == nil {
		rp.OpInfo = &RunInfo{Command: rp.Command, Date: rp.Date, Wall: rp.OpSeconds, Ran: rp.OpRan, Cached: rp.OpCached, Budget: o.budget.String(), OverBudget: rp.OverBudget, Sample: o.sample, Files: o.files, Jobs: o.jobs, CPU: rp.OpCPU}
		if err := saveRunInfo(r.key, rp.OpInfo); err != nil {
			return err
		}
	}
	return nil
}

// opRun is an operator run's mutants sorted: each one's result so far (an
// equivalent, a cached result or not run), those to run, and which listed
// equivalents matched a mutant.
type opRun struct {
	results map[string]Result
	toRun   []Mutant
	used    []bool
}

// sortMutants gives each mutant its result before the run: equivalent,
// taken from the cache, or not run yet (to run if chosen).
func sortMutants(all, chosenOnes []Mutant, eqs []Equivalent, cache *resultCache, rp *Report) *opRun {
	chosen := map[string]bool{}
	for _, m := range chosenOnes {
		chosen[m.ID()] = true
	}
	ops := &opRun{results: map[string]Result{}, used: make([]bool, len(eqs))}
	for _, m := range all {
		res := Result{Mutant: m, ID: m.ID(), Status: stNotRun}
		eq := -1
		for i, e := range eqs {
			if e.matches(m) {
				eq, ops.used[i] = i, true
			}
		}
		switch c, ok := cache.m[m.ID()]; {
		case eq >= 0:
			res.Status, res.Reason = stEquivalent, eqs[eq].Reason
			rp.Equivalents = append(rp.Equivalents, eqs[eq])
		case ok && c.Status != stNotRun && sameSelection(c, m):
			res = c
			res.Mutant = m
			rp.OpCached++
		case chosen[m.ID()]:
			ops.toRun = append(ops.toRun, m)
		}
		ops.results[m.ID()] = res
	}
	return ops
}

// run runs the mutants to run, spread over the files, until the context
// ends or the budget is spent, caching each result.
func (ops *opRun) run(ctx context.Context, r *runner, o options, cm *CoverMap, cache *resultCache, rp *Report, t0 time.Time, logf func(string, ...any)) error {
	var sr *schemaRun
	if !o.noSchema && len(ops.toRun) > 0 {
		var err error
		if sr, err = buildSchema(ctx, r, ops.toRun, logf); err != nil {
			return err
		}
		rp.OwnBuilds = len(sr.fallback)
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		putErr  error
		done    int
		stopped bool
	)
	slots := make(chan struct{}, max(o.jobs, 1))
	for i, m := range spread(ops.toRun) {
		slots <- struct{}{}
		mu.Lock()
		stop := stopped || putErr != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		if o.budget > 0 && time.Since(t0) > o.budget {
			rp.OverBudget = len(ops.toRun) - i
			logf("budget %s spent: %d mutants not run", o.budget, rp.OverBudget)
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			res := r.runMutant(ctx, cm, sr, m)
			mu.Lock()
			defer mu.Unlock()
			if res.Status == stNotRun {
				if !stopped && ctx.Err() == nil {
					logf("%s: not run, the run stops: %s", m.ID(), res.Outcome.Line)
				}
				stopped = true
				return
			}
			if err := cache.put(res); err != nil {
				putErr = err
				return
			}
			rp.OpRan++
			done++
			ops.results[m.ID()] = res
			how := "schema"
			if why, own := sr.fallbackOf(m); own {
				how = "own build: " + why
			}
			logf("%d/%d %s: %s %s %s (%s)", done, len(ops.toRun), m.ID(), res.Status, killer(res.Pkg, res.Outcome), secs(res.Seconds), how)
		}()
	}
	wg.Wait()
	return putErr
}

// collect puts every mutant's result in the report, in the mutants' order,
// and the listed equivalents that matched none.
func (ops *opRun) collect(all []Mutant, eqs []Equivalent, rp *Report) {
	for _, m := range all {
		res := ops.results[m.ID()]
		rp.OpMutantSeconds += res.Seconds
		rp.Results = append(rp.Results, res)
	}
	for i, e := range eqs {
		if !ops.used[i] {
			rp.StaleEquivalents = append(rp.StaleEquivalents, e)
		}
	}
}

func runCatalogue(ctx context.Context, r *runner, o options, rp *Report, logf func(string, ...any)) (int, error) {
	faults, err := loadFaults(filepath.Join(r.root, o.faultDir))
	if err != nil {
		return 2, err
	}
	var want map[string]bool
	if o.faults != "" {
		want = map[string]bool{}
		for _, id := range strings.Split(o.faults, ",") {
			want[strings.TrimSpace(id)] = true
		}
	}
	var chosen []Fault
	for _, f := range faults {
		if (!o.fast || f.Fast) && (want == nil || want[f.ID]) {
			chosen = append(chosen, f)
		}
	}
	cat, err := openCatalogueCache(r.key)
	if err != nil {
		return 2, err
	}
	t0 := time.Now()
	frs, err := runFaults(ctx, r, o, chosen, cat, logf)
	if err != nil {
		return 2, err
	}
	rp.Catalogue = []FaultResult{}
	status := 0
	for _, fr := range frs {
		if !fr.Killed() {
			status = 1
		}
		rp.Catalogue = append(rp.Catalogue, fr)
	}
	rp.CatSeconds = time.Since(t0).Seconds()
	if o.cached {
		rp.CatSeconds = 0
		for _, fr := range rp.Catalogue {
			rp.CatSeconds += fr.Seconds
		}
	}
	if o.fast {
		fmt.Printf("mutants: fast catalogue: %d faults, %d killed, %d not killed, in %s\n", len(rp.Catalogue), len(rp.Catalogue)-countLived(rp.Catalogue), countLived(rp.Catalogue), secs(rp.CatSeconds))
	}
	return status, nil
}

// runFaults runs the faults (or, with -cached, takes their results from
// the cache), -jobs at a time, and returns the results of those that
// finished, in the faults' order; each is cached as it ends (but with
// -fast).
func runFaults(ctx context.Context, r *runner, o options, faults []Fault, cat *catalogueCache, logf func(string, ...any)) ([]FaultResult, error) {
	frs := make([]FaultResult, len(faults))
	done := make([]bool, len(faults))
	var mu sync.Mutex
	var putErr error
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(o.jobs, 1))
	for i, f := range faults {
		slots <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			fr := cat.get(f)
			if !o.cached {
				fr = r.runFault(ctx, f, o.faultTimeout, o.fast)
			}
			mu.Lock()
			defer mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			if !o.cached && !o.fast {
				putErr = errors.Join(putErr, cat.put(f, fr))
			}
			logf("fault %s: %s (%s)", f.ID, fr.summary(), secs(fr.Seconds))
			frs[i], done[i] = fr, true
		}()
	}
	wg.Wait()
	var out []FaultResult
	for i, fr := range frs {
		if done[i] {
			out = append(out, fr)
		}
	}
	return out, putErr
}

func countLived(frs []FaultResult) int {
	n := 0
	for _, fr := range frs {
		if !fr.Killed() {
			n++
		}
	}
	return n
}

// childCPU is the user and system seconds of this process's children
// that have ended (and of theirs that they waited for): the go commands,
// test binaries and servers a run started.
func childCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// gitDescribe names the tree: the commit, and "+ changes" if the work tree
// differs from it.
func gitDescribe(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " + uncommitted changes"
	}
	return c
}

// serverOf names the server of the process backend: Debian's zookeeper
// package version.
func serverOf(backend string) string {
	if backend != "process" {
		return "the " + backend + " backend's server"
	}
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "zookeeper").Output()
	if err != nil || len(out) == 0 {
		return "Debian's ZooKeeper"
	}
	return "Debian's ZooKeeper " + string(out)
}

// sweepRunDirs removes the harness's run dirs that a test binary of this
// run left when a timeout killed it: os.TempDir()/zk19-run-<pid>-…, newer
// than the run's start, whose process is gone. (The servers die with their
// test binary: zkserver starts them with Pdeathsig.)
func sweepRunDirs(since time.Time, logf func(string, ...any)) {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), "zk19-run-*"))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.ModTime().Before(since) {
			continue
		}
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(p), "zk19-run-"), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			if os.RemoveAll(p) == nil {
				logf("removed %s, left by a test binary that was stopped", p)
			}
		}
	}
}

// sameSelection reports whether a cached result chose its tests as m
// would: by coverage at the same place. (Results cached before the place
// was stored chose them at the mutant's own position.)
func sameSelection(c Result, m Mutant) bool {
	if c.CoverL == 0 {
		return m.CoverL == m.Line && m.CoverC == m.Col
	}
	return c.CoverL == m.CoverL && c.CoverC == m.CoverC
}

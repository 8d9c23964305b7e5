package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const sample1 = `package p

import "sync"

type s struct {
	mu   sync.Mutex
	name string
	n    int
}

func (x *s) f(a, b int, ok bool) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.name = x.name + "/"
	if a < b && !ok {
		x.n++
		x.n += a - b
		return true
	}
	x.logf("no")
	x.reset()
	return false
}

func (x *s) logf(string)  {}
func (x *s) reset()       { x.n = 0 }
func other(a int) bool    { return a == 1 }
`

func TestGenerateMakesEachOperatorWhereItApplies(t *testing.T) {
	ms, err := generateSrc(Target{File: "p/p.go", Funcs: []string{"f"}}, []byte(sample1), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range ms {
		got[m.Op+": "+m.Orig+" → "+m.Mut] = true
		if m.Func != "s.f" {
			t.Errorf("mutant %s in func %q; want only s.f (Funcs filter)", m.ID(), m.Func)
		}
	}
	want := []string{
		opBoundary + ": a < b → a <= b",
		opNegate + ": a < b → a >= b",
		opLogical + ": a < b && !ok → a < b || !ok",
		opNot + ": !ok → ok",
		opIncDec + ": x.n++ → x.n--",
		opArith + ": x.n += a - b → x.n -= a - b",
		opArith + ": a - b → a + b",
		opBool + ": return true → return false",
		opBool + ": return false → return true",
		opCall + ": x.reset() → {}",
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no mutant %q; got %v", w, ms)
		}
	}
	for k := range got {
		switch {
		case strings.Contains(k, `x.name + "/"`):
			t.Errorf("string concatenation mutated: %s", k)
		case strings.Contains(k, "logf"), strings.Contains(k, "Lock"):
			t.Errorf("log or lock call removed: %s", k)
		}
	}
	if len(ms) != len(want) {
		t.Errorf("got %d mutants; want %d", len(ms), len(want))
	}
}

func TestApplyChangesOnlyTheOperator(t *testing.T) {
	ms, err := generateSrc(Target{File: "p/p.go", Funcs: []string{"other"}}, []byte(sample1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Op != opNegate {
		t.Fatalf("got %v; want one negated conditional in other", ms)
	}
	out := string(ms[0].Apply([]byte(sample1)))
	if want := strings.Replace(sample1, "return a == 1", "return a != 1", 1); out != want {
		t.Errorf("applied:\n%s\nwant:\n%s", out, want)
	}
	if ms[0].Line != 27 {
		t.Errorf("line %d; want 27", ms[0].Line)
	}
}

func TestACaseExpressionIsCoveredAsItsSwitch(t *testing.T) {
	src := "package p\n\nfunc f(a, b int) int {\n\tswitch {\n\tcase a == 0:\n\t\treturn 1\n\tcase a < b:\n\t\treturn 2\n\t}\n\treturn a < b\n}\n"
	ms, err := generateSrc(Target{File: "p/p.go"}, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		wantL, wantC := m.Line, m.Col
		if m.Line == 5 || m.Line == 7 {
			wantL, wantC = 4, 2 // the switch keyword
		}
		if m.CoverL != wantL || m.CoverC != wantC {
			t.Errorf("%s: coverage decided at %d.%d; want %d.%d", m.ID(), m.CoverL, m.CoverC, wantL, wantC)
		}
	}
}

func TestTheTargetsGenerate(t *testing.T) {
	ms, err := Generate("../..", targets)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.ID()] {
			t.Errorf("two mutants share id %s", m.ID())
		}
		seen[m.ID()] = true
		if m.Op == opArith && strings.Contains(m.Orig, `"`) {
			t.Errorf("arithmetic on a string: %s", m.ID())
		}
	}
	if len(ms) < 100 {
		t.Errorf("got %d mutants of the targets; want at least 100", len(ms))
	}
}

const profile = `mode: set
github.com/zk19/zk19/lock/order.go:10.2,12.3 2 1
github.com/zk19/zk19/lock/order.go:14.2,14.20 1 0
github.com/zk19/zk19/lock/order.go:16.5,18.3 1 1
github.com/zk19/zk19/other/x.go:1.1,2.2 1 1
`

func TestProfileAndCoverageSelectTheTestsThatRanTheCode(t *testing.T) {
	all, hit, err := parseProfile(strings.NewReader(profile), map[string]bool{"lock/order.go": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all["lock/order.go"]) != 3 || len(hit["lock/order.go"]) != 2 || len(all["other/x.go"]) != 0 {
		t.Fatalf("all %v hit %v", all, hit)
	}
	cm := &CoverMap{All: all, Tests: []TestCover{
		{Pkg: "./lock", Name: "TestA", Passed: true, Blocks: hit},
		{Pkg: "./lock", Name: "TestB", Passed: true, Blocks: map[string][]Block{"lock/order.go": {{14, 2, 14, 20}}}},
		{Pkg: "./lock", Name: "TestBroken", Passed: false, Blocks: hit},
		{Pkg: ".", Name: "TestL2", Passed: true, Blocks: map[string][]Block{"lock/order.go": {{16, 5, 18, 3}}}},
	}}
	names := func(ts []TestCover) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		line, col int
		pkg, want string
	}{
		{11, 4, "./lock", "TestA"}, // inside the first block
		{14, 9, "./lock", "TestB"}, // inside the second
		{15, 3, "./lock", "TestB"}, // between blocks (a case expression): the block before
		{17, 1, ".", "TestL2"},     // the root proofs are asked apart
		{17, 1, "./lock", "TestA"}, // a test that failed on the tree is never chosen
		{9, 1, "./lock", ""},       // before every block
	}
	for _, c := range cases {
		m := Mutant{File: "lock/order.go", CoverL: c.line, CoverC: c.col}
		if got := names(cm.covering(m, c.pkg)); got != c.want {
			t.Errorf("covering %d.%d in %s: got %q; want %q", c.line, c.col, c.pkg, got, c.want)
		}
	}
	p := cm.plan(Mutant{File: "lock/order.go", CoverL: 17, CoverC: 1}, false, nil)
	if len(p) != 2 || p[0].pkg != "./lock" || p[1].pkg != "." {
		t.Errorf("plan: got %+v; want ./lock first, then the root", p)
	}
}

// TestQuickTestsRunFirst: on the schema's binaries, a mutant runs the
// quick covering tests of every package, the root's too, before any slow
// one (the mutant's own package's first), then each slow one alone,
// shortest first and the root's proofs last; the tests that killed a mutant of the same function earlier in
// the run come first. Either way it runs every covering test if none
// kills it.
func TestQuickTestsRunFirst(t *testing.T) {
	b := map[string][]Block{"lock/order.go": {{10, 1, 20, 1}}}
	cm := &CoverMap{All: b, Tests: []TestCover{
		{Pkg: "./lock", Name: "TestMatrix", Passed: true, Seconds: 27, Blocks: b},
		{Pkg: "./lock", Name: "TestQuick", Passed: true, Seconds: 0.5, Blocks: b},
		{Pkg: "./lock", Name: "TestQuick2", Passed: true, Seconds: 1, Blocks: b},
		{Pkg: "./fence", Name: "TestF", Passed: true, Seconds: 0.2, Blocks: b},
		{Pkg: "./peers", Name: "TestPeer", Passed: true, Seconds: 12, Blocks: b},
		{Pkg: ".", Name: "TestL2", Passed: true, Seconds: 1, Blocks: b},
		{Pkg: ".", Name: "TestL3", Passed: true, Seconds: 4, Blocks: b},
	}}
	m := Mutant{File: "lock/order.go", Func: "order", CoverL: 12, CoverC: 1}
	stages := func(kills *history) string {
		var got []string
		for _, p := range cm.plan(m, true, kills) {
			got = append(got, p.pkg+":"+strings.Join(p.tests, "+"))
		}
		return strings.ReplaceAll(strings.Join(got, " "), ".:", "./root:")
	}
	if got, want := stages(nil), "./lock:TestQuick+TestQuick2 ./fence:TestF ./root:TestL2 ./peers:TestPeer ./lock:TestMatrix ./root:TestL3"; got != want {
		t.Errorf("the schema's stages: got %s; want %s", got, want)
	}
	kills := newHistory()
	kills.record(Mutant{File: "lock/order.go", Func: "order"}, "./lock", "TestMatrix")
	kills.record(Mutant{File: "lock/order.go", Func: "order"}, ".", "TestL2")
	kills.record(Mutant{File: "lock/order.go", Func: "decide"}, "./peers", "TestPeer")
	if got, want := stages(kills), "./root:TestL2 ./lock:TestQuick+TestQuick2 ./fence:TestF ./lock:TestMatrix ./peers:TestPeer ./root:TestL3"; got != want {
		t.Errorf("the schema's stages after kills in order by TestMatrix and TestL2: got %s; want %s", got, want)
	}
	with, without := strings.Fields(stages(kills)), strings.Fields(stages(nil))
	slices.Sort(with)
	slices.Sort(without)
	if !slices.Equal(with, without) {
		t.Errorf("with a history: got stages %v; want the same as without, %v", with, without)
	}
}

func TestOverlayMapsTheRealFileToTheMutatedCopy(t *testing.T) {
	r := &runner{root: "/mod", tmp: t.TempDir()}
	p, err := r.overlay(map[string][]byte{"lock/order.go": []byte("package lock // mutated\n")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		t.Fatal(err)
	}
	copyPath, ok := ov.Replace[filepath.FromSlash("/mod/lock/order.go")]
	if !ok || len(ov.Replace) != 1 {
		t.Fatalf("overlay %s; want /mod/lock/order.go alone", b)
	}
	if got, _ := os.ReadFile(copyPath); string(got) != "package lock // mutated\n" {
		t.Errorf("the copy holds %q", got)
	}
}

func TestReadEventsFindsTheKillerAndItsVerdict(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Test":"TestL8_ListExistsRace"}`,
		`{"Action":"output","Test":"TestL8_ListExistsRace","Output":"    lock_test.go:12: setting up\n"}`,
		`{"Action":"attr","Test":"TestL8_ListExistsRace/sub","Key":"zk19.verdict.L8","Value":"refuted"}`,
		`{"Action":"output","Test":"TestL8_ListExistsRace/sub","Output":"    lock_test.go:99: L8 refuted: two holders at once\n"}`,
		`{"Action":"fail","Test":"TestL8_ListExistsRace/sub"}`,
		`{"Action":"fail","Test":"TestL8_ListExistsRace"}`,
		`{"Action":"fail"}`,
	}, "\n")
	o := readEvents([]byte(stream), "")
	if !o.Killed || o.Test != "TestL8_ListExistsRace" || o.Claim != "L8" || o.Verdict != "refuted" || o.Line != "L8 refuted: two holders at once" {
		t.Errorf("got %+v", o)
	}
	ex := strings.Join([]string{
		`{"Action":"output","Test":"Example_listExistsRace","Output":"=== ATTR  Example_listExistsRace zk19.verdict.L8 not-shown\n"}`,
		`{"Action":"output","Test":"Example_listExistsRace","Output":"L8 not shown: the proxy held nothing\n"}`,
		`{"Action":"fail","Test":"Example_listExistsRace"}`,
	}, "\n")
	if o := readEvents([]byte(ex), ""); o.Claim != "L8" || o.Verdict != "not-shown" || o.Line != "L8 not shown: the proxy held nothing" {
		t.Errorf("example: got %+v", o)
	}
	if o := readEvents([]byte(`{"Action":"output","Output":"FAIL\tx [build failed]\n"}`), "x.go:1: undefined: y"); !o.Invalid || o.Killed {
		t.Errorf("build failure: got %+v", o)
	}
	to := strings.Join([]string{
		`{"Action":"output","Test":"TestX","Output":"panic: test timed out after 1m0s\n"}`,
		`{"Action":"fail","Test":"TestX"}`,
	}, "\n")
	if o := readEvents([]byte(to), ""); !o.TimedOut || o.Killed {
		t.Errorf("timeout: got %+v", o)
	}
}

func TestReadEventsSaysWhereAnExampleDiffers(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"--- FAIL: ExampleHeld_Lost (1.00s)\n"}`,
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"got:\n"}`,
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"held\n"}`,
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"still held\n"}`,
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"want:\n"}`,
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"held\n"}`,
		`{"Action":"output","Test":"ExampleHeld_Lost","Output":"lost: lock: lost candidacy\n"}`,
		`{"Action":"fail","Test":"ExampleHeld_Lost"}`,
	}, "\n")
	o := readEvents([]byte(stream), "")
	if want := `Example output line 2: got "still held", want "lost: lock: lost candidacy"`; o.Line != want {
		t.Errorf("got line %q; want %q", o.Line, want)
	}
	logs := []string{"    x_test.go:1: O info session HasSession", "    x_test.go:2: got 2 holders; want 1", "    x_test.go:3: cleanup", "--- FAIL: TestX (1s)"}
	if got := failureLine(logs); got != "got 2 holders; want 1" {
		t.Errorf("failureLine: got %q", got)
	}
}

func TestFaultFileIsParsedAndAppliedOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package lock\n\nfunc f(a, b int) bool {\n\treturn a < b\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "lock/order.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	text := "# comment\nid: x\nwhat: order by name\nrun: ./lock TestA TestB\nrun: . TestL2\nexpect: L2 refuted\nfast: yes\n" +
		"=== file lock/order.go\n--- old\n\treturn a < b\n--- new\n\treturn a > b\n\t// reversed\n"
	f, err := parseFault("x.fault", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if f.ID != "x" || !f.Fast || len(f.Runs) != 2 || f.Runs[0].pkg != "./lock" || strings.Join(f.Runs[0].tests, ",") != "TestA,TestB" || f.Expect != "L2 refuted" {
		t.Errorf("parsed %+v", f)
	}
	if len(f.Edits) != 1 || f.Edits[0].Old != "\treturn a < b" || f.Edits[0].New != "\treturn a > b\n\t// reversed" {
		t.Errorf("edits %q", f.Edits)
	}
	files, err := f.apply(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(files["lock/order.go"]); !strings.Contains(got, "return a > b\n\t// reversed\n}") {
		t.Errorf("applied:\n%s", got)
	}
	f.Edits[0].Old = "return a == b"
	if _, err := f.apply(dir); err == nil || !strings.Contains(err.Error(), "occurs 0 times") {
		t.Errorf("missing old text: got %v", err)
	}
	if _, err := parseFault("y.fault", []byte("id: y\nwhat: w\n")); err == nil {
		t.Error("a fault without run lines and edits parsed")
	}
}

func TestTheCatalogueAppliesToTheTree(t *testing.T) {
	faults, err := loadFaults("../../testdata/mutants")
	if err != nil {
		t.Fatal(err)
	}
	if len(faults) < 20 {
		t.Errorf("got %d faults; want at least 20", len(faults))
	}
	fast := 0
	for _, f := range faults {
		if _, err := f.apply("../.."); err != nil {
			t.Error(err)
		}
		if f.Fast {
			fast++
		}
	}
	if fast == 0 {
		t.Error("no fault is in the fast part")
	}
}

func TestSampleSpreadsOverEachFile(t *testing.T) {
	var ms []Mutant
	for i := 0; i < 10; i++ {
		ms = append(ms, Mutant{File: "a.go", Line: i})
	}
	ms = append(ms, Mutant{File: "b.go", Line: 1})
	got := sample(ms, 3)
	if len(got) != 4 || got[0].Line != 0 || got[1].Line != 3 || got[2].Line != 6 || got[3].File != "b.go" {
		t.Errorf("got %+v", got)
	}
	if len(sample(ms, 0)) != len(ms) {
		t.Error("sample 0 dropped mutants")
	}
}

func TestAtLines(t *testing.T) {
	ms := []Mutant{{File: "lock/lock.go", Line: 326, Op: "a"}, {File: "lock/lock.go", Line: 326, Op: "b"}, {File: "lock/lock.go", Line: 327}, {File: "fence/token.go", Line: 326}}
	got, err := atLines(ms, "lock/lock.go:326")
	if err != nil || len(got) != 2 || got[0].Op != "a" || got[1].Op != "b" {
		t.Errorf("atLines(lock/lock.go:326) = %v, %v; want the two mutants at that line", got, err)
	}
	if got, err := atLines(ms, ""); err != nil || len(got) != len(ms) {
		t.Errorf("atLines(\"\") = %d mutants, %v; want all %d", len(got), err, len(ms))
	}
	if _, err := atLines(ms, "lock/lock.go:1"); err == nil || !strings.Contains(err.Error(), "lock/lock.go:1") {
		t.Errorf("atLines at a line with no mutant: %v; want an error naming it", err)
	}
}

// TestEveryEquivalentIsAMutantOfTheTree: each mutant listed as equivalent
// in testdata/mutants/equivalent.json is one the targets make today, at
// its file and line. An entry the code moved away from matches nothing,
// and its mutant, no longer left out, would read as a live one.
func TestEveryEquivalentIsAMutantOfTheTree(t *testing.T) {
	ms, err := Generate("../..", targets)
	if err != nil {
		t.Fatal(err)
	}
	eqs, err := loadEquivalents("../../testdata/mutants/equivalent.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eqs {
		if !slices.ContainsFunc(ms, e.matches) {
			t.Errorf("equivalent %s:%d %s %q → %q: got no such mutant of the tree; want one (the code moved: give its place now)", e.File, e.Line, e.Op, e.Orig, e.Mut)
		}
	}
}

// TestTheReportNamesEveryTarget: the report's account of the operator run
// names every file it mutates (it once named four of lock's six files and
// three of fence's six, after the packages had been split), and every file
// of lock/ and fence/ it leaves out, with the reason, so that it names each
// non-test file of those packages.
func TestTheReportNamesEveryTarget(t *testing.T) {
	var b strings.Builder
	(&Report{Operators: true, Cover: &CoverMap{}}).writeOperatorsIntro(func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) })
	for f, reason := range notTargets {
		if !strings.Contains(b.String(), "`"+f+"` ("+reason+")") {
			t.Errorf("the report's operator intro: got %q; want it to name %s, left out, with its reason", b.String(), f)
		}
	}
	intro := b.String()
	if i := strings.Index(intro, "Operators:"); i >= 0 {
		intro = intro[:i]
	}
	for _, tg := range targets {
		if !strings.Contains(intro, "`"+tg.File+"`") {
			t.Errorf("the report's operator intro: got %q; want it to name %s", intro, tg.File)
		}
	}
}

// TestTheReportGoesOutsideTheTreeByDefault: a run without -o writes its
// report to a file outside the module, named after the commit (a run's
// report is a CI artifact, not a committed page); -o MUTANTS.md writes the
// project's current measurement, at the module root.
func TestTheReportGoesOutsideTheTreeByDefault(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const commit = "66ac17d8060bde05e193ab6324b313acbf35eaad"
	for _, c := range []struct {
		args   []string
		commit string
		want   string
	}{
		{nil, commit, filepath.Join(os.TempDir(), "zk19-mutants-66ac17d8060b.md")},
		{nil, commit + " + uncommitted changes", filepath.Join(os.TempDir(), "zk19-mutants-66ac17d8060b-changes.md")},
		{[]string{"-operators", "-sample", "3"}, commit, filepath.Join(os.TempDir(), "zk19-mutants-66ac17d8060b.md")},
		{[]string{"-o", "MUTANTS.md"}, commit, filepath.Join(root, "MUTANTS.md")},
	} {
		o, err := parseFlags(c.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		got := reportPath(root, o.out, c.commit)
		if got != c.want {
			t.Errorf("args %q at %q: the report goes to %s; want %s", c.args, c.commit, got, c.want)
		}
		if rel, err := filepath.Rel(root, got); !slices.Contains(c.args, "-o") && (err != nil || !strings.HasPrefix(rel, "..")) {
			t.Errorf("args %q: got the report inside the tree, %s; want it outside %s unless -o says so", c.args, got, root)
		}
	}
}

// TestEveryFileOfLockAndFenceIsATarget: the operator run mutates every
// non-test file of lock/ and fence/, subpackages included (issue 49: the
// score once named files of a tree two waves old, and files written later
// were left out unseen), apart from notTargets, whose files have no
// operator to mutate.
func TestEveryFileOfLockAndFenceIsATarget(t *testing.T) {
	files, err := packageFiles("../..", "lock", "fence")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		tg, ok := findTarget(f)
		switch {
		case ok && len(tg.Funcs) > 0:
			t.Errorf("%s: got a target of only %v; want every function of it mutated", f, tg.Funcs)
		case !ok && notTargets[f] == "":
			t.Errorf("%s: got a file the operator run leaves out; want it among the targets (gen.go), or in notTargets with the reason", f)
		}
	}
	for f, reason := range notTargets {
		if !slices.Contains(files, f) {
			t.Errorf("notTargets names %s: got no such non-test file of lock/ or fence/; want it gone from the list", f)
			continue
		}
		ms, err := Generate("../..", []Target{{File: f}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			t.Errorf("%s is left out (%q): got %d mutants of it, e.g. %s; want it among the targets", f, reason, len(ms), ms[0].ID())
		}
	}
}

// TestSlowStagesRunSideBySide: runStages runs the stages par at a time in
// order; the first verdict stops the others, which are left out, and a
// stage not started by then never starts. With no verdict every stage
// runs.
func TestSlowStagesRunSideBySide(t *testing.T) {
	stage := func(name string) plan { return plan{pkg: "./lock", tests: []string{name}, slow: true} }
	ps := []plan{stage("TestLong"), stage("TestKills"), stage("TestNeverStarted")}
	var mu sync.Mutex
	var started []string
	run := func(kills map[string]bool) func(context.Context, plan) Outcome {
		return func(ctx context.Context, p plan) Outcome {
			mu.Lock()
			started = append(started, p.tests[0])
			mu.Unlock()
			if kills[p.tests[0]] {
				return Outcome{Killed: true, Test: p.tests[0]}
			}
			if p.tests[0] == "TestLong" {
				<-ctx.Done() // until the verdict stops it
			}
			return Outcome{}
		}
	}
	done, notRun := runStages(context.Background(), ps, 2, run(map[string]bool{"TestKills": true}))
	if notRun || len(done) != 1 || done[0].o.Test != "TestKills" || !verdict(done) {
		t.Errorf("a kill beside a long stage: got %+v (not run: %v); want TestKills' kill alone", done, notRun)
	}
	if slices.Contains(started, "TestNeverStarted") {
		t.Errorf("started %v; want TestNeverStarted never started after the verdict", started)
	}
	started = nil
	quick := []plan{stage("TestA"), stage("TestB"), stage("TestC")}
	done, notRun = runStages(context.Background(), quick, 2, run(nil))
	if notRun || len(done) != 3 || verdict(done) {
		t.Errorf("no verdict: got %+v (not run: %v); want all three stages, none deciding", done, notRun)
	}
}

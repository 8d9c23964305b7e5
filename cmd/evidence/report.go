package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/zk19/zk19/internal/claims"
)

// event is one line of "go test -json" (cmd/test2json).
type event struct {
	Time    time.Time `json:"Time"`
	Action  string    `json:"Action"`
	Package string    `json:"Package"`
	Test    string    `json:"Test"`
	Output  string    `json:"Output"`
	Elapsed float64   `json:"Elapsed"`
}

// result is what the run says about one top-level Test or Example, its
// subtests folded in.
type result struct {
	Name    string
	Action  string // pass, fail, skip; "" when it never ended
	Elapsed float64
	out     strings.Builder
	Lines   []string // raw output lines, subtests' included, in order
	own     strings.Builder
	Own     []string // the lines of the test itself, without its subtests
	subs    map[string]*strings.Builder
	Subs    map[string][]string // first-level subtest name -> its lines
}

// Run is a parsed "go test -json" stream.
type Run struct {
	Start    time.Time
	Results  map[string]*result
	Order    []string // top-level names in order of first appearance
	PkgLines []string // output that belongs to no test: the record header, TestMain's stderr
	PkgFail  bool
	PkgEnded bool
	Elapsed  float64
	pkgOut   strings.Builder
}

// parseRun reads a "go test -json" stream. Lines that are not JSON (a build
// error printed by an older go command) count as package output.
func parseRun(r io.Reader) (*Run, error) {
	run := &Run{Results: map[string]*result{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		var ev event
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ev) != nil {
			run.pkgOut.WriteString(string(raw) + "\n")
			continue
		}
		if run.Start.IsZero() && !ev.Time.IsZero() {
			run.Start = ev.Time
		}
		if ev.Test == "" {
			switch ev.Action {
			case "output", "build-output":
				run.pkgOut.WriteString(ev.Output)
			case "fail", "build-fail":
				run.PkgFail, run.PkgEnded, run.Elapsed = true, true, ev.Elapsed
			case "pass", "skip":
				run.PkgEnded, run.Elapsed = true, ev.Elapsed
			}
			continue
		}
		top, rest, sub := strings.Cut(ev.Test, "/")
		res := run.Results[top]
		if res == nil {
			res = &result{Name: top, subs: map[string]*strings.Builder{}}
			run.Results[top] = res
			run.Order = append(run.Order, top)
		}
		switch ev.Action {
		case "output":
			res.out.WriteString(ev.Output)
			if sub {
				name, _, _ := strings.Cut(rest, "/")
				b := res.subs[name]
				if b == nil {
					b = &strings.Builder{}
					res.subs[name] = b
				}
				b.WriteString(ev.Output)
			} else {
				res.own.WriteString(ev.Output)
			}
		case "pass", "fail", "skip":
			if !sub {
				res.Action, res.Elapsed = ev.Action, ev.Elapsed
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, res := range run.Results {
		res.Lines = splitLines(res.out.String())
		res.Own = splitLines(res.own.String())
		res.Subs = map[string][]string{}
		for name, b := range res.subs {
			res.Subs[name] = splitLines(b.String())
		}
	}
	run.PkgLines = splitLines(run.pkgOut.String())
	return run, nil
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Header is what the record header printed by TestMain says.
type Header struct {
	Backend     string // the whole "# backend:" value
	BackendKind string // its first word
	Server      string // the whole "# server:" value
	Version     string // e.g. 3.8.0
	NoServer    string // the -short "no ZooKeeper server" line, if any
}

var (
	backendLine = regexp.MustCompile(`^# backend:\s+(.*\S)`)
	serverLine  = regexp.MustCompile(`^# server:\s+(ZooKeeper\s+(\S+).*)$`)
	noServer    = regexp.MustCompile(`^# zk19: no ZooKeeper server.*`)
)

func (run *Run) header() Header {
	var h Header
	for _, l := range run.PkgLines {
		l = strings.TrimSpace(l)
		if m := backendLine.FindStringSubmatch(l); m != nil && h.Backend == "" {
			h.Backend = m[1]
			h.BackendKind = strings.Fields(m[1])[0]
		}
		if m := serverLine.FindStringSubmatch(l); m != nil && h.Version == "" {
			h.Server, h.Version = m[1], m[2]
		}
		if m := noServer.FindString(l); m != "" && h.NoServer == "" {
			h.NoServer = strings.TrimPrefix(m, "# zk19: ")
		}
	}
	return h
}

// Verdict kinds.
const (
	Holds   = "holds"
	Refuted = "refuted"
	NotRun  = "not run"
	Failed  = "failed"
)

// Verdict is the evidence table's row for one claim.
type Verdict struct {
	Claim claims.Claim
	Kind  string
	Text  string   // the verdict cell
	Tests []string // "TestX (pass, 1.2s)"
	Lines []string // the most telling log lines of its tests
}

var (
	fileLine  = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)
	scopeLine = regexp.MustCompile(`^(Example\w*|TestMain): `)
	framing   = regexp.MustCompile(`^(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|ok\s|FAIL\s|coverage:|testing: warning)`)
	serverLog = regexp.MustCompile(`^[\w.-]+\| `)
	// The kinds of log line, most telling first (see tellingLines).
	observation = regexp.MustCompile(`refuted|violated|evidence:|observed|old leader|roles:`)
	operation   = regexp.MustCompile(`^[A-Z][\w-]* (invoke|ok|fail|info)( |$)`)
	failedOp    = regexp.MustCompile(`^[A-Z][\w-]* fail( |$)`)
	nemesis     = regexp.MustCompile(`^nemesis `)
	bookkeeping = regexp.MustCompile(`^nemesis proxy \S+ (listening on|conn#\d+ (open|closed)|closed$)|^[A-Z][\w-]* info (session|wait) | zk-client: `)
	skipLine    = regexp.MustCompile(`(?i)skip`)
	brokenLine  = regexp.MustCompile(`refuted|violated|check broken|panic:|timed out|FATAL|FAILED:`)
)

// clean strips a log line's indentation and its "file.go:123: " or
// "Example_x: " prefix; framing lines and server logs become "".
func clean(l string) string {
	l = strings.TrimSpace(l)
	if framing.MatchString(l) {
		return ""
	}
	l = fileLine.ReplaceAllString(l, "")
	l = scopeLine.ReplaceAllString(l, "")
	if serverLog.MatchString(l) {
		return ""
	}
	return strings.TrimSpace(l)
}

func cleanAll(ls []string) []string {
	var out []string
	for _, l := range ls {
		if c := clean(l); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// trim shortens a line for the table.
func trim(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// refutation returns the first line of ls that says id is refuted or
// violated.
func refutation(id string, ls []string) string {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9])` + regexp.QuoteMeta(id) + ` (refuted|violated)`)
	for _, l := range cleanAll(ls) {
		if re.MatchString(l) {
			return l
		}
	}
	return ""
}

// firstError picks the line that best says why a test failed.
func firstError(res *result) string {
	ls := cleanAll(res.Lines)
	for _, l := range ls {
		if brokenLine.MatchString(l) {
			return l
		}
	}
	// An Example whose output differs: quote the first differing line.
	if got, want, ok := exampleDiff(res.Lines); ok {
		return fmt.Sprintf("output differs: got %q, want %q", got, want)
	}
	for _, l := range ls {
		if strings.Contains(l, "want") {
			return l
		}
	}
	// t.Fatalf is the last thing a test says.
	for i := len(res.Lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(res.Lines[i]), "--- FAIL") {
			for j := i - 1; j >= 0; j-- {
				if c := clean(res.Lines[j]); c != "" {
					return c
				}
			}
		}
	}
	if len(ls) > 0 {
		return ls[len(ls)-1]
	}
	return "no output"
}

// exampleDiff reads the "got:" and "want:" blocks go test prints for a
// failing Example and returns the first line where they differ.
func exampleDiff(lines []string) (got, want string, ok bool) {
	var g, w []string
	var cur *[]string
	for _, l := range lines {
		switch strings.TrimSpace(l) {
		case "got:":
			cur = &g
			continue
		case "want:":
			cur = &w
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "--- ") || strings.HasPrefix(l, "=== ") {
			cur = nil
			continue
		}
		if cur != nil {
			*cur = append(*cur, l)
		}
	}
	if g == nil && w == nil {
		return "", "", false
	}
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return a, b, true
		}
	}
	return "", "", false
}

// withoutDiff drops the "got:"/"want:" blocks of failing Examples: the
// verdict quotes the first difference, and printed output is no log line.
func withoutDiff(lines []string) []string {
	var out []string
	in := false
	for _, l := range lines {
		switch t := strings.TrimSpace(l); {
		case t == "got:" || t == "want:":
			in = true
			continue
		case strings.HasPrefix(l, "=== ") || strings.HasPrefix(t, "--- "):
			in = false
		}
		if !in {
			out = append(out, l)
		}
	}
	return out
}

// skipReason is the last log line before "--- SKIP" that talks of
// skipping, or the last log line.
func skipReason(res *result) string {
	ls := cleanAll(res.Lines)
	for i := len(ls) - 1; i >= 0; i-- {
		if skipLine.MatchString(ls[i]) {
			return ls[i]
		}
	}
	if len(ls) > 0 {
		return ls[len(ls)-1]
	}
	return "skipped"
}

// tellingLines chooses 2 to max lines of ls by rule, and returns them in
// the order they were logged. By kind, most telling first, each kind up to
// a cap: observations (refuted, violated, evidence:, observed, old leader,
// roles:; 2), the test's own statements, which are neither operations nor
// "# " phases (3), faults (nemesis, not connection bookkeeping; 1), failed
// operations (1). Fewer than two: operations (invoke, ok, info), then any
// line. The claim line, skip messages (the verdict quotes them), server
// logs and session chatter never count.
func tellingLines(ls []string, max int) []string {
	ls = cleanAll(ls)
	seen := map[string]bool{}
	uniq := ls[:0:0]
	for _, l := range ls {
		if !seen[l] {
			seen[l] = true
			uniq = append(uniq, l)
		}
	}
	ls = uniq
	kind := func(l string) int {
		switch {
		case strings.HasPrefix(l, "claim ") || strings.HasPrefix(l, "skipped") || bookkeeping.MatchString(l):
			return -1
		case observation.MatchString(l):
			return 0
		case nemesis.MatchString(l):
			return 2
		case failedOp.MatchString(l):
			return 3
		case operation.MatchString(l):
			return 4
		case strings.HasPrefix(l, "# ") || strings.HasSuffix(l, ":"):
			return 5
		}
		return 1 // a statement of the test's own
	}
	caps := []int{2, 3, 1, 1}
	var pick []int
	take := func(want func(k int) bool, limit int) {
		n := 0
		for i, l := range ls {
			if len(pick) == max || n == limit {
				return
			}
			if want(kind(l)) && !contains(pick, i) {
				pick = append(pick, i)
				n++
			}
		}
	}
	for k, c := range caps {
		take(func(got int) bool { return got == k }, c)
	}
	if len(pick) < 2 {
		take(func(got int) bool { return got == 4 }, 2-len(pick))
	}
	if len(pick) < 2 {
		take(func(got int) bool { return got >= 0 }, 2-len(pick))
	}
	sort.Ints(pick)
	out := make([]string, len(pick))
	for k, i := range pick {
		out[k] = trim(ls[i], 200)
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// verdicts gives every claim of the index its verdict on run.
func verdicts(ix *claims.Index, run *Run, h Header) []Verdict {
	version := h.Version
	if version == "" {
		version = "an unknown server version"
	}
	var out []Verdict
	for _, c := range ix.Claims {
		v := Verdict{Claim: c}
		var failed, skipped, passed, missing []*result
		var lines []string
		for _, name := range c.Proof {
			res := run.Results[name]
			if res == nil {
				missing = append(missing, &result{Name: name})
				v.Tests = append(v.Tests, name+" (no result)")
				continue
			}
			lines = append(lines, linesFor(res, c.ID)...)
			switch res.Action {
			case "pass":
				passed = append(passed, res)
			case "skip":
				skipped = append(skipped, res)
			default:
				failed = append(failed, res)
			}
			status := res.Action
			if status == "" {
				status = "did not end"
			}
			v.Tests = append(v.Tests, fmt.Sprintf("%s (%s, %.1fs)", name, status, res.Elapsed))
		}
		v.Lines = tellingLines(withoutDiff(lines), 4)
		needs := ""
		if len(c.Needs) > 0 {
			needs = " (needs " + strings.Join(c.Needs, ", ") + ")"
		}
		// A refutation the suite printed outside any test (TestMain's E3
		// checks) counts as well.
		pkgRefuted := refutation(c.ID, run.PkgLines)
		switch {
		case len(c.Proof) == 0:
			v.Kind, v.Text = Failed, "failed: no Test or Example in the index proves it"
		case pkgRefuted != "":
			v.Kind, v.Text = Refuted, fmt.Sprintf("refuted on %s: %q", version, pkgRefuted)
			v.Lines = append(v.Lines, pkgRefuted)
		case len(failed) > 0:
			for _, res := range failed {
				if l := refutation(c.ID, res.Lines); l != "" {
					v.Kind, v.Text = Refuted, fmt.Sprintf("refuted on %s: %q", version, l)
					break
				}
			}
			if v.Kind == "" {
				res := failed[0]
				v.Kind, v.Text = Failed, fmt.Sprintf("failed: %s: %s", res.Name, trim(firstError(res), 240))
			}
		case len(missing) > 0 && !(h.NoServer != "" && allExamples(missing)):
			why := "it has no result in the run"
			if !run.PkgEnded {
				why = "the run ended before it finished"
			} else if run.PkgFail && len(run.Results) == 0 {
				why = "the package did not build or TestMain failed: " + trim(lastLine(run.PkgLines), 200)
			}
			v.Kind, v.Text = Failed, fmt.Sprintf("failed: %s: %s", missing[0].Name, why)
		case len(passed) == len(c.Proof):
			v.Kind, v.Text = Holds, Holds
		case len(passed) > 0:
			var not []string
			for _, res := range skipped {
				not = append(not, fmt.Sprintf("%s: %s", res.Name, skipReason(res)))
			}
			for _, res := range missing {
				not = append(not, fmt.Sprintf("%s: %s", res.Name, h.NoServer))
			}
			v.Kind, v.Text = Holds, "holds; not run: "+strings.Join(not, "; ")
		case len(skipped) > 0:
			v.Kind, v.Text = NotRun, "not run: "+skipReason(skipped[0])+needs
		default: // only Examples, left out for want of a server
			v.Kind, v.Text = NotRun, "not run: examples need a server: "+h.NoServer+needs
		}
		out = append(out, v)
	}
	return out
}

// linesFor returns the output of res that belongs to claim id: when res
// has subtests named after claims (TestR3toR6_x/R4_BlindRetry), its own
// lines and those of id's subtests; otherwise all of it.
func linesFor(res *result, id string) []string {
	named := regexp.MustCompile(`^[SYLRFTEX][0-9]{1,2}(_|$)`)
	mine := regexp.MustCompile(`^` + regexp.QuoteMeta(id) + `(_|$)`)
	var names []string
	for name := range res.Subs {
		if named.MatchString(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return res.Lines
	}
	sort.Strings(names)
	out := append([]string(nil), res.Own...)
	for _, name := range names {
		if mine.MatchString(name) {
			out = append(out, res.Subs[name]...)
		}
	}
	return out
}

func allExamples(rs []*result) bool {
	for _, r := range rs {
		if !strings.HasPrefix(r.Name, "Example") {
			return false
		}
	}
	return true
}

func lastLine(ls []string) string {
	for i := len(ls) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(ls[i]); l != "" && !framing.MatchString(l) {
			return l
		}
	}
	return "no output"
}

// Meta is what the header of EVIDENCE.md says besides the record header.
type Meta struct {
	Command   string // the go test command, as run
	Generator string // how the generator was called
	Source    string // "" when run here, else the -json file read
	GoVersion string
	Backend   string // -backend or ZK19_BACKEND when the record says none
	Index     string // the claim index, as named on the command line
}

// renderMarkdown writes EVIDENCE.md.
func renderMarkdown(w io.Writer, ix *claims.Index, run *Run, h Header, vs []Verdict, m Meta) {
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		return strings.ReplaceAll(s, "\n", " ")
	}
	counts := map[string]int{}
	for _, v := range vs {
		counts[v.Kind]++
	}
	backend, kind := h.Backend, h.BackendKind
	if backend == "" {
		backend, kind = "none printed", m.Backend
		if kind == "" {
			kind = "?"
		}
	}
	server := h.Server
	if server == "" {
		server = "none (no record header)"
	}
	version := h.Version
	if version == "" {
		version = "?"
	}
	date := run.Start.UTC().Format("2006-01-02 15:04:05 UTC")
	if run.Start.IsZero() {
		date = "unknown"
	}
	pkg := "pass"
	switch {
	case !run.PkgEnded:
		pkg = "did not end"
	case run.PkgFail:
		pkg = "FAIL"
	}

	fmt.Fprintf(w, "# zk19 evidence\n\n")
	fmt.Fprintf(w, "Generated by `%s` from `%s`. One row per claim of %q; "+
		"a claim **holds** when every Test and Example that proves it passed.\n\n", m.Generator, m.Index, ix.Article)
	fmt.Fprintf(w, "- date: %s\n", date)
	fmt.Fprintf(w, "- backend: %s\n", backend)
	fmt.Fprintf(w, "- server: %s\n", server)
	if h.NoServer != "" {
		fmt.Fprintf(w, "- note: %s\n", h.NoServer)
	}
	fmt.Fprintf(w, "- go: %s\n", m.GoVersion)
	switch {
	case m.Source == "":
		fmt.Fprintf(w, "- command: `%s`\n", m.Command)
	case m.Command != "":
		fmt.Fprintf(w, "- command: `%s` (its events read back from `%s`)\n", m.Command, m.Source)
	default:
		fmt.Fprintf(w, "- events read from `%s` (the command that wrote them is not recorded)\n", m.Source)
	}
	fmt.Fprintf(w, "- package result: %s (%.0fs)\n", pkg, run.Elapsed)
	fmt.Fprintf(w, "- verdicts: %d holds, %d refuted, %d not run, %d failed (of %d claims)\n\n",
		counts[Holds], counts[Refuted], counts[NotRun], counts[Failed], len(vs))

	fmt.Fprintf(w, "| claim | verdict | tests | backend | server |\n|---|---|---|---|---|\n")
	for _, v := range vs {
		id := v.Claim.ID
		if v.Claim.Beyond {
			id += " (beyond)"
		}
		tests := make([]string, len(v.Tests))
		for i, t := range v.Tests {
			name, rest, _ := strings.Cut(t, " ")
			tests[i] = "`" + name + "` " + rest
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", cell(id), cell(v.Text), cell(strings.Join(tests, "<br>")), cell(kind), cell(version))
	}

	fmt.Fprintf(w, "\n## What the tests logged\n\nPer claim, two to four lines of its tests' output (of a test with "+
		"subtests named after claims, the claim's own subtests), chosen by rule and shown in the order they were logged: "+
		"observations (refuted, violated, evidence:, observed, old leader, roles:), the test's own statements, "+
		"one fault (nemesis), one failed operation; operations (invoke, ok, info) only to make up two. "+
		"Claim lines, skip messages, server logs, session events and proxy connection bookkeeping are left out.\n")
	for _, v := range vs {
		fmt.Fprintf(w, "\n### %s: %s\n\n%s.\n", v.Claim.ID, v.Text, v.Claim.Statement)
		if len(v.Lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n```\n")
		for _, l := range v.Lines {
			fmt.Fprintln(w, strings.ReplaceAll(l, "```", "'''"))
		}
		fmt.Fprintf(w, "```\n")
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/record/diagram"
)

// runner runs the go command for the module at root.
type runner struct {
	root    string
	tmp     string // removed when the run ends
	backend string
	commit  string
	key     string
	mu      sync.Mutex
	n       int      // overlay files written
	kills   *history // which tests killed so far, by function (nil: none kept)
	jobs    int      // tests of the coverage map run at once (-jobs)
}

// env is the environment of every go command and test binary: the
// chosen backend.
func (r *runner) env() []string {
	return append(os.Environ(), "ZK19_BACKEND="+r.backend)
}

// setGroup puts cmd in a process group of its own; a context end sends the
// group SIGINT, so that the test binaries stop their servers (zkserver's
// interrupt handler), and SIGKILL a minute later.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	}
	cmd.WaitDelay = time.Minute
}

// goCmd runs the go command with args, within limit, and returns an error
// with the end of its output if it fails.
func (r *runner) goCmd(ctx context.Context, limit time.Duration, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = r.root
	cmd.Env = r.env()
	setGroup(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
	}
	return nil
}

// overlay writes the mutated sources (file relative to the module root →
// content) and the overlay JSON that maps each real file to its copy, and
// returns the JSON's path.
func (r *runner) overlay(files map[string][]byte) (string, error) {
	r.mu.Lock()
	r.n++
	dir := filepath.Join(r.tmp, fmt.Sprintf("m%d", r.n))
	r.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	replace := map[string]string{}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for i, f := range names {
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(f)))
		if err := os.WriteFile(p, files[f], 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(r.root, filepath.FromSlash(f))] = p
	}
	p := filepath.Join(dir, "overlay.json")
	return p, writeOverlay(p, replace)
}

// writeOverlay writes the overlay JSON at p that maps each real file to
// its copy.
func writeOverlay(p string, replace map[string]string) error {
	b, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// Outcome is what one go test run of selected tests did.
type Outcome struct {
	Killed   bool    `json:"killed,omitempty"`   // a test failed
	TimedOut bool    `json:"timedOut,omitempty"` // the test binary's -timeout fired, or the run's bound
	Invalid  bool    `json:"invalid,omitempty"`  // it did not build
	Test     string  `json:"test,omitempty"`     // the first top-level test that failed
	Claim    string  `json:"claim,omitempty"`    // the claim of its first verdict attribute
	Verdict  string  `json:"verdict,omitempty"`  // that attribute's word: refuted or not-shown
	Line     string  `json:"line,omitempty"`     // the verdict's reason line, or the first failure line
	Seconds  float64 `json:"seconds"`
	NotRun   bool    `json:"-"` // the test binary could not be started
}

// event is one line of go test -json.
type event struct {
	Action, Package, Test, Output, Key, Value string
}

// goTest runs the tests of pkg named in tests (top-level names) with the
// overlay, -failfast, bounded by limit, and reads what happened.
func (r *runner) goTest(ctx context.Context, pkg string, tests []string, overlay string, limit time.Duration) Outcome {
	t0 := time.Now()
	args := []string{"test", "-json", "-count=1", "-failfast", "-vet=off", "-timeout", limit.String(),
		"-run", "^(" + strings.Join(tests, "|") + ")$"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, pkg)
	// The build comes first, outside the test's own bound.
	ctx2, cancel := context.WithTimeout(ctx, limit+3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx2, "go", args...)
	cmd.Dir = r.root
	cmd.Env = r.env()
	if overlay != "" {
		// The proofs that read the source (F6's) read it through the
		// same overlay as the compiler (internal/proof/srcread, ReadSource).
		cmd.Env = append(cmd.Env, "ZK19_SOURCE_OVERLAY="+overlay)
	}
	setGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return judge(ctx, ctx2, pkg, out, stderr.String(), err, limit+3*time.Minute, t0)
}

// judge reads what a test run of pkg did: its go test -json output, its
// stderr and exit error; ctx2 is the run's context, bound ends it.
func judge(ctx, ctx2 context.Context, pkg string, out []byte, stderr string, err error, bound time.Duration, t0 time.Time) Outcome {
	o := readEvents(out, stderr)
	o.Seconds = time.Since(t0).Seconds()
	if ctx2.Err() != nil && ctx.Err() == nil {
		o.TimedOut, o.Killed = true, false
		if o.Line == "" {
			o.Line = fmt.Sprintf("no end within %s", bound)
		}
	}
	if err != nil && !o.Killed && !o.Invalid && !o.TimedOut && ctx.Err() == nil {
		// The package failed outside any test's verdict: a panic (the
		// running test is named in its trace), TestMain.
		o.Killed, o.Test = true, "(package "+pkg+")"
		if o.Line == "" {
			o.Line = packageFailure(out, stderr)
		}
	}
	return o
}

var (
	timedOut = regexp.MustCompile(`^panic: test timed out after`)
	fileLine = regexp.MustCompile(`^\s*[\w./-]+\.go:\d+: `)
)

// readEvents reads a go test -json stream: the first top-level test that
// failed, its first verdict attribute (an attribute event, or an ATTR line
// an Example prints) and the line that gives the verdict's reason.
func readEvents(out []byte, stderr string) Outcome {
	lg := &eventLog{outputs: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		lg.add(ev)
	}
	o := lg.o
	if strings.Contains(stderr, "build failed") || strings.Contains(stderr, "setup failed") {
		o.Invalid = true
	}
	if o.Invalid {
		o.Killed, o.Test = false, ""
		o.Line = lastLines(stderr, 2)
		return o
	}
	if o.TimedOut {
		o.Killed = false
	}
	for _, v := range lg.verdicts {
		if o.Test == "" || v.test == o.Test {
			o.Claim, o.Verdict = v.claim, v.word
			break
		}
	}
	o.Line = reasonLine(o, lg.outputs[o.Test])
	return o
}

// verdictAttr is a verdict attribute a test stated: its claim and word.
type verdictAttr struct{ test, claim, word string }

// eventLog is what a go test -json stream said so far: the outcome, each
// top-level test's output lines and the verdict attributes in order.
type eventLog struct {
	o        Outcome
	outputs  map[string][]string
	verdicts []verdictAttr
}

func (lg *eventLog) add(ev event) {
	top, _, _ := strings.Cut(ev.Test, "/")
	switch ev.Action {
	case "build-fail":
		lg.o.Invalid = true
	case "output":
		l := strings.TrimRight(ev.Output, "\n")
		if strings.Contains(l, "[build failed]") || strings.Contains(l, "[setup failed]") {
			lg.o.Invalid = true
		}
		if timedOut.MatchString(l) {
			lg.o.TimedOut = true
		}
		if t, key, value, ok := claims.ParseAttr(l); ok {
			if id, ok := claims.VerdictClaim(key); ok {
				tt, _, _ := strings.Cut(t, "/")
				lg.verdicts = append(lg.verdicts, verdictAttr{tt, id, value})
			}
		}
		lg.outputs[top] = append(lg.outputs[top], l)
	case "attr":
		if id, ok := claims.VerdictClaim(ev.Key); ok {
			lg.verdicts = append(lg.verdicts, verdictAttr{top, id, ev.Value})
		}
	case "fail":
		if ev.Test != "" && lg.o.Test == "" {
			lg.o.Killed, lg.o.Test = true, top
		}
	}
}

// reasonLine is the line that gives o's verdict its reason: the claim's
// refuted or not-shown line, where an Example's output differs, the first
// failure line, or the timeout.
func reasonLine(o Outcome, lines []string) string {
	line := ""
	if o.Claim != "" {
		for _, l := range lines {
			s := strings.TrimSpace(fileLine.ReplaceAllString(l, ""))
			if strings.HasPrefix(s, o.Claim+" refuted") || strings.HasPrefix(s, o.Claim+" not shown") || strings.HasPrefix(s, o.Claim+" not-shown") {
				line = s
				break
			}
		}
	}
	if line == "" && strings.HasPrefix(o.Test, "Example") {
		line = exampleDiff(lines)
	}
	if line == "" {
		line = failureLine(lines)
	}
	if line == "" && o.TimedOut {
		line = "panic: test timed out"
	}
	return shorten(line, 240)
}

// packageFailure says why a package failed outside a test's verdict: its
// panic, with the goroutine's first frame of ours, or its last output.
func packageFailure(out []byte, stderr string) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Action == "output" {
			lines = append(lines, strings.TrimRight(ev.Output, "\n"))
		}
	}
	lines = append(lines, strings.Split(stderr, "\n")...)
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic:") {
			continue
		}
		s := l
		for _, f := range lines[i+1:] {
			if strings.HasPrefix(f, modulePath+"/") {
				return s + " in " + f
			}
		}
		return s
	}
	var tail []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "FAIL") && !strings.HasPrefix(t, "exit status") {
			tail = append(tail, t)
		}
	}
	if len(tail) > 2 {
		tail = tail[len(tail)-2:]
	}
	return strings.Join(tail, " ⏎ ")
}

// failureLine picks, among a failed test's log lines, the one that most
// likely says why: a panic, else the first that reads like an assertion
// (a want, a got, two holders), else the last log line before the test's
// "--- FAIL".
func failureLine(lines []string) string {
	var logged []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "panic:") {
			return t
		}
		if strings.HasPrefix(t, "--- FAIL") {
			break
		}
		if fileLine.MatchString(l) {
			logged = append(logged, strings.TrimSpace(fileLine.ReplaceAllString(l, "")))
		}
	}
	for _, l := range logged {
		if strings.Contains(l, "want") || strings.HasPrefix(l, "got ") || strings.Contains(l, "two holders") || strings.Contains(l, "refuted") {
			return l
		}
	}
	if len(logged) > 0 {
		return logged[len(logged)-1]
	}
	return ""
}

// exampleDiff says where a failed Example's output first differs from its
// Output comment.
func exampleDiff(lines []string) string {
	if d, ok := diagram.FirstExampleDiff(lines); ok {
		return fmt.Sprintf("Example output line %d: got %q, want %q", d.Line, d.Got, d.Want)
	}
	return ""
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

package lock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// selfTestWithin bounds the self-test's run of the test binary: a server's
// start and three cells, on a loaded machine.
const selfTestWithin = 3 * time.Minute

// selfCase is a cell of the self-test's run and what its table line and
// failure lines must say.
type selfCase struct {
	cell     string // request/state/fault
	seam     string // what the seam does to it: "" (nothing), no-fault, skip:<check>
	seen     string // the table's "fault seen"; "" for any but none
	outcome  string // the table's outcome
	allRan   bool   // every promised check ran
	failLine string // a failure line the child must print; "" for a cell that passes
}

// TestMatrixChecksItself: the matrix's table never calls a cell held or
// returned when the cell's fault did not take or when the cell stopped
// before a check its row promises (issue 49, item 4; the matrix is the
// package's own proof, no claim of the article). It runs this test binary
// again on three cells of TestMatrix with the matrix's seam (seamEnv) set:
// in create/acquire-free/reply-lost the fault is never made, so the call
// simply holds; in create/acquire-free/request-lost the check "holds kept"
// never runs; create/acquire-free/cut runs as it is. It reads the child's
// table and failure lines: the first cell must read "not shown", with no
// fault seen, and fail; the second FAIL naming "holds kept" as not run;
// the third held, its fault seen and every promised check run; and the
// child's run must fail.
func TestMatrixChecksItself(t *testing.T) {
	if os.Getenv(seamEnv) != "" {
		t.Skip("this is the self-test's own run of the matrix")
	}
	cases := []selfCase{
		{cell: "create/acquire-free/reply-lost", seam: "no-fault", seen: seenNone, outcome: verdictNotShown,
			failLine: "create/acquire-free/reply-lost: " + verdictNotShown + ": the fault reply-lost was armed but never seen to take"},
		{cell: "create/acquire-free/request-lost", seam: "skip:" + chkKept, seen: "request dropped", outcome: verdictFail + ": not run: " + chkKept,
			failLine: "create/acquire-free/request-lost: not run: " + chkKept + ": got 10 of the 11 checks its row promises"},
		{cell: "create/acquire-free/cut", seen: "cut, reconnect refused", outcome: "held", allRan: true},
	}
	var seams, faults []string
	for _, sc := range cases {
		if sc.seam != "" {
			seams = append(seams, sc.cell+"="+sc.seam)
		}
		faults = append(faults, strings.TrimPrefix(sc.cell, "create/acquire-free/"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), selfTestWithin)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMatrix$/^create$/^acquire-free$/^("+strings.Join(faults, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), seamEnv+"="+strings.Join(seams, ";"))
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // the child stops its server
	cmd.WaitDelay = 10 * time.Second
	t.Logf("run: %s=%q %s", seamEnv, strings.Join(seams, ";"), strings.Join(cmd.Args, " "))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the matrix's run with the seam: got no end within %v; want its end (output:\n%s)", selfTestWithin, out)
	case !errors.As(err, &exit) || exit.ExitCode() != 1:
		t.Fatalf("the matrix's run with the seam: got %v; want exit status 1, its cells failing (output:\n%s)", err, out)
	}
	lines := tableLines(string(out))
	for _, l := range strings.Split(string(out), "\n") {
		failure := strings.Contains(l, "_test.go:") && (strings.Contains(l, ": "+verdictNotShown+": ") || strings.Contains(l, ": not run: "))
		if failure || strings.HasPrefix(strings.TrimSpace(l), "--- ") {
			t.Logf("the run's line: %s", strings.TrimSpace(l))
		}
	}
	for _, sc := range cases {
		checkSelfCase(t, sc, lines[sc.cell], string(out))
	}
}

// checkSelfCase checks one cell's table line (l: its columns) and failure
// lines in the self-test's run.
func checkSelfCase(t *testing.T, sc selfCase, l []string, out string) {
	t.Helper()
	if len(l) < 6 {
		t.Errorf("%s (seam %q): got the table line %q; want one with its fault seen, outcome and checks", sc.cell, sc.seam, l)
		return
	}
	t.Logf("the table's line: %s", strings.Join(l, "  "))
	seen, outcome, checks := l[3], l[4], l[5]
	if seen != sc.seen {
		t.Errorf("%s (seam %q): got fault seen %q; want %q", sc.cell, sc.seam, seen, sc.seen)
	}
	if outcome != sc.outcome {
		t.Errorf("%s (seam %q): got outcome %q; want %q", sc.cell, sc.seam, outcome, sc.outcome)
	}
	var ran, promised int
	if _, err := fmt.Sscanf(checks, "%d/%d", &ran, &promised); err != nil {
		t.Errorf("%s (seam %q): got checks %q; want ran/promised", sc.cell, sc.seam, checks)
	} else if sc.allRan && ran != promised {
		t.Errorf("%s (seam %q): got checks %s; want every promised check run", sc.cell, sc.seam, checks)
	}
	result := "--- PASS: TestMatrix/" + sc.cell
	if sc.failLine != "" {
		result = "--- FAIL: TestMatrix/" + sc.cell
		if !strings.Contains(out, sc.failLine) {
			t.Errorf("%s (seam %q): got no failure line %q in the run; want it", sc.cell, sc.seam, sc.failLine)
		}
	}
	if !strings.Contains(out, result) {
		t.Errorf("%s (seam %q): got no %q in the run; want it", sc.cell, sc.seam, result)
	}
}

// tableLines finds the matrix's table in a run's output: each cell's line,
// by request/state/fault, as its columns.
func tableLines(out string) map[string][]string {
	cols := regexp.MustCompile(`\s{2,}`)
	lines := map[string][]string{}
	in := false
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "request  "):
			in = true
		case in:
			c := cols.Split(l, -1)
			if len(c) < 3 {
				in = false // the counts below the table
				continue
			}
			lines[strings.Join(c[:3], "/")] = c
		}
	}
	return lines
}

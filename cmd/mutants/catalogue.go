package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Fault is a hand-written fault of the catalogue (testdata/mutants/*.fault):
// a defect the operators cannot make, the exact text it replaces, and the
// tests that must fail with it.
//
// The file format is a header of "key: value" lines, then for each edit a
// "=== file <path>" line and two blocks, "--- old" and "--- new", whose
// lines are taken exactly (the newline before the next marker is not
// part of them). Lines starting with "#" in the header are comments.
//
//	id: F8-second-statement
//	what: the durable resource stores the value in a statement of its own
//	run: . Example_s5aFencingSequence
//	run: ./fence TestDurablePersists
//	expect: F8 refuted
//	fast: yes
//	=== file fence/durable.go
//	--- old
//	...
//	--- new
//	...
type Fault struct {
	ID     string
	What   string
	Runs   []plan // in order; the first run that kills the fault ends it
	Expect string // the verdict words expected, for the report
	Fast   bool   // part of the fast catalogue that CI runs
	Note   string
	Edits  []Edit
	Source string // the file it was read from
}

// Edit replaces Old, which must occur exactly once in File, with New.
type Edit struct{ File, Old, New string }

func parseFault(name string, b []byte) (Fault, error) {
	r := &faultReader{name: name, f: Fault{Source: name}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := r.line(n, sc.Text()); err != nil {
			return r.f, err
		}
	}
	r.flush()
	if err := r.f.complete(); err != nil {
		return r.f, err
	}
	return r.f, sc.Err()
}

// faultReader reads a .fault file a line at a time: its header's keys,
// then each file's old and new text.
type faultReader struct {
	name  string
	f     Fault
	cur   *Edit   // the edit of the last "=== file" line
	block *string // its old or new text, being read
	lines []string
}

func (r *faultReader) flush() {
	if r.block != nil {
		*r.block = strings.Join(r.lines, "\n")
	}
	r.block, r.lines = nil, nil
}

// line reads line n, l.
func (r *faultReader) line(n int, l string) error {
	switch {
	case strings.HasPrefix(l, "=== file "):
		r.flush()
		r.f.Edits = append(r.f.Edits, Edit{File: strings.TrimSpace(strings.TrimPrefix(l, "=== file "))})
		r.cur = &r.f.Edits[len(r.f.Edits)-1]
	case r.cur != nil && l == "--- old":
		r.flush()
		r.block = &r.cur.Old
	case r.cur != nil && l == "--- new":
		r.flush()
		r.block = &r.cur.New
	case r.block != nil:
		r.lines = append(r.lines, l)
	case r.cur != nil:
		if strings.TrimSpace(l) != "" {
			return fmt.Errorf("%s:%d: text outside --- old / --- new", r.name, n)
		}
	case strings.HasPrefix(l, "#"), strings.TrimSpace(l) == "":
	default:
		return r.header(n, l)
	}
	return nil
}

// header reads a "key: value" line of the header.
func (r *faultReader) header(n int, l string) error {
	k, v, ok := strings.Cut(l, ":")
	if !ok {
		return fmt.Errorf("%s:%d: want key: value", r.name, n)
	}
	v = strings.TrimSpace(v)
	switch k {
	case "id":
		r.f.ID = v
	case "what":
		r.f.What = v
	case "run":
		fs := strings.Fields(v)
		if len(fs) < 2 {
			return fmt.Errorf("%s:%d: run: want a package and tests", r.name, n)
		}
		r.f.Runs = append(r.f.Runs, plan{pkg: fs[0], tests: fs[1:]})
	case "expect":
		r.f.Expect = v
	case "fast":
		r.f.Fast = v == "yes" || v == "true"
	case "note":
		r.f.Note = v
	default:
		return fmt.Errorf("%s:%d: unknown key %q", r.name, n, k)
	}
	return nil
}

// complete says what a fault read whole still lacks.
func (f Fault) complete() error {
	switch {
	case f.ID == "" || f.What == "":
		return fmt.Errorf("%s: id and what are required", f.Source)
	case len(f.Runs) == 0:
		return fmt.Errorf("%s: no run line", f.Source)
	case len(f.Edits) == 0:
		return fmt.Errorf("%s: no edit", f.Source)
	}
	for _, e := range f.Edits {
		if e.Old == "" || e.Old == e.New {
			return fmt.Errorf("%s: edit of %s: empty old text, or new text equal to it", f.Source, e.File)
		}
	}
	return nil
}

// loadFaults reads every *.fault file of dir, in name order.
func loadFaults(dir string) ([]Fault, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.fault"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Fault
	seen := map[string]bool{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := parseFault(filepath.Base(n), b)
		if err != nil {
			return nil, err
		}
		if seen[f.ID] {
			return nil, fmt.Errorf("%s: id %s used twice", n, f.ID)
		}
		seen[f.ID] = true
		out = append(out, f)
	}
	return out, nil
}

// apply returns the faulty sources, file → content, read from root.
func (f Fault) apply(root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, e := range f.Edits {
		src, ok := files[e.File]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(e.File))); err != nil {
				return nil, fmt.Errorf("fault %s: %w", f.ID, err)
			}
		}
		if n := bytes.Count(src, []byte(e.Old)); n != 1 {
			return nil, fmt.Errorf("fault %s: the old text occurs %d times in %s; want once (has the code moved?)", f.ID, n, e.File)
		}
		files[e.File] = bytes.Replace(src, []byte(e.Old), []byte(e.New), 1)
	}
	return files, nil
}

// FaultResult is what one fault of the catalogue did.
type FaultResult struct {
	Fault   Fault
	Lines   []LineResult // one per run line that ran
	Err     string       // the fault could not be applied or built
	Seconds float64
	Date    string // when it ran, for a result from the cache
}

// LineResult is what one run line of a fault did.
type LineResult struct {
	Pkg     string
	Tests   []string
	Outcome Outcome
}

// Killed reports whether a test failed with the fault.
func (fr FaultResult) Killed() bool {
	if fr.Err != "" {
		return false
	}
	for _, l := range fr.Lines {
		if l.Outcome.Killed {
			return true
		}
	}
	return false
}

// TimedOut reports whether a run line timed out and none killed the fault.
func (fr FaultResult) TimedOut() bool {
	for _, l := range fr.Lines {
		if l.Outcome.TimedOut {
			return !fr.Killed()
		}
	}
	return false
}

// first returns the run line that decides the verdict line: the first
// that failed with a claim's verdict, else the first that failed.
func (fr FaultResult) first() (LineResult, bool) {
	for _, l := range fr.Lines {
		if l.Outcome.Killed && l.Outcome.Claim != "" {
			return l, true
		}
	}
	for _, l := range fr.Lines {
		if l.Outcome.Killed || l.Outcome.TimedOut {
			return l, true
		}
	}
	return LineResult{}, false
}

// runFault applies f through an overlay and runs its run lines in order:
// all of them, or, with stop, until one kills the fault.
func (r *runner) runFault(ctx context.Context, f Fault, limit time.Duration, stop bool) FaultResult {
	t0 := time.Now()
	fr := FaultResult{Fault: f, Date: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	files, err := f.apply(r.root)
	if err != nil {
		fr.Err = err.Error()
		return fr
	}
	ov, err := r.overlay(files)
	if err != nil {
		fr.Err = err.Error()
		return fr
	}
	defer os.RemoveAll(filepath.Dir(ov))
	for _, p := range f.Runs {
		o := r.goTest(ctx, p.pkg, p.tests, ov, limit)
		if ctx.Err() != nil {
			break
		}
		fr.Lines = append(fr.Lines, LineResult{Pkg: p.pkg, Tests: p.tests, Outcome: o})
		if o.Invalid {
			fr.Err = "does not build: " + o.Line
			break
		}
		if stop && (o.Killed || o.TimedOut) {
			break
		}
	}
	fr.Seconds = time.Since(t0).Seconds()
	return fr
}

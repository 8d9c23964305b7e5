package main

import (
	"bufio"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"time"
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
	Name    string // as a proof list names it: "TestX", "internal/faultproxy.TestX"
	Action  string // pass, fail, skip; "" when it never ended
	Elapsed float64
	out     strings.Builder
	Lines   []string // raw output lines, subtests' included, in order
	own     strings.Builder
	Own     []string // the lines of the test itself, without its subtests
	subs    map[string]*strings.Builder
	Subs    map[string][]string // first-level subtest name -> its lines
}

// Run is a parsed "go test -json" stream: the root package's run, and the
// runs of the module's other packages that proofs name.
type Run struct {
	Start   time.Time
	Results map[string]*result
	Order   []string // top-level names in order of first appearance
	// PkgLines is the root package's output that belongs to no test: the
	// record header, TestMain's stderr.
	PkgLines []string
	// Preamble is the part of PkgLines printed before the root package's
	// first test started: where the record header must be (claim E4).
	Preamble []string
	PkgFail  bool
	PkgEnded bool
	Elapsed  float64
	root     string
	pkgOut   strings.Builder
	preamble strings.Builder
	started  bool
}

// parseRun reads a "go test -json" stream. root is the module path: a test
// of package root is named as it is, one of root/dir as "dir.TestX". Lines
// that are not JSON (a build error printed by an older go command) count
// as the root package's output.
func parseRun(r io.Reader, root string) (*Run, error) {
	run := &Run{Results: map[string]*result{}, root: root}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		var ev event
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ev) != nil {
			run.pkgOutput(string(raw) + "\n")
			continue
		}
		if run.Start.IsZero() && !ev.Time.IsZero() {
			run.Start = ev.Time
		}
		run.add(ev)
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
	run.Preamble = splitLines(run.preamble.String())
	return run, nil
}

// add folds one event into the run.
func (run *Run) add(ev event) {
	isRoot := run.root == "" || ev.Package == "" || ev.Package == run.root
	if ev.Test == "" {
		if isRoot {
			run.pkgEvent(ev)
		}
		return
	}
	if isRoot {
		run.started = true
	}
	top, rest, sub := strings.Cut(ev.Test, "/")
	key := run.key(ev.Package, top)
	res := run.Results[key]
	if res == nil {
		res = &result{Name: key, subs: map[string]*strings.Builder{}}
		run.Results[key] = res
		run.Order = append(run.Order, key)
	}
	switch ev.Action {
	case "output":
		res.out.WriteString(ev.Output)
		if !sub {
			res.own.WriteString(ev.Output)
			return
		}
		name, _, _ := strings.Cut(rest, "/")
		if res.subs[name] == nil {
			res.subs[name] = &strings.Builder{}
		}
		res.subs[name].WriteString(ev.Output)
	case "pass", "fail", "skip":
		if !sub {
			res.Action, res.Elapsed = ev.Action, ev.Elapsed
		}
	}
}

// key names a test as proof lists do (claims.SplitProof).
func (run *Run) key(pkg, test string) string {
	switch {
	case run.root == "" || pkg == "" || pkg == run.root:
		return test
	case strings.HasPrefix(pkg, run.root+"/"):
		return pkg[len(run.root)+1:] + "." + test
	}
	return pkg + "." + test
}

func (run *Run) pkgEvent(ev event) {
	switch ev.Action {
	case "output", "build-output":
		run.pkgOutput(ev.Output)
	case "fail", "build-fail":
		run.PkgFail, run.PkgEnded, run.Elapsed = true, true, ev.Elapsed
	case "pass", "skip":
		run.PkgEnded, run.Elapsed = true, ev.Elapsed
	}
}

func (run *Run) pkgOutput(s string) {
	run.pkgOut.WriteString(s)
	if !run.started {
		run.preamble.WriteString(s)
	}
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
	Ensembles   string // the whole "# ensembles:" value
	NoServer    string // the -short "no ZooKeeper server" line, if any
}

var (
	backendLine   = regexp.MustCompile(`^# backend:\s+(.*\S)`)
	serverLine    = regexp.MustCompile(`^# server:\s+(ZooKeeper\s+(\S+).*)$`)
	ensemblesLine = regexp.MustCompile(`^# ensembles:\s+(.*\S)`)
	noServer      = regexp.MustCompile(`^# zk19: no ZooKeeper server.*`)
)

// readHeader reads the first record header in ls.
func readHeader(ls []string) Header {
	var h Header
	for _, l := range ls {
		l = strings.TrimSpace(l)
		if m := backendLine.FindStringSubmatch(l); m != nil && h.Backend == "" {
			h.Backend = m[1]
			h.BackendKind = strings.Fields(m[1])[0]
		}
		if m := serverLine.FindStringSubmatch(l); m != nil && h.Version == "" {
			h.Server, h.Version = m[1], m[2]
		}
		if m := ensemblesLine.FindStringSubmatch(l); m != nil && h.Ensembles == "" {
			h.Ensembles = m[1]
		}
		if m := noServer.FindString(l); m != "" && h.NoServer == "" {
			h.NoServer = strings.TrimPrefix(m, "# zk19: ")
		}
	}
	return h
}

func (run *Run) header() Header { return readHeader(run.PkgLines) }

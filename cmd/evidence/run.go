package main

import (
	"bufio"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/zk19/zk19/internal/proof/claims"
)

// event is one line of "go test -json" (cmd/test2json).
type event struct {
	Time    time.Time `json:"Time"`
	Action  string    `json:"Action"`
	Package string    `json:"Package"`
	Test    string    `json:"Test"`
	Output  string    `json:"Output"`
	Elapsed float64   `json:"Elapsed"`
	// Key and Value are an attribute's (Action "attr"): testing.T.Attr.
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// attr is one attribute a test set (internal/proof/claims names the keys).
type attr struct {
	Sub        string // the first-level subtest that set it; "" for the test itself
	Key, Value string
	// Reason is what the test logged right after a verdict attribute: why
	// it failed, in its own words, for the table to quote.
	Reason string
	// ReasonZh is the Chinese of Reason, the claims.AttrReasonZh the
	// proof set right after the verdict, when it set one.
	ReasonZh string
	at       int    // its line in the record (Lines), -1 when it has none
	line     string // its record line (claims.AttrLine)
}

// result is what the run says about one top-level Test or Example, its
// subtests folded in.
type result struct {
	Name    string // as a proof list names it: "TestX", "internal/server/faultproxy.TestX"
	Action  string // pass, fail, skip; "" when it never ended
	Elapsed float64
	out     strings.Builder
	Lines   []string // raw output lines, subtests' included, in order
	own     strings.Builder
	Own     []string // the lines of the test itself, without its subtests
	subs    map[string]*strings.Builder
	Subs    map[string][]string // first-level subtest name -> its lines
	// Attrs are the attributes the test and its subtests set, in order:
	// its attribute events, then those only its record carries (see
	// readAttrs).
	Attrs  []attr
	events []attr
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
	// PkgAttrs are the attributes TestMain's Scope set (claim E3's checks
	// after the last test), read from PkgLines.
	PkgAttrs []attr
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
		res.Attrs = readAttrs(res.events, res.Lines)
	}
	run.PkgLines = splitLines(run.pkgOut.String())
	run.PkgAttrs = readAttrs(nil, run.PkgLines)
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
	case "attr":
		name, _, _ := strings.Cut(rest, "/")
		res.events = append(res.events, attr{Sub: name, Key: ev.Key, Value: ev.Value,
			at: -1, line: claims.AttrLine(ev.Test, ev.Key, ev.Value)})
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

// readAttrs returns a test's attributes: its attribute events, each with
// the place of its line in the record, then the attribute lines of the
// record that no event stands for. Those are an Example's or TestMain's:
// a zkserver.Scope has no *testing.T, and prints the line testing prints
// for t.Attr (claims.AttrLine); a line too long for test2json to read as
// framing (4 KiB) lands there as well. A verdict's Reason is the first log
// line after its attribute line.
func readAttrs(events []attr, lines []string) []attr {
	out := append([]attr(nil), events...)
	pending := map[string][]int{} // an event's line -> its events without a place yet
	for i, a := range out {
		pending[a.line] = append(pending[a.line], i)
	}
	for i, l := range lines {
		test, key, value, ok := claims.ParseAttr(l)
		if !ok {
			continue
		}
		line := strings.TrimSpace(l)
		if q := pending[line]; len(q) > 0 {
			out[q[0]].at = i
			pending[line] = q[1:]
			continue
		}
		_, rest, _ := strings.Cut(test, "/")
		sub, _, _ := strings.Cut(rest, "/")
		out = append(out, attr{Sub: sub, Key: key, Value: value, at: i, line: line})
	}
	for i := range out {
		if _, ok := claims.VerdictClaim(out[i].Key); ok && out[i].at >= 0 {
			out[i].Reason = logLineAfter(lines, out[i].at)
		}
		if _, ok := claims.VerdictClaim(out[i].Key); ok {
			out[i].ReasonZh = reasonZh(out[i+1:], out[i].Sub)
		}
	}
	return out
}

// reasonZh is the Chinese reason among the attributes after a verdict of
// subtest sub: the next attribute sub set, when it is one.
func reasonZh(after []attr, sub string) string {
	for _, a := range after {
		if a.Sub != sub {
			continue
		}
		if a.Key == claims.AttrReasonZh {
			return a.Value
		}
		break
	}
	return ""
}

// logLineAfter is the first line after lines[i] that a test logged.
func logLineAfter(lines []string, i int) string {
	for _, l := range lines[i+1:] {
		if c := clean(l); c != "" {
			return c
		}
	}
	return ""
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

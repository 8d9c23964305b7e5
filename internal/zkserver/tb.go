// Package zkserver starts real ZooKeeper servers and ensembles for the zk19
// evidence suite: as local java processes (the process backend), as Docker
// containers through testcontainers-go (the container backend), or by pointing
// at servers that already run (the external backend).
//
// Every constructor takes a TB (a *testing.T, or a Scope for examples and
// TestMain), calls Helper, registers Cleanup as soon as it holds anything,
// fails the test itself, and returns ready objects; the Try forms return
// the error instead, for goroutines other than the test's. Every wait is
// bounded and says what it last saw when it gives up. Every listener is on
// 127.0.0.1.
//
// Ryuk cannot run here, so the harness does its job. Every server is
// registered before it is made; server dirs live in one run dir named after
// the test process (pid and start time); containers carry the same owner
// label. KillAll, on interrupt, stops everything registered, waiting for
// creations in flight, and removes the run dir. Reap, at the start of the
// next run, removes what a process that died without cleaning up left.
package zkserver

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/zk19/zk19/internal/claims"
)

// TB is the part of testing.TB the harness needs. *testing.T, *testing.B and
// *Scope satisfy it. Attr is how a proof states its evidence and its verdict
// as data (internal/claims names the keys).
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Attr(key, value string)
	Skipf(format string, args ...any)
	Name() string
	TempDir() string
}

// Scope is a TB for code that has no *testing.T: TestMain and Examples.
// Fatalf and Skipf panic (an Example has no other way to stop), Logf writes a
// prefixed line to standard error (so it never mixes with an Example's
// checked output), Attr keeps the attribute for the record (see Attr), and
// Close runs the cleanups in reverse order.
type Scope struct {
	name  string
	quiet bool

	mu       sync.Mutex
	attrs    [][2]string
	cleanups []func()
	dirs     []string
	closed   bool
}

// NewScope returns a Scope whose log lines start with name.
func NewScope(name string) *Scope { return &Scope{name: name} }

// newQuietScope returns a Scope that drops its log lines (benchmarks).
func newQuietScope(name string) *Scope { return &Scope{name: name, quiet: true} }

// Helper does nothing; it exists to satisfy TB.
func (s *Scope) Helper() {}

// Name returns the scope's name.
func (s *Scope) Name() string { return s.name }

// Cleanup registers f to run at Close, last registered first.
func (s *Scope) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}

// Logf writes one line to standard error.
func (s *Scope) Logf(format string, args ...any) {
	if s.quiet {
		return
	}
	fmt.Fprintf(os.Stderr, "    %s: %s\n", s.name, fmt.Sprintf(format, args...))
}

// Attr keeps an attribute for the record. An Example has no *testing.T, so
// "go test -json" has no attribute event for it: the Scope writes the line
// testing writes for t.Attr under -v ("=== ATTR  <name> <key> <value>",
// claims.AttrLine) to standard error, where it never mixes with the
// Example's checked output, and cmd/evidence reads an Example's attributes
// from those lines. As testing does, a key with white space or a value with
// a line break is refused, here by Fatalf. A quiet Scope keeps the
// attribute (Attrs) and prints nothing.
func (s *Scope) Attr(key, value string) {
	if strings.ContainsFunc(key, unicode.IsSpace) || key == "" {
		s.Fatalf("disallowed attribute key %q", key)
	}
	if strings.ContainsAny(value, "\r\n") {
		s.Fatalf("disallowed newline in attribute value %q", value)
	}
	s.mu.Lock()
	s.attrs = append(s.attrs, [2]string{key, value})
	s.mu.Unlock()
	if !s.quiet {
		fmt.Fprintln(os.Stderr, claims.AttrLine(s.name, key, value))
	}
}

// Attrs returns the attributes set so far, as key, value pairs in order.
func (s *Scope) Attrs() [][2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][2]string(nil), s.attrs...)
}

// ScopeFailure is the value a Scope panics with.
type ScopeFailure struct{ Msg string }

func (f ScopeFailure) Error() string { return f.Msg }

// Fatalf logs and panics with a ScopeFailure.
func (s *Scope) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.Logf("FATAL: %s", msg)
	panic(ScopeFailure{Msg: s.name + ": " + msg})
}

// Skipf panics like Fatalf: a Scope cannot be skipped.
func (s *Scope) Skipf(format string, args ...any) { s.Fatalf("cannot skip: "+format, args...) }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// SafeName turns a test name (or any label) into one that is safe as a file
// name, a container name and a znode name: every run of other characters
// becomes "_".
func SafeName(name string) string { return unsafeName.ReplaceAllString(name, "_") }

// TempDir returns a new directory removed at Close. It lies in the run dir,
// so the interrupt path (KillAll) and the next run's Reap remove it too.
func (s *Scope) TempDir() string {
	dir, err := newDir(s.name)
	if err != nil {
		s.Fatalf("temp dir: %v", err)
	}
	s.mu.Lock()
	s.dirs = append(s.dirs, dir)
	s.mu.Unlock()
	return dir
}

// Close runs the registered cleanups, last first, then removes the temp dirs.
// It is idempotent.
func (s *Scope) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	fs, dirs := s.cleanups, s.dirs
	s.cleanups, s.dirs = nil, nil
	s.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		_ = removeDir(d)
	}
}

// Package tb is what the zk19 harness needs from a test: TB, the part of
// testing.TB its helpers call, and Scope, a TB for code that has no
// *testing.T (TestMain and Examples). It imports nothing of the harness, so
// a package that needs only these (a client, a peer driver) stays light.
package tb

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// TB is the part of testing.TB the harness needs. *testing.T, *testing.B and
// *Scope satisfy it. Attr is how a proof states its evidence and its verdict
// as data (internal/proof/claims names the keys).
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Attr(key, value string)
	Skipf(format string, args ...any)
	Name() string
	TempDir() string
}

// Scope is a TB for code that has no *testing.T: TestMain and Examples.
// Fatalf and Skipf panic (an Example has no other way to stop), Logf writes a
// prefixed line to standard error (so it never mixes with an Example's
// checked output), and Close runs the cleanups in reverse order.
type Scope struct {
	name  string
	quiet bool
	dirs  Dirs

	mu       sync.Mutex
	held     bool     // Hold: lines are kept, not written
	kept     []string // the lines kept while held, each ending in a newline
	cleanups []func()
	attrs    [][2]string
	made     []string
	closed   bool
	errs     []string // what Errorf said: the Scope failed, and goes on
}

// Dirs makes and removes a Scope's temp dirs. The harness passes its own,
// which put them in the run dir that an interrupt and the next run's reaper
// remove.
type Dirs struct {
	Make   func(name string) (string, error)
	Remove func(dir string) error
}

// osDirs makes temp dirs under os.TempDir.
var osDirs = Dirs{
	Make:   func(name string) (string, error) { return os.MkdirTemp("", SafeName(name)+"-") },
	Remove: os.RemoveAll,
}

// NewScope returns a Scope whose log lines start with name; its temp dirs
// are made by dirs, or under os.TempDir when dirs has no Make.
func NewScope(name string, dirs Dirs) *Scope {
	if dirs.Make == nil || dirs.Remove == nil {
		dirs = osDirs
	}
	return &Scope{name: name, dirs: dirs}
}

// Quiet makes s drop its log lines (benchmarks) and returns it.
func (s *Scope) Quiet() *Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quiet = true
	return s
}

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

// Logf writes one line to standard error, prefixed with the Scope's name.
func (s *Scope) Logf(format string, args ...any) {
	s.mu.Lock()
	quiet := s.quiet
	s.mu.Unlock()
	if quiet {
		return
	}
	s.write(fmt.Sprintf("    %s: %s\n", s.name, fmt.Sprintf(format, args...)))
}

// write writes line to standard error, or keeps it while s is held.
func (s *Scope) write(line string) {
	s.mu.Lock()
	if s.held {
		s.kept = append(s.kept, line)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	fmt.Fprint(os.Stderr, line)
}

// Hold keeps s's log lines and attributes instead of writing them, until
// Release: the lines of work done for an Example before the Example begins
// (a start ahead, beside the Examples before it) reach the record inside
// that Example, and not among another's lines.
func (s *Scope) Hold() *Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
	return s
}

// Release writes the lines kept since Hold, in order, and writes the lines
// that follow as they come.
func (s *Scope) Release() {
	s.mu.Lock()
	kept := s.kept
	s.kept, s.held = nil, false
	s.mu.Unlock()
	for _, line := range kept {
		fmt.Fprint(os.Stderr, line)
	}
}

// Printf prints to the Example's output, standard output.
func (s *Scope) Printf(format string, args ...any) { fmt.Printf(format, args...) }

// Println is Printf with fmt.Println's formatting.
func (s *Scope) Println(args ...any) { fmt.Println(args...) }

// Attr keeps an attribute for the record. An Example has no *testing.T, so
// go test -json reports no event for it: the Scope writes the line that
// testing writes for t.Attr under -v ("=== ATTR  <name> <key> <value>") to
// standard error, where it never mixes with the Example's checked output,
// and cmd/evidence reads it from the record. A key with white space or a
// value with a line break is refused, here by Fatalf. A quiet Scope keeps
// the attribute (Attrs) and prints nothing.
func (s *Scope) Attr(key, value string) {
	if strings.ContainsFunc(key, unicode.IsSpace) || key == "" {
		s.Fatalf("disallowed attribute key %q", key)
	}
	if strings.ContainsAny(value, "\r\n") {
		s.Fatalf("disallowed newline in attribute value %q", value)
	}
	s.mu.Lock()
	s.attrs = append(s.attrs, [2]string{key, value})
	quiet := s.quiet
	s.mu.Unlock()
	if !quiet {
		s.write("=== ATTR  " + s.name + " " + key + " " + value + "\n")
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

// Errorf marks the Scope failed and goes on, as testing.T's does: a
// cleanup that could not undo what the Scope made says so here, and the
// Example's EndExample prints it so the Example fails.
func (s *Scope) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.Logf("ERROR: %s", msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, msg)
}

// Errors returns what Errorf said, in order; none when the Scope has not
// failed.
func (s *Scope) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// Skipf panics like Fatalf: a Scope cannot be skipped.
func (s *Scope) Skipf(format string, args ...any) { s.Fatalf("cannot skip: "+format, args...) }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// SafeName turns a test name (or any label) into one that is safe as a file
// name, a container name and a znode name: every run of other characters
// becomes "_".
func SafeName(name string) string { return unsafeName.ReplaceAllString(name, "_") }

// TempDir returns a new directory removed at Close.
func (s *Scope) TempDir() string {
	dir, err := s.dirs.Make(s.name)
	if err != nil {
		s.Fatalf("temp dir: %v", err)
	}
	s.mu.Lock()
	s.made = append(s.made, dir)
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
	fs, dirs := s.cleanups, s.made
	s.cleanups, s.made = nil, nil
	s.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		_ = s.dirs.Remove(d)
	}
}

package harness

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zk19/zk19/internal/server/zkserver"
)

// benchLogScope is TestMain's scope with its log lines (the shared
// server's, and the harness's about it) written to a file.
type benchLogScope struct {
	*zkserver.Scope
	path string

	mu    sync.Mutex
	f     *os.File
	lines int
}

// Logf writes one line to the file.
func (s *benchLogScope) Logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return
	}
	fmt.Fprintf(s.f, format+"\n", args...)
	s.lines++
}

// close closes the file; it keeps the file and says where it is when
// something was logged, and removes it otherwise.
func (s *benchLogScope) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return
	}
	_ = s.f.Close()
	s.f = nil
	if s.lines == 0 {
		_ = os.Remove(s.path)
		return
	}
	fmt.Printf("# zk19: the shared server's %d log lines of this benchmark run are in %s (-v prints them on standard error)\n", s.lines, s.path)
}

// sharedServerScope is the TB the shared server logs through: TestMain's
// scope, or, in a benchmark run without -v, the same scope writing its
// lines to a file that it closes after the server has stopped.
func sharedServerScope() (zkserver.TB, error) {
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" || testing.Verbose() {
		return mainScope, nil
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("zk19-bench-%d.log", os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("server log file: %w", err)
	}
	s := &benchLogScope{Scope: mainScope, path: path, f: f}
	// Registered before the server exists, so it runs after it stopped.
	mainScope.Cleanup(s.close)
	return s, nil
}

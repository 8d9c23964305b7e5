package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TB is the subset of testing.TB used by the Require helpers.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	TempDir() string
}

// RequireTimeout bounds the linearizability check run by the Require
// helpers; a check that times out fails them.
const RequireTimeout = 2 * time.Minute

// VisualizationDir is where the Require helpers keep visualizations of
// failed checks so that they outlive the test: os.TempDir()/zk19-porcupine.
func VisualizationDir() string { return filepath.Join(os.TempDir(), "zk19-porcupine") }

// RequireLinearizable fails t unless r's history is linearizable; claim
// names what the check establishes (e.g. "S1").
func RequireLinearizable(t TB, r *Recorder, claim string) {
	t.Helper()
	require(t, r, claim, Linearizable)
}

// RequireNotLinearizable fails t unless r's history is not linearizable,
// e.g. when a test must demonstrate a stale read.
func RequireNotLinearizable(t TB, r *Recorder, claim string) {
	t.Helper()
	require(t, r, claim, NotLinearizable)
}

func require(t TB, r *Recorder, claim string, want Verdict) {
	t.Helper()
	got, info, err := Check(context.Background(), r.Operations(), r.Initial(), RequireTimeout)
	if err != nil {
		t.Errorf("%s: linearizability check failed: %v", claim, err)
		return
	}
	if got == want {
		return
	}
	name := fmt.Sprintf("%s-%d.html", sanitize(claim), time.Now().UnixNano())
	path := filepath.Join(VisualizationDir(), name)
	if verr := WriteVisualization(path, r.Initial(), info); verr != nil {
		t.Logf("%v; falling back to the test's temporary directory", verr)
		path = filepath.Join(t.TempDir(), name)
		if verr := WriteVisualization(path, r.Initial(), info); verr != nil {
			t.Logf("%v", verr)
			path = ""
		}
	}
	if path != "" {
		t.Logf("%s: porcupine visualization: %s", claim, path)
	}
	t.Logf("%s: history (initial %q):\n%s", claim, r.Initial(), r.String())
	t.Errorf("%s violated: history is %v; want %v", claim, got, want)
}

// sanitize turns claim into a file name fragment.
func sanitize(claim string) string {
	s := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			return c
		default:
			return '_'
		}
	}, claim)
	s = strings.Trim(s, "._")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "claim"
	}
	return s
}

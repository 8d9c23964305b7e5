package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
)

// TB is the subset of testing.TB used by the Require helpers.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	TempDir() string
}

// requireTimeout bounds the linearizability check run by the Require
// helpers; a check that times out fails them.
const requireTimeout = 2 * time.Minute

// visualizationDir is where the Require helpers keep visualizations of
// failed checks so that they outlive the test: os.TempDir()/zk19-porcupine.
func visualizationDir() string { return filepath.Join(os.TempDir(), "zk19-porcupine") }

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
	got, info, err := Check(context.Background(), r.Operations(), r.initial, requireTimeout)
	if err != nil {
		t.Errorf("%s: linearizability check failed: %v", claim, err)
		return
	}
	if got == want {
		return
	}
	path, verr := visualize(visualizationDir(), claim, r.initial, info)
	if verr != nil {
		t.Logf("%v; falling back to the test's temporary directory", verr)
		if path, verr = visualize(t.TempDir(), claim, r.initial, info); verr != nil {
			t.Logf("%v", verr)
		}
	}
	if verr == nil {
		t.Logf("%s: porcupine visualization: %s", claim, path)
	}
	t.Logf("%s: history (initial %q):\n%s", claim, r.initial, r.String())
	t.Errorf("%s violated: history is %v; want %v", claim, got, want)
}

// visualize writes the visualization to a new file in dir named after the
// claim as the caller spells it ("S2-<random>.html"); a claim that cannot
// be part of a file name (it holds a "/") gives "porcupine-<random>.html".
func visualize(dir, claim, initial string, info porcupine.LinearizationInfo) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("history: visualization: %w", err)
	}
	f, err := os.CreateTemp(dir, claim+"-*.html")
	if err != nil {
		f, err = os.CreateTemp(dir, "porcupine-*.html")
	}
	if err != nil {
		return "", fmt.Errorf("history: visualization: %w", err)
	}
	path := f.Name()
	if err := writeVisualization(f, initial, info); err != nil {
		return "", fmt.Errorf("history: visualization %s: %w", path, err)
	}
	return path, nil
}

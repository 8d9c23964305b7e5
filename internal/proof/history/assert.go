package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zk19/zk19/internal/proof/claims"
)

// TB is the subset of testing.TB used by the Require helpers. Attr labels
// a failure: the verdict on the claim as a test attribute (internal/proof/claims).
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Attr(key, value string)
	TempDir() string
}

// requireTimeout bounds the linearizability check run by the Require
// helpers; a check that times out fails them.
const requireTimeout = 2 * time.Minute

// EnvVisualize names a directory where the Require helpers keep the
// visualization of every verdict, expected or not, as <claim>-<n>.html (n
// counts the verdicts of that claim in this process, so a rerun of the same
// tests writes the same names). cmd/evidence sets it, so the evidence table
// links each linearizability verdict to its picture.
const EnvVisualize = "ZK19_PORCUPINE_DIR"

var kept struct {
	sync.Mutex
	n map[string]int
}

// keep writes the visualization of a verdict to EnvVisualize's directory.
func keep(dir, claim, initial string, info porcupine.LinearizationInfo) (string, error) {
	kept.Lock()
	if kept.n == nil {
		kept.n = map[string]int{}
	}
	kept.n[claim]++
	name := fmt.Sprintf("%s-%d.html", claim, kept.n[claim])
	kept.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("history: visualization: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("history: visualization: %w", err)
	}
	if err := writeVisualization(f, initial, info); err != nil {
		return "", fmt.Errorf("history: visualization %s: %w", path, err)
	}
	return path, nil
}

// visualizationDir is where the Require helpers keep visualizations of
// failed checks so that they outlive the test: os.TempDir()/zk19-porcupine.
func visualizationDir() string { return filepath.Join(os.TempDir(), "zk19-porcupine") }

// Logger is what Judge needs of a test: its log.
type Logger interface {
	Helper()
	Logf(format string, args ...any)
}

// Judge returns porcupine's verdict on r's history, failing no one: the
// caller says what the verdict means for claim. As the Require helpers
// do, it keeps the visualization in EnvVisualize's directory when that is
// set and logs where. A check that gives no verdict within the Require
// helpers' bound is Unknown, logged with why.
func Judge(t Logger, r *Recorder, claim string) Verdict {
	t.Helper()
	got, _, err := checkAndKeep(t, r, claim)
	if err != nil {
		t.Logf("%s: porcupine gave no verdict: %v", claim, err)
		return Unknown
	}
	return got
}

// checkAndKeep checks r's history within requireTimeout and, when
// EnvVisualize names a directory, keeps the verdict's picture there and
// logs where: the part of Judge and the Require helpers that is the same.
func checkAndKeep(t Logger, r *Recorder, claim string) (Verdict, porcupine.LinearizationInfo, error) {
	t.Helper()
	got, info, err := Check(context.Background(), r.Operations(), r.initial, requireTimeout)
	if err != nil {
		return got, info, err
	}
	if dir := os.Getenv(EnvVisualize); dir != "" {
		if path, err := keep(dir, claim, r.initial, info); err != nil {
			t.Logf("%v", err)
		} else {
			t.Logf("%s: porcupine visualization of the verdict %v: %s", claim, got, path)
		}
	}
	return got, info, nil
}

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
	got, info, err := checkAndKeep(t, r, claim)
	if err != nil {
		// The checker gave no verdict (it timed out): the claim is not
		// shown, not refuted.
		t.Attr(claims.VerdictKey(claim), claims.VerdictNotShown)
		t.Errorf("%s not shown: linearizability check failed: %v", claim, err)
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
	// porcupine's verdict on the recorded history is the claim's own
	// observation.
	t.Attr(claims.VerdictKey(claim), claims.VerdictRefuted)
	t.Errorf("%s refuted: history is %v; want %v", claim, got, want)
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

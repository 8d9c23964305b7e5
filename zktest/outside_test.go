package zktest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/server/reaper"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// TestOutsideModule builds a scratch module outside the repository that
// requires github.com/zk19/zk19 (replaced by this checkout), and runs its
// test: zktest works from another module, with no TestMain of the harness.
// (locktest's TestOutsideModule runs the same test beside locktest's, in
// one module that imports both.)
func TestOutsideModule(t *testing.T) {
	dir := outsideModule(t)
	cmd := exec.Command("go", "test", "-v", "-count=1", "-mod=mod", "-timeout", "5m", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLostCreateReply") {
		t.Fatalf("go test in the outside module: got %v:\n%s\nwant TestLostCreateReply passed, not skipped", err, out)
	}
}

// TestOutsideModuleInterrupted: the outside module's test binary, which has
// no TestMain of the harness, gets SIGINT while its server is being made
// (ZK19_INTERRUPT_AT): zktest's own handler stops it, the binary exits
// with 130, and nothing of it is left (no process, container or run dir
// with its owner mark).
func TestOutsideModuleInterrupted(t *testing.T) {
	dir := outsideModule(t)
	build := exec.Command("go", "test", "-c", "-mod=mod", "-o", "outside.test", ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	point := "process-start"
	if b, err := zkserver.Resolve(); err == nil && b.Kind == zkserver.Container {
		point = "container-create"
	}
	cmd := exec.Command(filepath.Join(dir, "outside.test"), "-test.run=TestLostCreateReply", "-test.v")
	cmd.Env = append(os.Environ(), zkserver.EnvInterruptAt+"="+point)
	out, err := cmd.CombinedOutput()
	if b, _ := zkserver.Resolve(); b.Kind == zkserver.External {
		t.Skipf("the external backend makes no server to interrupt; the run said:\n%s", out)
	}
	if cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("the interrupted outside test: got %v:\n%s\nwant exit status 130 from zktest's handler", err, out)
	}
	left, lerr := reaper.Leftovers(cmd.Process.Pid)
	if lerr != nil || len(left) > 0 {
		t.Fatalf("left by the interrupted outside test: got %v (%v); want nothing", left, lerr)
	}
}

// outsideModule writes the scratch module into a temp dir and returns it.
func outsideModule(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the outside module builds and runs a test binary of its own")
	}
	_, here, _, _ := runtime.Caller(0)
	repo := filepath.Dir(filepath.Dir(here))
	dir := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	zkreq := ""
	for _, l := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "github.com/go-zookeeper/zk" {
			zkreq = "require github.com/go-zookeeper/zk " + f[1] + "\n"
		}
	}
	mod := "module example.com/outside\n\ngo 1.26.0\n\nrequire github.com/zk19/zk19 v0.0.0\n" + zkreq +
		"\nreplace github.com/zk19/zk19 => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	test, err := os.ReadFile(filepath.Join(repo, "testdata", "outside", "zktest_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "outside_test.go": test} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

package zktest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOutsideModule builds a scratch module outside the repository that
// requires github.com/zk19/zk19 (replaced by this checkout), and runs its
// test: zktest works from another module, with no TestMain of the harness.
func TestOutsideModule(t *testing.T) {
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
	test, err := os.ReadFile(filepath.Join(repo, "testdata", "outside", "zktest", "outside_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "outside_test.go": test} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-v", "-count=1", "-mod=mod", "-timeout", "5m", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLostCreateReply") {
		t.Fatalf("go test in the outside module: got %v:\n%s\nwant TestLostCreateReply passed, not skipped", err, out)
	}
}

package locktest_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// TestOutsideModule: a module outside this repository (a copy of
// testdata/outside in a temporary directory, whose go.mod replaces
// github.com/zk19/zk19 by this repository) imports zktest and locktest:
// it starts a server and loses a create's reply (zktest), runs every
// scenario against go-zookeeper's zk.Lock (locktest), and gets the verdicts
// of the peer table's go-zookeeper column as the record of this backend
// publishes it (EVIDENCE.md, or EVIDENCE-container.md).
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: it builds and runs a module of its own")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	record := "EVIDENCE.md"
	if harness.Backend.Kind == zkserver.Container {
		record = "EVIDENCE-container.md"
	}
	want := publishedColumn(t, filepath.Join(repo, record), "go-zookeeper")
	got := outsideVerdicts(t, repo)
	if len(got) != len(want) {
		t.Errorf("got %d verdicts from the outside module; want %d, one a row of the table", len(got), len(want))
	}
	for id, w := range want {
		if g := got[id]; g != w {
			t.Errorf("scenario %s: got %q from the outside module; want %q (the table's go-zookeeper column)", id, g, w)
		}
	}
}

// outsideVerdicts builds the outside module in a temporary directory and
// returns the verdicts its test wrote, by scenario.
func outsideVerdicts(t *testing.T, repo string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, name := range []string{"locktest_test.go", "zktest_test.go"} {
		src, err := os.ReadFile(filepath.Join(repo, "testdata/outside", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = src
	}
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The repository's requirements, as the outside module's own: its
	// build then needs nothing that is not in the module cache already.
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.Replace(string(gomod), "module github.com/zk19/zk19", "module example.com/outside", 1) +
		"\nrequire github.com/zk19/zk19 v0.0.0\n\nreplace github.com/zk19/zk19 => " + repo + "\n"
	files["go.mod"], files["go.sum"] = []byte(mod), sum
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "verdicts.txt")
	cmd := exec.Command("go", "test", "-v", "-count=1", "-timeout=10m", ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "ZK19_OUTSIDE_VERDICTS="+out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in the outside module: %v\n%s", err, b)
	}
	// The same module imports zktest too: its lost create reply took.
	if !strings.Contains(string(b), "--- PASS: TestLostCreateReply") {
		t.Fatalf("go test in the outside module: got no pass of zktest's TestLostCreateReply:\n%s\nwant it passed, not skipped", b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("the outside module's verdicts: %v", err)
	}
	defer f.Close()
	got := map[string]string{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		id, v, _ := strings.Cut(sc.Text(), " ")
		got[id] = v
	}
	return got
}

// publishedColumn reads the column of recipe (a header cell's start) from
// the table "How other recipes fare" in the evidence file: each row's
// scenario ID and its verdict (kept, broke or n/a).
func publishedColumn(t *testing.T, evidence, recipe string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(evidence)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## How other recipes fare\n")
	if !ok {
		t.Fatalf("%s: no section \"How other recipes fare\"", evidence)
	}
	col := -1
	row := regexp.MustCompile(`^\*\*([a-z0-9-]+)\*\*`)
	verdict := regexp.MustCompile(`^\**(kept|broke|n/a)\**:`)
	out := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") {
			if len(out) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if col < 0 {
			for i, c := range cells {
				if strings.HasPrefix(c, recipe) {
					col = i
				}
			}
			continue
		}
		m := row.FindStringSubmatch(cells[0])
		if m == nil || col >= len(cells) {
			continue
		}
		if v := verdict.FindStringSubmatch(cells[col]); v != nil {
			out[m[1]] = v[1]
		}
	}
	if col < 0 || len(out) == 0 {
		t.Fatalf("%s: got no column %q in the table \"How other recipes fare\"", evidence, recipe)
	}
	return out
}

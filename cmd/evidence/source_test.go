package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gitRepo makes a repository in a temporary directory with one commit of
// file a, and returns it and the commit.
func gitRepo(t *testing.T) (dir, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("skipped: no git: %v", err)
	}
	dir = t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=zk19", "-c", "user.email=zk19@example.invalid"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a")
	git("commit", "-q", "-m", "a")
	return dir, git("rev-parse", "HEAD")
}

// headers renders both files' headers for a report made in the tree tr.
func headers(t *testing.T, tr Tree) (en, zh string) {
	t.Helper()
	ix, rn := fixture(t)
	h := rn.header()
	r := report{ix: ix, run: rn, h: h, vs: verdicts(ix, rn, h), peers: peers(rn), m: Meta{Generator: "go run ./cmd/evidence", Index: "claims.json", Tree: tr}}
	var e, z bytes.Buffer
	writeHeader(&e, r, english)
	writeHeader(&z, r, chinese)
	return e.String(), z.String()
}

// TestHeaderNamesTheCommitAndItsChanges: EVIDENCE.md and EVIDENCE.zh.md
// name the commit they were made from (git rev-parse HEAD) and say whether
// the tree had changes (git status --porcelain), naming them.
func TestHeaderNamesTheCommitAndItsChanges(t *testing.T) {
	dir, commit := gitRepo(t)
	clean := gitTree(dir)
	if clean.Commit != commit || len(clean.Changes) != 0 || clean.Err != "" {
		t.Fatalf("clean tree: %+v; want commit %s, no changes", clean, commit)
	}
	en, zh := headers(t, clean)
	for _, want := range []string{"- commit: `" + commit + "`; the tree had no changes (git status --porcelain printed nothing)\n"} {
		if !strings.Contains(en, want) {
			t.Errorf("EVIDENCE.md's header lacks %q:\n%s", want, en)
		}
	}
	if want := "- 提交：`" + commit + "`；工作树没有改动"; !strings.Contains(zh, want) {
		t.Errorf("EVIDENCE.zh.md's header lacks %q:\n%s", want, zh)
	}

	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirty := gitTree(dir)
	en, zh = headers(t, dirty)
	if want := "- commit: `" + commit + "`; the tree had changes (git status --porcelain: 2): `M a`, `?? b`\n"; !strings.Contains(en, want) {
		t.Errorf("EVIDENCE.md's header after changing a and adding b lacks %q:\n%s", want, en)
	}
	if want := "- 提交：`" + commit + "`；工作树有改动（`git status --porcelain` 列出 2 项）：`M a`, `?? b`\n"; !strings.Contains(zh, want) {
		t.Errorf("EVIDENCE.zh.md's header after changing a and adding b lacks %q:\n%s", want, zh)
	}

	none := gitTree(t.TempDir())
	if en, _ := headers(t, none); !strings.Contains(en, "- commit: unknown (git rev-parse HEAD: ") {
		t.Errorf("outside a repository: header %q; want the commit unknown, with git's reason", en)
	}
}

// TestRunNamesItsCommit: the file run writes names the commit of the tree
// it ran in.
func TestRunNamesItsCommit(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	out, zh := filepath.Join(dir, "EVIDENCE.md"), filepath.Join(dir, "EVIDENCE.zh.md")
	run([]string{"-C", "../..", "-index", mustAbs(t, "testdata/claims.json"), "-json", mustAbs(t, "testdata/run.json"), "-o", out, "-zh", zh}, &stderr)
	head := gitTree("../..")
	if head.Commit == "" {
		t.Skipf("skipped: the module is not in a git work tree: %s", head.Err)
	}
	for file, re := range map[string]*regexp.Regexp{
		out: regexp.MustCompile("(?m)^- commit: `" + head.Commit + "`; the tree had (no )?changes"),
		zh:  regexp.MustCompile("(?m)^- 提交：`" + head.Commit + "`；工作树(没)?有改动"),
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		if !re.Match(b) {
			t.Errorf("%s names no commit line matching %s:\n%s", filepath.Base(file), re, b[:min(len(b), 800)])
		}
	}
}

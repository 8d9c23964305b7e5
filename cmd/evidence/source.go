package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// Tree is the source a record was made from: the commit checked out where
// the generator ran, and the paths git status --porcelain lists there
// (uncommitted changes and untracked files), as cmd/mutants names the
// commit of MUTANTS.md.
type Tree struct {
	Commit  string   // git rev-parse HEAD; "" when unknown
	Changes []string // git status --porcelain's lines; none for a clean tree
	Err     string   // why the commit is unknown
}

// gitTree reads the tree in dir.
func gitTree(dir string) Tree {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return Tree{Err: "git rev-parse HEAD: " + errText(err)}
	}
	t := Tree{Commit: strings.TrimSpace(string(out))}
	st, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if err != nil {
		return Tree{Commit: t.Commit, Err: "git status --porcelain: " + errText(err)}
	}
	for _, l := range strings.Split(string(st), "\n") {
		if strings.TrimSpace(l) != "" {
			t.Changes = append(t.Changes, strings.TrimSpace(l))
		}
	}
	return t
}

func errText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return err.Error()
}

// maxChanges is how many changed paths a header names.
const maxChanges = 5

// changed names the first maxChanges changes, and how many more there are.
func (t Tree) changed(more func(n int) string) string {
	cs := t.Changes
	var names []string
	for i, c := range cs {
		if i == maxChanges {
			names = append(names, more(len(cs)-maxChanges))
			break
		}
		names = append(names, code(c))
	}
	return strings.Join(names, ", ")
}

// line is the header's commit line in English.
func (t Tree) line() string {
	switch {
	case t.Commit == "":
		return fmt.Sprintf("- commit: unknown (%s)\n", t.Err)
	case t.Err != "":
		return fmt.Sprintf("- commit: %s; whether the tree had changes is unknown (%s)\n", code(t.Commit), t.Err)
	case len(t.Changes) == 0:
		return fmt.Sprintf("- commit: %s; the tree had no changes (git status --porcelain printed nothing)\n", code(t.Commit))
	}
	return fmt.Sprintf("- commit: %s; the tree had changes (git status --porcelain: %d): %s\n", code(t.Commit), len(t.Changes),
		t.changed(func(n int) string { return fmt.Sprintf("and %d more", n) }))
}

// lineZh is the header's commit line in Chinese.
func (t Tree) lineZh() string {
	switch {
	case t.Commit == "":
		return fmt.Sprintf("- 提交：未知（%s）\n", t.Err)
	case t.Err != "":
		return fmt.Sprintf("- 提交：%s；不知道工作树有没有改动（%s）\n", code(t.Commit), t.Err)
	case len(t.Changes) == 0:
		return fmt.Sprintf("- 提交：%s；工作树没有改动（git status --porcelain 无输出）\n", code(t.Commit))
	}
	return fmt.Sprintf("- 提交：%s；工作树有改动（git status --porcelain 列出 %d 项）：%s\n", code(t.Commit), len(t.Changes),
		t.changed(func(n int) string { return fmt.Sprintf("另有 %d 项", n) }))
}

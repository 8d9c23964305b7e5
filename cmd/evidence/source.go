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

// line is the header's commit line in l.
func (t Tree) line(l *lang) string {
	switch {
	case t.Commit == "":
		return fmt.Sprintf(l.commit[0], t.Err)
	case t.Err != "":
		return fmt.Sprintf(l.commit[1], code(t.Commit), t.Err)
	case len(t.Changes) == 0:
		return fmt.Sprintf(l.commit[2], code(t.Commit))
	}
	return fmt.Sprintf(l.commit[3], code(t.Commit), len(t.Changes),
		t.changed(func(n int) string { return fmt.Sprintf(l.moreChanges, n) }))
}

package housecheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// pathSpan is a backticked path: a first directory, a slash and more,
// maybe a glob, maybe a :line or :line-line after a file.
var pathSpan = regexp.MustCompile(`^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.*/-]*?)(?::[0-9]+(?:-[0-9]+)?)?$`)

// CheckPaths returns one line per span that names a path under one of the
// module's top directories (internal/, lock/, testdata/, docs/, .ci/, …)
// that does not exist: a package, directory or file gone or never made, or
// a glob that matches nothing. A file's :line is not checked, only its file.
func CheckPaths(root, file string, spans []Span) []string {
	tops := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		return []string{fmt.Sprintf("%s: reading the module's root: %v", file, err)}
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			tops[e.Name()] = true
		}
	}
	var out []string
	for _, s := range spans {
		m := pathSpan.FindStringSubmatch(s.Text)
		if m == nil || !tops[m[1]] {
			continue
		}
		if !exists(filepath.Join(root, m[1], m[2])) {
			out = append(out, fmt.Sprintf("%s:%d: `%s`: no such package, directory or file in the module", file, s.Line, s.Text))
		}
	}
	return out
}

func exists(path string) bool {
	if strings.Contains(path, "*") {
		matches, err := filepath.Glob(path)
		return err == nil && len(matches) > 0
	}
	_, err := os.Stat(path)
	return err == nil
}

// Named says which packages of the module the spans name by their
// directory (`internal/server/tb`, `lock/`), the root package by its name (zk19),
// and returns the directories of the others, the ones not named.
func (ix *Index) Named(spans []Span) (named, missing []string) {
	seen := map[string]bool{}
	for _, s := range spans {
		seen[strings.TrimSuffix(s.Text, "/")] = true
	}
	for dir := range ix.ByDir {
		name := dir
		if dir == "." {
			name = Root
		}
		if seen[name] {
			named = append(named, dir)
		} else {
			missing = append(missing, dir)
		}
	}
	return named, missing
}

package housecheck

import (
	"fmt"
	"regexp"
	"strings"
)

// A Span is one backticked piece of Markdown outside fenced code blocks.
type Span struct {
	Line int    // 1-based
	Text string // between the backticks
	Row  string // in a table row whose first cell is a backticked directory: that directory
}

var (
	inline   = regexp.MustCompile("`([^`\n]+)`")
	rowDir   = regexp.MustCompile("^\\|\\s*`([a-z0-9_./]+)`")
	goName   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(.*\))?$`)
	camel    = regexp.MustCompile(`^(?:[a-z]+[A-Z0-9]|[A-Z][a-z0-9]+[A-Z])[A-Za-z0-9_]*$`)
	fileName = regexp.MustCompile(`\.(go|md|java|py|sh|cfg|txt|json|mod|sum|svg|png|jar|zh)$`)
)

// Spans reads the backticked pieces of a Markdown text.
func Spans(markdown string) []Span {
	var out []Span
	fenced := false
	for i, l := range strings.Split(markdown, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		row := ""
		if m := rowDir.FindStringSubmatch(l); m != nil {
			row = m[1]
		}
		for _, m := range inline.FindAllStringSubmatch(l, -1) {
			out = append(out, Span{Line: i + 1, Text: m[1], Row: row})
		}
	}
	return out
}

// Foreign names, written in the docs as names of what zk19 is compared
// with or runs, not of this module: each with where it belongs.
var Foreign = map[string]string{
	"InterProcessMutex":       "Curator's lock recipe (Java)",
	"Lock":                    "kazoo's and go-zookeeper's lock",
	"TryLock":                 "go-zookeeper's zk.Lock",
	"Unlock":                  "go-zookeeper's zk.Lock",
	"getChildren":             "a ZooKeeper operation",
	"getData":                 "a ZooKeeper operation",
	"tickTime":                "a zoo.cfg key",
	"minSessionTimeout":       "a zoo.cfg key",
	"zk19example":             "the peer scenarios' example recipe name",
	"javac":                   "the JDK's compiler",
	"ConnectionStateListener": "Curator's session state callback (Java)",
	"StateDisconnected":       "go-zookeeper's zk.StateDisconnected",
	"zk":                      "go-zookeeper's package",
}

// Root is the name of the module's root package: a package no one
// imports, so "zk19.x" in the docs is an attribute key, not Go.
const Root = "zk19"

// Check returns one line per span that looks like a Go name of this module
// and that the module does not declare, "file:line: ..." as go vet writes.
func (ix *Index) Check(file string, spans []Span) []string {
	var out []string
	for _, s := range spans {
		if why := ix.stale(s); why != "" {
			out = append(out, fmt.Sprintf("%s:%d: `%s`: %s", file, s.Line, s.Text, why))
		}
	}
	return out
}

func (ix *Index) stale(s Span) string {
	m := goName.FindStringSubmatch(s.Text)
	if m == nil || fileName.MatchString(s.Text) {
		return ""
	}
	parts := strings.Split(m[1], ".")
	if _, ok := Foreign[parts[0]]; ok && len(parts) == 1 {
		return ""
	}
	if len(parts) > 1 {
		if why := ix.staleQualifier(parts[0], s); why != "" {
			return why
		}
		return ix.staleQualified(parts)
	}
	return ix.staleBare(parts[0], s, m[1] != s.Text)
}

// staleQualified judges pkg.Name[.Member] and Type.Member.
func (ix *Index) staleQualified(parts []string) string {
	first, second := parts[0], parts[1]
	if first == Root {
		return ""
	}
	if pkgs := ix.ByName[first]; len(pkgs) > 0 && isLower(first) {
		var declaring []*Package
		for _, p := range pkgs {
			if p.Top[second] {
				declaring = append(declaring, p)
			}
		}
		if len(declaring) == 0 {
			return fmt.Sprintf("package %s (%s) declares no %s", first, dirs(pkgs), second)
		}
		if len(parts) > 2 && !anyMember(declaring, second, parts[2]) {
			return fmt.Sprintf("%s.%s has no field or method %s", first, second, parts[2])
		}
		return ""
	}
	var types []*Package
	for _, p := range ix.ByDir {
		if p.Types[first] {
			types = append(types, p)
		}
	}
	if len(types) > 0 && !anyMember(types, first, second) {
		return fmt.Sprintf("type %s (declared in %s) has no field or method %s", first, dirs(types), second)
	}
	return ""
}

// staleBare judges a name without a qualifier: in the package table's row
// of a directory, it must be that package's (or a parent's or child's), or
// name a package of the module;
// elsewhere, a camelCase name or a call must be declared in the module
// (a package's own name is one of the module's).
func (ix *Index) staleBare(name string, s Span, called bool) string {
	if s.Row != "" {
		if p := ix.ByDir[s.Row]; p != nil && isName(name) && len(ix.ByName[name]) == 0 {
			for _, q := range ix.ByDir {
				if related(p.Dir, q.Dir) && q.Declares(name) {
					return ""
				}
			}
			return fmt.Sprintf("in the row of %s: neither it nor a package under or above it declares %s", s.Row, name)
		}
	}
	if !camel.MatchString(name) && !called || len(ix.ByName[name]) > 0 && !called {
		return "" // not Go-like, or a package's own name (zk19, the root's)
	}
	for _, p := range ix.ByDir {
		if p.Declares(name) {
			return ""
		}
	}
	return "declared nowhere in the module (at package level, or as a field or method)"
}

func isName(s string) bool { return s != "" && !strings.ContainsAny(s, "/-") }

func isLower(s string) bool { return s != "" && s[0] >= 'a' && s[0] <= 'z' }

func related(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

func anyMember(pkgs []*Package, typ, name string) bool {
	for _, p := range pkgs {
		if p.HasMember(typ, name) {
			return true
		}
	}
	return false
}

func dirs(pkgs []*Package) string {
	var ds []string
	for _, p := range pkgs {
		ds = append(ds, p.Dir)
	}
	return strings.Join(ds, ", ")
}

// staleQualifier: in the package table's row of a directory, x.Y names a
// package or a type of the module, or something listed as foreign.
func (ix *Index) staleQualifier(x string, s Span) string {
	if s.Row == "" || x == Root || len(ix.ByName[x]) > 0 {
		return ""
	}
	if _, ok := Foreign[x]; ok {
		return ""
	}
	for _, p := range ix.ByDir {
		if p.Types[x] {
			return ""
		}
	}
	return fmt.Sprintf("in the row of %s: %s is neither a package nor a type of the module", s.Row, x)
}

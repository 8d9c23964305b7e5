package locktest

// Citing a peer's source: a broke or n/a cell names the line of the peer's
// code responsible, and the test checks the citation against the code that
// ran, never against memory: go-zookeeper's module as this module builds
// it, the kazoo package the driver imported, and for Curator the class
// files the driver loaded (their line tables) and, where a clone is at
// hand, the source at the tag apache-curator-5.4.0.

import (
	"archive/zip"
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/zk19/zk19/internal/server/zkserver"
)

type goModule struct{ version, dir string }

// goZKModule is go-zookeeper as this module builds it.
var goZKModule = sync.OnceValue(func() goModule {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "github.com/go-zookeeper/zk").Output()
	if err != nil {
		return goModule{version: "(version unknown: " + err.Error() + ")"}
	}
	v, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return goModule{version: v, dir: dir}
})

// peerLibraries maps a driver recipe's name to the library its driver
// loaded, as its hello said (kazoo's package dir, Curator's recipes jar).
var peerLibraries sync.Map

// curatorTag is the release whose source Curator's citations quote: the
// version Debian's libcurator-recipes-java 5.4.0 is built from, whose line
// numbers its class files carry.
const curatorTag = "apache-curator-5.4.0"

// envCuratorSource names a clone of github.com/apache/curator (a work tree
// or a bare git dir) in which the text of Curator's citations is checked at
// curatorTag; without it only their line numbers are checked, against the
// classes that ran.
const envCuratorSource = "ZK19_CURATOR_SRC"

// citeFrom cites the line src gives for this scene's recipe, if any: the
// peer code responsible for an outcome, by recipe name.
func (sc *peerScene) citeFrom(src map[string][2]string) string {
	if c, ok := src[sc.r.name]; ok {
		return sc.cite(c[0], c[1])
	}
	return ""
}

// cite returns ref, "file:first-last" in the scene's peer, after checking
// it: for go-zookeeper and kazoo, that those lines of the module or package
// that ran hold snippet; for Curator (ref is a path in its repository),
// that the classes the driver loaded have code on those lines and, with
// ZK19_CURATOR_SRC, that the lines hold snippet at the tag. A citation that
// does not hold fails the test.
func (sc *peerScene) cite(ref, snippet string) string {
	sc.t.Helper()
	file, a, b, err := splitRef(ref)
	if err != nil {
		sc.t.Errorf("citation %s of %s: %v", ref, sc.r.name, err)
		return ref
	}
	if sc.r.name == recipeCurator {
		if err := checkCuratorCite(file, a, b, snippet); err != nil {
			sc.t.Errorf("citation %s of Curator: %v", ref, err)
		}
		return ref
	}
	root := goZKModule().dir
	if lib, ok := peerLibraries.Load(sc.r.name); ok {
		root = lib.(string)
	}
	text, err := sourceLines(filepath.Join(root, file), a, b)
	switch {
	case root == "" || err != nil:
		sc.t.Errorf("citation %s of %s: cannot read it (root %q): %v", ref, sc.r.name, root, err)
	case !strings.Contains(text, snippet):
		sc.t.Errorf("citation %s of %s: got lines %q; want them to hold %q", ref, sc.r.name, text, snippet)
	}
	return ref
}

// splitRef splits "file:first-last" (or "file:line").
func splitRef(ref string) (file string, first, last int, err error) {
	file, lines, _ := strings.Cut(ref, ":")
	f, l, _ := strings.Cut(lines, "-")
	first, errA := strconv.Atoi(f)
	last, errB := strconv.Atoi(l)
	if l == "" {
		last, errB = first, nil
	}
	if errA != nil || errB != nil || last < first {
		return "", 0, 0, fmt.Errorf("not file:first-last")
	}
	return file, first, last, nil
}

// sourceLines returns lines first..last (1-based) of file, joined.
func sourceLines(file string, first, last int) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan() && n <= last; n++ {
		if n >= first {
			b.WriteString(sc.Text())
			b.WriteString("\n")
		}
	}
	return b.String(), sc.Err()
}

// checkCuratorCite checks a citation of Curator's source, file being its
// path in the repository (curator-recipes/src/main/java/…/LockInternals.java).
func checkCuratorCite(file string, first, last int, snippet string) error {
	lines, err := curatorLines(file)
	if err != nil {
		return err
	}
	code := false
	for n := first; n <= last; n++ {
		code = code || lines[n]
	}
	if !code {
		return fmt.Errorf("the classes the driver loaded have no code on lines %d-%d of %s", first, last, file)
	}
	src := os.Getenv(envCuratorSource)
	if src == "" {
		return nil
	}
	out, err := exec.Command("git", "-C", src, "show", curatorTag+":"+file).Output()
	if err != nil {
		return fmt.Errorf("%s at %s in %s: %v", file, curatorTag, src, err)
	}
	text := strings.Split(string(out), "\n")
	if last > len(text) {
		return fmt.Errorf("%s at %s has %d lines", file, curatorTag, len(text))
	}
	if got := strings.Join(text[first-1:last], "\n"); !strings.Contains(got, snippet) {
		return fmt.Errorf("got lines %q at %s; want them to hold %q", got, curatorTag, snippet)
	}
	return nil
}

var (
	curatorLineCache sync.Map // file -> map[int]bool
	javapLine        = regexp.MustCompile(`^\s*line (\d+): \d+$`)
)

// curatorLines returns the source lines that have code in the class of
// file and its nested classes, as javap reads the line tables of the jar
// the driver loaded (Curator's module jars sit side by side).
func curatorLines(file string) (map[int]bool, error) {
	if v, ok := curatorLineCache.Load(file); ok {
		return v.(map[int]bool), nil
	}
	module, class, ok := strings.Cut(file, "/src/main/java/")
	if !ok || !strings.HasSuffix(class, ".java") {
		return nil, fmt.Errorf("%s is not a path under <module>/src/main/java", file)
	}
	lib, ok := peerLibraries.Load(recipeCurator)
	if !ok {
		return nil, fmt.Errorf("no Curator driver said hello yet")
	}
	jar := filepath.Join(filepath.Dir(lib.(string)), module+".jar")
	classes, err := classesOf(jar, strings.TrimSuffix(class, ".java"))
	if err != nil {
		return nil, err
	}
	javac, _, ok := zkserver.FindJDK()
	if !ok {
		return nil, fmt.Errorf("no JDK to run javap with")
	}
	out, err := exec.Command(filepath.Join(filepath.Dir(javac), "javap"), append([]string{"-p", "-l", "-cp", jar}, classes...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("javap %s: %v", jar, err)
	}
	lines := map[int]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := javapLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			lines[n] = true
		}
	}
	curatorLineCache.Store(file, lines)
	return lines, nil
}

// classesOf lists the class and its nested classes (Outer$…) in jar, as
// javap names them.
func classesOf(jar, class string) ([]string, error) {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var out []string
	for _, f := range z.File {
		name := strings.TrimSuffix(f.Name, ".class")
		if name == class || strings.HasPrefix(name, class+"$") {
			out = append(out, strings.ReplaceAll(name, "/", "."))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no class %s", jar, class)
	}
	return out, nil
}

// Curator's source files, as paths in its repository.
const (
	curatorLocks = "curator-recipes/src/main/java/org/apache/curator/framework/recipes/locks/"
	curatorImps  = "curator-framework/src/main/java/org/apache/curator/framework/imps/"
)

// curatorSort is where InterProcessMutex orders the lock dir: by what
// follows the last "lock-" of each name, compared as strings
// (fixForSorting), not as numbers, and with every child a candidate.
var curatorSort = [2]string{curatorLocks + "LockInternals.java:162-165",
	"return sorter.fixForSorting(lhs, lockName).compareTo(sorter.fixForSorting(rhs, lockName));"}

// curatorBecause gives a Curator cell without a citation the line of
// Curator's source that made its outcome, kept cells too: every cell of
// Curator's column names the code responsible.
func (sc *peerScene) curatorBecause(c peerCell, ref, snippet string) peerCell {
	if sc.r.name == recipeCurator && c.source == "" {
		c.source = sc.cite(ref, snippet)
	}
	return c
}

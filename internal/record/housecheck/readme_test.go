package housecheck_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/zk19/zk19/internal/proof/claims"
)

// A frontDoor is one of the two front doors and what its shape asks of it.
type frontDoor struct {
	file     string   // README.md, README.zh.md
	maxUnits int      // the longest prose sentence, in words (a Han character is one)
	headings []string // its ## headings, in this order and no other
	attr     string   // the attribute whose record line the proof section shows
	record   string   // the record its claims link to
	peers    string   // the link to the peer table
}

var readmes = []frontDoor{
	{file: "README.md", maxUnits: 40, attr: "zk19.evidence", record: "EVIDENCE.md",
		peers:    "EVIDENCE.md#how-other-recipes-fare",
		headings: []string{"How to read one proof", "The claims, section by section", "For maintainers and service engineers", "Use the recipe and the fence in your service"}},
	{file: "README.zh.md", maxUnits: 80, attr: "zk19.evidence.zh", record: "EVIDENCE.zh.md",
		peers:    "EVIDENCE.zh.md#其他配方的表现",
		headings: []string{"怎样读一条证明", "按文章章节排列的论断", "维护者和服务工程师的入口", "在服务中使用锁配方与 fence"}},
}

// testCommand is the README's test command; .ci/run runs it on each backend.
const testCommand = "go test -count=1 -v ./..."

// TestTheReadmesKeepTheirShape holds README.md, the front door of the
// article's reader, and README.zh.md, the same for its Chinese reader, to
// one shape:
//
//   - at most 150 lines;
//   - no prose sentence over 40 words in README.md, over 80 in README.zh.md,
//     where a Han character counts as a word, a code span as one word and a
//     link as its text. Prose is every line outside fenced code blocks but a
//     table row ("|"), an image ("![") and an HTML comment; a heading and a
//     list item are paragraphs of their own (so a link list's lines are
//     sentences too, and short). A sentence ends at ". ", "? ", "! ", at
//     。？！ and at its paragraph's end;
//   - in this order: the title; one paragraph saying what this is; the two
//     commands in one sh block (the first sets up and writes EVIDENCE.md and
//     EVIDENCE.zh.md, the second is the test command, which .ci/run runs);
//     then exactly the ## headings of readmes: how to read one proof (an
//     Example of the root package, its -run command, its output exactly as
//     its Output comment, its attribute line, a link to the record, which
//     names the Example), the
//     claims (one list item per section of testdata/claims.json, in the
//     index's order, with the article's title, its claims in the order of
//     their sentences, a link to doc.go and one to the record), one line per
//     page for maintainers (every docs/*.md but the mutation runs' records,
//     MUTANTS.md, the package docs of lock, fence and fence/fencehttp, the
//     peer table), and the program for service engineers;
//   - every relative link and image names a file that exists, and a link to
//     a heading of a Markdown file (#anchor) names one it has.
func TestTheReadmesKeepTheirShape(t *testing.T) {
	ix, err := claims.Load(filepath.Join(root, "testdata", "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "# The README's test command: "+testCommand+"\n") || !strings.Contains(string(ci), " "+testCommand+" ") {
		t.Errorf(".ci/run: got no comment naming the README's test command %q, or no line running it; want both", testCommand)
	}
	for _, r := range readmes {
		t.Run(r.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root, r.file))
			if err != nil {
				t.Fatalf("%v; want %s beside README.md, of the same shape", err, r.file)
			}
			md := parse(string(b))
			if n := len(md.lines); n > 150 {
				t.Errorf("%s: got %d lines; want at most 150", r.file, n)
			}
			checkSentences(t, r, md)
			if checkHeadings(t, r, md) {
				checkCommands(t, r, md)
				checkProof(t, r, md)
				checkClaims(t, r, md, ix)
				checkMaintainers(t, r, md)
			}
			checkLinks(t, r.file, md)
		})
	}
}

// markdown is a README read line by line: which lines are inside fenced
// code blocks, and where each ## section starts.
type markdown struct {
	lines   []string
	fenced  []bool   // the line is a fence or inside one
	heads   []string // ## headings, in order
	headsAt []int    // their line indexes
}

func parse(text string) *markdown {
	md := &markdown{lines: strings.Split(strings.TrimSuffix(text, "\n"), "\n")}
	in := false
	for i, l := range md.lines {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		md.fenced = append(md.fenced, in || fence)
		if fence {
			in = !in
		}
		if !in && !fence && strings.HasPrefix(l, "## ") {
			md.heads = append(md.heads, strings.TrimPrefix(l, "## "))
			md.headsAt = append(md.headsAt, i)
		}
	}
	return md
}

// section returns the line indexes [from, to) of the ## section titled
// head, its heading excluded; -1, -1 when there is none.
func (md *markdown) section(head string) (int, int) {
	i := slices.Index(md.heads, head)
	if i < 0 {
		return -1, -1
	}
	to := len(md.lines)
	if i+1 < len(md.headsAt) {
		to = md.headsAt[i+1]
	}
	return md.headsAt[i] + 1, to
}

// blocks returns the fenced blocks between lines from and to: their info
// strings and bodies.
func (md *markdown) blocks(from, to int) (infos []string, bodies []string) {
	for i := from; i < to; i++ {
		l := strings.TrimSpace(md.lines[i])
		if !strings.HasPrefix(l, "```") {
			continue
		}
		j := i + 1
		for j < len(md.lines) && !strings.HasPrefix(strings.TrimSpace(md.lines[j]), "```") {
			j++
		}
		infos = append(infos, strings.TrimPrefix(l, "```"))
		bodies = append(bodies, strings.Join(md.lines[i+1:min(j, len(md.lines))], "\n"))
		i = j
	}
	return infos, bodies
}

var (
	codeSpan  = regexp.MustCompile("`[^`]+`")
	mdLink    = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)\)`)
	sentEnd   = regexp.MustCompile(`[.?!]\s+|[。？！]`)
	listItem  = regexp.MustCompile(`^\s*(?:[-*+]|\d+\.)\s+`)
	claimID   = regexp.MustCompile(`\b[A-Z][0-9]{1,2}\b`)
	exampleNm = regexp.MustCompile("`(Example[A-Za-z0-9_]*)`")
)

// paragraph is a run of prose lines, with the line index it starts at.
type paragraph struct {
	at   int
	text string
}

// prose returns the README's paragraphs of prose (see the test's rule).
func (md *markdown) prose() []paragraph {
	var out []paragraph
	open := false
	for i, l := range md.lines {
		s := strings.TrimSpace(l)
		if md.fenced[i] || s == "" || strings.HasPrefix(s, "|") || strings.HasPrefix(s, "![") || strings.HasPrefix(s, "<!--") {
			open = false
			continue
		}
		head := strings.HasPrefix(s, "#")
		if !open || head || listItem.MatchString(l) {
			out = append(out, paragraph{at: i, text: s})
		} else {
			out[len(out)-1].text += " " + s
		}
		open = !head
	}
	return out
}

// units counts a sentence's words: a code span is one, a link its text, a
// Han character one.
func units(s string) int {
	s = codeSpan.ReplaceAllString(s, "code")
	s = mdLink.ReplaceAllString(s, "$1")
	n := 0
	var latin strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			n++
			latin.WriteByte(' ')
			continue
		}
		if unicode.IsPunct(r) && r > unicode.MaxASCII {
			r = ' '
		}
		latin.WriteRune(r)
	}
	return n + len(strings.Fields(latin.String()))
}

func checkSentences(t *testing.T, r frontDoor, md *markdown) {
	t.Helper()
	longest, at := 0, 0
	for _, p := range md.prose() {
		text := codeSpan.ReplaceAllString(p.text, "code") // a code span's dots end nothing
		text = mdLink.ReplaceAllString(text, "$1")
		for _, s := range sentEnd.Split(text, -1) {
			n := units(s)
			if n > r.maxUnits {
				t.Errorf("%s:%d: a sentence of the paragraph that starts here has %d words: %q; want at most %d", r.file, p.at+1, n, s, r.maxUnits)
			}
			if n > longest {
				longest, at = n, p.at+1
			}
		}
	}
	t.Logf("%s: the longest prose sentence has %d words (line %d)", r.file, longest, at)
}

// checkHeadings: the title first, then exactly the ## headings of r, in
// order. It says whether the sections can be looked at one by one.
func checkHeadings(t *testing.T, r frontDoor, md *markdown) bool {
	t.Helper()
	if !strings.HasPrefix(md.lines[0], "# ") {
		t.Errorf("%s:1: got %q; want the title, a # heading", r.file, md.lines[0])
	}
	if !slices.Equal(md.heads, r.headings) {
		t.Errorf("%s: ## headings %q; want %q, in this order", r.file, md.heads, r.headings)
		return false
	}
	return true
}

// checkCommands: after the title, one paragraph, then the two commands.
func checkCommands(t *testing.T, r frontDoor, md *markdown) {
	t.Helper()
	i := 1
	for i < len(md.lines) && strings.TrimSpace(md.lines[i]) == "" {
		i++
	}
	if md.fenced[i] || strings.HasPrefix(md.lines[i], "#") || listItem.MatchString(md.lines[i]) {
		t.Errorf("%s:%d: got %q; want a paragraph saying what this is, right after the title", r.file, i+1, md.lines[i])
	}
	for i < len(md.lines) && strings.TrimSpace(md.lines[i]) != "" {
		i++
	}
	for i < len(md.lines) && strings.TrimSpace(md.lines[i]) == "" {
		i++
	}
	if i == len(md.lines) || md.lines[i] != "```sh" {
		t.Fatalf("%s:%d: after the first paragraph got %q; want the two commands, a ```sh block", r.file, i+1, md.lines[min(i, len(md.lines)-1)])
	}
	_, bodies := md.blocks(i, i+1)
	var cmds []string
	for _, l := range strings.Split(bodies[0], "\n") {
		if c, _, _ := strings.Cut(l, " #"); strings.TrimSpace(c) != "" && !strings.HasPrefix(c, "#") {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	if len(cmds) != 2 || !strings.HasPrefix(cmds[0], "bash scripts/setup && go run ./cmd/evidence ") ||
		!strings.Contains(cmds[0], "-o EVIDENCE.md") || !strings.Contains(cmds[0], "-zh EVIDENCE.zh.md") || cmds[1] != testCommand {
		t.Errorf("%s:%d: commands %q; want two: the setup and the record (bash scripts/setup && go run ./cmd/evidence -o EVIDENCE.md -zh EVIDENCE.zh.md), then %q", r.file, i+2, cmds, testCommand)
	}
}

// rootExamples returns the root package's Examples by function name.
func rootExamples(t *testing.T) map[string]*doc.Example {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out := map[string]*doc.Example{}
	for _, ex := range doc.Examples(files...) {
		out["Example"+ex.Name] = ex
	}
	return out
}

// checkProof: the section on reading one proof names a root Example and
// shows how to run it, its output, its attribute line and the record.
func checkProof(t *testing.T, r frontDoor, md *markdown) {
	t.Helper()
	from, to := md.section(r.headings[0])
	text := strings.Join(md.lines[from:to], "\n")
	m := exampleNm.FindStringSubmatch(text)
	if m == nil {
		t.Errorf("%s, %q: names no Example; want one of the root package's, with its output and its line in the record", r.file, r.headings[0])
		return
	}
	name := m[1]
	ex := rootExamples(t)[name]
	if ex == nil {
		t.Errorf("%s, %q: got %s; want an Example of the root package's test files", r.file, r.headings[0], name)
		return
	}
	infos, bodies := md.blocks(from, to)
	var run, output, attr bool
	for i, body := range bodies {
		run = run || infos[i] == "sh" && strings.Contains(body, "go test -count=1 -run '^"+name+"$' -v .")
		output = output || infos[i] == "text" && body+"\n" == ex.Output
		attr = attr || infos[i] == "text" && strings.HasPrefix(body, "=== ATTR  "+name+" "+r.attr+" ")
	}
	if !run || !output || !attr {
		t.Errorf("%s, %q: for %s got its -run command %v, its output %v, its %s line %v; want all three: go test -count=1 -run '^%s$' -v . in a sh block; a text block that is its Output comment exactly:\n%s",
			r.file, r.headings[0], name, run, output, r.attr, attr, name, ex.Output)
	}
	if !slices.ContainsFunc(md.links(from, to), func(l link) bool { return l.file == r.record }) {
		t.Errorf("%s, %q: got no link to %s; want the proof's line shown in the record", r.file, r.headings[0], r.record)
	}
	if rec, err := os.ReadFile(filepath.Join(root, r.record)); err != nil || !strings.Contains(string(rec), name) {
		t.Errorf("%s, %q: %s does not name %s (%v); want the record that holds the Example's line", r.file, r.headings[0], r.record, name, err)
	}
}

// checkClaims: one list item per section of the article, in its order,
// with its claims in the order of their sentences and links to doc.go and
// the record.
func checkClaims(t *testing.T, r frontDoor, md *markdown, ix *claims.Index) {
	t.Helper()
	from, to := md.section(r.headings[1])
	last, lastKey := -1, ""
	for _, sec := range ix.Sections {
		var at []int
		for i := from; i < to; i++ {
			if listItem.MatchString(md.lines[i]) && strings.Contains(md.lines[i], sec.Name()) {
				at = append(at, i)
			}
		}
		if len(at) != 1 {
			t.Errorf("%s, %q: %d list items name %q; want one, with the article's title", r.file, r.headings[1], len(at), sec.Name())
			continue
		}
		if at[0] < last {
			t.Errorf("%s:%d: %s is listed before %s; want the sections in the article's order", r.file, at[0]+1, sec.Key, lastKey)
		}
		last, lastKey = at[0], sec.Key
		checkClaimLine(t, r, md, ix, sec, at[0])
	}
}

func checkClaimLine(t *testing.T, r frontDoor, md *markdown, ix *claims.Index, sec claims.Section, i int) {
	t.Helper()
	_, after, _ := strings.Cut(md.lines[i], sec.Name())
	got := claimID.FindAllString(mdLink.ReplaceAllString(after, ""), -1)
	var want []claims.Claim
	for _, c := range ix.Claims {
		if c.Section == sec.Key {
			want = append(want, c)
		}
	}
	slices.SortStableFunc(want, func(a, b claims.Claim) int { return ix.CompareSentences(a.Locator(), b.Locator()) })
	var wantIDs []string
	for _, c := range want {
		wantIDs = append(wantIDs, c.ID)
	}
	inOrder := slices.IsSortedFunc(got, func(a, b string) int {
		return ix.CompareSentences(ix.Claim(a).Locator(), ix.Claim(b).Locator())
	})
	if !sameSet(got, wantIDs) || !inOrder {
		t.Errorf("%s:%d: %s's claims %q; want each of its claims once, in the order of their sentences: %q", r.file, i+1, sec.Key, got, wantIDs)
	}
	var targets []string
	for _, l := range md.links(i, i+1) {
		targets = append(targets, l.file)
	}
	if !slices.Contains(targets, "doc.go") || !slices.Contains(targets, r.record) {
		t.Errorf("%s:%d: %s links %q; want doc.go and %s", r.file, i+1, sec.Key, targets, r.record)
	}
}

// sameSet says whether got holds each of want once and nothing else
// (an ID unknown to the index included).
func sameSet(got, want []string) bool {
	return len(got) == len(want) && !slices.ContainsFunc(want, func(id string) bool {
		return slices.Index(got, id) < 0
	})
}

// checkMaintainers: one line each for the docs pages, MUTANTS.md, the
// public packages' docs and the peer table.
func checkMaintainers(t *testing.T, r frontDoor, md *markdown) {
	t.Helper()
	from, to := md.section(r.headings[2])
	links := md.links(from, to)
	has := func(file string) bool { return slices.ContainsFunc(links, func(l link) bool { return l.file == file }) }
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"MUTANTS.md"}
	for _, p := range pages {
		want = append(want, "docs/"+filepath.Base(p))
	}
	for _, f := range want {
		if !has(f) {
			t.Errorf("%s, %q: no line links %s; want one line for each page a maintainer needs", r.file, r.headings[2], f)
		}
	}
	for _, pkg := range []string{"lock", "fence", "fence/fencehttp"} {
		if !slices.ContainsFunc(links, func(l link) bool { return path.Dir(l.file) == pkg && packageDoc(l.file, path.Base(pkg)) }) {
			t.Errorf("%s, %q: no link to the file of %s's package doc; want the package's own doc linked", r.file, r.headings[2], pkg)
		}
	}
	if !slices.ContainsFunc(links, func(l link) bool { return l.target == r.peers }) {
		t.Errorf("%s, %q: no link to %s; want the peer table", r.file, r.headings[2], r.peers)
	}
}

// packageDoc says whether the file holds package name's doc comment.
func packageDoc(file, name string) bool {
	b, err := os.ReadFile(filepath.Join(root, file))
	return err == nil && (strings.HasPrefix(string(b), "// Package "+name+" ") || strings.Contains(string(b), "\n// Package "+name+" "))
}

// A link is a Markdown link or image outside code: its target as written,
// and the file and anchor it names (file "" for an anchor of the README
// itself, or for another site).
type link struct {
	line           int
	target         string
	file, fragment string
	external       bool
}

func (md *markdown) links(from, to int) []link {
	var out []link
	for i := from; i < to; i++ {
		if md.fenced[i] {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(md.lines[i], ""), -1) {
			l := link{line: i + 1, target: m[2]}
			l.file, l.fragment, _ = strings.Cut(m[2], "#")
			if f, err := url.PathUnescape(l.file); err == nil {
				l.file = f
			}
			if f, err := url.PathUnescape(l.fragment); err == nil {
				l.fragment = f
			}
			l.external = strings.Contains(l.file, "://") || strings.HasPrefix(l.file, "mailto:")
			out = append(out, l)
		}
	}
	return out
}

// checkLinks: every relative link names a file that exists, and an anchor
// into a Markdown file one of its headings.
func checkLinks(t *testing.T, file string, md *markdown) {
	t.Helper()
	for _, l := range md.links(0, len(md.lines)) {
		if l.external {
			continue
		}
		target := l.file
		if target == "" {
			target = file
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
			t.Errorf("%s:%d: a link to %s: %v; want a file of the repository", file, l.line, l.target, err)
			continue
		}
		if l.fragment == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		if anchors, err := anchorsOf(target); err != nil || !anchors[l.fragment] {
			t.Errorf("%s:%d: a link to %s: %s has no heading with the anchor %q (%v); want one", file, l.line, l.target, target, l.fragment, err)
		}
	}
}

// anchorsOf returns the anchors GitHub gives the headings of a Markdown
// file: lower case, what is not a letter, digit, space, hyphen or
// underscore dropped, spaces made hyphens, "-1", "-2" after repeats.
func anchorsOf(file string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	md := parse(string(b))
	out := map[string]bool{}
	seen := map[string]int{}
	for i, l := range md.lines {
		if md.fenced[i] || !strings.HasPrefix(l, "#") {
			continue
		}
		text := mdLink.ReplaceAllString(strings.TrimLeft(l, "# "), "$1")
		var s strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				s.WriteRune(r)
			case r == ' ':
				s.WriteByte('-')
			}
		}
		a := s.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out, nil
}

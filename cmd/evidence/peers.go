package main

import (
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

// The peer table: a peer test (TestPeer…) runs one scenario with every
// recipe, one subtest per recipe, and states one evidence attribute
// (claims.AttrEvidence) per cell:
//
//	peer <scenario> | scenario | <title>
//	peer <scenario> | <recipe> [<version>] | <kept|broke|n/a> | <outcome> | <source or ->
//
// (peers/table_test.go writes them, from locktest's Results.) The table has a row per scenario, in
// the order they ran, and a column per recipe.

// peerMark opens the value of a peer table cell.
const peerMark = "peer "

// peerColumns are the recipes the table has a column for, in order; a
// recipe the run names beyond these (a driver of ZK19_PEERS, a registered Go
// recipe) gets a column after them.
var peerColumns = []string{"ours", "go-zookeeper", "kazoo", "curator"}

// Cell verdicts, as the peer tests log them.
const (
	cellKept  = "kept"
	cellBroke = "broke"
	cellNone  = "n/a"
)

// peerCell is one recipe's outcome in one scenario.
type peerCell struct {
	Recipe, Version, Verdict, Outcome, Source string
	OutcomeZh                                 string // the outcome in Chinese, when the test stated it
}

// peerRow is one scenario: its cells by recipe, and for a recipe without a
// cell, why (its subtest was skipped, or failed before it could observe).
type peerRow struct {
	ID, Title, Test string
	TitleZh         string // the title in Chinese, when the test stated it
	Cells           map[string]peerCell
	// Missing and MissingZh say why, in English and in Chinese.
	Missing, MissingZh map[string]string
}

// peerTable reads the rows from the run's peer tests, in the order they ran.
func peerTable(run *Run) []peerRow {
	var rows []peerRow
	at := map[string]int{}
	for _, name := range run.Order {
		if _, test := claims.SplitProof(name); !claims.IsPeer(test) {
			continue
		}
		res := run.Results[name]
		zhs := observationsZh(res.Attrs)
		for j, l := range observations(res.Attrs) {
			id, f, ok := peerFields(l)
			if !ok {
				continue
			}
			idZh, fZh, okZh := peerFields(zhs[j])
			if !okZh || idZh != id || len(fZh) != len(f) {
				fZh = make([]string, len(f))
			}
			i, seen := at[id]
			if !seen {
				i = len(rows)
				at[id] = i
				rows = append(rows, peerRow{ID: id, Test: name, Cells: map[string]peerCell{}})
			}
			if len(f) == 1 {
				rows[i].Title, rows[i].TitleZh = f[0], fZh[0]
				continue
			}
			recipe, version, _ := strings.Cut(f[0], " ")
			rows[i].Cells[recipe] = peerCell{Recipe: recipe, Version: version, Verdict: f[1], Outcome: f[2], Source: f[3], OutcomeZh: fZh[2]}
		}
	}
	for i := range rows {
		rows[i].Missing = missingCells(run.Results[rows[i].Test], rows[i].Cells, false)
		rows[i].MissingZh = missingCells(run.Results[rows[i].Test], rows[i].Cells, true)
	}
	return rows
}

// peerFields splits a peer table line: the scenario and, after it, either
// the title alone or recipe, verdict, outcome and source.
func peerFields(l string) (id string, fields []string, ok bool) {
	rest, ok := strings.CutPrefix(l, peerMark)
	if !ok {
		return "", nil, false
	}
	f := strings.Split(rest, " | ")
	switch {
	case len(f) == 3 && f[1] == "scenario":
		return f[0], f[2:], true
	case len(f) == 5:
		if f[4] == "-" {
			f[4] = ""
		}
		return f[0], f[1:], true
	}
	return "", nil, false
}

// missingCells says, for each column without a cell, what its subtest did
// (a skip's reason, in Chinese when zh): the table's columns, and any
// recipe the scenario ran a subtest for.
func missingCells(res *result, cells map[string]peerCell, zh bool) map[string]string {
	out := map[string]string{}
	recipes := append([]string(nil), peerColumns...)
	for _, sub := range sortedKeys(res.Subs) {
		if !contains(recipes, sub) {
			recipes = append(recipes, sub)
		}
	}
	for _, recipe := range recipes {
		if _, ok := cells[recipe]; ok {
			continue
		}
		ls := res.Subs[recipe]
		switch {
		case len(ls) == 0:
			out[recipe] = "not run"
		case anyPrefix(ls, "--- SKIP"):
			out[recipe] = "not run: " + skipReasonIn(&result{Lines: ls, Attrs: subAttrs(res.Attrs, recipe)}, zh)
		default:
			out[recipe] = "no observation: " + firstError(&result{Lines: ls})
		}
	}
	return out
}

// subAttrs are the attributes of as that subtest sub set.
func subAttrs(as []attr, sub string) []attr {
	var out []attr
	for _, a := range as {
		if a.Sub == sub {
			out = append(out, a)
		}
	}
	return out
}

func anyPrefix(ls []string, p string) bool {
	for _, l := range ls {
		if strings.HasPrefix(strings.TrimSpace(l), p) {
			return true
		}
	}
	return false
}

// columns are the recipes of the rows: peerColumns, then any other, in
// the order the run first names them.
func columns(rows []peerRow) []string {
	cols := append([]string(nil), peerColumns...)
	for _, r := range rows {
		for _, recipe := range sortedKeys(r.Cells) {
			if !contains(cols, recipe) {
				cols = append(cols, recipe)
			}
		}
		for _, recipe := range sortedKeys(r.Missing) {
			if !contains(cols, recipe) {
				cols = append(cols, recipe)
			}
		}
	}
	return cols
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// columnNames are the recipes' headers: name, version and lock object, as
// the run reported them.
var columnNames = map[string]string{
	"ours":         "ours (`lock`)",
	"go-zookeeper": "go-zookeeper %s `zk.Lock`",
	"kazoo":        "kazoo %s `Lock`",
	"curator":      "Curator %s `InterProcessMutex`",
}

func columnName(recipe string, rows []peerRow, l *lang) string {
	if recipe == "ours" && l.zh {
		return "本配方（`lock`）"
	}
	version := ""
	for _, r := range rows {
		if c, ok := r.Cells[recipe]; ok && c.Version != "" {
			version = c.Version
			break
		}
	}
	f, ok := columnNames[recipe]
	if !ok {
		return strings.TrimSpace(recipe + " " + version)
	}
	if !strings.Contains(f, "%s") {
		return f
	}
	return strings.Join(strings.Fields(fmt.Sprintf(f, version)), " ")
}

// peerWords are the peer section's words in one language.
type peerWords struct {
	peersIntro, peerTableIntro, peerHead, peerRow, noPeer, inTable string
	scenario, noCell, notRunCell, noObservationCell                string
	headlineOne, headlineMany, brokeWord                           string
	cellWords                                                      map[string]string // kept, broke, n/a
}

var englishPeers = peerWords{
	peersIntro: "\n## How other recipes fare\n\nPeer tests (named %s) run the same scenario with every recipe, one after the other " +
		"on the same server, each contender through its own client proxy, so every fault is the same bytes on the wire. " +
		"They are findings about the recipes, not proofs of a claim: a peer's failure changes no verdict above.\n\n",
	peerTableIntro: "A cell says whether the recipe **kept** a lock's guarantees in the scenario (one holder, on a node of its own session, " +
		"and the truth about whether it holds), **broke** one, or has no such feature (n/a); its words link the test. " +
		"For a peer, the source line responsible follows: go-zookeeper's at its tag on GitHub, kazoo's in the package the driver imported " +
		"(Debian's python3-kazoo, %s), Curator's at the tag %s on GitHub (Debian's libcurator-recipes-java 5.4.0 is built from it); " +
		"the test checked each cited line against the code that ran (for Curator: the line tables of the classes the driver loaded, " +
		"and the text at the tag where a clone was given in %s). " +
		"Curator's driver counts two notions of \"knows it no longer holds\" and the cells name both: the lock object's own state " +
		"(%s, %s, asked on the thread that acquired) decides the verdict; a %s that saw %s is written beside it.\n\n",
	peerHead: "\n| peer test | result | evidence |\n|---|---|---|\n", peerRow: "| %s | %s (%.1fs) | %s |\n",
	noPeer: "No peer test ran.\n", inTable: "its cells are in the table above",
	scenario: "scenario", noCell: "no cell", notRunCell: "not run", noObservationCell: "no observation: ",
	headlineOne: "In %d scenario: %s.", headlineMany: "In %d scenarios: %s.", brokeWord: "**broke**",
	cellWords: map[string]string{cellKept: cellKept, cellBroke: cellBroke, cellNone: cellNone},
}

var chinesePeers = peerWords{
	peersIntro: "\n### 其他配方的表现\n\n对照测试（名为 %s）让每个配方依次在同一台服务器上跑同一个场景，每个竞争者经过它自己的客户端代理，" +
		"所以每个故障在线路上都是相同的字节。它们是关于这些配方的发现，不是论断的证明：对照测试失败不改变上面的任何结论。\n\n",
	peerTableIntro: "单元格说明该配方在场景中是**守住**了锁的保证（只有一个持有者，持有者的节点属于它自己的 session，" +
		"并如实知道自己是否持有），还是**破坏**了其中一条，或者没有这项功能（不适用）；文字链接到测试。" +
		"对其他配方，随后给出负责的那一行源码：go-zookeeper 的在 GitHub 上它的标签处，kazoo 的在驱动导入的包中" +
		"（Debian 的 python3-kazoo，%s），Curator 的在 GitHub 上的标签 %s 处（Debian 的 libcurator-recipes-java 5.4.0 由它构建）；" +
		"测试把每一行引用与实际运行的代码核对过（Curator：驱动加载的类的行号表，以及在 %s 给出克隆时标签处的文本）。" +
		"Curator 的驱动区分两种“知道自己不再持有”，单元格两者都写：锁对象自己的状态" +
		"（%s、%s，在获取锁的线程上询问）决定结论；见到 %[7]s 的 %[6]s 写在旁边。\n\n",
	peerHead: "\n| 对照测试 | 结果 | 证据 |\n|---|---|---|\n", peerRow: "| %s | %s（%.1f 秒） | %s |\n",
	noPeer: "没有运行对照测试。\n", inTable: "它的单元格在上表中",
	scenario: "场景", noCell: "无单元格", notRunCell: "未运行", noObservationCell: "没有观察：",
	headlineOne: "在 %d 个场景中：%s。", headlineMany: "在 %d 个场景中：%s。", brokeWord: "**破坏**",
	cellWords: map[string]string{cellKept: "守住", cellBroke: "破坏", cellNone: "不适用"},
}

// writePeers writes the section "How other recipes fare": the scenario
// table, the headline counts, and every peer test's result.
func writePeers(w io.Writer, r report, l *lang) {
	fmt.Fprintf(w, l.peersIntro, code("TestPeer…"))
	rows := peerTable(r.run)
	if len(rows) > 0 {
		writePeerTable(w, rows, r.peerSrc, l)
	}
	if len(r.peers) == 0 {
		fmt.Fprint(w, l.noPeer)
		return
	}
	fmt.Fprint(w, l.peerHead)
	for _, p := range r.peers {
		var ev []string
		for i, e := range p.Evidence {
			if _, _, ok := peerFields(e); ok {
				continue
			}
			if l.zh && len(p.EvidenceZh) == len(p.Evidence) {
				e = p.EvidenceZh[i]
			}
			ev = append(ev, e)
		}
		if len(ev) == 0 {
			ev = []string{l.inTable}
		}
		fmt.Fprintf(w, l.peerRow, code(p.Name), l.status(p.Action), p.Elapsed, cell(strings.Join(ev, "<br>")))
	}
}

func writePeerTable(w io.Writer, rows []peerRow, src map[string]string, l *lang) {
	cols := columns(rows)
	fmt.Fprintf(w, "%s\n\n", headline(rows, cols, l))
	fmt.Fprintf(w, l.peerTableIntro,
		code("/usr/lib/python3/dist-packages/kazoo"), code(curatorTag), code("ZK19_CURATOR_SRC"),
		code("isAcquiredInThisProcess()"), code("isOwnedByCurrentThread()"), code("ConnectionStateListener"), code("LOST"))
	head := []string{l.scenario}
	for _, c := range cols {
		head = append(head, columnName(c, rows, l))
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, row := range rows {
		title := row.Title
		if l.zh && row.TitleZh != "" {
			title = row.TitleZh
		}
		out := []string{fmt.Sprintf("**%s**%s%s", row.ID, l.colon, cell(title))}
		for _, c := range cols {
			out = append(out, peerCellText(row, c, src[row.Test], l))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(out, " | "))
	}
}

// headline counts each recipe's cells.
func headline(rows []peerRow, cols []string, l *lang) string {
	var parts []string
	for _, c := range cols {
		n := map[string]int{}
		for _, r := range rows {
			if cl, ok := r.Cells[c]; ok {
				n[cl.Verdict]++
			} else {
				n[""]++
			}
		}
		var counts []string
		for _, v := range []string{cellKept, cellBroke, cellNone, ""} {
			if n[v] > 0 {
				counts = append(counts, fmt.Sprintf("%d %s", n[v], l.cellWord(v)))
			}
		}
		parts = append(parts, fmt.Sprintf("%s%s%s", columnName(c, rows, l), l.colon, strings.Join(counts, l.itemSep)))
	}
	if len(rows) == 1 {
		return fmt.Sprintf(l.headlineOne, len(rows), strings.Join(parts, l.listSep))
	}
	return fmt.Sprintf(l.headlineMany, len(rows), strings.Join(parts, l.listSep))
}

// cellWord is a cell's verdict in l; "" is a recipe without a cell.
func (l *lang) cellWord(v string) string {
	if v == "" {
		return l.noCell
	}
	if w, ok := l.cellWords[v]; ok {
		return w
	}
	return v
}

func peerCellText(row peerRow, recipe, testLink string, l *lang) string {
	c, ok := row.Cells[recipe]
	if !ok && l.zh {
		return cell(l.missing(row.MissingZh[recipe]))
	}
	if !ok {
		return cell(l.missing(row.Missing[recipe]))
	}
	outcome := c.Outcome
	if l.zh && c.OutcomeZh != "" {
		outcome = c.OutcomeZh
	}
	words := cell(outcome)
	if testLink != "" {
		words = "[" + linkText(words) + "](" + testLink + ")"
	}
	verdict := l.cellWord(c.Verdict)
	if c.Verdict == cellBroke {
		verdict = l.brokeWord
	}
	s := verdict + l.colon + words
	if c.Source != "" {
		s += " — " + sourceLink(c)
	}
	return s
}

// missing says in l why a recipe has no cell (missingCells).
func (l *lang) missing(why string) string {
	if rest, ok := strings.CutPrefix(why, "not run"); ok {
		return l.notRunCell + strings.Replace(rest, ": ", l.colon, 1)
	}
	if rest, ok := strings.CutPrefix(why, "no observation: "); ok {
		return l.noObservationCell + rest
	}
	return why
}

// linkText escapes what would end a link's text early.
func linkText(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
}

var lineRange = regexp.MustCompile(`^(.+):(\d+)(?:-(\d+))?$`)

// curatorTag is the tag of Curator's repository its citations are read at.
const curatorTag = "apache-curator-5.4.0"

// sourceLink cites a peer's source line: go-zookeeper's on GitHub at the
// version that ran, Curator's on GitHub at curatorTag (shown by file name,
// as its paths are long), anything else by its path in the package.
func sourceLink(c peerCell) string {
	m := lineRange.FindStringSubmatch(c.Source)
	switch {
	case m == nil:
		return cell(c.Source)
	case c.Recipe == "go-zookeeper" && c.Version != "":
		anchor := "#L" + m[2]
		if m[3] != "" {
			anchor += "-L" + m[3]
		}
		return fmt.Sprintf("[%s](https://github.com/go-zookeeper/zk/blob/%s/%s%s)", c.Source, c.Version, m[1], anchor)
	case c.Recipe == "kazoo":
		return code("kazoo/" + c.Source)
	case c.Recipe == "curator":
		anchor := "#L" + m[2]
		if m[3] != "" {
			anchor += "-L" + m[3]
		}
		return fmt.Sprintf("[%s](https://github.com/apache/curator/blob/%s/%s%s)", path.Base(c.Source), curatorTag, m[1], anchor)
	}
	return code(c.Source)
}

// peerDir is the package of the peer table (go test ./peers).
const peerDir = "peers"

// peerSources finds where each peer test is defined in the peer package's
// test files, keyed as the run keys them ("peers.TestPeerX"), as links
// relative to the evidence file: "peers/peers_test.go#L42".
func peerSources(dir string) map[string]string {
	proofs, err := claims.ScanProofs(filepath.Join(dir, peerDir))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, p := range proofs {
		if p.Peer {
			out[peerDir+"."+p.Name] = fmt.Sprintf("%s/%s#L%d", peerDir, filepath.ToSlash(filepath.Base(p.Pos.Filename)), p.Pos.Line)
		}
	}
	return out
}

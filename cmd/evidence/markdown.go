package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

// Meta is what the header of EVIDENCE.md says besides the record header.
type Meta struct {
	Commands  []string // the go test commands, as run
	Generator string   // how the generator was called
	Source    string   // "" when run here, else the -json file read
	GoVersion string
	Backend   string // -backend or ZK19_BACKEND when the record says none
	Index     string // the claim index, as named on the command line
	Tree      Tree   // the commit the generator ran at, and its changes
}

// report is everything EVIDENCE.md is made of.
type report struct {
	ix    *claims.Index
	run   *Run
	h     Header
	vs    []Verdict
	peers []Peer
	// peerSrc links each peer test to its source, for the peer table.
	peerSrc map[string]string
	m       Meta
	// at gives each proof its file:line (claims.Index.ProofPositions), as
	// doc.go cites it; nil where it could not be read.
	at   map[string]string
	pics []picture       // diagrams drawn from the run's traces
	viz  []visualization // porcupine's pictures of the verdicts
}

// verdictOrder is the order the header counts verdicts in.
var verdictOrder = []string{Holds, Partly, Differs, Refuted, NotRun, NotShown}

// renderMarkdown writes the evidence file in l: its parts, in l's order,
// each written once for both languages from l's words.
func renderMarkdown(w io.Writer, r report, l *lang) {
	for _, part := range l.parts {
		part(w, r, l)
	}
}

// A part is one section of the evidence file.
type part func(w io.Writer, r report, l *lang)

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

// heading is a part that is a fixed text: a heading between parts.
func heading(text string) part {
	return func(w io.Writer, r report, l *lang) { fmt.Fprint(w, text) }
}

func writeTitle(w io.Writer, r report, l *lang) {
	fmt.Fprintf(w, l.title, code(r.m.Generator), code(r.m.Index), r.ix.Article)
}

func writeHeader(w io.Writer, r report, l *lang) {
	h, m := r.h, r.m
	backend, server := h.Backend, h.Server
	if backend == "" {
		backend = fmt.Sprintf(l.noBackend, orUnknown(m.Backend))
	}
	if server == "" {
		server = l.noServer
	}
	date := r.run.Start.UTC().Format("2006-01-02 15:04:05 UTC")
	if r.run.Start.IsZero() {
		date = l.unknown
	}
	fmt.Fprintf(w, l.date, date)
	fmt.Fprint(w, m.Tree.line(l))
	fmt.Fprintf(w, l.backendServer, backend, server)
	if h.NoServer != "" {
		fmt.Fprintf(w, l.note, h.NoServer)
	}
	fmt.Fprintf(w, l.goVersion, m.GoVersion)
	var cmds []string
	for _, c := range m.Commands {
		cmds = append(cmds, code(c))
	}
	switch {
	case m.Source == "":
		fmt.Fprintf(w, l.command, strings.Join(cmds, l.then))
	case len(cmds) > 0:
		fmt.Fprintf(w, l.commandRead, strings.Join(cmds, l.then), code(m.Source))
	default:
		fmt.Fprintf(w, l.eventsRead, code(m.Source))
	}
	fmt.Fprintf(w, l.pkgResult, l.status(packageResult(r.run)), r.run.Elapsed)
	if h.Ensembles != "" && l.ensembles != "" {
		fmt.Fprintf(w, l.ensembles, l.sizes(h.Ensembles))
	}
	fmt.Fprintf(w, l.verdictCount, len(r.vs)-reports(r.vs), orUnknown(h.Version), countVerdicts(r.vs, l))
	fmt.Fprintf(w, l.notVerifiedCount, len(r.ix.Documentary), l.word(Documentary))
	fmt.Fprintf(w, l.peerCnt, countPeers(r.peers, l))
}

// reports counts the verdicts of sentences that report the article's own
// run: shown beside this run, counted with none of its verdicts.
func reports(vs []Verdict) int {
	n := 0
	for _, v := range vs {
		if v.Claim.Report {
			n++
		}
	}
	return n
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func packageResult(run *Run) string {
	switch {
	case !run.PkgEnded:
		return "did not end"
	case run.PkgFail:
		return "FAIL"
	}
	return "pass"
}

func countVerdicts(vs []Verdict, l *lang) string {
	n := map[string]int{}
	for _, v := range vs {
		if !v.Claim.Report {
			n[v.Kind]++
		}
	}
	var out []string
	for _, k := range verdictOrder {
		if n[k] > 0 || k == Holds {
			out = append(out, fmt.Sprintf(l.count, n[k], l.word(k)))
		}
	}
	return strings.Join(out, l.listSep)
}

func countPeers(ps []Peer, l *lang) string {
	n := map[string]int{}
	var order []string
	for _, p := range ps {
		if n[p.Action] == 0 {
			order = append(order, p.Action)
		}
		n[p.Action]++
	}
	var out []string
	for _, a := range order {
		out = append(out, fmt.Sprintf(l.count, n[a], l.status(a)))
	}
	if len(out) == 0 {
		return l.noneRan
	}
	return fmt.Sprintf(l.peersRan, len(ps), strings.Join(out, l.itemSep))
}

func writeClaims(w io.Writer, r report, l *lang) {
	fmt.Fprint(w, l.claimsHead)
	for _, v := range r.vs {
		id := v.Claim.ID
		if v.Claim.Beyond {
			id += l.beyond
		}
		tests := make([]string, len(v.Tests))
		for i, t := range v.Tests {
			tests[i] = l.proof(t)
		}
		cells := []string{cell(id), cell(l.where(v.Claim))}
		if l.zh {
			cells = append(cells, cell(zhOr(v.Claim.Zh, v.Claim.Statement)))
		}
		cells = append(cells, cell(l.verdictCell(v)), cell(decisiveCell(v, l)), cell(strings.Join(tests, "<br>")))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

func zhOr(zh, en string) string {
	if zh == "" {
		return en
	}
	return zh
}

// decisiveCell is the row's observation: the observations its proofs
// stated, then what a failed proof failed with.
func decisiveCell(v Verdict, l *lang) string {
	switch {
	case len(v.Decisive) == 0 && v.Kind == NotRun:
		return "—"
	case len(v.Decisive) == 0:
		return fmt.Sprintf(l.noObservation, code(claims.AttrEvidence))
	}
	return decisiveLines(l.decisive(v), l.more)
}

// decisiveLines are a row's first four marked lines, shortened, then how
// many more there are (more formats the count).
func decisiveLines(ls []string, more string) string {
	var out []string
	for i, l := range ls {
		if i == 4 {
			out = append(out, fmt.Sprintf(more, len(ls)-i))
			break
		}
		out = append(out, trim(l, 240))
	}
	return strings.Join(out, "<br>")
}

func writeNotVerified(w io.Writer, r report, l *lang) {
	fmt.Fprintf(w, l.notVerified, code("documentary"), l.word(Documentary))
	for _, d := range r.ix.Documentary {
		where, subject, reason := d.Where(), d.Subject, d.Reason
		if l.zh {
			where, subject, reason = d.Locator().String(), zhOr(d.Zh, d.Subject), zhOr(d.ReasonZh, d.Reason)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", d.ID, cell(where), l.word(Documentary), cell(subject), cell(reason))
	}
}

func writeSources(w io.Writer, r report, l *lang) {
	fmt.Fprintf(w, l.sources, code("release-3.8.0-1"))
	for _, s := range r.ix.Sources {
		var at, tests []string
		for _, rd := range s.Read {
			at = append(at, fmt.Sprintf(l.readAt, rd.Version, code(rd.Tag), code(rd.Method), rd.Line))
		}
		for _, t := range s.Tests {
			tests = append(tests, l.proof(fmt.Sprintf("%s (%s)", t, r.status(t))))
		}
		role := s.Role
		if l.zh {
			role = zhOr(s.RoleZh, s.Role)
		}
		fmt.Fprintf(w, "| %s<br>%s | %s | %s | %s | %s |\n", code(s.Code), code(s.File), cell(role),
			strings.Join(at, "<br>"), strings.Join(s.Claims, l.itemSep), strings.Join(tests, "<br>"))
	}
}

// status is a test's result in the run: pass, fail, skip, or "no result".
func (r report) status(test string) string {
	if res := r.run.Results[test]; res != nil {
		return orUnknown(res.Action)
	}
	return "no result"
}

func writeLegend(w io.Writer, r report, l *lang) {
	fmt.Fprintf(w, l.legend,
		l.word(Holds), l.word(Partly), l.word(Refuted), code(claims.VerdictKey("<claim>")+" "+claims.VerdictRefuted),
		l.word(Differs), code(claims.AttrDiffers), l.word(NotRun), l.word(NotShown),
		code(claims.VerdictKey("<claim>")+" "+claims.VerdictNotShown), l.word(Documentary),
		code("t.Attr"), code("go test -json"), code(claims.AttrEvidence))
}

func writeDetails(w io.Writer, r report, l *lang) {
	fmt.Fprint(w, l.details)
	for _, v := range r.vs {
		fmt.Fprint(w, l.claim(v))
		if v.Kind == Differs && v.Claim.Differs != "" {
			fmt.Fprint(w, l.differs(v.Claim))
		}
		block(w, "", l.decisive(v))
		block(w, l.context, v.Context)
	}
}

func block(w io.Writer, title string, ls []string) {
	if len(ls) == 0 {
		return
	}
	if title != "" {
		fmt.Fprintf(w, "\n%s\n", title)
	}
	fmt.Fprintf(w, "\n```\n")
	for _, l := range ls {
		fmt.Fprintln(w, strings.ReplaceAll(trim(l, 400), "```", "'''"))
	}
	fmt.Fprintf(w, "```\n")
}

// writePictures shows the diagrams drawn from the run's traces (Mermaid,
// which code hosts render, and the SVG beside it) and links porcupine's
// picture of every linearizability verdict.
func writePictures(w io.Writer, r report, l *lang) {
	if len(r.pics) == 0 && len(r.viz) == 0 {
		return
	}
	fmt.Fprint(w, l.pictures)
	for _, p := range r.pics {
		fmt.Fprintf(w, l.picture, strings.Join(p.Claims, l.itemSep), p.Test)
		if p.SVG != "" {
			fmt.Fprintf(w, l.svg, filepath.Base(p.SVG), filepath.ToSlash(p.SVG))
		} else {
			fmt.Fprintf(w, l.noSVG, p.Err, code(filepath.ToSlash(p.D2)))
		}
		if l.pictureFold != "" {
			fmt.Fprintf(w, "<details><summary>"+l.pictureFold+"</summary>\n\n", strings.Join(p.Claims, l.itemSep), p.Test)
		}
		fmt.Fprintf(w, "```mermaid\n%s\n```\n", strings.TrimSpace(p.Mermaid))
		if l.pictureFold != "" {
			fmt.Fprint(w, "\n</details>\n")
		}
	}
	if len(r.viz) > 0 {
		fmt.Fprint(w, l.viz)
		for _, v := range r.viz {
			fmt.Fprintf(w, l.vizLine, v.Claim, l.porcupine(v.Verdict), filepath.Base(v.Path), filepath.ToSlash(v.Path))
		}
	}
}

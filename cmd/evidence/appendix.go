package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

// The Chinese record is the article's appendix: the conclusion first, then
// the claim table in the article's order under its own section titles,
// one row per claim (where, the article's terms, the claim, the verdict,
// one decisive observation, links to its record and its proofs), then the
// record of each claim, its logs and the diagrams folded.

// rowObservation is at most how many characters a row's one decisive
// observation shows; the claim's record below has it whole.
const rowObservation = 120

// anchor is the id of a claim's row; detailAnchor that of its record.
func anchor(id string) string       { return strings.ToLower(id) }
func detailAnchor(id string) string { return strings.ToLower(id) + "-record" }

// inArticleOrder are the verdicts of section key's claims, in the order
// the article makes them.
func inArticleOrder(r report, key string) []Verdict {
	var vs []Verdict
	for _, v := range r.vs {
		if v.Claim.Section == key {
			vs = append(vs, v)
		}
	}
	slices.SortStableFunc(vs, func(a, b Verdict) int { return r.ix.CompareSentences(a.Claim.Locator(), b.Claim.Locator()) })
	return vs
}

// sectionsWithClaims are the index's sections that have a claim, in the
// article's order.
func sectionsWithClaims(r report) []claims.Section {
	var out []claims.Section
	for _, s := range r.ix.Sections {
		if len(inArticleOrder(r, s.Key)) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// writeConclusion opens the record: what ran and why not the article's
// server, how many claims hold and which do not, linked to their rows.
func writeConclusion(w io.Writer, r report, l *lang) {
	fmt.Fprintf(w, l.conclusion, orUnknown(r.h.Version), orUnknown(r.h.BackendKind))
	counted := slices.DeleteFunc(slices.Clone(r.vs), func(v Verdict) bool { return v.Claim.Report })
	byKind := map[string][]string{}
	for _, v := range counted {
		byKind[v.Kind] = append(byKind[v.Kind], idLink(v.Claim.ID, l))
	}
	var out []string
	for _, k := range verdictOrder {
		if len(byKind[k]) == 0 && k != Holds {
			continue
		}
		s := fmt.Sprintf(l.count, len(byKind[k]), l.word(k))
		if k != Holds {
			s += l.colon + strings.Join(byKind[k], l.itemSep)
		}
		out = append(out, s)
	}
	fmt.Fprintf(w, l.verdicts, len(counted), strings.Join(out, l.listSep))
	for _, v := range r.vs {
		if v.Claim.Report {
			fmt.Fprintf(w, l.reportLine, idLink(v.Claim.ID, l), l.where(v.Claim), l.text(v))
		}
	}
	fmt.Fprintf(w, l.documentaryLine, len(r.ix.Documentary))
}

// idLink is a claim's ID, in Chinese a link to its row.
func idLink(id string, l *lang) string {
	if !l.zh {
		return id
	}
	return fmt.Sprintf("[%s](#%s)", id, anchor(id))
}

// writeClaimSections is the claim table, a table per section of the
// article under its title, the rows in the article's order.
func writeClaimSections(w io.Writer, r report, l *lang) {
	fmt.Fprint(w, l.claimsHead)
	for _, s := range sectionsWithClaims(r) {
		fmt.Fprintf(w, "\n### %s\n\n%s", s.Name(), l.sectionHead)
		for _, v := range inArticleOrder(r, s.Key) {
			fmt.Fprintf(w, "| %s |\n", strings.Join(rowCells(r, v, l), " | "))
		}
	}
}

// rowCells are one claim's cells in the claim table.
func rowCells(r report, v Verdict, l *lang) []string {
	id := fmt.Sprintf(`<a id="%s"></a>%s`, anchor(v.Claim.ID), v.Claim.ID)
	if v.Claim.Beyond {
		id += l.beyond
	}
	verdict := l.verdictCell(v)
	links := []string{fmt.Sprintf(l.recordLink, detailAnchor(v.Claim.ID))}
	for i, t := range v.Tests {
		p := l.proof(t)
		if i < len(v.Claim.Proof) {
			if at := r.at[v.Claim.Proof[i]]; at != "" {
				file, line, _ := strings.Cut(at, ":")
				p += fmt.Sprintf(" [%s](%s#L%s)", at, file, line)
			}
		}
		links = append(links, p)
	}
	return []string{cell(id), cell(l.where(v.Claim)), cell(termsOf(v.Claim)), cell(zhOr(v.Claim.Zh, v.Claim.Statement)),
		cell(verdict), cell(escapeHTML(decisiveOne(v, l))), strings.Join(links, "<br>")}
}

// termsOf are the claim's terms as the article writes them, in 「」.
func termsOf(c claims.Claim) string {
	var b strings.Builder
	for _, t := range c.Terms {
		b.WriteString("「" + t + "」")
	}
	return b.String()
}

// decisiveOne is the row's one decisive observation, in l, at most
// rowObservation characters: for a claim refuted or not shown, what its
// proof failed with; else the observation its Decisive picks (the first
// without one).
func decisiveOne(v Verdict, l *lang) string {
	ls := l.decisive(v)
	switch {
	case len(ls) == 0 && v.Kind == NotRun:
		return "—"
	case len(ls) == 0:
		return fmt.Sprintf(l.noObservation, code(claims.AttrEvidence))
	case v.Kind == Refuted || v.Kind == NotShown:
		return trim(ls[len(ls)-1], rowObservation)
	}
	i, clause := 0, 0
	if p := v.Claim.Decisive; p != nil {
		clause = p.Clause
		for j, en := range v.Decisive {
			if strings.HasPrefix(en, p.Observation) {
				i = j
				break
			}
		}
	}
	s := ls[i]
	if clause > 0 {
		if cs := clauses(s); clause <= len(cs) {
			s = cs[clause-1]
		}
	}
	return trim(s, rowObservation)
}

// clauses splits an observation at "; " and "；".
func clauses(s string) []string {
	return strings.Split(strings.ReplaceAll(s, "; ", "；"), "；")
}

// escapeHTML keeps a value such as <nil> from reading as a tag.
func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// writeRecords is each claim's record, in the article's order: its
// observations whole, what a failed proof failed with, and its operations
// and faults folded.
func writeRecords(w io.Writer, r report, l *lang) {
	fmt.Fprint(w, l.details)
	for _, s := range sectionsWithClaims(r) {
		fmt.Fprintf(w, "\n#### %s\n", s.Name())
		for _, v := range inArticleOrder(r, s.Key) {
			fmt.Fprintf(w, "\n<a id=\"%s\"></a>\n", detailAnchor(v.Claim.ID))
			fmt.Fprint(w, l.claim(v))
			if v.Kind == Differs && v.Claim.Differs != "" {
				fmt.Fprint(w, l.differs(v.Claim))
			}
			block(w, "", l.decisive(v))
			folded(w, fmt.Sprintf(l.contextFold, len(v.Context)), v.Context)
		}
	}
}

// folded writes ls as a code block in a <details> block titled summary.
func folded(w io.Writer, summary string, ls []string) {
	if len(ls) == 0 {
		return
	}
	fmt.Fprintf(w, "\n<details><summary>%s</summary>\n", summary)
	block(w, "", ls)
	fmt.Fprint(w, "\n</details>\n")
}

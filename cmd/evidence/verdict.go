package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/record/diagram"
)

// Verdict kinds: the words of the evidence table (see legend). Refuted and
// NotShown are what a failed proof's verdict attribute says
// (claims.VerdictRefuted, claims.VerdictNotShown); a failed proof without
// one, or a proof without a result, is NotShown.
const (
	Holds       = "holds"
	Partly      = "holds, partly not run"
	Refuted     = "refuted"
	Differs     = "observed, differs from the article's wording"
	NotRun      = "not run"
	NotShown    = "not shown"
	Documentary = "documentary"
)

// Verdict is the evidence table's row for one claim.
type Verdict struct {
	Claim claims.Claim
	Kind  string
	Text  string // the verdict cell
	// TextZh is the verdict cell in Chinese: the same verdict, its reason
	// in the Chinese its proof stated (claims.AttrReasonZh) where it did.
	TextZh string
	Tests  []string // "TestX (pass, 1.2s)"
	// Decisive holds the observations its proofs stated as attributes
	// (claims.AttrEvidence; claims.AttrDiffers as "differs: ..."), then
	// what a failed proof failed with.
	Decisive []string
	// DecisiveZh is Decisive for EVIDENCE.zh.md: each observation in the
	// Chinese its proof stated beside it (claims.AttrEvidenceZh,
	// claims.AttrDiffersZh), else as stated.
	DecisiveZh []string
	Context    []string // its proofs' operations and faults
}

// proofRun is what the run says about one claim's proofs.
type proofRun struct {
	passed, failed, skipped, missing []*result
	tests                            []string
	lines                            []string // of the claim (linesFor), in proof order
	attrs                            []attr   // of the claim (attrsFor), in proof order
}

// verdicts gives every claim of the index its verdict on run.
func verdicts(ix *claims.Index, run *Run, h Header) []Verdict {
	seen, problem := recordStart(run, ix)
	var out []Verdict
	for _, c := range ix.Claims {
		v := verdictFor(c, run, h)
		if c.ID == recordClaim {
			v.checkRecord(seen, problem, h.Version)
		}
		out = append(out, v)
	}
	return out
}

func verdictFor(c claims.Claim, run *Run, h Header) Verdict {
	pr := gather(c, run)
	v := Verdict{
		Claim:      c,
		Tests:      pr.tests,
		Decisive:   observations(pr.attrs),
		DecisiveZh: observationsZh(pr.attrs),
		Context:    operations(diagram.WithoutExampleOutput(pr.lines), 6),
	}
	v.Kind, v.Text = decide(c, pr, run, h, english)
	_, v.TextZh = decide(c, pr, run, h, chinese)
	if word, reason := verdictOn(run.PkgAttrs, c.ID, english); word != "" {
		_, zh := verdictOn(run.PkgAttrs, c.ID, chinese)
		v.Decisive, v.DecisiveZh = append(v.Decisive, reason), append(v.DecisiveZh, zh)
	}
	if c.ID == suiteClaim {
		v.Decisive = append(v.Decisive, observations(run.PkgAttrs)...)
		v.DecisiveZh = append(v.DecisiveZh, observationsZh(run.PkgAttrs)...)
	}
	for _, res := range pr.failed {
		v.Decisive = append(v.Decisive, english.failedLine(res.Name, trim(whyFailed(res, c.ID, english), 240)))
		v.DecisiveZh = append(v.DecisiveZh, chinese.failedLine(res.Name, trim(whyFailed(res, c.ID, chinese), 240)))
	}
	return v
}

// suiteClaim is the claim TestMain checks after the last test (nothing
// left behind): the observations its Scope states are that claim's.
const suiteClaim = "E3"

// observations are the values of the evidence and differs attributes of
// as, in order: the decisive observations.
func observations(as []attr) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range as {
		var l string
		switch a.Key {
		case claims.AttrEvidence:
			l = a.Value
		case claims.AttrDiffers:
			l = differsLabel + a.Value
		default:
			continue
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// differsLabel opens a differs note among the decisive observations.
const differsLabel = "differs: "

// differsLabelZh opens a differs note in EVIDENCE.zh.md.
const differsLabelZh = "与原文措辞不同："

// observationsZh are observations(as) for EVIDENCE.zh.md: an evidence or
// differs attribute followed by its Chinese (claims.AttrEvidenceZh,
// claims.AttrDiffersZh, set by the same call) is given in Chinese.
func observationsZh(as []attr) []string {
	var out []string
	seen := map[string]bool{}
	for i, a := range as {
		var en, zhKey, label string
		switch a.Key {
		case claims.AttrEvidence:
			en, zhKey = a.Value, claims.AttrEvidenceZh
		case claims.AttrDiffers:
			en, zhKey, label = differsLabel+a.Value, claims.AttrDiffersZh, differsLabelZh
		default:
			continue
		}
		if seen[en] {
			continue
		}
		seen[en] = true
		l := strings.TrimPrefix(en, differsLabel)
		if i+1 < len(as) && as[i+1].Key == zhKey && as[i+1].Sub == a.Sub {
			l = as[i+1].Value
		}
		if a.Key == claims.AttrDiffers {
			l = label + l
		}
		out = append(out, l)
	}
	return out
}

// verdictOn returns the verdict the attributes as give claim id, "" for
// none, with the reason the test logged after it, in l. The first verdict on id
// decides: a proof that found its own scenario broken (not-shown) and went
// on has no observation to refute the claim with afterwards, and a proof
// that refuted the claim stays refuted whatever broke after it.
func verdictOn(as []attr, id string, l *lang) (word, reason string) {
	for _, a := range as {
		if c, ok := claims.VerdictClaim(a.Key); ok && c == id {
			return a.Value, l.reason(a)
		}
	}
	return "", ""
}

// whyFailed says why res failed, for claim id: the reason logged with its
// verdict on id, else with any verdict it carries, else the line that best
// says it (firstError), in l where the proof stated it so.
func whyFailed(res *result, id string, l *lang) string {
	if _, reason := verdictOn(res.Attrs, id, l); reason != "" {
		return reason
	}
	for _, a := range res.Attrs {
		if _, ok := claims.VerdictClaim(a.Key); ok && a.Reason != "" {
			return l.reason(a)
		}
	}
	return l.logged(firstError(res))
}

// checkRecord lets what the record really starts with decide the record
// claim: a header that is missing, late or incomplete refutes it, whatever
// its Test said.
func (v *Verdict) checkRecord(seen []any, problem, version string) {
	switch {
	case problem != "":
		v.Kind = Refuted
		v.Text = fmt.Sprintf("refuted on %s: %s", english.version(version), problem)
		v.TextZh = fmt.Sprintf("在 %s 上被否定：%s", chinese.version(version), problem)
		v.Decisive = append(v.Decisive, english.recordCheck+problem)
		v.DecisiveZh = append(v.DecisiveZh, chinese.recordCheck+problem)
	case seen != nil && (v.Kind == Holds || v.Kind == Partly):
		v.Decisive = append([]string{fmt.Sprintf(english.recordOpens, seen...)}, v.Decisive...)
		v.DecisiveZh = append([]string{fmt.Sprintf(chinese.recordOpens, chinese.sizesOf(seen)...)}, v.DecisiveZh...)
	}
}

func gather(c claims.Claim, run *Run) proofRun {
	var pr proofRun
	for _, name := range c.Proof {
		res := run.Results[name]
		if res == nil {
			pr.missing = append(pr.missing, &result{Name: name})
			pr.tests = append(pr.tests, name+" (no result)")
			continue
		}
		pr.lines = append(pr.lines, linesFor(res, c.ID)...)
		pr.attrs = append(pr.attrs, attrsFor(res, c.ID)...)
		switch res.Action {
		case "pass":
			pr.passed = append(pr.passed, res)
		case "skip":
			pr.skipped = append(pr.skipped, res)
		default:
			pr.failed = append(pr.failed, res)
		}
		status := res.Action
		if status == "" {
			status = "did not end"
		}
		pr.tests = append(pr.tests, fmt.Sprintf("%s (%s, %.1fs)", name, status, res.Elapsed))
	}
	return pr
}

// decide returns a claim's verdict kind and cell, the cell in l. A verdict
// set outside any test (TestMain's E3 checks, run.PkgAttrs) counts like
// one of its proofs'.
func decide(c claims.Claim, pr proofRun, run *Run, h Header, l *lang) (kind, text string) {
	version := l.version(h.Version)
	needs := ""
	if len(c.Needs) > 0 {
		needs = fmt.Sprintf(l.needs, strings.Join(c.Needs, l.itemSep))
	}
	pkgWord, pkgReason := verdictOn(run.PkgAttrs, c.ID, l)
	switch {
	case len(c.Proof) == 0:
		return NotShown, l.noProof
	case pkgWord == claims.VerdictRefuted:
		return Refuted, fmt.Sprintf(l.refutedOn, version, pkgReason)
	case len(pr.failed) > 0:
		return failedVerdict(c.ID, pr.failed, version, l)
	case pkgWord == claims.VerdictNotShown:
		return NotShown, l.notShown + pkgReason
	case len(pr.missing) > 0 && !(h.NoServer != "" && allExamples(pr.missing)):
		return NotShown, l.notShown + pr.missing[0].Name + l.colon + whyMissing(run, l)
	case len(pr.passed) == 0 && len(pr.skipped) > 0:
		return NotRun, l.notRun + l.skipped(pr.skipped[0]) + needs
	case len(pr.passed) == 0: // only Examples, left out for want of a server
		return NotRun, l.examplesNeed + h.NoServer + needs
	}
	kind, text = Holds, l.word(Holds)
	if len(pr.passed) < len(c.Proof) {
		var not []string
		for _, res := range pr.skipped {
			not = append(not, res.Name+l.colon+l.skipped(res))
		}
		for _, res := range pr.missing {
			not = append(not, res.Name+l.colon+h.NoServer)
		}
		kind, text = Partly, l.word(Partly)+l.colon+strings.Join(not, l.listSep)
	}
	if !anyDiffers(pr.passed, c.ID) {
		return kind, text
	}
	d := fmt.Sprintf(l.differsOn, version)
	if kind == Partly {
		d += l.listSep + strings.TrimPrefix(text, l.holdsComma)
	}
	return Differs, d
}

// anyDiffers reports whether a passed proof of claim id noted a difference
// from the article's wording (claims.AttrDiffers).
func anyDiffers(passed []*result, id string) bool {
	for _, res := range passed {
		for _, a := range attrsFor(res, id) {
			if a.Key == claims.AttrDiffers {
				return true
			}
		}
	}
	return false
}

// failedVerdict: a failed proof whose verdict attribute on the claim says
// refuted refutes it; any other failure (a verdict of not-shown, or none)
// means the proof did not get as far as its observation.
func failedVerdict(id string, failed []*result, version string, l *lang) (kind, text string) {
	for _, res := range failed {
		if word, reason := verdictOn(res.Attrs, id, l); word == claims.VerdictRefuted {
			return Refuted, fmt.Sprintf(l.refutedOn, version, reason)
		}
	}
	res := failed[0]
	return NotShown, l.notShown + res.Name + l.colon + trim(whyFailed(res, id, l), 240)
}

func whyMissing(run *Run, l *lang) string {
	switch {
	case !run.PkgEnded:
		return l.runEnded
	case run.PkgFail && len(run.Results) == 0:
		return l.noBuild + trim(lastLine(run.PkgLines), 200)
	}
	return l.noResult
}

// linesFor returns the output of res that belongs to claim id: when res
// has subtests named after claims (TestR3toR6_x/R4_BlindRetry), its own
// lines and those of id's subtests; otherwise all of it.
func linesFor(res *result, id string) []string {
	named := regexp.MustCompile(`^[A-Z][0-9]{1,2}(_|$)`)
	mine := regexp.MustCompile(`^` + regexp.QuoteMeta(id) + `(_|$)`)
	var names []string
	for name := range res.Subs {
		if named.MatchString(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return res.Lines
	}
	sort.Strings(names)
	out := append([]string(nil), res.Own...)
	for _, name := range names {
		if mine.MatchString(name) {
			out = append(out, res.Subs[name]...)
		}
	}
	return out
}

// attrsFor returns the attributes of res that belong to claim id, chosen
// as linesFor chooses lines.
func attrsFor(res *result, id string) []attr {
	named := regexp.MustCompile(`^[A-Z][0-9]{1,2}(_|$)`)
	mine := regexp.MustCompile(`^` + regexp.QuoteMeta(id) + `(_|$)`)
	if !hasNamedSubs(res, named) {
		return res.Attrs
	}
	var out []attr
	for _, a := range res.Attrs {
		if a.Sub == "" || named.MatchString(a.Sub) && mine.MatchString(a.Sub) {
			out = append(out, a)
		}
	}
	return out
}

func hasNamedSubs(res *result, named *regexp.Regexp) bool {
	for name := range res.Subs {
		if named.MatchString(name) {
			return true
		}
	}
	return false
}

func allExamples(rs []*result) bool {
	for _, r := range rs {
		if !strings.HasPrefix(r.Name, "Example") {
			return false
		}
	}
	return true
}

// Peer is the result of one peer test: another recipe run beside ours. It
// proves no claim and never changes a verdict.
type Peer struct {
	Name     string
	Action   string
	Elapsed  float64
	Evidence []string // its marked lines, then what it failed with
	// EvidenceZh is Evidence for EVIDENCE.zh.md: the lines in the Chinese
	// the test stated beside them, where it did.
	EvidenceZh []string
}

// peers returns the run's peer tests in the order they ran.
func peers(run *Run) []Peer {
	var out []Peer
	for _, name := range run.Order {
		if _, test := claims.SplitProof(name); !claims.IsPeer(test) {
			continue
		}
		res := run.Results[name]
		p := Peer{Name: name, Action: res.Action, Elapsed: res.Elapsed, Evidence: observations(res.Attrs), EvidenceZh: observationsZh(res.Attrs)}
		if p.Action == "" {
			p.Action = "did not end"
		}
		if p.Action != "pass" && p.Action != "skip" {
			p.Evidence = append(p.Evidence, "failed: "+trim(whyFailed(res, "", english), 240))
			p.EvidenceZh = append(p.EvidenceZh, "失败："+trim(whyFailed(res, "", chinese), 240))
		}
		if p.Action == "skip" {
			p.Evidence = append(p.Evidence, skipReason(res))
			p.EvidenceZh = append(p.EvidenceZh, chinese.skipped(res))
		}
		out = append(out, p)
	}
	return out
}

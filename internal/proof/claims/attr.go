package claims

import "strings"

// The evidence is data: a proof states what it observed and how it failed
// as test attributes (testing.T.Attr, Go 1.25+), never by the wording of a
// log line. "go test -json" reports each attribute as an event of its own
// (Action "attr", with Key and Value); "go test -v" prints it as a line of
// the record,
//
//	=== ATTR  TestX zk19.evidence B read "0" on zk3 while the stream was held
//
// cmd/evidence reads the events; an Example, which has no *testing.T, sets
// them through its zkserver.Scope, which prints the same line (see
// ParseAttr). A value is one line: the root package's helpers turn line
// breaks into " ⏎ " (OneLine). These are the keys and the two verdict
// words; nothing else a test logs has a meaning to the evidence table.
const (
	// AttrEvidence is the observation that would differ if the claim were
	// false: the evidence table's decisive observation.
	AttrEvidence = "zk19.evidence"
	// AttrDiffers is an observation that differs from the article's wording
	// although the proof's assertions hold (claim Y4's failed conditional
	// update acting as a barrier): the verdict says so.
	AttrDiffers = "zk19.differs"
	// AttrEvidenceZh and AttrDiffersZh follow an AttrEvidence or
	// AttrDiffers whose format has a Chinese entry (package zh): the same
	// observation in Chinese, for EVIDENCE.zh.md.
	AttrEvidenceZh = "zk19.evidence.zh"
	AttrDiffersZh  = "zk19.differs.zh"
	// AttrReasonZh follows a verdict (AttrVerdict) whose format has a
	// Chinese entry: the line the proof logs after it, in Chinese ("C1 被否定：…").
	AttrReasonZh = "zk19.reason.zh"
	// AttrSkipZh comes right before a skip (claims.Skip): its reason in
	// Chinese, for EVIDENCE.zh.md.
	AttrSkipZh = "zk19.skip.zh"
	// AttrVerdict, followed by "." and a claim ID (VerdictKey), is how a
	// failed proof labels its failure for that claim: VerdictRefuted or
	// VerdictNotShown. The log line the proof writes right after it says
	// why, and is quoted in the table. The first verdict a proof states on
	// a claim is its verdict on it.
	AttrVerdict = "zk19.verdict"
)

// The two verdict words a failed proof may carry (AttrVerdict).
const (
	// VerdictRefuted: the claim is false. The claim's own observation
	// contradicts it: the values it names are what the server did.
	VerdictRefuted = "refuted"
	// VerdictNotShown: the proof did not get as far as its observation (the
	// harness or the fault proxy failed, a setup step timed out), so the
	// run says nothing about the claim. A failed proof without a verdict
	// attribute counts as not shown as well.
	VerdictNotShown = "not-shown"
)

// VerdictKey is the attribute key of a verdict on claim id.
func VerdictKey(id string) string { return AttrVerdict + "." + id }

// VerdictClaim returns the claim a verdict key names; ok is false for a key
// that is not a verdict's.
func VerdictClaim(key string) (id string, ok bool) {
	id, ok = strings.CutPrefix(key, AttrVerdict+".")
	return id, ok && id != ""
}

// attrLine opens the record line of an attribute, as testing prints it.
const attrLine = "=== ATTR  "

// AttrLine is the record line of an attribute that test sets: what
// testing prints for t.Attr under -v, and what a zkserver.Scope prints.
func AttrLine(test, key, value string) string {
	return attrLine + test + " " + key + " " + value
}

// ParseAttr reads a record line of an attribute (AttrLine), with or
// without indentation; ok is false for any other line. A line too long for
// test2json to read as framing (4 KiB) reaches the -json stream as output
// that keeps testing's ^V framing mark; it is read as well.
func ParseAttr(l string) (test, key, value string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(l, " \t\x16"), attrLine)
	if !ok {
		return "", "", "", false
	}
	rest = strings.TrimSuffix(rest, "\r")
	test, rest, ok1 := strings.Cut(rest, " ")
	key, value, _ = strings.Cut(rest, " ")
	if !ok1 || test == "" || key == "" {
		return "", "", "", false
	}
	return test, key, value, true
}

// OneLine makes s one attribute value: each line break becomes " ⏎ ".
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", "\n"), "\n", " ⏎ ")
}

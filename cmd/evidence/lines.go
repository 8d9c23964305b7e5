package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/record/diagram"
)

var (
	// Context: Jepsen-style operations and faults, shown beside the
	// decisive observations; session and connection bookkeeping is not
	// context.
	operation   = regexp.MustCompile(`^[A-Z][\w-]* (invoke|ok|fail|info)( |$)|^nemesis `)
	bookkeeping = regexp.MustCompile(`^nemesis proxy \S+ (listening on|conn#\d+ (open|closed)|closed$)|^[A-Z][\w-]* info (session|wait) | zk-client: `)
	skipLine    = regexp.MustCompile(`(?i)skip`)
	// A failure without a verdict attribute is quoted by the line that best
	// says why; which line is quoted changes no verdict.
	brokenLine = regexp.MustCompile(`panic:|timed out|FATAL|FAILED:`)
)

// clean is what a test said on a record line (claims.LogText); framing
// lines and server logs become "".
func clean(l string) string {
	if l = claims.LogText(l); claims.IsServerLog(l) {
		return ""
	}
	return l
}

// cleanAll cleans ls and drops empty and repeated lines.
func cleanAll(ls []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range ls {
		if c := clean(l); c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// trim shortens a line for the table.
func trim(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// operations returns up to max operation and fault lines of ls, in logged
// order: what the decisive observations are observations of.
func operations(ls []string, max int) []string {
	var out []string
	for _, l := range cleanAll(ls) {
		if len(out) == max {
			break
		}
		if operation.MatchString(l) && !bookkeeping.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// firstError picks the line that best says why a test failed, for a
// failure that carries no verdict attribute (whyFailed).
func firstError(res *result) string {
	ls := cleanAll(res.Lines)
	for _, l := range ls {
		if brokenLine.MatchString(l) {
			return l
		}
	}
	// An Example whose output differs: quote the first differing line.
	if d, ok := diagram.FirstExampleDiff(res.Lines); ok {
		return fmt.Sprintf(outputDiffers, d.Got, d.Want)
	}
	for _, l := range ls {
		if strings.Contains(l, "want") {
			return l
		}
	}
	// t.Fatalf is the last thing a test says.
	for i := len(res.Lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(res.Lines[i]), "--- FAIL") {
			for j := i - 1; j >= 0; j-- {
				if c := clean(res.Lines[j]); c != "" {
					return c
				}
			}
		}
	}
	if len(ls) > 0 {
		return ls[len(ls)-1]
	}
	return "no output"
}

// outputDiffers says how an Example's output differs from its want
// (firstError); lang.logged gives it in Chinese.
const outputDiffers = "output differs: got %q, want %q"

// skipReason is the last log line before "--- SKIP" that talks of
// skipping, or the last log line.
func skipReason(res *result) string {
	ls := cleanAll(res.Lines)
	for i := len(ls) - 1; i >= 0; i-- {
		if skipLine.MatchString(ls[i]) {
			return ls[i]
		}
	}
	if len(ls) > 0 {
		return ls[len(ls)-1]
	}
	return "skipped"
}

// skipped is res's skip reason in l: in Chinese, the last the test or
// its subtests stated in Chinese with their skip (claims.AttrSkipZh), as
// skipReason's is the last line.
func (l *lang) skipped(res *result) string { return skipReasonIn(res, l.zh) }

// skipReasonIn is res's skip reason, in Chinese when zh (lang.skipped).
func skipReasonIn(res *result, zh bool) string {
	if zh {
		for i := len(res.Attrs) - 1; i >= 0; i-- {
			if res.Attrs[i].Key == claims.AttrSkipZh {
				return res.Attrs[i].Value
			}
		}
	}
	if zh {
		return loggedIn(skipReason(res), true)
	}
	return skipReason(res)
}

func lastLine(ls []string) string {
	for i := len(ls) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(ls[i]); l != "" && !claims.IsFraming(l) {
			return l
		}
	}
	return "no output"
}

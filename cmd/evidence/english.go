package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The Chinese record says everything in Chinese but its values: paths,
// errors, tokens, identifiers and the few verbatim words below. english
// finds the runs of plain English words that reach it all the same.

// verbatim are the English words the Chinese record may show as they
// are: terms the article itself writes in English, and recipe names.
var verbatim = map[string]bool{
	"ready":        true, // the node L10's winner publishes, named as in the article
	"stale-late":   true,
	"new-owner":    true,
	"exactly-once": true,
}

var (
	// valueLike are the parts of a line that are values, not words: code
	// spans, quoted values, link targets and tags, an error's text (from
	// its package's "pkg: " to the next Chinese character), and any token
	// with a digit, a mark of code or an inner capital.
	valueLike = []*regexp.Regexp{
		regexp.MustCompile("`[^`]*`"),
		// Go's context errors, as their Error method says them
		regexp.MustCompile(`\bcontext (canceled|deadline exceeded)\b`),

		regexp.MustCompile(`"[^"]*"|'[^' ]*'|“[^”]*”`),
		regexp.MustCompile(`\]\([^)]*\)|<[^>]*>`),
		// a server's own log line, quoted as it logged it
		regexp.MustCompile(`\d\d:\d\d:\d\d[.,]\d+ \[[^\]]*\] (INFO|WARN|ERROR|DEBUG) .*`),
		regexp.MustCompile(`\b(lock|zk|fence|recover|release|acquire|context|sql|dial|read|write|open|fencehttp|chaos|harness|zkserver|exec|signal|bolt|sqlite|exit status|strconv\.\w+): [^\p{Han}，；。（）]*`),
		regexp.MustCompile(`[^\s\p{Han}，；。：、（）！？「」“”|]*([0-9_./\\()*=#\[\]{}<>$%@&+~^-]|[a-z][A-Z])[^\s\p{Han}，；。：、（）！？「」“”|]*`),
	}
	// goValue is a Go value as %+v prints it ({Field:value …}, map[…]), to
	// its end or to where a cell cut it (…): taken out before the links,
	// whose brackets it may hold.
	goValue = regexp.MustCompile(`\{[A-Z]\w*:[^}]*(\}|…|$)|map\[[^\]…]*(\]|…|$)`)
	// markdownLink is a Markdown link, whose text is read as words.
	markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	// chineseText breaks a run: a Chinese word or mark between two English
	// words makes them two pieces of a Chinese sentence.
	chineseText = regexp.MustCompile(`[\p{Han}，；。：、（）！？「」“”《》…—|]+`)
	// plainWord is an English word of letters only, as a sentence has it;
	// a capitalized word is a name (Debian, A, Expired) and breaks a run.
	plainWord = regexp.MustCompile(`^[a-z]+$`)
)

// englishRuns returns the runs of two or more plain English words in
// line, outside its values, that verbatim does not allow.
func englishRuns(line string) []string {
	if strings.Count(line, "`")%2 == 1 { // a code span a cell cut runs to the end
		line = line[:strings.LastIndex(line, "`")]
	}
	line = goValue.ReplaceAllString(line, " \x00 ")
	line = markdownLink.ReplaceAllString(line, " $1 ")
	for _, re := range append(valueLike, chineseText) {
		line = re.ReplaceAllString(line, " \x00 ")
	}
	var runs []string
	var run []string
	flush := func() {
		if len(run) >= 2 {
			runs = append(runs, strings.Join(run, " "))
		}
		run = nil
	}
	for _, f := range strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == ':' || r == ';'
	}) {
		switch {
		case f == "\x00":
			flush()
		case plainWord.MatchString(f) && !verbatim[f]:
			run = append(run, f)
		default:
			// a word glued to Chinese ends a run, and so does anything else
			flush()
		}
	}
	flush()
	return runs
}

// englishIn returns, for each line of the Chinese record md outside its
// folded blocks (logs and diagrams) and diagrams, the English runs it has.
func englishIn(md string) []string {
	var out []string
	inDetails, inMermaid := false, false
	for i, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "<details"):
			inDetails = true
		case strings.HasPrefix(l, "</details>"):
			inDetails = false
		case strings.HasPrefix(l, "```mermaid"):
			inMermaid = true
		case inMermaid && strings.HasPrefix(l, "```"):
			inMermaid = false
		}
		if inDetails || inMermaid {
			continue
		}
		for _, r := range englishRuns(l) {
			out = append(out, fmtLine(i+1, r, l))
		}
	}
	return out
}

func fmtLine(n int, run, line string) string {
	return fmt.Sprintf("line %d: %q in %s", n, run, trim(line, 160))
}

// longestRun bounds a duration a record may show: no run of the suite
// takes a day, and Go's largest duration (2562047h47m16.854775807s,
// time.Since a zero time) is a bug's.
const longestRun = 24 * time.Hour

// goDuration is a duration as Go prints one with hours.
var goDuration = regexp.MustCompile(`\b\d+h\d+m[0-9.]+s\b`)

// brokenOutput returns what in md no run can have printed: fmt's "%!"
// (a bad verb, index or argument), and a duration of longestRun or more.
func brokenOutput(md string) []string {
	var out []string
	for i, l := range strings.Split(md, "\n") {
		if strings.Contains(l, "%!") {
			out = append(out, fmtLine(i+1, "%!", l))
		}
		for _, m := range goDuration.FindAllString(l, -1) {
			if d, err := time.ParseDuration(m); err != nil || d >= longestRun {
				out = append(out, fmtLine(i+1, m, l))
			}
		}
	}
	return out
}

package claims

import (
	"regexp"
	"strings"
)

// A record is what "go test -v" printed for a run: go test's own framing
// lines, and between them the lines the tests logged. cmd/evidence judges
// claims by a record and internal/record/diagram draws one; both read its lines
// with this grammar, so a line means the same to both.
var (
	// A *testing.T's line starts with the file and line that logged it.
	fileLine = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)
	// A zkserver.Scope's line starts with its name: an Example (its scope is
	// named after it), or TestMain.
	scopeLine = regexp.MustCompile(`^(Example\w*|TestMain): `)
	framing   = regexp.MustCompile(`^(=== (RUN|PAUSE|CONT|NAME|ATTR)|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|(ok|FAIL)\s|coverage:|testing: warning)`)
	// zkserver relays a server's own log lines as "<label>| <line>".
	serverLog = regexp.MustCompile(`^[\w.-]+\| `)
)

// LogText returns what a test logged on line l of a record, without the
// indentation and the prefix of the *testing.T or Scope that logged it;
// for a framing line (IsFraming) it returns "".
func LogText(l string) string {
	l = strings.TrimLeft(strings.TrimSpace(l), "\x16")
	if framing.MatchString(l) {
		return ""
	}
	l = fileLine.ReplaceAllString(l, "")
	l = scopeLine.ReplaceAllString(l, "")
	return strings.TrimSpace(l)
}

// IsFraming reports whether l, without its indentation, is a line go test
// prints itself ("=== RUN", "--- PASS", "ok", ...), not one a test logged.
// An attribute's line ("=== ATTR", see ParseAttr) is framing: it is data,
// read as such, never as a log line.
func IsFraming(l string) bool { return framing.MatchString(strings.TrimLeft(l, "\x16")) }

// IsServerLog reports whether text, a line's LogText, is a ZooKeeper
// server's own log line, not something a test said.
func IsServerLog(text string) bool { return serverLog.MatchString(text) }

// HarnessNote starts a logged line that is the harness's bookkeeping (the
// pool lending or stopping servers), not a step of the scenario: the
// record keeps it, a diagram leaves it out.
const HarnessNote = "## "

// IsHarnessNote reports whether the logged text is a HarnessNote.
func IsHarnessNote(text string) bool { return strings.HasPrefix(text, HarnessNote) }

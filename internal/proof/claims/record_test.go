package claims

import "testing"

// TestRecordLines reads record lines as cmd/evidence and internal/record/diagram
// do: the text a test logged, "" for go test's framing, and whether the
// text is a server's own log line.
func TestRecordLines(t *testing.T) {
	for _, tc := range []struct {
		line, text string
		serverLog  bool
	}{
		{"    consistency_test.go:229: B ok \"0\"", `B ok "0"`, false},
		{"    Example_staleReadFromLaggingFollower: B invoke get", "B invoke get", false},
		{"    Example_x: evidence: B read 0", "evidence: B read 0", false},
		{"    TestMain: shared1| 03:33:50 WARN x", "shared1| 03:33:50 WARN x", true},
		{"    server.go:276: l3-1| 03:33:21 WARN y", "l3-1| 03:33:21 WARN y", true},
		{"    zk3| 2026 WARN x", "zk3| 2026 WARN x", true},
		{"    E3-scenario: stopping", "E3-scenario: stopping", false},
		{"    x_test.go:9: evidence: a | b", "evidence: a | b", false},
		{"        second line", "second line", false},
		{"=== RUN   TestX", "", false},
		{"=== NAME  TestX", "", false},
		{"=== ATTR  TestX zk19.evidence B read 0", "", false},
		{"\x16=== ATTR  TestX zk19.evidence B read 0", "", false},
		{"--- PASS: TestX (1s)", "", false},
		{"--- FAIL: TestX (1s)", "", false},
		{"ok  \tgithub.com/zk19/zk19\t12.3s", "", false},
		{"FAIL", "", false},
	} {
		text := LogText(tc.line)
		if text != tc.text || IsServerLog(text) != tc.serverLog {
			t.Errorf("LogText(%q) = %q, IsServerLog %v; want %q, %v", tc.line, text, IsServerLog(text), tc.text, tc.serverLog)
		}
	}
}

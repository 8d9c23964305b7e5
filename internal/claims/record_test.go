package claims

import "testing"

func TestLogTextStripsWhoLogged(t *testing.T) {
	for in, want := range map[string]string{
		"    consistency_test.go:229: B ok \"0\"":                `B ok "0"`,
		"    Example_staleReadFromLaggingFollower: B invoke get": "B invoke get",
		"    TestMain: shared1| 03:33:50 WARN x":                 "shared1| 03:33:50 WARN x",
		"    E3-scenario: stopping":                              "E3-scenario: stopping",
		"        second line":                                    "second line",
		"=== RUN   TestX":                                        "",
		"=== NAME  TestX":                                        "",
		"--- FAIL: TestX (1s)":                                   "",
		"ok  \tgithub.com/zk19/zk19\t12.3s":                      "",
		"FAIL":                                                   "",
	} {
		if got := LogText(in); got != want {
			t.Errorf("LogText(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestIsServerLog(t *testing.T) {
	for text, want := range map[string]bool{
		"zk3| 2026 WARN x":      true,
		"l3-1| 03:33:21 WARN y": true,
		"B invoke get /x":       false,
		"evidence: a | b":       false,
	} {
		if got := IsServerLog(text); got != want {
			t.Errorf("IsServerLog(%q) = %v; want %v", text, got, want)
		}
	}
}

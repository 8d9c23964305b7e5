package claims

import "testing"

// TestAttrLinesRoundTrip: what AttrLine writes (testing's own -v line for
// t.Attr, and a Scope's), ParseAttr reads back, indented or not; other
// lines are no attributes.
func TestAttrLinesRoundTrip(t *testing.T) {
	l := AttrLine("TestF1toF3_X/sub", VerdictKey("F2"), VerdictRefuted)
	if l != "=== ATTR  TestF1toF3_X/sub zk19.verdict.F2 refuted" {
		t.Errorf("AttrLine = %q; want testing's own form", l)
	}
	for _, tc := range []struct {
		line, test, key, value string
		ok                     bool
	}{
		{l, "TestF1toF3_X/sub", "zk19.verdict.F2", "refuted", true},
		{"=== ATTR  Example_x zk19.evidence B read \"0\"; the stream  was held\r", "Example_x", AttrEvidence, "B read \"0\"; the stream  was held", true},
		{"    === ATTR  TestX zk19.differs ", "TestX", AttrDiffers, "", true},
		{"\x16=== ATTR  TestX zk19.evidence aaa", "TestX", AttrEvidence, "aaa", true},
		{"=== ATTR  TestX", "", "", "", false},
		{"=== RUN   TestX", "", "", "", false},
		{"    x_test.go:9: === ATTR  TestX k v", "", "", "", false},
	} {
		test, key, value, ok := ParseAttr(tc.line)
		if test != tc.test || key != tc.key || value != tc.value || ok != tc.ok {
			t.Errorf("ParseAttr(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tc.line, test, key, value, ok, tc.test, tc.key, tc.value, tc.ok)
		}
	}
	if id, ok := VerdictClaim("zk19.verdict.R2"); id != "R2" || !ok {
		t.Errorf("VerdictClaim(zk19.verdict.R2) = %q, %v; want R2", id, ok)
	}
	for _, k := range []string{"zk19.verdict", "zk19.verdict.", AttrEvidence} {
		if _, ok := VerdictClaim(k); ok {
			t.Errorf("VerdictClaim(%q) names a claim; want none", k)
		}
	}
	if got := OneLine("a\nb\r\nc"); got != "a ⏎ b ⏎ c" {
		t.Errorf("OneLine = %q; want every line break as ⏎", got)
	}
}

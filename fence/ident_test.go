package fence

import "testing"

// TestTableNamesAreIdentifiers: the names a caller gives for the fence's
// tables and registers are put into SQL as they are, so only identifiers
// are taken ([A-Za-z_][A-Za-z0-9_]*); anything else, a statement smuggled
// in a name above all, is refused before any SQL is built.
func TestTableNamesAreIdentifiers(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"fence_marks", true}, {"T1", true}, {"_x", true}, {"Marks2", true}, {"Z", true}, {"az", true}, {"a9", true}, {"A0", true},
		{"", false}, {"1marks", false}, {"marks; DROP TABLE accounts", false},
		{"a-b", false}, {"a b", false}, {"marks\"", false}, {"ämter", false}, {"a.b", false},
	} {
		if got := isIdent(tc.name); got != tc.ok {
			t.Errorf("isIdent(%q): got %v; want %v", tc.name, got, tc.ok)
		}
	}
}

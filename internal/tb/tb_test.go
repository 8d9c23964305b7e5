package tb

import "testing"

// TestRetellingsHaveTestNamesOfTheirOwn: a Scope acting for a Test (a
// retold Example) is named after the Test and the Example, so two Tests
// that retell one Example never get the same test name (and parent); a
// Scope of its own is named after itself.
func TestRetellingsHaveTestNamesOfTheirOwn(t *testing.T) {
	var names []string
	for _, sub := range []string{"F4", "F8"} {
		t.Run(sub, func(t *testing.T) {
			s := For(t, "Example_s5a")
			if s.Name() != "Example_s5a" {
				t.Errorf("got Name %q; want the Example's own, Example_s5a", s.Name())
			}
			names = append(names, s.TestName())
		})
	}
	want := []string{"TestRetellingsHaveTestNamesOfTheirOwn/F4/Example_s5a", "TestRetellingsHaveTestNamesOfTheirOwn/F8/Example_s5a"}
	if len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
		t.Errorf("got test names %q; want %q", names, want)
	}
	if got := NewScope("Example_s5a", Dirs{}).TestName(); got != "Example_s5a" {
		t.Errorf("a Scope of its own: got test name %q; want Example_s5a", got)
	}
}

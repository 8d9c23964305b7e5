package housecheck_test

import (
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/record/housecheck"
)

// TestTheWingsKeepTheirOrder: drawn from the module's imports, the server
// wing imports nothing of the proof's or the record's (its tests neither),
// no package imports from a wing above its own, no imports run round
// between rooms (folders) of the house, and no package of internal/ is
// under 200 lines of code but the README's program, a command.
func TestTheWingsKeepTheirOrder(t *testing.T) {
	ix := load(t)
	for _, b := range ix.WingBreaches(200) {
		t.Error(b)
	}
	t.Logf("%d packages: server wing %d, proof wing %d, record wing %d", len(ix.ByDir),
		count(ix, housecheck.Server), count(ix, housecheck.Proof), count(ix, housecheck.Record))
}

func count(ix *housecheck.Index, w housecheck.Wing) int {
	n := 0
	for dir := range ix.ByDir {
		if housecheck.WingOf(dir) == w {
			n++
		}
	}
	return n
}

// TestWingBreachesSeesEachBreach: each rule of WingBreaches, broken on an
// index built by hand, is named.
func TestWingBreachesSeesEachBreach(t *testing.T) {
	pkg := func(dir string, lines int, code string, tests ...string) *housecheck.Package {
		p := &housecheck.Package{Dir: dir, Code: map[string]bool{}, Tests: map[string]bool{}, HasCode: true, CodeLines: lines}
		if code != "" {
			p.Code[code] = true
		}
		for _, c := range tests {
			p.Tests[c] = true
		}
		return p
	}
	ix := &housecheck.Index{ByDir: map[string]*housecheck.Package{}}
	for _, p := range []*housecheck.Package{
		pkg("internal/server/a", 300, ""),
		pkg("internal/server/b", 300, "", "internal/proof/claims"),
		pkg("internal/server/c", 300, "internal/server/d/x"),
		pkg("internal/server/d", 300, ""),
		pkg("internal/server/d/x", 300, "internal/server/c"),
		pkg("internal/proof/claims", 300, ""),
		pkg("internal/proof/small", 199, ""),
		pkg("internal/server/z", 300, "internal/record/r"),
		pkg("internal/record/r", 300, ""),
	} {
		ix.ByDir[p.Dir] = p
	}
	got := strings.Join(ix.WingBreaches(200), "\n")
	for _, want := range []string{
		"internal/server/b (the server wing) imports internal/proof/claims (the proof wing)",
		"internal/server/z (the server wing) imports internal/record/r (the record wing)",
		"internal/proof/small: got 199 lines",
		"internal/server/c → internal/server/d → internal/server/c: got imports that run round",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("got the breaches:\n%s\nwant one that says %q", got, want)
		}
	}
	if strings.Contains(got, "internal/server/a") {
		t.Errorf("got the breaches:\n%s\nwant none for internal/server/a, which imports nothing", got)
	}
}

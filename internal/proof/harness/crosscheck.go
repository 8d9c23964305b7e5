// This file is E5's check of the proxy's Jute codec against the server
// jar's own classes (internal/server/juteoracle): the jar's version, and the
// captured frames of testdata/jute handed to both decoders, worded in E5's
// phases.

package harness

import (
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/server/juteoracle"
)

// JarVersion is the jar's version without its build suffix.
func JarVersion(o *juteoracle.Oracle) string {
	v, _, _ := strings.Cut(o.About.Version, ",")
	v, _, _ = strings.Cut(v, "-")
	return v
}

// CheckCapturedFrames hands the real frames of testdata/jute to both
// decoders and returns the number of records checked.
func CheckCapturedFrames(t *testing.T, o *juteoracle.Oracle) int {
	claims.Phase(t, "captured frames (testdata/jute): the same bytes to both decoders, then the record read both ways")
	frames, err := juteoracle.LoadFrames("testdata/jute")
	if err != nil {
		t.Fatalf("E5: %v", err)
	}
	records := 0
	for _, f := range frames {
		if f.First {
			r, err := o.CheckHandshake(f)
			if err != nil {
				t.Fatalf("E5 %v", err)
			}
			t.Logf("check %s %s: %d bytes, %s", f.Name, r.Kind, r.Bytes, r.Note)
			continue
		}
		for i := range juteoracle.Kinds {
			k := &juteoracle.Kinds[i]
			p := k.Carried(f)
			if p == nil {
				continue
			}
			r, err := o.CheckBytes(k, p)
			if err != nil {
				t.Fatalf("E5 frame %s: %v", f.Name, err)
			}
			records++
			if r.Note != "" {
				r.Note = "; " + r.Note
			}
			t.Logf("check %s %s: ok, %d bytes, both decoders read the same fields, then same both ways%s", f.Name, k.Name, r.Bytes, r.Note)
		}
	}
	return records
}

package juteoracle_test

import (
	"testing"

	"github.com/zk19/zk19/internal/server/juteoracle"
)

// FuzzJuteAgreesWithOfficial hands every input to the Go codec and to the
// official Jute classes of the server's jar, as each record kind the proxy
// reads (juteoracle.Kinds): both must refuse it, or both read the same fields
// from the same bytes, and the record read must then encode to the same
// bytes on both sides (claim E5). It is seeded with the real frames in
// testdata/jute. Without a JDK it skips, saying what to install.
func FuzzJuteAgreesWithOfficial(f *testing.F) {
	o := juteoracle.StartResolved(f)
	frames, err := juteoracle.LoadFrames("../../../testdata/jute")
	if err != nil {
		f.Fatal(err)
	}
	for _, fr := range frames {
		for i := range juteoracle.Kinds {
			if p := juteoracle.Kinds[i].Carried(fr); p != nil {
				f.Add(p)
			}
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		for i := range juteoracle.Kinds {
			k := &juteoracle.Kinds[i]
			if _, err := o.CheckBytes(k, p); err != nil {
				t.Fatalf("E5 %s against %s: %v", k.Name, o.About.Version, err)
			}
		}
	})
}

package harness

import (
	"errors"
	"fmt"
	"testing"
	"unicode"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// skipRecorder is a zkserver.TB that keeps the skip it is given and the
// attributes stated before it.
type skipRecorder struct {
	zkserver.TB // nil: a call of anything else panics
	skipped     []string
	attrs       map[string]string
}

func (r *skipRecorder) Helper() {}

func (r *skipRecorder) Attr(key, value string) { r.attrs[key] = value }

func (r *skipRecorder) Skipf(format string, args ...any) {
	r.skipped = append(r.skipped, fmt.Sprintf(format, args...))
}

// TestSkipUnavailableWordsEveryReason: every reason the server wing gives
// (zkserver.Reasons) is worded by the harness with the English the server
// wing's Unavailable.Error gives it, word for word, and with its Chinese
// from the catalogue before it: a reason added without its wording, or
// worded in other English than the server's, or missing from the
// catalogue, fails here.
func TestSkipUnavailableWordsEveryReason(t *testing.T) {
	cause := errors.New("no such file")
	for _, r := range zkserver.Reasons() {
		u := &zkserver.Unavailable{Reason: r, Kind: zkserver.External, Word: "mntr",
			Servers: []string{"10.0.0.1:2181"}, Need: 5, Named: 3, Err: cause}
		rec := &skipRecorder{attrs: map[string]string{}}
		SkipUnavailable(rec, u)
		if len(rec.skipped) != 1 || rec.skipped[0] != u.Error() {
			t.Errorf("%v: got the skips %q; want one, %q (Unavailable.Error)", r, rec.skipped, u.Error())
			continue
		}
		got := rec.attrs[claims.AttrSkipZh]
		if !hasHan(got) {
			t.Errorf("%v: got the Chinese %q; want the catalogue's Chinese of %q", r, got, u.Error())
		}
	}
}

// TestRequireFaultsNeedIsTheServerWings: the default need the harness
// words is the server wing's, in English.
func TestRequireFaultsNeedIsTheServerWings(t *testing.T) {
	if got, want := ownServersAndLinks(), zkserver.NeedsOwnServersAndLinks; got.En != want || !hasHan(got.Zh) {
		t.Errorf("got the need %+v; want the English %q with its Chinese", got, want)
	}
}

func hasHan(s string) bool {
	for _, c := range s {
		if unicode.Is(unicode.Han, c) {
			return true
		}
	}
	return false
}

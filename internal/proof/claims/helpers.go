package claims

import (
	"fmt"
	"strings"
	"sync"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/server/tb"
)

// IndexPath is the one source of truth for the article's sections and
// the claims' statements.
const IndexPath = "testdata/claims.json"

var LoadIndex = sync.OnceValues(func() (*Index, error) { return Load(IndexPath) })

// Open opens a claim's record with its ID, its place in the article and its
// statement, all read from the claim index. An ID the index lacks fails the
// test: a proof cannot cite a claim nobody stated.
func Open(t tb.TB, id string) {
	t.Helper()
	ix, err := LoadIndex()
	if err != nil {
		t.Fatalf("claim index: %v", err)
	}
	c := ix.Claim(id)
	if c == nil {
		t.Fatalf("claim %s: got no entry in %s; want one", id, IndexPath)
	}
	t.Logf("claim %s (%s): %s", c.ID, c.Where(), c.Statement)
	if was, dup := opened.LoadOrStore(t.Name(), c.ID); dup && was != c.ID {
		opened.Store(t.Name(), "") // two claims in one record: none is the claim of its waits
	}
	t.Cleanup(func() { opened.Delete(t.Name()) })
}

// opened maps a test's name to the claim its record opened ("" when it
// opened several), for OpenedOn.
var opened sync.Map

// OpenedOn returns the claim t proves: the one claim opened on t, or on the
// nearest test t runs under. It is "" for a test that proves no claim (the
// peer table) or several, whose waits then fail without a verdict.
func OpenedOn(t tb.TB) string {
	for name := t.Name(); name != ""; {
		if id, ok := opened.Load(name); ok {
			return id.(string)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return ""
}

// Evidence states the observation that would differ if the claim were
// false, as the attribute AttrEvidence: the evidence table shows
// exactly these (go test -v prints them as "=== ATTR" lines).
func Evidence(t tb.TB, format string, args ...any) {
	t.Helper()
	t.Attr(AttrEvidence, OneLine(fmt.Sprintf(format, args...)))
	if zh, ok := zh.Of(format, args...); ok {
		t.Attr(AttrEvidenceZh, OneLine(zh))
	}
}

// Differs states an observation that differs from the article's wording
// while the test's assertions hold (AttrDiffers); the evidence
// table says so in the verdict.
func Differs(t tb.TB, format string, args ...any) {
	t.Helper()
	t.Attr(AttrDiffers, OneLine(fmt.Sprintf(format, args...)))
	if zh, ok := zh.Of(format, args...); ok {
		t.Attr(AttrDiffersZh, OneLine(zh))
	}
}

// Skip skips t with the reason format gives: the line go test prints,
// and before it its Chinese (AttrSkipZh), from the catalogue's phrases.
func Skip(t tb.TB, format string, args ...any) {
	t.Helper()
	t.Attr(AttrSkipZh, OneLine(zh.Say(format, args...).Zh))
	t.Skipf(format, args...)
}

// Failer is a TB that can fail without stopping: a *testing.T.
type failer interface {
	tb.TB
	Errorf(format string, args ...any)
}

// Refuted fails t because claim id's own observation contradicts it: it
// states the verdict VerdictRefuted on id, then says why, starting
// with id, in the values observed ("got X; want Y"). Only the observation
// the claim is about may say refuted; a fault of the harness or the proxy,
// or a setup step that timed out, is NotShown. The test goes on.
func Refuted(t failer, id, format string, args ...any) {
	t.Helper()
	verdict(t, id, VerdictRefuted, format, args)
	t.Errorf("%s refuted: %s", id, fmt.Sprintf(format, args...))
}

// RefutedNow is refuted for an observation the rest of the test cannot go
// on without: it stops the test.
func RefutedNow(t tb.TB, id, format string, args ...any) {
	t.Helper()
	verdict(t, id, VerdictRefuted, format, args)
	t.Fatalf("%s refuted: %s", id, fmt.Sprintf(format, args...))
}

// NotShown stops t because the proof did not get as far as claim id's
// observation: the harness or the fault proxy failed, or a setup step
// timed out. It states the verdict VerdictNotShown on id, then the
// reason, starting with id. The run then says nothing about the claim.
func NotShown(t tb.TB, id, format string, args ...any) {
	t.Helper()
	verdict(t, id, VerdictNotShown, format, args)
	t.Fatalf("%s not shown: %s", id, fmt.Sprintf(format, args...))
}

// BrokenCheck is NotShown for a check of the scenario itself that the test
// can go on past, to log what else it saw: a proxy that held nothing, a
// control that did not break. A refutation after it does not count: the
// first verdict a proof states on a claim is its verdict.
func BrokenCheck(t failer, id, format string, args ...any) {
	t.Helper()
	verdict(t, id, VerdictNotShown, format, args)
	t.Errorf("%s not shown: %s", id, fmt.Sprintf(format, args...))
}

// verdict states word on claim id (AttrVerdict) and, when the catalogue
// has the Chinese of format, the line that follows it in Chinese
// (AttrReasonZh): its first line, as the record's reason is.
func verdict(t tb.TB, id, word, format string, args []any) {
	t.Helper()
	t.Attr(VerdictKey(id), word)
	if zh, ok := zh.Of(format, args...); ok {
		first, _, _ := strings.Cut(zh, "\n")
		t.Attr(AttrReasonZh, fmt.Sprintf("%s %s：%s", id, zhVerdicts[word], first))
	}
}

// Judge states a verdict on claim id and stops the test: RefutedNow, when
// what failed is the claim's own observation, or NotShown, when it was a
// step of the scene the observation needs.
type Judge func(t tb.TB, id, format string, args ...any)

// Judged returns t for a wait on a recipe's answer: when the wait gives up,
// its failure (what it waited for, the last state seen) becomes j's
// verdict line on claim id, within the wait's bound. Without a claim (id
// ""), it is t: the failure states no verdict.
func Judged(t tb.TB, id string, j Judge) tb.TB {
	if id == "" {
		return t
	}
	return judgedT{TB: t, id: id, j: j}
}

type judgedT struct {
	tb.TB
	id string
	j  Judge
}

func (jt judgedT) Fatalf(format string, args ...any) {
	jt.TB.Helper()
	jt.j(jt.TB, jt.id, format, args...)
}

// Phase writes a "# heading" line between the steps of a scenario.
func Phase(t tb.TB, format string, args ...any) {
	t.Helper()
	t.Logf("# "+format, args...)
}

// Actor logs one process's operations in Jepsen's style: "B invoke get /x",
// then "B ok "0"", "B fail ..." or "B info ..." (outcome unknown).
type Actor struct {
	Name string
	TB   tb.TB
}

func NewActor(t tb.TB, name string) Actor { return Actor{Name: name, TB: t} }

func (a Actor) Log(kind, format string, args ...any) {
	a.TB.Helper()
	if msg := fmt.Sprintf(format, args...); msg != "" {
		a.TB.Logf("%s %s %s", a.Name, kind, msg)
	} else {
		a.TB.Logf("%s %s", a.Name, kind)
	}
}

func (a Actor) Invoke(format string, args ...any) { a.TB.Helper(); a.Log("invoke", format, args...) }

func (a Actor) Ok(format string, args ...any) { a.TB.Helper(); a.Log("ok", format, args...) }

func (a Actor) Fail(format string, args ...any) { a.TB.Helper(); a.Log("fail", format, args...) }

func (a Actor) Info(format string, args ...any) { a.TB.Helper(); a.Log("info", format, args...) }

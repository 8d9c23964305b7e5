package chaos

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/proof/claims/zh"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/tb"
)

func draw(sc *Schedule, n int) []Fault {
	var out []Fault
	for range n {
		out = append(out, sc.Next())
	}
	return out
}

func TestScheduleReplaysFromItsSeed(t *testing.T) {
	kinds := Kinds(3)
	a := draw(NewSchedule(42, 1, kinds, kinds, 5, 3), 30)
	b := draw(NewSchedule(42, 1, kinds, kinds, 5, 3), 30)
	if !slices.EqualFunc(a, b, func(x, y Fault) bool {
		return x.N == y.N && x.Kind == y.Kind && x.Worker == y.Worker && x.Server == y.Server && slices.Equal(x.Cut, y.Cut)
	}) {
		t.Errorf("got two schedules from seed 42 that differ:\n%v\n%v", a, b)
	}
	c := draw(NewSchedule(42, 0, kinds, kinds, 5, 3), 30)
	if slices.EqualFunc(a, c, func(x, y Fault) bool { return x.Kind == y.Kind && x.Worker == y.Worker }) {
		t.Errorf("got the same schedule for setups 0 and 1 of one seed; want them to differ")
	}
}

func TestScheduleFirstRoundHasEveryKindOnce(t *testing.T) {
	for _, servers := range []int{1, 3} {
		kinds := Kinds(servers)
		sc := NewSchedule(7, 0, kinds, kinds, 5, servers)
		var got []Kind
		for !sc.firstRoundDone() {
			f := sc.Next()
			got = append(got, f.Kind)
			if f.Worker < 0 || f.Worker >= 5 || f.Server < 0 || f.Server >= servers {
				t.Errorf("got fault %+v; want a worker in [0,5) and a server in [0,%d)", f, servers)
			}
			if !slices.Contains(f.Cut, f.Worker) || !slices.IsSorted(f.Cut) {
				t.Errorf("got cut %v for worker %d; want it sorted and holding the worker", f.Cut, f.Worker)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, kinds) {
			t.Errorf("%d servers: got first round %v; want every kind of %v once", servers, got, kinds)
		}
		if slices.Contains(kinds, Failover) != (servers > 1) {
			t.Errorf("%d servers: got kinds %v; want a leader failover only on an ensemble", servers, kinds)
		}
	}
}

func TestAgainPutsAKindBackAtMostMaxAgainTimes(t *testing.T) {
	sc := NewSchedule(1, 0, []Kind{FrozenExpiry}, []Kind{FrozenExpiry}, 5, 1)
	if f := sc.Next(); f.Kind != FrozenExpiry || !sc.firstRoundDone() {
		t.Fatalf("got %v, first round done %v; want the one kind, then done", f.Kind, sc.firstRoundDone())
	}
	for i := range maxAgain {
		if !sc.Again(FrozenExpiry) || sc.firstRoundDone() {
			t.Fatalf("Again #%d: got refused or the round done; want the kind put back", i+1)
		}
		sc.Next()
	}
	if sc.Again(FrozenExpiry) {
		t.Errorf("got a kind put back %d times; want at most %d", maxAgain+1, maxAgain)
	}
	if !sc.firstRoundDone() {
		t.Errorf("got the first round open after the last retry was drawn")
	}
}

func TestSizeParsesAndEnds(t *testing.T) {
	for in, want := range map[string]Size{"": {}, "10m": {Duration: 10 * time.Minute}, "500": {Acquisitions: 500}} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-3", "ten", "-1m"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q): got no error; want one", bad)
		}
	}
	sc := NewSchedule(1, 0, Kinds(1), Kinds(1), 5, 1)
	ci := Size{}
	for n := 0; !ci.Done(sc, 0, 0); n++ {
		if n > len(Kinds(1))+defaultExtra {
			t.Fatalf("CI size: not done after %d faults; want done after %d", n, len(Kinds(1))+defaultExtra)
		}
		sc.Next()
	}
	if sc.n != len(Kinds(1))+defaultExtra {
		t.Errorf("CI size: got done after %d faults; want %d", sc.n, len(Kinds(1))+defaultExtra)
	}
	soak := Size{Duration: time.Minute}.Share(2)
	if soak.Duration != 30*time.Second || !soak.Soak() || soak.Done(sc, 29*time.Second, 1e6) || !soak.Done(sc, 30*time.Second, 0) {
		t.Errorf("got soak share %+v ending wrongly; want 30s, ended by time only", soak)
	}
	if n := (Size{Acquisitions: 501}).Share(2); n.Acquisitions != 251 || n.Done(sc, time.Hour, 250) || !n.Done(sc, 0, 251) {
		t.Errorf("got count share %+v ending wrongly; want 251, ended by count only", n)
	}
	if later := ci.Later(Kinds(3)); slices.Contains(later, Restart) || slices.Contains(later, Failover) || len(later) != len(Kinds(3))-2 {
		t.Errorf("CI size: got later kinds %v; want every kind but restart and failover", later)
	}
	if later := soak.Later(Kinds(3)); !slices.Equal(later, Kinds(3)) {
		t.Errorf("soak: got later kinds %v; want every kind", later)
	}
	if (Size{Duration: time.Hour}).Done(NewSchedule(1, 0, Kinds(1), Kinds(1), 5, 1), 2*time.Hour, 0) {
		t.Errorf("got a soak done before its first round; want every kind drawn first")
	}
}

func TestPausesReplayAndStayInRange(t *testing.T) {
	a, b, c := Pauses(9, 0, 2, time.Millisecond), Pauses(9, 0, 2, time.Millisecond), Pauses(9, 0, 3, time.Millisecond)
	same, differ := true, false
	for range 100 {
		x, y, z := a(), b(), c()
		same = same && x == y
		differ = differ || x != z
		if x < 0 || x >= time.Millisecond {
			t.Fatalf("got pause %v; want it in [0, 1ms)", x)
		}
	}
	if !same || !differ {
		t.Errorf("got same seed and worker equal: %v, other worker different: %v; want both", same, differ)
	}
}

func TestLedgerFindsARegressionInCommitOrder(t *testing.T) {
	var l Ledger
	tok := func(s int64) fence.Token { return fence.Token{Seq: s} }
	// Recorded out of commit order, as concurrent calls return.
	l.Record("W2", tok(5), fence.Result{Accepted: true, Commit: 2})
	l.Record("W1", tok(3), fence.Result{Accepted: true, Commit: 1})
	l.Record("W3", tok(4), fence.Result{Accepted: false, Commit: 2})
	if got := l.Regressions(); len(got) != 0 || len(l.accepted) != 2 {
		t.Fatalf("got regressions %v and %d accepted; want none and 2", got, len(l.accepted))
	}
	l.Record("W3", tok(4), fence.Result{Accepted: true, Commit: 3})
	l.Record("W4", tok(5), fence.Result{Accepted: true, Commit: 4})
	got := l.Regressions()
	if len(got) != 1 || !strings.Contains(got[0], "W3's token g0/4 accepted as commit 3 after W2's g0/5 (commit 2)") {
		t.Errorf("got regressions %q; want W3's g0/4 after W2's g0/5 only", got)
	}
}

func TestHoldersNameTheOthers(t *testing.T) {
	var h Holders
	if others, unpin := h.Begin(Hold{Who: "W1", Token: fence.Token{Seq: 1}}); len(others) != 0 {
		t.Fatalf("got others %v for the first hold; want none", others)
	} else {
		unpin()
	}
	others, unpin := h.Begin(Hold{Who: "W2", Token: fence.Token{Seq: 2}})
	unpin()
	h.End("W1")
	h.End("W2")
	if got := fmt.Sprint(others); got != "[W1 g0/1]" {
		t.Errorf("got others %s; want [W1 g0/1]", got)
	}
	if later, _ := h.Begin(Hold{Who: "W3", Token: fence.Token{Seq: 3}}); len(later) != 0 {
		t.Errorf("got others %v after both ended; want none", later)
	}
}

// A hold another hold's check pinned ends only once the check unpins it:
// its worker cannot delete its node while the check reads the server.
func TestHoldersEndWaitsForTheLaterHoldsCheck(t *testing.T) {
	var h Holders
	_, unpin1 := h.Begin(Hold{Who: "W1"})
	unpin1()
	_, unpin2 := h.Begin(Hold{Who: "W2"})
	ended := make(chan struct{})
	go func() { h.End("W1"); close(ended) }()
	// End removes W1 at once (a hold beginning now does not overlap it)
	// and then waits for W2's check; poll the first, not the second.
	if err := tb.WaitUntil(time.Second, "W1 gone from the holders", func() (bool, string) {
		others, unpin := h.Begin(Hold{Who: "W3"})
		unpin()
		h.End("W3")
		return len(others) == 1, fmt.Sprint(others)
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
		t.Fatalf("got W1's End returned while W2's check pinned it; want it to wait")
	default:
	}
	unpin2()
	unpin2() // a second call is harmless
	tb.Receive(t, time.Second, "W1's End once W2's check unpinned it", ended)
}

func TestReadTellsTheOverlapsApart(t *testing.T) {
	node := func(seq int) string { return fmt.Sprintf("/p/g%d-lock-%010d", seq, seq) }
	name := func(seq int) string { return path.Base(node(seq)) }
	hold := Hold{Who: "W3", Node: node(12)}
	others := []Hold{{Who: "W1", Node: node(11)}, {Who: "W2", Node: node(7)}}
	for _, c := range []struct {
		what     string
		children []string
		want     []Overlap
		lowest   bool
		ahead    []string
		broken   bool
	}{
		{"both earlier nodes gone: the expected overlaps", []string{name(12), name(13), "ready"}, []Overlap{EarlierGone, EarlierGone}, true, nil, false},
		{"W1's node still there: two holders", []string{name(11), name(12)}, []Overlap{BothThere, EarlierGone}, false, nil, true},
		{"own node gone: the later holder is the one not holding", []string{name(11), name(13)}, []Overlap{LaterGone, EarlierGone}, false, nil, false},
		{"waiters' nodes below its own", []string{name(12), name(10), name(9)}, []Overlap{EarlierGone, EarlierGone}, false, []string{name(9), name(10)}, true},
	} {
		s, err := Read(c.children, hold, others)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		var got []Overlap
		for i := range others {
			got = append(got, s.Overlap(i))
		}
		if !slices.Equal(got, c.want) || s.Lowest != c.lowest || !slices.Equal(s.Ahead, c.ahead) || s.Broken() != c.broken {
			t.Errorf("%s: got overlaps %v, lowest %v, ahead %v, broken %v; want %v, %v, %v, %v", c.what, got, s.Lowest, s.Ahead, s.Broken(), c.want, c.lowest, c.ahead, c.broken)
		}
	}
	if _, err := Read([]string{"x-lock-12ab"}, hold, nil); err == nil {
		t.Errorf("got no error for a malformed candidate; want one")
	}
}

func TestTableHasOneColumnPerSetup(t *testing.T) {
	s := NewSummary("memory", "control")
	s.Fault(FrozenExpiry, true)
	s.Fault(FrozenExpiry, false)
	s.Add(Acquisitions, 7)
	s.Add(StaleLate, 1)
	s.Add(ReadBack, 7)
	s.Add(OwnGone, 1)
	s.Add(EarlierGone.Counter(), 2)
	s.Add(BothThere.Counter(), 1)
	s.Write("memory", false, true)
	s.Write("control", true, true)
	s.SetBelowMark("control", 1)
	s.Note(zh.Text{En: "porcupine", Zh: "porcupine"}, zh.Text{En: "linearizable", Zh: "可线性化"})
	rows := Table([]zh.Text{{En: "one", Zh: "一台"}, {En: "three", Zh: "三台"}}, []*Summary{s, nil})
	var en, chinese []string
	for _, r := range rows {
		if n, m := strings.Count(r.En, "|"), strings.Count(r.Zh, "|"); n != 4 || m != 4 {
			t.Errorf("got row %q with %d bars, in Chinese %q with %d; want 4 (3 cells)", r.En, n, r.Zh, m)
		}
		en, chinese = append(en, r.En), append(chinese, r.Zh)
	}
	if zhAll := strings.Join(chinese, "\n"); !strings.Contains(zhAll, "| 故障：冻结的持有者被隔断直到过期 | 注入 2 次，1 次生效 | — |") ||
		!strings.Contains(zhAll, "| porcupine | 可线性化 | — |") || !strings.Contains(zhAll, "| 混沌测试汇总 | 一台 | 三台 |") {
		t.Errorf("got the table in Chinese without its Chinese rows:\n%s", zhAll)
	}
	all := strings.Join(en, "\n")
	for _, want := range []string{
		"| fault: frozen holder partitioned until expiry | 2 injected, 1 took effect | — |",
		"| acquisitions | 7 (0 given up at their bound) | — |",
		"| writes to control: accepted / rejected (accepted below its mark) | 1 / 0 (1) | — |",
		"| stale-late writes caught / memory accepted / control accepted | 1 / 0 / 1 | — |",
		"| overlapping pairs on the server: earlier holder's node gone (expected) / later holder's node gone / both there (two holders at once) | 2 / 0 / 1 | — |",
		"| holds read back on the server: own node the lowest / own node gone / a candidate below it | 6 / 1 / 0 | — |",
		"| porcupine | linearizable | — |",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("got table without %q:\n%s", want, all)
		}
	}
}

// TestAWriteIsStaleLateOnlyAfterItsMoment: a frozen holder's write is
// stale-late only when, as it saw just before writing, its node was gone
// and every fenced resource held a higher token; a write before that
// moment, or one whose moment is unknown, is not.
func TestAWriteIsStaleLateOnlyAfterItsMoment(t *testing.T) {
	cases := []struct {
		m    Moment
		want bool
		says string
	}{
		{Moment{Node: "n-7", Gone: true, Above: true, Checked: true}, true, "its node n-7 was gone and a higher token had been accepted"},
		{Moment{Node: "n-7", Gone: false, Above: true, Checked: true}, false, "its node n-7 was still on the server"},
		{Moment{Node: "n-7", Gone: true, Above: false, Checked: true}, false, "no higher token had been accepted"},
		{Moment{Node: "n-7", Gone: false, Above: true, Checked: true, Err: "zk: connection closed"}, false, "whether its node n-7 was gone is unknown (zk: connection closed)"},
		{Moment{}, false, ""},
	}
	for _, tc := range cases {
		if got := tc.m.Stale(); got != tc.want {
			t.Errorf("%+v: stale-late %v; want %v", tc.m, got, tc.want)
		}
		if s := tc.m.String(); !strings.Contains(s, tc.says) {
			t.Errorf("%+v says %q; want it to say %q", tc.m, s, tc.says)
		}
	}
}

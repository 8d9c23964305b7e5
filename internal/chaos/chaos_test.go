package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk19/zk19/fence"
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
	if others := h.Begin("W1", fence.Token{Seq: 1}); len(others) != 0 {
		t.Fatalf("got others %v for the first hold; want none", others)
	}
	others := h.Begin("W2", fence.Token{Seq: 2})
	h.End("W1")
	h.End("W2")
	if !slices.Equal(others, []string{"W1 g0/1"}) {
		t.Errorf("got others %v; want [W1 g0/1]", others)
	}
	if later := h.Begin("W3", fence.Token{Seq: 3}); len(later) != 0 {
		t.Errorf("got others %v after both ended; want none", later)
	}
}

func TestTableHasOneColumnPerSetup(t *testing.T) {
	s := NewSummary("memory", "control")
	s.Fault(FrozenExpiry, true)
	s.Fault(FrozenExpiry, false)
	s.Add(Acquisitions, 7)
	s.Add(StaleLate, 1)
	s.Write("memory", false, true)
	s.Write("control", true, true)
	s.SetBelowMark("control", 1)
	s.Note("porcupine", "linearizable")
	rows := Table([]string{"one", "three"}, []*Summary{s, nil})
	for _, r := range rows {
		if n := strings.Count(r, "|"); n != 4 {
			t.Errorf("got row %q with %d bars; want 4 (3 cells)", r, n)
		}
	}
	all := strings.Join(rows, "\n")
	for _, want := range []string{
		"| fault: frozen holder partitioned until expiry | 2 injected, 1 took effect | — |",
		"| acquisitions | 7 (0 given up at their bound) | — |",
		"| writes to control: accepted / rejected (accepted below its mark) | 1 / 0 (1) | — |",
		"| stale-late writes caught / memory accepted / control accepted | 1 / 0 / 1 | — |",
		"| porcupine | linearizable | — |",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("got table without %q:\n%s", want, all)
		}
	}
}

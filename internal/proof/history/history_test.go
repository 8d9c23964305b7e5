package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anishathalye/porcupine"
)

// span is one operation of a hand-written history.
type span struct {
	client    int
	op        Op
	value     string // written value or read result
	unknown   bool
	call, ret int64
}

func build(t *testing.T, initial string, spans ...span) *Recorder {
	t.Helper()
	r := NewRecorder(initial)
	for _, s := range spans {
		in, out := Input{Op: s.op}, Output{Unknown: s.unknown}
		if s.op == Write {
			in.Value = s.value
		} else {
			out.Value = s.value
		}
		if err := r.Span(s.client, in, out, s.call, s.ret); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func check(t *testing.T, r *Recorder) (Verdict, porcupine.LinearizationInfo) {
	t.Helper()
	v, info, err := Check(context.Background(), r.Operations(), r.initial, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v, info
}

// Clients of the hand-written histories.
const a, b = 0, 1

// registerHistories are small histories with a known verdict.
var registerHistories = []struct {
	name  string
	spans []span
	want  Verdict
}{
	{"stale read after completed write", []span{
		{client: a, op: Write, value: "1", call: 0, ret: 10},
		{client: b, op: Read, value: "0", call: 20, ret: 30},
	}, NotLinearizable},
	{"fresh read after completed write", []span{
		{client: a, op: Write, value: "1", call: 0, ret: 10},
		{client: b, op: Read, value: "1", call: 20, ret: 30},
	}, Linearizable},
	{"concurrent read sees old value", []span{
		{client: a, op: Write, value: "1", call: 0, ret: 10},
		{client: b, op: Read, value: "0", call: 5, ret: 15},
	}, Linearizable},
	{"concurrent read sees new value", []span{
		{client: a, op: Write, value: "1", call: 0, ret: 10},
		{client: b, op: Read, value: "1", call: 5, ret: 15},
	}, Linearizable},
	{"touching intervals are concurrent", []span{
		{client: a, op: Write, value: "1", call: 0, ret: 10},
		{client: b, op: Read, value: "0", call: 10, ret: 20},
	}, Linearizable},
	{"read of a never-written value", []span{
		{client: b, op: Read, value: "7", call: 0, ret: 10},
	}, NotLinearizable},
	{"unknown write, later read sees it", []span{
		{client: a, op: Write, value: "1", unknown: true, call: 0, ret: 10},
		{client: b, op: Read, value: "1", call: 20, ret: 30},
	}, Linearizable},
	{"unknown write, later read does not see it", []span{
		{client: a, op: Write, value: "1", unknown: true, call: 0, ret: 10},
		{client: b, op: Read, value: "0", call: 20, ret: 30},
	}, Linearizable},
	{"unknown write takes effect late", []span{
		{client: a, op: Write, value: "1", unknown: true, call: 0, ret: 10},
		{client: b, op: Read, value: "0", call: 20, ret: 30},
		{client: b, op: Read, value: "1", call: 40, ret: 50},
	}, Linearizable},
	{"unknown write seen then unseen", []span{
		{client: a, op: Write, value: "1", unknown: true, call: 0, ret: 10},
		{client: b, op: Read, value: "1", call: 20, ret: 30},
		{client: b, op: Read, value: "0", call: 40, ret: 50},
	}, NotLinearizable},
	{"unknown write cannot act before its call", []span{
		{client: b, op: Read, value: "1", call: 0, ret: 10},
		{client: a, op: Write, value: "1", unknown: true, call: 20, ret: 30},
	}, NotLinearizable},
	{"unknown read constrains nothing", []span{
		{client: a, op: Write, value: "1", call: 0, ret: 10},
		{client: b, op: Read, unknown: true, call: 20, ret: 30},
	}, Linearizable},
	// B's read is preceded by a barrier write of "1" (starting at 0);
	// another client's write "2" completes in [5,6]; B's read [7,8] returns
	// "1". Judged by the read's own interval that is a stale read; judged by
	// the composite interval [0,8] (barrier start to read end) the read may
	// take effect before the write of "2".
	{"composite interval [0,8]", []span{
		{client: b, op: Write, value: "1", call: 0, ret: 4}, // barrier w_b
		{client: a, op: Write, value: "2", call: 5, ret: 6},
		{client: b, op: Read, value: "1", call: 0, ret: 8},
	}, Linearizable},
	{"read's own interval [7,8]", []span{
		{client: b, op: Write, value: "1", call: 0, ret: 4},
		{client: a, op: Write, value: "2", call: 5, ret: 6},
		{client: b, op: Read, value: "1", call: 7, ret: 8},
	}, NotLinearizable},
}

func TestCheckRegisterHistories(t *testing.T) {
	for _, tc := range registerHistories {
		t.Run(tc.name, func(t *testing.T) {
			r := build(t, "0", tc.spans...)
			if got, _ := check(t, r); got != tc.want {
				t.Errorf("verdict %v; want %v\n%s", got, tc.want, r)
			}
		})
	}
}

// TestCompositeIntervalRecorded builds the composite-interval histories of
// registerHistories with the real clock: the time taken just before the barrier begins the composite read.
func TestCompositeIntervalRecorded(t *testing.T) {
	for _, composite := range []bool{true, false} {
		r := NewRecorder("0")
		start := r.Now()
		barrier := r.Invoke(1, Write, "1")
		barrier.Ok("")
		w := r.Invoke(0, Write, "2")
		w.Ok("")
		want := NotLinearizable
		if composite {
			want = Linearizable
			if err := r.Span(1, Input{Op: Read}, Output{Value: "1"}, start, r.Now()); err != nil {
				t.Fatal(err)
			}
		} else {
			r.Invoke(1, Read, "").Ok("1")
		}
		if got, _ := check(t, r); got != want {
			t.Errorf("composite=%v: verdict %v; want %v\n%s", composite, got, want, r)
		}
	}
}

func TestRecorderUnknownOutcomes(t *testing.T) {
	t.Run("info write", func(t *testing.T) {
		r := NewRecorder("0")
		r.Invoke(0, Write, "1").Info()
		r.Invoke(1, Read, "").Ok("1")
		r.Invoke(1, Read, "").Ok("0")
		if got, _ := check(t, r); got != NotLinearizable {
			t.Errorf("verdict %v; want not linearizable\n%s", got, r)
		}
	})
	t.Run("pending write is unknown", func(t *testing.T) {
		r := NewRecorder("0")
		r.Invoke(0, Write, "1") // never completed
		r.Invoke(1, Read, "").Ok("0")
		r.Invoke(1, Read, "").Ok("1")
		if got, _ := check(t, r); got != Linearizable {
			t.Errorf("verdict %v; want linearizable\n%s", got, r)
		}
		ops := r.Operations()
		if ops[0].Return != infinity || ops[0].Output != (Output{Unknown: true}) {
			t.Errorf("pending op = %+v; want unknown output returning at infinity", ops[0])
		}
	})
	t.Run("first completion wins", func(t *testing.T) {
		r := NewRecorder("0")
		c := r.Invoke(0, Write, "1")
		c.Info()
		c.Ok("")
		if op := r.Operations()[0]; op.Return != infinity {
			t.Errorf("Ok after Info changed the op: %+v", op)
		}
	})
}

func TestRecorderString(t *testing.T) {
	r := NewRecorder("0")
	w := r.Invoke(0, Write, "1")
	rd := r.Invoke(1, Read, "ignored")
	rd.Ok("0")
	w.Info()
	r.Invoke(2, Write, "x y").Ok("ignored")
	r.Invoke(3, Read, "") // pending
	want := strings.Join([]string{
		`0 invoke write "1"`,
		`1 invoke read`,
		`1 ok read "0"`,
		`0 info write "1"`,
		`2 invoke write "x y"`,
		`2 ok write "x y"`,
		`3 invoke read`,
	}, "\n") + "\n"
	if got := r.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	ops := r.Operations()
	for i := 1; i < len(ops); i++ {
		if ops[i].Call <= ops[i-1].Call {
			t.Errorf("call times not strictly increasing: %d then %d", ops[i-1].Call, ops[i].Call)
		}
	}
}

func TestSpanErrors(t *testing.T) {
	r := NewRecorder("")
	if err := r.Span(0, Input{Op: Read}, Output{}, 10, 5); err == nil {
		t.Error("Span with ret < call succeeded")
	}
	if err := r.Span(0, Input{}, Output{}, 0, 5); err == nil {
		t.Error("Span with invalid op succeeded")
	}
	if n := len(r.Operations()); n != 0 {
		t.Errorf("%d operations recorded; want 0", n)
	}
}

func TestCheckErrors(t *testing.T) {
	bad := []porcupine.Operation{{Input: "read", Output: "0", Call: 0, Return: 1}}
	if v, _, err := Check(context.Background(), bad, "0", 0); err == nil || v != Unknown {
		t.Errorf("malformed ops: %v, %v; want Unknown and an error", v, err)
	}
	back := []porcupine.Operation{{Input: Input{Op: Read}, Output: Output{Value: "0"}, Call: 5, Return: 1}}
	if _, _, err := Check(context.Background(), back, "0", 0); err == nil {
		t.Error("return before call accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := build(t, "0", span{op: Read, value: "0", call: 0, ret: 1})
	if v, _, err := Check(ctx, r.Operations(), "0", 0); v != Unknown || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v, %v; want Unknown, context.Canceled", v, err)
	}
}

// cancelAfter is a context whose Err turns to Canceled after n calls, to
// cancel a check deterministically while porcupine is searching.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCheckCanceledMidSearch(t *testing.T) {
	// Not linearizable; a cancellation must not be reported as a violation.
	r := build(t, "0",
		span{client: 0, op: Write, value: "1", call: 0, ret: 10},
		span{client: 1, op: Read, value: "1", call: 0, ret: 10},
		span{client: 2, op: Read, value: "0", call: 20, ret: 30},
	)
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(3)
	v, _, err := Check(ctx, r.Operations(), "0", 0)
	if v != Unknown || !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, %v; want Unknown, context.Canceled", v, err)
	}
}

func TestWriteVisualization(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []span
	}{
		{"linearizable", []span{
			{client: 0, op: Write, value: "1", call: 0, ret: 10},
			{client: 1, op: Read, value: "1", call: 20, ret: 30},
		}},
		{"stale", []span{
			{client: 0, op: Write, value: "1", unknown: true, call: 0, ret: 10},
			{client: 1, op: Read, value: "1", call: 20, ret: 30},
			{client: 1, op: Read, value: "0", call: 40, ret: 50},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(t, "0", tc.spans...)
			_, info := check(t, r)
			path, err := visualize(filepath.Join(t.TempDir(), "sub"), "viz", r.initial, info)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 || !strings.Contains(string(data), "<html") || !strings.Contains(string(data), `write(\"1\")`) {
				t.Errorf("visualization (%d bytes) lacks html or the operations", len(data))
			}
		})
	}
	if _, err := visualize(filepath.Join(t.TempDir(), "missing\x00"), "viz", "", porcupine.LinearizationInfo{}); err == nil {
		t.Error("bad path accepted")
	}
}

// fakeTB records what the Require helpers report.
type fakeTB struct {
	t      *testing.T
	logs   []string
	errors []string
	attrs  []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) TempDir() string { return f.t.TempDir() }
func (f *fakeTB) Attr(key, value string) {
	f.attrs = append(f.attrs, key+" "+value)
}

var _ TB = (*testing.T)(nil)

func TestRequireHelpers(t *testing.T) {
	stale := build(t, "0",
		span{client: 0, op: Write, value: "1", call: 0, ret: 10},
		span{client: 1, op: Read, value: "0", call: 20, ret: 30},
	)
	fresh := build(t, "0",
		span{client: 0, op: Write, value: "1", call: 0, ret: 10},
		span{client: 1, op: Read, value: "1", call: 20, ret: 30},
	)

	for _, tc := range []struct {
		name    string
		require func(TB, *Recorder, string)
		r       *Recorder
		wantErr string
	}{
		{"linearizable ok", RequireLinearizable, fresh, ""},
		{"not linearizable ok", RequireNotLinearizable, stale, ""},
		{"linearizable fails", RequireLinearizable, stale, "S1 refuted: history is not linearizable; want linearizable"},
		{"not linearizable fails", RequireNotLinearizable, fresh, "S2 refuted: history is linearizable; want not linearizable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTB{t: t}
			claim := "S1"
			if strings.Contains(tc.wantErr, "S2") {
				claim = "S2"
			}
			tc.require(f, tc.r, claim)
			if tc.wantErr == "" {
				if len(f.errors)+len(f.logs)+len(f.attrs) != 0 {
					t.Fatalf("unexpected output: %q %q %q", f.errors, f.logs, f.attrs)
				}
				return
			}
			if len(f.errors) != 1 || f.errors[0] != tc.wantErr {
				t.Fatalf("errors = %q; want [%q]", f.errors, tc.wantErr)
			}
			if want := "zk19.verdict." + claim + " refuted"; len(f.attrs) != 1 || f.attrs[0] != want {
				t.Errorf("attributes %q; want [%q]: porcupine's verdict is the claim's own observation", f.attrs, want)
			}
			var path string
			for _, l := range f.logs {
				if p, ok := strings.CutPrefix(l, claim+": porcupine visualization: "); ok {
					path = p
				}
			}
			if path == "" {
				t.Fatalf("no visualization path logged: %q", f.logs)
			}
			t.Cleanup(func() { _ = os.Remove(path) })
			if filepath.Dir(path) != visualizationDir() || !strings.HasPrefix(filepath.Base(path), claim+"-") {
				t.Errorf("visualization path %s; want %s/%s-<random>.html", path, visualizationDir(), claim)
			}
			if st, err := os.Stat(path); err != nil || st.Size() == 0 {
				t.Errorf("visualization %s: %v", path, err)
			}
			if !strings.Contains(strings.Join(f.logs, "\n"), `1 ok read "`) {
				t.Errorf("history not logged: %q", f.logs)
			}
		})
	}
}

func TestVisualizationIsNamedAfterTheClaim(t *testing.T) {
	dir := t.TempDir()
	for claim, prefix := range map[string]string{
		"S2":             "S2-",
		"S2: stale read": "S2: stale read-",
		"S2/sync":        "porcupine-",
		"../../etc/motd": "porcupine-",
	} {
		path, err := visualize(dir, claim, "0", porcupine.LinearizationInfo{})
		if err != nil {
			t.Errorf("visualize(%q): %v", claim, err)
			continue
		}
		if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), prefix) || !strings.HasSuffix(path, ".html") {
			t.Errorf("visualize(%q) wrote %s; want %s/%s<random>.html", claim, path, dir, prefix)
		}
	}
}

// TestConcurrentRecording records a history from goroutines operating on a
// mutex-protected register (linearizable) and on one whose reads come from
// a snapshot taken before any write (not linearizable).
func TestConcurrentRecording(t *testing.T) {
	run := func(stale bool) *Recorder {
		r := NewRecorder("0")
		var (
			mu  sync.Mutex
			reg = "0"
			wg  sync.WaitGroup
		)
		snapshot := reg
		for c := range 8 {
			wg.Go(func() {
				for i := range 20 {
					if (c+i)%2 == 0 {
						v := fmt.Sprintf("%d.%d", c, i)
						call := r.Invoke(c, Write, v)
						mu.Lock()
						reg = v
						mu.Unlock()
						call.Ok("")
						continue
					}
					call := r.Invoke(c, Read, "")
					mu.Lock()
					v := reg
					mu.Unlock()
					if stale && c == 0 {
						v = snapshot
					}
					call.Ok(v)
				}
			})
		}
		wg.Wait()
		return r
	}
	RequireLinearizable(t, run(false), "mutex register")
	RequireNotLinearizable(t, run(true), "snapshot reads")
}

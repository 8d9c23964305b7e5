package fencetest_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
	"github.com/zk19/zk19/internal/server/sqldb"
)

func TestMain(m *testing.M) {
	// The PostgreSQL server of this binary (internal/server/sqldb), started on
	// first use, is stopped at the end and on Ctrl-C.
	goleak.VerifyTestMain(sqldb.Wrap(m))
}

func g(domain, seq int64) fence.Token { return fence.Token{Domain: domain, Seq: seq} }

func TestUnfencedAcceptsEverything(t *testing.T) {
	ctx := context.Background()
	u := fencetest.NewUnfenced()
	defer u.Close()
	steps := []struct {
		tok   fence.Token
		value string
		mark  fence.Token
		prev  string
	}{
		{g(1, 5), "a", g(1, 5), ""},
		{g(1, 4), "stale", g(1, 5), "a"},
		{g(2, 0), "b", g(2, 0), "stale"},
		{g(1, 9), "old domain", g(2, 0), "b"},
	}
	for i, s := range steps {
		res, err := u.Write(ctx, s.tok, s.value)
		want := fence.Result{Accepted: true, Mark: s.mark, Prev: s.prev, Commit: uint64(i + 1)}
		if err != nil || res != want {
			t.Fatalf("step %d: Write = %+v, %v; want %+v", i, res, err, want)
		}
	}
	if v, m, ok, err := u.Read(ctx); err != nil || !ok || v != "old domain" || m != g(2, 0) {
		t.Fatalf("Read = %q, %v, %v, %v; want \"old domain\", g2/0, true", v, m, ok, err)
	}
	// A token equal to the mark but of another lock is not larger: the
	// value changes, the mark stays the first lock's.
	other := fence.Token{Lock: fence.LockID("/another/lock"), Domain: 2, Seq: 0}
	if res, err := u.Write(ctx, other, "another lock"); err != nil || !res.Accepted || res.Mark != g(2, 0) {
		t.Fatalf("Write of %#v, equal to the mark g2/0 of another lock: got %+v, %v; want accepted with the mark left at g2/0 (%#v)", other, res, err, g(2, 0))
	}
}

// The controls are wrong about fencing only: a proof that uses one must not
// see it differ from a fenced resource in anything else.
func TestControlsClosedAndCanceled(t *testing.T) {
	for _, c := range []struct {
		name string
		r    fence.Resource
	}{
		{"unfenced", fencetest.NewUnfenced()},
		{"check-then-write", fencetest.NewCheckThenWrite(nil)},
		{"check-then-write zero value", new(fencetest.CheckThenWrite)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			canceled, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := r.Write(canceled, g(1, 1), "x"); !errors.Is(err, context.Canceled) {
				t.Errorf("Write(canceled ctx) err = %v; want context.Canceled", err)
			}
			if _, _, ok, err := r.Read(canceled); !errors.Is(err, context.Canceled) || ok {
				t.Errorf("Read(canceled ctx) before any write: got ok %v, err %v; want ok false (no write accepted: Resource.Read's doc) and context.Canceled", ok, err)
			}
			if res, err := r.Write(context.Background(), g(1, 1), "x"); err != nil || !res.Accepted {
				t.Fatalf("first Write = %+v, %v; want accepted", res, err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Write(context.Background(), g(1, 1), "x"); !errors.Is(err, fence.ErrClosed) {
				t.Errorf("Write after Close err = %v; want fence.ErrClosed", err)
			}
			if _, _, ok, err := r.Read(context.Background()); !errors.Is(err, fence.ErrClosed) || ok {
				t.Errorf("Read after Close: got ok %v, err %v; want ok false and fence.ErrClosed (Resource.Read's doc: ok only with a nil error)", ok, err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// gapWait bounds how long B's write may take to get into A's gap. It is
// not a sleep: B normally returns at once, and the bound only turns a
// control with no gap, where B would wait for A forever, into a failure.
const gapWait = 10 * time.Second

func TestCheckThenWriteAcceptsAStaleWriteInTheGap(t *testing.T) {
	ctx := context.Background()
	var r *fencetest.CheckThenWrite
	// Decided runs while A's compare has passed: B's larger token goes in.
	var once bool
	bDone := make(chan struct{})
	r = fencetest.NewCheckThenWrite(&fence.Trace{Decided: func(d fence.Decision) {
		if once || d.Token != g(1, 0) || !d.Marked {
			return
		}
		once = true
		go func() {
			defer close(bDone)
			if res, err := r.Write(ctx, g(1, 1), "new-owner"); err != nil || !res.Accepted {
				t.Errorf("B: got %+v, %v; want accepted", res, err)
			}
		}()
		select {
		case <-bDone:
		case <-time.After(gapWait):
			t.Errorf("B's write did not return within %v while A was between its compare and its write; want it in the gap", gapWait)
		}
	}})
	if _, err := r.Write(ctx, g(1, 0), "a"); err != nil {
		t.Fatal(err)
	}
	res, err := r.Write(ctx, g(1, 0), "stale-late")
	<-bDone
	v, mark, _, _ := r.Read(ctx)
	if err != nil || !res.Accepted || v != "stale-late" || mark != g(1, 1) {
		t.Fatalf("got %+v, %v, value %q, mark %v; want the stale write accepted over mark 1:1", res, err, v, mark)
	}
}

// markCleared is a fenced resource and the call that clears its mark.
type markCleared struct {
	fence.Resource
	clear func(context.Context) error
}

func openMemory(t *testing.T) markCleared {
	m := fence.NewMemory()
	t.Cleanup(func() { _ = m.Close() })
	return markCleared{m, func(ctx context.Context) error { return fencetest.ClearMark(ctx, m) }}
}

func openDurable(t *testing.T) markCleared {
	d, err := sqldb.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "fence.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return markCleared{d, func(ctx context.Context) error { return fencetest.ClearMark(ctx, d.Durable) }}
}

func openPostgresDurable(t *testing.T) markCleared {
	d := sqldb.OpenDurable(t)
	return markCleared{d, func(ctx context.Context) error { return fencetest.ClearMark(ctx, d) }}
}

func TestClearMarkLetsAnOldTokenIn(t *testing.T) {
	ctx := context.Background()
	for _, im := range []struct {
		name string
		open func(*testing.T) markCleared
	}{{"memory", openMemory}, {"durable", openDurable}, {"durable-postgres", openPostgresDurable}} {
		t.Run(im.name, func(t *testing.T) {
			r := im.open(t)
			if res, err := r.Write(ctx, g(0, 5), "a"); err != nil || !res.Accepted {
				t.Fatalf("Write(g0/5) = %+v, %v; want accepted", res, err)
			}
			canceled, cancel := context.WithCancel(ctx)
			cancel()
			if err := r.clear(canceled); !errors.Is(err, context.Canceled) {
				t.Errorf("ClearMark(canceled ctx) err = %v; want context.Canceled", err)
			}
			if _, m, ok, err := r.Read(ctx); err != nil || !ok || m != g(0, 5) {
				t.Fatalf("Read after a canceled ClearMark = mark %v, marked %v, %v; want g0/5 kept", m, ok, err)
			}
			if err := r.clear(ctx); err != nil {
				t.Fatal(err)
			}
			if v, _, ok, err := r.Read(ctx); err != nil || ok || v != "a" {
				t.Fatalf("Read after ClearMark = %q, marked %v, %v; want the value kept and no mark", v, ok, err)
			}
			res, err := r.Write(ctx, g(0, 4), "late")
			if err != nil || !res.Accepted || res.Mark != g(0, 4) || res.Prev != "a" {
				t.Fatalf("got %+v, %v; want a token below the forgotten mark accepted as the new mark", res, err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := r.clear(ctx); !errors.Is(err, fence.ErrClosed) {
				t.Errorf("ClearMark after Close: %v; want fence.ErrClosed", err)
			}
		})
	}
}

package zk19_test

// The lock benchmarks: handoff latency and contended throughput of the
// recipe in internal/lock, against go-zookeeper's zk.Lock and against the
// raw ZooKeeper calls they are built from, in the same run. The lockers
// here have no Probe: they measure what production code runs.

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/internal/fence"
	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// benchClients opens n quiet sessions named prefix0, prefix1, ...
func benchClients(b *testing.B, s *zkserver.Server, prefix string, n int) []*zkclient.Client {
	cs := make([]*zkclient.Client, n)
	for i := range cs {
		cs[i] = zkclient.Connect(b, fmt.Sprintf("%s%d", prefix, i), []string{s.Client}, zkclient.Quiet())
	}
	return cs
}

// BenchmarkLockHandoff measures the time from the holder's release call to
// the next holder's return from its acquisition, ours against
// go-zookeeper's zk.Lock, on the shared server in the same run. Before each
// release the waiter's watch on the holder's node is confirmed on the
// server (wchp), for both, so the interval is the handoff alone. Reported:
// the median. "floor" is the least a handoff can cost: one delete by the
// holder, then one getChildren by the next holder.
func BenchmarkLockHandoff(b *testing.B) {
	s := sharedServer(b)
	b.Run("ours", func(b *testing.B) {
		root := testRoot(b, benchClients(b, s, "D", 1)[0])
		cs := benchClients(b, s, "W", 2)
		ls := []*lock.Locker{lock.New(cs[0].Conn, root), lock.New(cs[1].Conn, root)}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		h, err := ls[0].Acquire(ctx)
		if err != nil {
			b.Fatalf("%v", err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w := (i + 1) % 2
			type res struct {
				h  *lock.Held
				at time.Time
				e  error
			}
			got := make(chan res, 1)
			go func() { nh, err := ls[w].Acquire(ctx); got <- res{nh, time.Now(), err} }()
			waitWatching(b, s, root, h.Path, cs[w].SessionHex())
			t0 := time.Now()
			if err := h.Release(ctx); err != nil {
				b.Fatalf("release: %v", err)
			}
			r := <-got
			if r.e != nil {
				b.Fatalf("acquire: %v", r.e)
			}
			lat = append(lat, r.at.Sub(t0))
			h = r.h
		}
		b.StopTimer()
		_ = h.Release(ctx)
		b.ReportMetric(medianMicros(lat), "µs-handoff-p50")
	})
	b.Run("zkLock", func(b *testing.B) {
		d := benchClients(b, s, "D", 1)[0]
		root := testRoot(b, d)
		cs := benchClients(b, s, "W", 2)
		ls := []*zk.Lock{zk.NewLock(cs[0].Conn, root, zk.WorldACL(zk.PermAll)), zk.NewLock(cs[1].Conn, root, zk.WorldACL(zk.PermAll))}
		if err := ls[0].Lock(); err != nil {
			b.Fatalf("%v", err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			hi, wi := i%2, (i+1)%2
			kids, _, err := d.Children(root)
			if err != nil || len(kids) != 1 {
				b.Fatalf("children: %v %v", kids, err)
			}
			got := make(chan time.Time, 1)
			errs := make(chan error, 1)
			go func() {
				if err := ls[wi].Lock(); err != nil {
					errs <- err
					return
				}
				got <- time.Now()
			}()
			waitWatching(b, s, root, root+"/"+kids[0], cs[wi].SessionHex())
			t0 := time.Now()
			if err := ls[hi].Unlock(); err != nil {
				b.Fatalf("unlock: %v", err)
			}
			select {
			case at := <-got:
				lat = append(lat, at.Sub(t0))
			case err := <-errs:
				b.Fatalf("lock: %v", err)
			}
		}
		b.StopTimer()
		_ = ls[b.N%2].Unlock()
		b.ReportMetric(medianMicros(lat), "µs-handoff-p50")
	})
	b.Run("floor", func(b *testing.B) {
		root := testRoot(b, benchClients(b, s, "D", 1)[0])
		cs := benchClients(b, s, "W", 2)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p, err := cs[i%2].Create(root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				b.Fatalf("create: %v", err)
			}
			b.StartTimer()
			t0 := time.Now()
			if err := cs[i%2].Delete(p, -1); err != nil {
				b.Fatalf("delete %s: %v", path.Base(p), err)
			}
			if _, _, err := cs[(i+1)%2].Children(root); err != nil {
				b.Fatalf("children: %v", err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		b.ReportMetric(medianMicros(lat), "µs-handoff-p50")
	})
}

func medianMicros(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}

// BenchmarkLockThroughput: acquire+release pairs per second with 4 sessions
// contending for one lock, against go-zookeeper's zk.Lock and raw
// create+delete pairs (the same two writes with no waiting), in the same
// run.
func BenchmarkLockThroughput(b *testing.B) {
	s := sharedServer(b)
	const workers = 4
	b.Run("lock", func(b *testing.B) {
		root := testRoot(b, benchClients(b, s, "D", 1)[0])
		var ls []*lock.Locker
		for _, c := range benchClients(b, s, "W", workers) {
			ls = append(ls, lock.New(c.Conn, root))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		pairsPerSecond(b, workers, func(w int) error {
			h, err := ls[w].Acquire(ctx)
			if err != nil {
				return err
			}
			return h.Release(ctx)
		})
	})
	b.Run("zkLock", func(b *testing.B) {
		root := testRoot(b, benchClients(b, s, "D", 1)[0])
		var ls []*zk.Lock
		for _, c := range benchClients(b, s, "W", workers) {
			ls = append(ls, zk.NewLock(c.Conn, root, zk.WorldACL(zk.PermAll)))
		}
		pairsPerSecond(b, workers, func(w int) error {
			if err := ls[w].Lock(); err != nil {
				return err
			}
			return ls[w].Unlock()
		})
	})
	// Raw create+delete pairs: from as many sessions in parallel, and from
	// one session (a lock serializes its holders, so one handoff at a time
	// is its natural baseline).
	raw := func(b *testing.B, workers int) {
		root := testRoot(b, benchClients(b, s, "D", 1)[0])
		cs := benchClients(b, s, "W", workers)
		pairsPerSecond(b, workers, func(w int) error {
			p, err := cs[w].Create(root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				return err
			}
			return cs[w].Delete(p, -1)
		})
	}
	b.Run("raw", func(b *testing.B) { raw(b, workers) })
	b.Run("raw-one-session", func(b *testing.B) { raw(b, 1) })
}

// pairsPerSecond runs op b.N times spread over workers goroutines and
// reports the rate.
func pairsPerSecond(b *testing.B, workers int, op func(w int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := op(w); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatalf("%v", err)
	default:
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "pairs/s")
}

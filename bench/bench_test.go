package bench_test

// The lock benchmarks: handoff latency and contended throughput of the
// recipe in package lock, against go-zookeeper's zk.Lock and against the
// raw ZooKeeper calls they are built from, in the same run. The lockers
// here have no Trace: they measure what production code runs.

import (
	"context"
	"fmt"
	"path"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

// benchClients opens n quiet sessions named prefix0, prefix1, ...
func benchClients(b *testing.B, s *zkserver.Server, prefix string, n int) []*zkclient.Client {
	cs := make([]*zkclient.Client, n)
	for i := range cs {
		cs[i] = zkclient.Connect(b, fmt.Sprintf("%s%d", prefix, i), []string{s.Client}, zkclient.Quiet())
	}
	return cs
}

// The lock benchmarks interleave what they compare: one handoff of each
// kind per iteration (which goes first rotates), and blocks of pairs of
// each kind in turn for throughput. Run one after the other, kinds see
// different moments of a 2-core machine that also runs the server, and the
// drift between them (10% from run to run here) swamps a difference of a
// few percent; interleaved, it falls on all of them alike.

// handoffKind measures one handoff per call.
type handoffKind struct {
	name string
	next func() time.Duration
}

// BenchmarkLockHandoff measures the time from the holder's release call to
// the next holder's return from its acquisition, ours against
// go-zookeeper's zk.Lock, on the shared server. Before each release the
// waiter's watch on the holder's node is confirmed on the server (wchp),
// for both, so the interval is the handoff alone. "floor" is the least a
// handoff can cost: one delete by the holder, then one getChildren by the
// next holder. Reported: the median of each, and the ratios.
func BenchmarkLockHandoff(b *testing.B) {
	s := harness.SharedServer(b)
	d := benchClients(b, s, "O", 1)[0]
	root := harness.TestRoot(b, d)
	kinds := []handoffKind{oursHandoff(b, s, subRoot(b, d, root, "ours")), zkLockHandoff(b, s, d, subRoot(b, d, root, "zkLock")), floorHandoff(b, s, subRoot(b, d, root, "floor"))}
	lat := make([][]time.Duration, len(kinds))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range kinds {
			k := (i + j) % len(kinds)
			lat[k] = append(lat[k], kinds[k].next())
		}
	}
	b.StopTimer()
	for k, kind := range kinds {
		b.ReportMetric(harness.MedianMicros(lat[k]), "µs-"+kind.name)
	}
	b.ReportMetric(harness.MedianMicros(lat[0])/harness.MedianMicros(lat[1]), "ours/zkLock")
	b.ReportMetric(harness.MedianMicros(lat[0])/harness.MedianMicros(lat[2]), "ours/floor")
}

// subRoot makes the persistent parent root/name.
func subRoot(b *testing.B, d *zkclient.Client, root, name string) string {
	p := root + "/" + name
	if _, err := d.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		b.Fatalf("create %s: %v", p, err)
	}
	return p
}

// oursHandoff hands our lock between two sessions, one handoff per call.
func oursHandoff(b *testing.B, s *zkserver.Server, root string) handoffKind {
	cs := benchClients(b, s, "W", 2)
	ls := []*lock.Locker{lock.New(cs[0].Conn, root), lock.New(cs[1].Conn, root)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	b.Cleanup(cancel)
	h, err := ls[0].Acquire(ctx)
	if err != nil {
		b.Fatalf("%v", err)
	}
	b.Cleanup(func() { _ = h.Release(ctx) })
	w := 0
	return handoffKind{"ours", func() time.Duration {
		w = 1 - w
		type res struct {
			h  *lock.Held
			at time.Time
			e  error
		}
		got := make(chan res, 1)
		go func() { nh, err := ls[w].Acquire(ctx); got <- res{nh, time.Now(), err} }()
		scene.WaitWatching(b, s, root, h.Path, cs[w].SessionHex())
		t0 := time.Now()
		if err := h.Release(ctx); err != nil {
			b.Fatalf("release: %v", err)
		}
		r := <-got
		if r.e != nil {
			b.Fatalf("acquire: %v", r.e)
		}
		h = r.h
		return r.at.Sub(t0)
	}}
}

// zkLockHandoff hands go-zookeeper's zk.Lock between two sessions; d lists
// the holder's node, which zk.Lock does not expose.
func zkLockHandoff(b *testing.B, s *zkserver.Server, d *zkclient.Client, root string) handoffKind {
	cs := benchClients(b, s, "Z", 2)
	ls := []*zk.Lock{zk.NewLock(cs[0].Conn, root, zk.WorldACL(zk.PermAll)), zk.NewLock(cs[1].Conn, root, zk.WorldACL(zk.PermAll))}
	if err := ls[0].Lock(); err != nil {
		b.Fatalf("%v", err)
	}
	hi := 0
	b.Cleanup(func() { _ = ls[hi].Unlock() })
	return handoffKind{"zkLock", func() time.Duration {
		wi := 1 - hi
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
		scene.WaitWatching(b, s, root, root+"/"+kids[0], cs[wi].SessionHex())
		t0 := time.Now()
		if err := ls[hi].Unlock(); err != nil {
			b.Fatalf("unlock: %v", err)
		}
		hi = wi
		select {
		case at := <-got:
			return at.Sub(t0)
		case err := <-errs:
			b.Fatalf("lock: %v", err)
		}
		return 0
	}}
}

// floorHandoff: a delete by one session, then a getChildren by the other.
func floorHandoff(b *testing.B, s *zkserver.Server, root string) handoffKind {
	cs := benchClients(b, s, "F", 2)
	i := 0
	return handoffKind{"floor", func() time.Duration {
		i++
		p, err := cs[i%2].Create(root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			b.Fatalf("create: %v", err)
		}
		t0 := time.Now()
		if err := cs[i%2].Delete(p, -1); err != nil {
			b.Fatalf("delete %s: %v", path.Base(p), err)
		}
		if _, _, err := cs[(i+1)%2].Children(root); err != nil {
			b.Fatalf("children: %v", err)
		}
		return time.Since(t0)
	}}
}

// throughputBlock is how many pairs one kind makes before the next kind's
// turn.
const throughputBlock = 50

// pairKind makes acquire+release pairs (or raw create+delete pairs) from
// its sessions; op runs one pair as worker w.
type pairKind struct {
	name    string
	workers int
	op      func(w int) error
}

// BenchmarkLockThroughput: acquire+release pairs per second with 4 sessions
// contending for one lock, ours against go-zookeeper's zk.Lock, and raw
// create+delete pairs (the same two writes with no waiting) from 4 sessions
// in parallel and from one session (a lock serializes its holders, so one
// handoff at a time is its natural baseline). The kinds take turns, a
// block of pairs each, b.N pairs in all for each.
func BenchmarkLockThroughput(b *testing.B) {
	s := harness.SharedServer(b)
	d := benchClients(b, s, "O", 1)[0]
	root := harness.TestRoot(b, d)
	const workers = 4
	kinds := []pairKind{
		oursPairs(b, s, subRoot(b, d, root, "ours"), workers),
		zkLockPairs(b, s, subRoot(b, d, root, "zkLock"), workers),
		rawPairs(b, s, subRoot(b, d, root, "raw"), "raw", workers),
		rawPairs(b, s, subRoot(b, d, root, "raw1"), "raw-one-session", 1),
	}
	took := make([]time.Duration, len(kinds))
	b.ResetTimer()
	for done, round := 0, 0; done < b.N; round++ {
		n := min(throughputBlock, b.N-done)
		for j := range kinds {
			k := (round + j) % len(kinds)
			took[k] += kinds[k].block(b, n)
		}
		done += n
	}
	b.StopTimer()
	for k, kind := range kinds {
		b.ReportMetric(float64(b.N)/took[k].Seconds(), kind.name+"-pairs/s")
	}
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "ours/zkLock")
}

func oursPairs(b *testing.B, s *zkserver.Server, root string, workers int) pairKind {
	var ls []*lock.Locker
	for _, c := range benchClients(b, s, "W", workers) {
		ls = append(ls, lock.New(c.Conn, root))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	b.Cleanup(cancel)
	return pairKind{"ours", workers, func(w int) error {
		h, err := ls[w].Acquire(ctx)
		if err != nil {
			return err
		}
		return h.Release(ctx)
	}}
}

func zkLockPairs(b *testing.B, s *zkserver.Server, root string, workers int) pairKind {
	var ls []*zk.Lock
	for _, c := range benchClients(b, s, "Z", workers) {
		ls = append(ls, zk.NewLock(c.Conn, root, zk.WorldACL(zk.PermAll)))
	}
	return pairKind{"zkLock", workers, func(w int) error {
		if err := ls[w].Lock(); err != nil {
			return err
		}
		return ls[w].Unlock()
	}}
}

func rawPairs(b *testing.B, s *zkserver.Server, root, name string, workers int) pairKind {
	cs := benchClients(b, s, "R", workers)
	return pairKind{name, workers, func(w int) error {
		p, err := cs[w].Create(root+"/"+uuid.NewString()+fence.LockInfix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			return err
		}
		return cs[w].Delete(p, -1)
	}}
}

// block makes n pairs spread over the kind's workers and returns how long
// they took.
func (k pairKind) block(b *testing.B, n int) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k.workers)
	start := time.Now()
	for w := 0; w < k.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := k.op(w); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	el := time.Since(start)
	select {
	case err := <-errs:
		b.Fatalf("%s: %v", k.name, err)
	default:
	}
	return el
}

// BenchmarkProxyOverhead measures getData through the client proxy against
// getData direct, in one run: median latency added and throughput ratio.
func BenchmarkProxyOverhead(b *testing.B) {
	s := harness.SharedServer(b)
	p, err := faultproxy.New(s.Client, faultproxy.WithZooKeeperFrames())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	direct := zkclient.Connect(b, "direct", []string{s.Client}, zkclient.Quiet())
	proxied := zkclient.Connect(b, "proxied", []string{p.Addr()}, zkclient.Quiet())
	measure := func(c *zkclient.Client, n int) (median time.Duration, perSec float64) {
		lat := make([]time.Duration, n)
		start := time.Now()
		for i := range lat {
			t0 := time.Now()
			if _, _, err := c.Get("/"); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}
		total := time.Since(start)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return lat[n/2], float64(n) / total.Seconds()
	}
	n := max(b.N, 200)
	b.ResetTimer()
	dm, dr := measure(direct, n)
	pm, pr := measure(proxied, n)
	b.ReportMetric(float64(dm.Microseconds()), "µs-median-direct")
	b.ReportMetric(float64(pm.Microseconds()), "µs-median-proxied")
	b.ReportMetric(float64((pm - dm).Microseconds()), "µs-added")
	b.ReportMetric(pr/dr, "throughput-ratio")
}

package zklinks

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

func TestLinkedEnsembleHasNoBypass(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(map[int]string{3: "three", 5: "five"}[n], func(t *testing.T) {
			e, l := StartLinkedEnsemble(t, n, zkserver.WithTickTime(200*time.Millisecond))
			if _, err := e.Leader(5 * time.Second); err != nil {
				t.Fatal(err)
			}
			if by := l.Bypasses(); len(by) != 0 {
				t.Fatalf("got bypasses %v; want none", by)
			}
			if p := l.Proxy(zkserver.ElectionPort, 1, 2); p == nil || p.Stats().Accepted == 0 {
				t.Logf("election proxy 1->2 stats: %+v", p.Stats())
			}
		})
	}
}

// stamped is a session state with the time the client reported it.
type stamped struct {
	state zk.State
	at    time.Time
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// connectStamped opens a go-zookeeper session to addr and returns the
// states it reports, stamped on arrival. Close is registered as cleanup.
func connectStamped(t *testing.T, addr string, sessionTimeout time.Duration) <-chan stamped {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, sessionTimeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	out := make(chan stamped, 256)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range events {
			if ev.Type == zk.EventSession {
				out <- stamped{ev.State, time.Now()}
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); <-drained })
	return out
}

// awaitState receives states until want arrives, and returns when it did.
func awaitState(t *testing.T, states <-chan stamped, want zk.State, within time.Duration) time.Time {
	t.Helper()
	var seen []zk.State
	deadline := time.After(within)
	for {
		select {
		case s := <-states:
			if s.state == want {
				return s.at
			}
			seen = append(seen, s.state)
		case <-deadline:
			t.Fatalf("got session states %v in %v; want %v", seen, within, want)
		}
	}
}

// TestHealEndsAClientPartitionAtOnce: a go-zookeeper client behind a
// blackholed proxy gives up on its silent connection after one receive
// timeout and dials again; the handshake on the new connection is lost too,
// and the client waits 10 receive timeouts for its reply. Heal resets that
// connection, so the client dials again at once: it has a session again in
// a few seconds, not 10 receive timeouts.
func TestHealEndsAClientPartitionAtOnce(t *testing.T) {
	zkserver.RequireFaults(t)
	const sessionTimeout = 2 * time.Second
	recvTimeout := sessionTimeout * 2 / 3 // go-zookeeper's
	s := zkserver.Start(t, zkserver.WithTickTime(100*time.Millisecond))
	p, err := faultproxy.New(s.Client, faultproxy.WithName("client"), faultproxy.WithZooKeeperFrames(), faultproxy.WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	states := connectStamped(t, p.Addr(), sessionTimeout)
	awaitState(t, states, zk.StateHasSession, 10*time.Second)

	p.Blackhole(faultproxy.Both)
	awaitState(t, states, zk.StateDisconnected, 3*recvTimeout)
	tb.WaitFor(t, 3*recvTimeout, "the client's new connection to lose its handshake", func() (bool, string) {
		st := p.Stats()
		return st.Accepted >= 2 && st.Holed >= 2, fmt.Sprintf("%+v", st)
	})
	healed := time.Now()
	p.Heal()
	took := awaitState(t, states, zk.StateHasSession, 15*recvTimeout).Sub(healed)
	bound := 3 * recvTimeout
	t.Logf("the client had a session again %v after Heal (receive timeout %v; a silent connection costs 10 of them, %v); %d connections reset",
		took.Round(time.Millisecond), recvTimeout, 10*recvTimeout, p.Stats().Reset)
	if took > bound {
		t.Fatalf("got a session again %v after Heal; want within %v (3 receive timeouts)", took.Round(time.Millisecond), bound.Round(time.Millisecond))
	}
}

// linkStats sums the counters of every link proxy between a and b.
func linkStats(l *Links, a, b int) faultproxy.Stats {
	var sum faultproxy.Stats
	for _, k := range allKinds {
		for _, key := range [][2]int{{a, b}, {b, a}} {
			if p := l.Proxy(k, key[0], key[1]); p != nil {
				s := p.Stats()
				sum.Accepted += s.Accepted
				sum.Open += s.Open
				sum.Holed += s.Holed
				sum.Reset += s.Reset
			}
		}
	}
	return sum
}

// TestLinksHealResetsTheLinksWithAHole: a follower whose links to the
// leader are blackholed both ways leaves it, and link connections lose
// bytes. Heal resets them rather than let them carry a stream with a hole,
// and the follower follows the leader again. (Here the rejoin takes well
// under a second with or without the reset: the servers rejoin over new
// connections. The reset is what keeps a damaged stream from going on.)
func TestLinksHealResetsTheLinksWithAHole(t *testing.T) {
	const tick = 200 * time.Millisecond
	e, l := StartLinkedEnsemble(t, 3, zkserver.WithTickTime(tick))
	leader, err := e.Leader(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var f *zkserver.Server
	for _, s := range e.Servers {
		if s != leader {
			f = s
			break
		}
	}
	l.Blackhole(leader.ID, f.ID)
	l.Blackhole(f.ID, leader.ID)
	tb.WaitFor(t, 20*5*tick, f.Label+" to leave the leader over links with a hole", func() (bool, string) {
		m, err := f.Mode()
		s := linkStats(l, leader.ID, f.ID)
		return m != "follower" && s.Holed > 0, fmt.Sprintf("mode %q (%v), link connections with a hole: %d", m, err, s.Holed)
	})
	holed := linkStats(l, leader.ID, f.ID).Holed
	healed := time.Now()
	l.Heal()
	s := linkStats(l, leader.ID, f.ID)
	if s.Reset == 0 || s.Holed != 0 {
		t.Fatalf("got %d link connections reset and %d left with a hole, of %d with a hole just before Heal; want them reset, none left", s.Reset, s.Holed, holed)
	}
	if err := f.WaitMode(20*time.Second, "follower"); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s follows again %v after Heal; %d link connections with a hole were reset", f.Label, time.Since(healed).Round(time.Millisecond), s.Reset)
}

func BenchmarkStartLinkedEnsemble3(b *testing.B) {
	zkserver.BenchReady(b, func(t zkserver.TB) { StartLinkedEnsemble(t, 3) })
}

func BenchmarkStartLinkedEnsemble5(b *testing.B) {
	zkserver.BenchReady(b, func(t zkserver.TB) { StartLinkedEnsemble(t, 5) })
}

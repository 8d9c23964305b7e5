package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/server/tb"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// within bounds every wait in these tests; silence is how long a read must
// stay empty to count as "nothing arrived".
const (
	within  = 5 * time.Second
	silence = 150 * time.Millisecond
)

// upstreamServer accepts connections and hands them to the test.
type upstreamServer struct {
	ln    net.Listener
	conns chan net.Conn
	wg    sync.WaitGroup
	mu    sync.Mutex
	all   []net.Conn
}

func newUpstream(t testing.TB) *upstreamServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveUpstream(t, ln)
}

func serveUpstream(t testing.TB, ln net.Listener) *upstreamServer {
	s := &upstreamServer{ln: ln, conns: make(chan net.Conn, 64)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.all = append(s.all, c)
			s.mu.Unlock()
			s.conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.all {
			c.Close()
		}
	})
	return s
}

func (s *upstreamServer) addr() string { return s.ln.Addr().String() }

// accept returns the next connection the upstream accepted.
func (s *upstreamServer) accept(t testing.TB) net.Conn {
	t.Helper()
	select {
	case c := <-s.conns:
		return c
	case <-time.After(within):
		t.Fatal("upstream accepted no connection")
		return nil
	}
}

// logSink collects a proxy's log lines and mirrors them to the test log.
type logSink struct {
	t     testing.TB
	lines chan string
}

func newLogSink(t testing.TB) *logSink {
	return &logSink{t: t, lines: make(chan string, 1024)}
}

func (l *logSink) logf(format string, args ...any) {
	line := strings.TrimSpace(fmt.Sprintf(format, args...))
	l.t.Log(line)
	select {
	case l.lines <- line:
	default:
	}
}

// waitLine waits for a log line containing substr.
func (l *logSink) waitLine(t testing.TB, substr string) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line := <-l.lines:
			if strings.Contains(line, substr) {
				return line
			}
		case <-deadline:
			t.Fatalf("no log line containing %q", substr)
			return ""
		}
	}
}

// newProxy starts a proxy logging to the test and closes it at cleanup.
func newProxy(t testing.TB, upstream string, opts ...Option) (*Proxy, *logSink) {
	t.Helper()
	sink := newLogSink(t)
	opts = append([]Option{WithName("test"), WithLogf(sink.logf)}, opts...)
	p, err := New(upstream, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p, sink
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, within)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t testing.TB, c net.Conn, b []byte) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(within))
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func readN(t testing.TB, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return b
}

func expectRead(t testing.TB, c net.Conn, want string) {
	t.Helper()
	if got := string(readN(t, c, len(want))); got != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}

// passes writes s on from and expects it on to.
func passes(t testing.TB, from, to net.Conn, s string) {
	t.Helper()
	write(t, from, []byte(s))
	expectRead(t, to, s)
}

// readOne reads at most one byte from c, giving up after d.
func readOne(c net.Conn, d time.Duration) (int, error) {
	c.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	return c.Read(b[:])
}

// expectSilence proves that nothing arrives on c within a bounded time and
// that c is still open (the read times out rather than failing).
func expectSilence(t testing.TB, c net.Conn) {
	t.Helper()
	n, err := readOne(c, silence)
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("expected silence on an open socket, got %d bytes, err %v", n, err)
	}
}

// expectClosed proves that c's peer closed: a read returns EOF or a reset
// before the deadline, with no data.
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()
	n, err := readOne(c, within)
	if n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("expected the connection to be closed, got %d bytes, err %v", n, err)
	}
}

// expectReset proves that c was reset (RST), not closed cleanly: a read
// fails with ECONNRESET before the deadline.
func expectReset(t testing.TB, c net.Conn) {
	t.Helper()
	n, err := readOne(c, within)
	if n != 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("got %d bytes, err %v; want the connection reset (ECONNRESET)", n, err)
	}
}

// waitStats waits, with the suite's one bounded wait, until cond holds for
// the proxy's counters; if it gives up it shows the last counters seen.
func waitStats(t testing.TB, p *Proxy, what string, cond func(Stats) bool) {
	t.Helper()
	tb.WaitFor(t, within, what, func() (bool, string) {
		s := p.Stats()
		return cond(s), fmt.Sprintf("%+v", s)
	})
}

// counter is one byte count of Stats, named for a wait.
type counter struct {
	name string
	of   func(Stats) int64
}

var (
	upHeld        = counter{"bytes held up", func(s Stats) int64 { return s.UpHeld }}
	downHeld      = counter{"bytes held down", func(s Stats) int64 { return s.DownHeld }}
	upDiscarded   = counter{"bytes discarded up", func(s Stats) int64 { return s.UpDiscarded }}
	downDiscarded = counter{"bytes discarded down", func(s Stats) int64 { return s.DownDiscarded }}
)

// sendInto writes s on c and waits until the proxy counts its bytes in k:
// they were held, or discarded, not delivered.
func sendInto(t testing.TB, p *Proxy, c net.Conn, s string, k counter) {
	t.Helper()
	want := k.of(p.Stats()) + int64(len(s))
	write(t, c, []byte(s))
	waitStats(t, p, fmt.Sprintf("%d %s", want, k.name), func(st Stats) bool { return k.of(st) == want })
}

// freeAddr returns a loopback address nothing listens on yet: a port
// reserved, then given back.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// linked starts an upstream and a proxy in front of it, and opens one
// connection through them.
func linked(t testing.TB, opts ...Option) (p *Proxy, up *upstreamServer, client, server net.Conn) {
	t.Helper()
	up = newUpstream(t)
	p, _ = newProxy(t, up.addr(), opts...)
	client, server = connect(t, p, up)
	return p, up, client, server
}

// connect dials the proxy and returns the client socket and the upstream's
// side of the same proxied connection.
func connect(t testing.TB, p *Proxy, up *upstreamServer) (client, server net.Conn) {
	t.Helper()
	before := p.ConnCount()
	client = dial(t, p.Addr())
	server = up.accept(t)
	waitStats(t, p, "connection to be established", func(s Stats) bool { return s.Open > before })
	return client, server
}

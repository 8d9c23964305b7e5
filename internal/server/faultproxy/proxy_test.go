package faultproxy

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPassThrough: with no fault, bytes pass both ways unchanged (1 MiB
// included), and a close on one side ends the proxied connection.
func TestPassThrough(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr())
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want 127.0.0.1:port", p.Addr())
	}
	client, server := connect(t, p, up)
	passes(t, client, server, "hello")
	passes(t, server, client, "world!")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	go client.Write(big)
	if got := readN(t, server, len(big)); !bytes.Equal(got, big) {
		t.Fatal("1 MiB payload corrupted")
	}
	// The pipe counts bytes after its write returns, so the server can
	// have read them before they are counted: wait for the count.
	upBytes := int64(5 + len(big))
	waitStats(t, p, fmt.Sprintf("1 connection accepted and open, %d bytes delivered up and 6 down", upBytes), func(s Stats) bool {
		return s.Accepted == 1 && s.Open == 1 && s.UpBytes == upBytes && s.DownBytes == 6
	})
	// The client closes: the upstream sees EOF, closes too, and the
	// proxied connection goes away.
	client.Close()
	expectClosed(t, server)
	server.Close()
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
}

// TestHalfClosePropagates: a client's half-close reaches the upstream as
// EOF after its data, and replies still flow back.
func TestHalfClosePropagates(t *testing.T) {
	p, _, client, server := linked(t)
	write(t, client, []byte("request"))
	if err := client.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	expectRead(t, server, "request")
	expectClosed(t, server) // EOF after the data
	// The other direction still works after the half-close.
	passes(t, server, client, "late reply")
	server.Close()
	expectClosed(t, client)
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
}

// TestUpstreamCloseClosesClient: the upstream's last bytes and its close
// reach the client.
func TestUpstreamCloseClosesClient(t *testing.T) {
	p, _, client, server := linked(t)
	write(t, server, []byte("bye"))
	server.Close()
	expectRead(t, client, "bye")
	expectClosed(t, client)
	client.Close()
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
}

// TestHoldThenReleaseDeliversInOrder: held bytes are kept, in order, and
// delivered on Release; the other direction passes meanwhile.
func TestHoldThenReleaseDeliversInOrder(t *testing.T) {
	p, _, client, server := linked(t)
	passes(t, client, server, "before-")

	p.Hold(Up)
	parts := []string{"one-", "two-", "three-", strings.Repeat("x", 100000)}
	total := 0
	for _, s := range parts {
		write(t, client, []byte(s))
		total += len(s)
	}
	waitStats(t, p, "all bytes held", func(s Stats) bool { return s.UpHeld == int64(total) })
	expectSilence(t, server)
	// The other direction still passes while Up is held.
	passes(t, server, client, "down-ok")

	p.Release(Up)
	expectRead(t, server, strings.Join(parts, ""))
	passes(t, client, server, "after")
	if s := p.Stats(); s.UpHeld != 0 || s.UpDiscarded != 0 {
		t.Fatalf("stats after release %+v", s)
	}
}

// TestHoldBothAppliesToNewConnections: a hold set before a connection opens
// holds its bytes too, and each direction is released on its own.
func TestHoldBothAppliesToNewConnections(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr())
	p.Hold(Both)
	client, server := connect(t, p, up)
	write(t, client, []byte("up"))
	write(t, server, []byte("down"))
	waitStats(t, p, "bytes held", func(s Stats) bool { return s.UpHeld == 2 && s.DownHeld == 4 })
	expectSilence(t, server)
	expectSilence(t, client)
	p.Release(Down)
	expectRead(t, client, "down")
	expectSilence(t, server)
	p.Release(Up)
	expectRead(t, server, "up")
}

// TestHoldDelaysEOF: a hold keeps the client's close behind its bytes.
func TestHoldDelaysEOF(t *testing.T) {
	p, _, client, server := linked(t)
	p.Hold(Up)
	write(t, client, []byte("last words"))
	client.Close()
	waitStats(t, p, "bytes held", func(s Stats) bool { return s.UpHeld == 10 })
	expectSilence(t, server) // neither the bytes nor the EOF
	p.Release(Up)
	expectRead(t, server, "last words")
	expectClosed(t, server)
}

// TestBlackhole: a blackhole discards one direction's bytes and keeps the
// sockets open.
func TestBlackhole(t *testing.T) {
	p, _, client, server := linked(t)
	p.Blackhole(Up)
	sendInto(t, p, client, "secret", upDiscarded)
	expectSilence(t, server)
	// Sockets stay open: the other direction still passes.
	passes(t, server, client, "pong")
	if p.ConnCount() != 1 {
		t.Fatalf("ConnCount = %d, want 1", p.ConnCount())
	}
	p.Release(Up)
	passes(t, client, server, "after")
}

// TestBlackholeDiscardsHeldBytes: a blackhole after a hold discards what
// the hold kept.
func TestBlackholeDiscardsHeldBytes(t *testing.T) {
	p, _, client, server := linked(t)
	discardsHeld(t, p, server, Down, "held", func() { p.Blackhole(Down) })
	p.Release(Down)
	passes(t, server, client, "new")
}

// discardsHeld holds direction d, sends msg from c into the hold, applies
// fault, and checks that fault discarded the held bytes, none delivered.
func discardsHeld(t *testing.T, p *Proxy, c net.Conn, d Dir, msg string, fault func()) {
	t.Helper()
	held, discarded := upHeld, upDiscarded
	if d == Down {
		held, discarded = downHeld, downDiscarded
	}
	p.Hold(d)
	sendInto(t, p, c, msg, held)
	fault()
	if s := p.Stats(); held.of(s) != 0 || discarded.of(s) != int64(len(msg)) {
		t.Fatalf("after the fault: got %d %s and %d %s (%+v); want 0 and %d", held.of(s), held.name, discarded.of(s), discarded.name, s, len(msg))
	}
}

// expectRefused dials p and sees the connection closed at once.
func expectRefused(t *testing.T, p *Proxy) {
	t.Helper()
	expectClosed(t, dial(t, p.Addr()))
}

// healedPasses heals p and sees msg pass on a fresh connection.
func healedPasses(t *testing.T, p *Proxy, up *upstreamServer, msg string) {
	t.Helper()
	p.Heal()
	client, server := connect(t, p, up)
	passes(t, client, server, msg)
}

// cutSilences cuts end: the socket there (cut) closes at once; the other
// (silent) stays open and silent, and what its peer sends (msg) is
// discarded, counted in k.
func cutSilences(t *testing.T, p *Proxy, end End, cut, silent net.Conn, msg string, k counter) {
	t.Helper()
	p.Cut(end)
	expectClosed(t, cut)
	sendInto(t, p, silent, msg, k)
	expectSilence(t, silent)
}

// TestCutClientEnd: cutting the client end closes it; the upstream socket
// stays open and silent; new connections are refused until Heal.
func TestCutClientEnd(t *testing.T) {
	p, up, client, server := linked(t)
	// The upstream socket stays open but silent; what it sends is discarded.
	cutSilences(t, p, ClientEnd, client, server, "into the void", downDiscarded)
	if p.ConnCount() != 1 {
		t.Fatalf("ConnCount = %d, want 1 (upstream socket still open)", p.ConnCount())
	}
	// New connections are refused.
	expectRefused(t, p)
	waitStats(t, p, "refused count", func(s Stats) bool { return s.Refused == 1 })
	select {
	case c := <-up.conns:
		t.Fatalf("a refused connection reached the upstream: %v", c.LocalAddr())
	default:
	}
	// Heal closes the silent socket and accepts connections again.
	p.Heal()
	expectClosed(t, server)
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
	client2, server2 := connect(t, p, up)
	passes(t, client2, server2, "healed")
	passes(t, server2, client2, "yes")
}

// TestCutUpstreamEnd: cutting the upstream end closes it; the client stays
// connected to silence until it closes.
func TestCutUpstreamEnd(t *testing.T) {
	p, up, client, server := linked(t)
	cutSilences(t, p, UpstreamEnd, server, client, "anyone?", upDiscarded)
	// When the silent end's peer closes, the connection goes away.
	client.Close()
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
	expectRefused(t, p)
	healedPasses(t, p, up, "ok")
}

// TestCutBothEnds: a cut of both ends closes both and discards what was
// held.
func TestCutBothEnds(t *testing.T) {
	p, up, client, server := linked(t)
	discardsHeld(t, p, client, Up, "held then cut", func() {
		p.Cut(BothEnds)
		expectClosed(t, client)
		expectClosed(t, server)
		waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
	})
	healedPasses(t, p, up, "fresh")
}

func TestHealReleasesHeldBytes(t *testing.T) {
	p, _, client, server := linked(t)
	p.Hold(Both)
	write(t, client, []byte("a"))
	write(t, client, []byte("b"))
	waitStats(t, p, "bytes held", func(s Stats) bool { return s.UpHeld == 2 })
	p.Heal()
	expectRead(t, server, "ab")
	passes(t, server, client, "c")
	if s := p.Stats(); s.Reset != 0 {
		t.Fatalf("got %d connections reset; want 0: held bytes are delivered, not lost", s.Reset)
	}
}

// TestHealResetsBlackholedConnections: a connection that lost bytes to a
// blackhole cannot go on (no retransmission brings them back), so Heal
// resets both its sockets; a connection that lost nothing, even one opened
// during the blackhole, carries on.
func TestHealResetsBlackholedConnections(t *testing.T) {
	up := newUpstream(t)
	p, logs := newProxy(t, up.addr())
	lostUp, lostUpServer := connect(t, p, up)
	lostDown, lostDownServer := connect(t, p, up)
	p.Blackhole(Both)
	intact, intactServer := connect(t, p, up)
	write(t, lostUp, []byte("ping"))
	write(t, lostDownServer, []byte("reply"))
	waitStats(t, p, "bytes lost both ways", func(s Stats) bool { return s.UpDiscarded == 4 && s.DownDiscarded == 5 })
	if s := p.Stats(); s.Holed != 2 {
		t.Fatalf("got %d open connections with a hole (%+v); want 2", s.Holed, s)
	}
	p.Heal()
	logs.waitLine(t, "2 blackholed connections reset")
	for _, c := range []net.Conn{lostUp, lostUpServer, lostDown, lostDownServer} {
		expectReset(t, c)
	}
	passes(t, intact, intactServer, "still here")
	passes(t, intactServer, intact, "yes")
	if s := p.Stats(); s.Reset != 2 || s.Open != 1 || s.Holed != 0 {
		t.Fatalf("got %d reset, %d open, %d holed (%+v); want 2 reset, 1 open, 0 holed", s.Reset, s.Open, s.Holed, s)
	}
}

// TestBlackholeThenHoldStillResets: bytes lost once leave a hole for good;
// a hold that follows the blackhole does not make the stream whole.
func TestBlackholeThenHoldStillResets(t *testing.T) {
	p, _, client, server := linked(t)
	p.Blackhole(Up)
	sendInto(t, p, client, "lost", upDiscarded)
	p.Hold(Up)
	sendInto(t, p, client, "held", upHeld)
	p.Heal()
	expectReset(t, client)
	expectReset(t, server)
}

// TestDialRetryWaitsForLateUpstream: with dial retry, a client's early
// bytes wait for an upstream that starts listening late.
func TestDialRetryWaitsForLateUpstream(t *testing.T) {
	addr := freeAddr(t)
	p, logs := newProxy(t, addr, WithDialRetry(10*time.Second))
	client := dial(t, p.Addr())
	write(t, client, []byte("early bytes"))
	logs.waitLine(t, "retrying")

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s was taken meanwhile: %v", addr, err)
	}
	up := serveUpstream(t, ln)
	server := up.accept(t)
	expectRead(t, server, "early bytes")
	passes(t, server, client, "late but here")
	if s := p.Stats(); s.DialFailures != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestDialFailureClosesClient: when the upstream cannot be dialled, the
// client is closed and the failure counted.
func TestDialFailureClosesClient(t *testing.T) {
	addr := freeAddr(t)
	p, logs := newProxy(t, addr, WithDialRetry(30*time.Millisecond))
	client := dial(t, p.Addr())
	expectClosed(t, client)
	logs.waitLine(t, "client connection closed")
	waitStats(t, p, "dial failure counted", func(s Stats) bool { return s.DialFailures == 1 })
}

// TestFirstBytesRewrites: the first-bytes hook rewrites a connection's
// opening; a hook that fails closes the client and never dials.
func TestFirstBytesRewrites(t *testing.T) {
	up := newUpstream(t)
	hook := func(r io.Reader) ([]byte, error) {
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, err
		}
		if string(b[:]) != "ADDR" {
			return nil, fmt.Errorf("unexpected prefix %q", b[:])
		}
		return []byte("REWRITTEN:"), nil
	}
	p, logs := newProxy(t, up.addr(), WithFirstBytes(hook))
	client := dial(t, p.Addr())
	write(t, client, []byte("ADDR"))
	write(t, client, []byte("rest"))
	server := up.accept(t)
	expectRead(t, server, "REWRITTEN:rest")
	passes(t, server, client, "answer")

	// A failing hook closes the client and never dials.
	bad := dial(t, p.Addr())
	write(t, bad, []byte("XXXX"))
	expectClosed(t, bad)
	logs.waitLine(t, "first-bytes hook failed")
	select {
	case c := <-up.conns:
		t.Fatalf("upstream got a connection for a failed hook: %v", c.RemoteAddr())
	default:
	}
}

func TestCloseIsIdempotentAndClosesEverything(t *testing.T) {
	up := newUpstream(t)
	hookStarted := make(chan struct{})
	hook := func(r io.Reader) ([]byte, error) {
		close(hookStarted)
		var b [1]byte
		_, err := r.Read(b[:]) // blocks until Close
		return b[:], err
	}
	p, err := New(up.addr(), WithFirstBytes(hook), WithZooKeeperFrames())
	if err != nil {
		t.Fatal(err)
	}
	waiting := dial(t, p.Addr())
	<-hookStarted
	d := p.LoseReply(createsUnder("/"))
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	expectClosed(t, waiting)
	select {
	case <-d.Done():
	default:
		t.Fatal("Close left a LoseReply fault running")
	}
	if c, err := net.DialTimeout("tcp", p.Addr(), within); err == nil {
		c.Close()
		t.Fatal("proxy still accepts after Close")
	}
	// Fault calls after Close are harmless.
	p.Hold(Both)
	p.Cut(BothEnds)
	p.Heal()
	if p.ConnCount() != 0 {
		t.Fatalf("ConnCount after Close = %d", p.ConnCount())
	}
}

func TestCloseWithOpenHeldConnections(t *testing.T) {
	up := newUpstream(t)
	p, err := New(up.addr())
	if err != nil {
		t.Fatal(err)
	}
	var clients, servers []net.Conn
	for range 3 {
		c, s := connect(t, p, up)
		clients, servers = append(clients, c), append(servers, s)
	}
	p.Hold(Both)
	for i := range clients {
		write(t, clients[i], []byte("x"))
		write(t, servers[i], []byte("y"))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range clients {
		expectClosed(t, clients[i])
		expectClosed(t, servers[i])
	}
}

// TestModeSwitchingWhileStreaming flips modes while bytes flow, under the
// race detector, and checks that every byte arrives once, in order.
func TestModeSwitchingWhileStreaming(t *testing.T) {
	p, _, client, server := linked(t)
	const total = 2 << 20
	src := make([]byte, total)
	for i := range src {
		src[i] = byte(i % 251)
	}
	writeErr := make(chan error, 1)
	go func() {
		var err error
		for off := 0; off < total && err == nil; off += 4096 {
			_, err = client.Write(src[off : off+4096])
		}
		writeErr <- err
	}()
	readDone := make(chan []byte, 1)
	go func() {
		server.SetReadDeadline(time.Now().Add(4 * within))
		got := make([]byte, total)
		n, _ := io.ReadFull(server, got)
		readDone <- got[:n]
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			switch i % 4 {
			case 0:
				p.Hold(Up)
			case 1:
				p.Release(Up)
			case 2:
				p.Hold(Both)
			case 3:
				p.Heal()
			}
			_ = p.Stats()
		}
		p.Release(Both)
	}()
	wg.Wait()
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	got := <-readDone
	if !bytes.Equal(got, src) {
		t.Fatalf("received %d bytes, want %d, equal=%v", len(got), total, bytes.Equal(got, src[:len(got)]))
	}
}

func TestDirAndEndStrings(t *testing.T) {
	if Up.String() != "up" || Down.String() != "down" || Both.String() != "both" {
		t.Fatal("Dir strings")
	}
	if ClientEnd.String() != "client" || UpstreamEnd.String() != "upstream" || BothEnds.String() != "both ends" {
		t.Fatal("End strings")
	}
}

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
	s := p.Stats()
	if s.Accepted != 1 || s.Open != 1 || s.UpBytes != int64(5+len(big)) || s.DownBytes != 6 {
		t.Fatalf("stats %+v", s)
	}
	// The client closes: the upstream sees EOF, closes too, and the
	// proxied connection goes away.
	client.Close()
	expectClosed(t, server)
	server.Close()
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
}

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

func TestUpstreamCloseClosesClient(t *testing.T) {
	p, _, client, server := linked(t)
	write(t, server, []byte("bye"))
	server.Close()
	expectRead(t, client, "bye")
	expectClosed(t, client)
	client.Close()
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
}

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

func TestBlackhole(t *testing.T) {
	p, _, client, server := linked(t)
	p.Blackhole(Up)
	write(t, client, []byte("secret"))
	waitStats(t, p, "bytes discarded", func(s Stats) bool { return s.UpDiscarded == 6 })
	expectSilence(t, server)
	// Sockets stay open: the other direction still passes.
	passes(t, server, client, "pong")
	if p.ConnCount() != 1 {
		t.Fatalf("ConnCount = %d, want 1", p.ConnCount())
	}
	p.Release(Up)
	passes(t, client, server, "after")
}

func TestBlackholeDiscardsHeldBytes(t *testing.T) {
	p, _, client, server := linked(t)
	p.Hold(Down)
	write(t, server, []byte("held"))
	waitStats(t, p, "bytes held", func(s Stats) bool { return s.DownHeld == 4 })
	p.Blackhole(Down)
	if s := p.Stats(); s.DownHeld != 0 || s.DownDiscarded != 4 {
		t.Fatalf("stats %+v", s)
	}
	p.Release(Down)
	passes(t, server, client, "new")
}

func TestCutClientEnd(t *testing.T) {
	p, up, client, server := linked(t)
	p.Cut(ClientEnd)
	expectClosed(t, client)
	// The upstream socket stays open but silent; what it sends is discarded.
	write(t, server, []byte("into the void"))
	waitStats(t, p, "bytes discarded", func(s Stats) bool { return s.DownDiscarded == 13 })
	expectSilence(t, server)
	if p.ConnCount() != 1 {
		t.Fatalf("ConnCount = %d, want 1 (upstream socket still open)", p.ConnCount())
	}
	// New connections are refused.
	refused := dial(t, p.Addr())
	expectClosed(t, refused)
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

func TestCutUpstreamEnd(t *testing.T) {
	p, up, client, server := linked(t)
	p.Cut(UpstreamEnd)
	expectClosed(t, server)
	write(t, client, []byte("anyone?"))
	waitStats(t, p, "bytes discarded", func(s Stats) bool { return s.UpDiscarded == 7 })
	expectSilence(t, client)
	// When the silent end's peer closes, the connection goes away.
	client.Close()
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
	refused := dial(t, p.Addr())
	expectClosed(t, refused)
	p.Heal()
	client2, server2 := connect(t, p, up)
	passes(t, client2, server2, "ok")
}

func TestCutBothEnds(t *testing.T) {
	p, up, client, server := linked(t)
	p.Hold(Up)
	write(t, client, []byte("held then cut"))
	waitStats(t, p, "bytes held", func(s Stats) bool { return s.UpHeld == 13 })
	p.Cut(BothEnds)
	expectClosed(t, client)
	expectClosed(t, server)
	waitStats(t, p, "no open connections", func(s Stats) bool { return s.Open == 0 })
	if s := p.Stats(); s.UpHeld != 0 || s.UpDiscarded != 13 {
		t.Fatalf("stats %+v", s)
	}
	p.Heal()
	client2, server2 := connect(t, p, up)
	passes(t, client2, server2, "fresh")
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
	write(t, client, []byte("lost"))
	waitStats(t, p, "bytes lost", func(s Stats) bool { return s.UpDiscarded == 4 })
	p.Hold(Up)
	write(t, client, []byte("held"))
	waitStats(t, p, "bytes held", func(s Stats) bool { return s.UpHeld == 4 })
	p.Heal()
	expectReset(t, client)
	expectReset(t, server)
}

func TestDialRetryWaitsForLateUpstream(t *testing.T) {
	// Reserve a free port, then release it so nothing listens there yet.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	p, logs := newProxy(t, addr, WithDialRetry(10*time.Second))
	client := dial(t, p.Addr())
	write(t, client, []byte("early bytes"))
	logs.waitLine(t, "retrying")

	ln, err = net.Listen("tcp", addr)
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

func TestDialFailureClosesClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, logs := newProxy(t, addr, WithDialRetry(30*time.Millisecond))
	client := dial(t, p.Addr())
	expectClosed(t, client)
	logs.waitLine(t, "client connection closed")
	waitStats(t, p, "dial failure counted", func(s Stats) bool { return s.DialFailures == 1 })
}

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

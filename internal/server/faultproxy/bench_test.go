package faultproxy

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/zk19/zk19/internal/server/jute"
)

// startEcho runs a TCP echo server until the benchmark ends.
func startEcho(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(c, c)
			}()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// BenchmarkProxyEcho measures one 64-byte request/response round trip
// directly, through the proxy copying raw bytes, and through the proxy
// parsing ZooKeeper frames.
func BenchmarkProxyEcho(b *testing.B) {
	echo := startEcho(b)
	msg := jute.AppendFrame(nil, make([]byte, 60)) // 64 bytes on the wire
	run := func(b *testing.B, addr string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, len(msg))
		roundTrip := func() {
			if _, err := c.Write(msg); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				b.Fatal(err)
			}
		}
		roundTrip() // handshake frame in ZooKeeper mode; warms up the path
		b.SetBytes(int64(2 * len(msg)))
		for b.Loop() {
			roundTrip()
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, echo) })
	b.Run("proxy", func(b *testing.B) {
		p, err := New(echo)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		run(b, p.Addr())
	})
	b.Run("proxy-zkframes", func(b *testing.B) {
		p, err := New(echo, WithZooKeeperFrames())
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		run(b, p.Addr())
	})
}

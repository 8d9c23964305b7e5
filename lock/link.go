package lock

import (
	"encoding/binary"
	"net"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/go-zookeeper/zk"
)

// Connect is zk.Connect with the seam a Locker reads its session from: the
// client's connections are dialed through a wrapper that notes, for each
// reply the client reads, when the request it answers was sent (the
// server heard the client then at the latest), and reads the session
// timeout the server negotiated from its connect reply. A Locker made with
// New on the returned connection needs no WithSessionTimeout, and its
// Suspensions' ExpiresBy is never later than the server's expiry (see
// Suspension). dial is the dialer underneath (nil: net.DialTimeout); opts
// are go-zookeeper's options, applied in order before the wrapper's
// dialer (a zk.WithDialer among them is replaced: pass it as dial).
func Connect(servers []string, sessionTimeout time.Duration, dial zk.Dialer, opts ...func(*zk.Conn)) (*zk.Conn, <-chan zk.Event, error) {
	if dial == nil {
		dial = net.DialTimeout
	}
	lk := &link{}
	conn, events, err := zk.Connect(servers, sessionTimeout,
		func(c *zk.Conn) {
			for _, o := range opts {
				o(c)
			}
		},
		zk.WithDialer(func(network, address string, timeout time.Duration) (net.Conn, error) {
			nc, err := dial(network, address, timeout)
			if err != nil {
				return nil, err
			}
			return &timedConn{Conn: nc, lk: lk}, nil
		}))
	if err != nil {
		return nil, nil, err
	}
	links.Lock()
	links.m[weak.Make(conn)] = lk
	links.Unlock()
	runtime.AddCleanup(conn, func(w weak.Pointer[zk.Conn]) {
		links.Lock()
		delete(links.m, w)
		links.Unlock()
	}, weak.Make(conn))
	return conn, events, nil
}

// links maps the connections Connect made to their links.
var links = struct {
	sync.Mutex
	m map[weak.Pointer[zk.Conn]]*link
}{m: make(map[weak.Pointer[zk.Conn]]*link)}

func linkOf(conn *zk.Conn) *link {
	links.Lock()
	defer links.Unlock()
	return links.m[weak.Make(conn)]
}

// link is what a connection's wrapper learned: when the server last
// heard the client, as far as a reply proves it, and the negotiated
// session timeout.
type link struct {
	mu      sync.Mutex
	heard   time.Time
	timeout time.Duration
}

// last returns when the server is known to have last heard the client and
// the negotiated timeout; ok is false before the first connect reply.
func (lk *link) last() (heard time.Time, timeout time.Duration, ok bool) {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.heard, lk.timeout, lk.timeout > 0
}

// Frames of ZooKeeper's client protocol: a 4-byte length, then the body.
// A request's body starts with its xid; so does a reply's, except the
// connect reply (the first frame the server sends on a connection:
// protocolVersion, timeOut, ...), and xid -1 is a watch notification, no
// reply. The server answers one connection's requests in the order it
// received them, so the n-th reply answers the n-th request.
const notificationXid = -1

// timedConn is a client connection that notes the send time of each
// request frame and, at each reply, the send time of the request it
// answers.
type timedConn struct {
	net.Conn
	lk *link

	wmu  sync.Mutex
	out  frameScanner
	sent []time.Time // send times of the requests not answered yet, in order

	in        frameScanner
	connected bool // the connect reply has been read
}

func (c *timedConn) Write(b []byte) (int, error) {
	now := time.Now() // before the bytes leave: never later than the server hears them
	c.wmu.Lock()
	c.out.scan(b, func([]byte) { c.sent = append(c.sent, now) })
	c.wmu.Unlock()
	return c.Conn.Write(b)
}

func (c *timedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.in.scan(b[:n], c.replied)
	return n, err
}

// replied takes the head (up to 8 bytes of the body) of a frame the server
// sent.
func (c *timedConn) replied(head []byte) {
	if len(head) < 8 {
		return
	}
	if c.connected && int32(binary.BigEndian.Uint32(head)) == notificationXid {
		return
	}
	c.wmu.Lock()
	if len(c.sent) == 0 { // a reply to nothing sent: no proof of hearing
		c.wmu.Unlock()
		return
	}
	sent := c.sent[0]
	c.sent = c.sent[1:]
	c.wmu.Unlock()
	c.lk.mu.Lock()
	defer c.lk.mu.Unlock()
	if !c.connected {
		c.connected = true
		if ms := int32(binary.BigEndian.Uint32(head[4:])); ms > 0 {
			c.lk.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if sent.After(c.lk.heard) {
		c.lk.heard = sent
	}
}

// frameScanner finds the frames of a byte stream fed in chunks, and calls
// back with the first up to 8 bytes of each frame's body once it has them
// (or the whole body, when shorter).
type frameScanner struct {
	hdr  [4]byte
	nhdr int
	left int // bytes of the current body not seen yet
	head []byte
	want int // bytes of head still wanted
}

func (s *frameScanner) scan(b []byte, frame func(head []byte)) {
	for len(b) > 0 {
		if s.left == 0 {
			k := copy(s.hdr[s.nhdr:], b)
			s.nhdr += k
			b = b[k:]
			if s.nhdr < 4 {
				return
			}
			s.nhdr = 0
			s.left = int(binary.BigEndian.Uint32(s.hdr[:]))
			s.head = s.head[:0]
			s.want = min(8, s.left)
			if s.left == 0 {
				frame(nil)
			}
			continue
		}
		k := min(len(b), s.left)
		if s.want > 0 {
			h := min(k, s.want)
			s.head = append(s.head, b[:h]...)
			s.want -= h
			if s.want == 0 {
				frame(s.head)
			}
		}
		s.left -= k
		b = b[k:]
	}
}

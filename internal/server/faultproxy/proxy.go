// Package faultproxy is a TCP proxy that injects network faults between two
// endpoints: it can hold, release, blackhole or cut the bytes of every
// connection it forwards, refuse new connections, and (in ZooKeeper frame
// mode) lose the reply to one chosen request, picked by opcode, path and
// reply err code, and close the connection.
//
// It knows nothing about ZooKeeper roles: the same Proxy serves a client's
// link to a server and the quorum or election link between two servers. It
// listens on 127.0.0.1 only.
//
// Each proxied connection has two directions, Up (client to upstream) and
// Down (upstream to client). A direction is in one of three modes, shared by
// every connection of the Proxy, switchable at any time: pass (forward),
// hold (keep reading and buffer in memory, deliver in order on Release) or
// blackhole (read and discard). Bytes that a direction has already begun to
// write when its mode changes are still delivered.
//
// Heal ends a partition as a real one ends: held bytes are delivered, as TCP
// would retransmit them, and a connection that lost bytes to a blackhole is
// reset, since no retransmission can bring them back; its peers see the
// reset and reconnect at once.
//
// When one side closes its connection cleanly, the proxy first delivers
// everything pending toward the other side and then half-closes that side
// (it sees EOF exactly as it would without the proxy); once both directions
// have ended, both sockets are closed. A read error other than EOF (a
// reset) or a failed write closes both sockets. A direction that is held or
// blackholed delays the EOF like its bytes, until it passes again.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// Dir selects one or both directions of traffic.
type Dir int

// Directions of traffic through a Proxy.
const (
	// Up is client → upstream.
	Up Dir = 1 << iota
	// Down is upstream → client.
	Down
	// Both is Up and Down.
	Both = Up | Down
)

// String returns "up", "down" or "both".
func (d Dir) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	case Both:
		return "both"
	}
	return fmt.Sprintf("Dir(%d)", int(d))
}

// End selects one or both sockets of a proxied connection.
type End int

// Ends of a proxied connection.
const (
	// ClientEnd is the socket the proxy accepted from its client.
	ClientEnd End = 1 << iota
	// UpstreamEnd is the socket the proxy dialed to its upstream.
	UpstreamEnd
	// BothEnds is ClientEnd and UpstreamEnd.
	BothEnds = ClientEnd | UpstreamEnd
)

// String returns "client", "upstream" or "both ends".
func (e End) String() string {
	switch e {
	case ClientEnd:
		return "client"
	case UpstreamEnd:
		return "upstream"
	case BothEnds:
		return "both ends"
	}
	return fmt.Sprintf("End(%d)", int(e))
}

// mode is what a direction does with the bytes it reads.
type mode int

const (
	pass mode = iota
	hold
	blackhole
)

func (m mode) String() string {
	switch m {
	case pass:
		return "pass"
	case hold:
		return "hold"
	}
	return "blackhole"
}

// dirs maps a pipe index to its direction: 0 is Up, 1 is Down.
var dirs = [2]Dir{Up, Down}

// Option configures a Proxy.
type Option func(*config)

type config struct {
	name       string
	logf       func(format string, args ...any)
	dialRetry  time.Duration
	firstBytes func(client io.Reader) ([]byte, error)
	zk         bool
	quorum     bool
}

// WithName sets the name used in log lines (default: the upstream address).
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithLogf sets the logger. Each decision or fault is one line, such as
// "proxy zk-A conn#2 reply xid=7 zxid=0x1a err=0: dropped; client and
// upstream connections closed". logf is called from the proxy's goroutines,
// sometimes while the proxy holds its internal lock, so it must not call
// the Proxy's methods. The default discards the lines.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *config) { c.logf = logf }
}

// WithDialRetry makes each connection keep retrying a failed upstream dial,
// with a short backoff, for up to total before giving up and closing the
// client. Without it a failed dial closes the client at once.
func WithDialRetry(total time.Duration) Option {
	return func(c *config) { c.dialRetry = total }
}

// WithFirstBytes sets a hook run once per connection, before its upstream
// is dialed and before any piping: it reads from the client whatever it
// needs and returns the bytes to send upstream in its place (they go first,
// subject to the Up direction's mode). If it returns an error the
// connection is closed and logged. With WithZooKeeperFrames the returned
// bytes are not parsed, and framing starts with the next byte from the
// client, so the hook should not consume the session handshake.
func WithFirstBytes(hook func(client io.Reader) ([]byte, error)) Option {
	return func(c *config) { c.firstBytes = hook }
}

// WithZooKeeperFrames makes the proxy parse ZooKeeper client-protocol
// frames, which LoseReply needs. The first frame in each direction of a
// connection (the session handshake) is forwarded untouched and never
// parsed; later frames are parsed as requests (Up) or replies (Down) and
// forwarded byte for byte. If a direction's stream is not valid framing (a
// length prefix that is negative or over jute.MaxFrame, such as a
// four-letter word), that direction falls back to copying raw bytes.
func WithZooKeeperFrames() Option { return func(c *config) { c.zk = true } }

// Stats counts what a Proxy has done since New.
type Stats struct {
	Accepted        int   // connections accepted for proxying
	Refused         int   // connections accepted and closed at once after Cut
	DialFailures    int   // connections closed because the upstream dial failed
	Open            int   // connections open now, as ConnCount
	UpBytes         int64 // bytes delivered to the upstream
	DownBytes       int64 // bytes delivered to clients
	UpDiscarded     int64 // client bytes discarded (blackhole, cut, closed while held)
	DownDiscarded   int64 // upstream bytes discarded
	UpHeld          int64 // client bytes a Hold keeps now (0 while Up passes)
	DownHeld        int64 // upstream bytes a Hold keeps now (0 while Down passes)
	DroppedReplies  int   // replies discarded by LoseReply
	DroppedRequests int   // requests discarded by LoseRequest
	Holed           int   // open connections a blackhole discarded bytes of: Heal resets them
	Reset           int   // connections Heal reset because a blackhole discarded some of their bytes
}

// Proxy forwards connections accepted on 127.0.0.1 to one upstream address
// and injects faults into them. Its methods are safe for concurrent use.
type Proxy struct {
	cfg      config
	upstream string
	ln       net.Listener
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup // accept loop and one serve goroutine per connection

	mu        sync.Mutex
	closed    bool
	closeErr  error
	refusing  bool
	modes     [2]mode
	conns     map[int]*conn
	nextID    int
	drops     []*Drop       // unfinished faults armed by LoseReply
	holds     []*CommitHold // unfinished faults armed by HoldCommit
	sessions  []Session
	stats     Stats
	discarded [2]int64
	delivered [2]int64
	requests  map[int32]int  // requests delivered upstream, by opcode
	notes     map[string]int // notifications delivered to clients, by path
}

// count adds a delivered frame to the traffic counts. Callers hold p.mu.
func (p *Proxy) count(s seen) {
	switch {
	case s.op != 0:
		if p.requests == nil {
			p.requests = map[int32]int{}
		}
		p.requests[s.op]++
	case s.note:
		if p.notes == nil {
			p.notes = map[string]int{}
		}
		p.notes[s.path]++
	}
}

// Requests returns how many requests of each opcode (jute.Op*) the proxy
// has passed to the server (WithZooKeeperFrames only). A request counts
// as it is written on, before its reply can exist: once a client has the
// reply to a request, the count includes that request and every one the
// client sent before it on the connection.
func (p *Proxy) Requests(ops ...int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, op := range ops {
		n += p.requests[op]
	}
	return n
}

// Notifications returns how many watch notifications for path the proxy
// has delivered to its clients (WithZooKeeperFrames only). A notification
// counts before anything after it in the stream is written: once a client
// has a reply the server sent after the notification, the count includes
// it. This is a count from the wire, not from the client's account.
func (p *Proxy) Notifications(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notes[path]
}

// maxQueued bounds the bytes a passing direction buffers per connection
// before it stops reading (held directions buffer without bound).
const maxQueued = 4 << 20

// New starts a Proxy listening on 127.0.0.1 on an ephemeral port that
// forwards each accepted connection to upstream ("host:port").
func New(upstream string, opts ...Option) (*Proxy, error) {
	cfg := config{name: upstream, logf: func(string, ...any) {}}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logf == nil {
		cfg.logf = func(string, ...any) {}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		cfg:      cfg,
		upstream: upstream,
		ln:       ln,
		ctx:      ctx,
		cancel:   cancel,
		conns:    make(map[int]*conn),
	}
	p.logf("listening on %s, upstream %s", p.Addr(), upstream)
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the address clients should dial, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// logf writes one log line prefixed with "proxy NAME".
func (p *Proxy) logf(format string, args ...any) {
	p.cfg.logf("%s", "proxy "+p.cfg.name+" "+fmt.Sprintf(format, args...))
}

// Close stops the listener, closes every connection, ends every unfinished
// LoseReply fault, and waits for all of the proxy's goroutines to exit. It
// is idempotent; every call waits, and later calls return nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	first := !p.closed
	if first {
		p.closed = true
		p.cancel()
		p.closeErr = p.ln.Close()
		for _, c := range p.conns {
			p.closeConn(c, "proxy closed")
		}
		for len(p.drops) > 0 {
			p.finishDrop(p.drops[0], false, "proxy closed")
		}
		for _, h := range p.holds {
			h.end("proxy closed")
		}
		p.holds = nil
		p.logf("closed")
	}
	p.mu.Unlock()
	p.wg.Wait()
	if first && errors.Is(p.closeErr, net.ErrClosed) {
		return nil
	}
	if first {
		return p.closeErr
	}
	return nil
}

// setMode sets the mode of the directions in d. Callers hold p.mu.
func (p *Proxy) setMode(d Dir, m mode) {
	for i, dir := range dirs {
		if d&dir != 0 {
			p.modes[i] = m
		}
	}
	for _, c := range p.conns {
		for i, pp := range c.pipes {
			if d&dirs[i] == 0 {
				continue
			}
			if m == blackhole {
				pp.discardQueue(true)
			}
			pp.cond.Broadcast()
		}
	}
}

// heldBytes sums what a Hold keeps in the directions in d. Bytes queued in
// a passing direction are in flight, not held, and do not count, so a
// positive count proves the hold is in force. Callers hold p.mu.
func (p *Proxy) heldBytes(d Dir) int64 {
	var n int64
	for _, c := range p.conns {
		for i, pp := range c.pipes {
			if d&dirs[i] != 0 && p.modes[i] == hold {
				n += pp.qBytes
			}
		}
	}
	return n
}

// Hold stops forwarding in d on every connection, existing and new: the
// proxy keeps reading and buffers the bytes in memory, without bound;
// sockets stay open.
func (p *Proxy) Hold(d Dir) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setMode(d, hold)
	p.logf("hold %s: buffering bytes on %d connections", d, len(p.conns))
}

// Release delivers everything held in d, in order, and then passes bytes
// in d again. It also ends a Blackhole in d, but unlike Heal it resets no
// connection: one that lost bytes keeps a hole in its stream.
func (p *Proxy) Release(d Dir) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.heldBytes(d)
	p.setMode(d, pass)
	p.logf("release %s: delivering %d held bytes, then passing", d, n)
}

// Blackhole makes d read and discard every byte (including any held ones)
// on every connection, existing and new; sockets stay open until Heal
// resets the connections that lost bytes. A pending LoseReply whose reply
// is discarded this way takes effect at once.
func (p *Proxy) Blackhole(d Dir) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.heldBytes(d)
	p.setMode(d, blackhole)
	p.logf("blackhole %s: discarding bytes (%d held bytes discarded)", d, n)
}

// Cut closes end e's socket of every existing connection. The other
// socket of each connection stays open but silent: nothing more is written
// to it and everything read from it is discarded, until its peer closes it,
// Heal or Close. Connections still dialing are closed entirely. From now
// on, until Heal, new connections are refused: accepted and closed at once.
func (p *Proxy) Cut(e End) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = true
	n := 0
	for _, c := range p.conns {
		if c.closed {
			continue
		}
		n++
		if !c.established || (c.cut|e)&BothEnds == BothEnds {
			c.cut |= e
			p.closeConn(c, "cut "+e.String())
			continue
		}
		c.cut |= e
		if e&ClientEnd != 0 {
			c.client.Close()
		}
		if e&UpstreamEnd != 0 {
			c.upstream.Close()
		}
		for _, pp := range c.pipes {
			pp.discardQueue(false)
			pp.cond.Broadcast()
		}
	}
	p.logf("cut %s: %d connections cut; refusing new connections", e, n)
}

// Heal undoes every fault except LoseReply, as a real partition ends: both
// directions pass again (held bytes are delivered first, in order, as TCP
// would retransmit them, and so are the packets a HoldCommit keeps; one
// still waiting for its COMMIT is cancelled), new connections are accepted again, connections
// left half-open by Cut are closed, and every connection that lost bytes to
// a Blackhole is reset (RST on both sockets). Without the reset such a
// connection stays open and silent, and its peers learn nothing until
// their own timeouts fire: go-zookeeper, waiting for a handshake reply,
// gives up only after 10 receive timeouts.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = false
	cut, reset := 0, 0
	for _, c := range p.conns {
		switch {
		case c.closed:
		case c.cut != 0:
			cut++
			p.closeConn(c, "heal: closing the socket left open by cut")
		case c.holed:
			reset++
			p.resetConn(c, "heal: reset, a blackhole discarded some of its bytes")
		}
	}
	p.stats.Reset += reset
	n := p.heldBytes(Both) // what the connections that go on will get
	p.setMode(Both, pass)
	for _, h := range slices.Clone(p.holds) {
		p.releaseHold(h, "heal")
	}
	p.logf("heal: passing both directions (%d held bytes delivered), accepting connections, %d cut connections closed, %d blackholed connections reset", n, cut, reset)
}

// ConnCount returns the number of open proxied connections: those whose
// upstream is connected and which are not yet closed, including ones with
// a cut end whose other socket is still open.
func (p *Proxy) ConnCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	open, _ := p.openConns()
	return open
}

// openConns counts the open connections, and those of them with a hole.
// Callers hold p.mu.
func (p *Proxy) openConns() (open, holed int) {
	for _, c := range p.conns {
		if c.established && !c.closed {
			open++
			if c.holed {
				holed++
			}
		}
	}
	return open, holed
}

// Stats returns a snapshot of the proxy's counters, all taken at one
// moment under the proxy's lock.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Open, s.Holed = p.openConns()
	s.UpBytes, s.DownBytes = p.delivered[0], p.delivered[1]
	s.UpDiscarded, s.DownDiscarded = p.discarded[0], p.discarded[1]
	s.UpHeld, s.DownHeld = p.heldBytes(Up), p.heldBytes(Down)
	return s
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			p.logf("accept failed: %v; retrying", err)
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		switch {
		case p.closed:
			nc.Close()
		case p.refusing:
			p.stats.Refused++
			nc.Close()
			p.logf("refused connection from %s: cut", nc.RemoteAddr())
		default:
			p.nextID++
			c := newConn(p, p.nextID, nc)
			p.conns[c.id] = c
			p.stats.Accepted++
			p.wg.Add(1)
			go p.serve(c)
		}
		p.mu.Unlock()
	}
}

// serve runs one proxied connection: first-bytes hook, dial, pumps.
func (p *Proxy) serve(c *conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		p.closeConn(c, "done")
		delete(p.conns, c.id)
		p.endDropsOf(c)
		if c.established {
			p.logConn(c, "closed: %s", c.reason)
		}
		p.mu.Unlock()
	}()
	first, ok := p.runFirstBytes(c)
	if !ok || !p.establish(c, first) {
		return
	}
	var wg sync.WaitGroup
	for _, pp := range c.pipes {
		wg.Add(2)
		go func() { defer wg.Done(); pp.readLoop() }()
		go func() { defer wg.Done(); pp.writeLoop() }()
	}
	wg.Wait()
}

// runFirstBytes runs the WithFirstBytes hook, if any, on c; false means it
// failed and c is closed.
func (p *Proxy) runFirstBytes(c *conn) ([]byte, bool) {
	if p.cfg.firstBytes == nil {
		return nil, true
	}
	b, err := p.cfg.firstBytes(c.client)
	if err == nil {
		return b, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.closed {
		p.logConn(c, "first-bytes hook failed: %v; client connection closed", err)
	}
	p.closeConn(c, "first-bytes hook failed")
	return nil, false
}

// establish dials c's upstream and queues first toward it; false means the
// dial failed or c was closed meanwhile, and c is closed.
func (p *Proxy) establish(c *conn, first []byte) bool {
	up, err := p.dial(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if !c.closed {
			p.stats.DialFailures++
			p.logConn(c, "dial %s failed: %v; client connection closed", p.upstream, err)
		}
		p.closeConn(c, "dial failed")
		return false
	}
	if c.closed {
		up.Close()
		return false
	}
	c.upstream = up
	c.established = true
	c.pipes[0].dst, c.pipes[1].src = up, up
	p.logConn(c, "open: client %s, upstream %s", c.client.RemoteAddr(), up.LocalAddr())
	if len(first) > 0 {
		c.pipes[0].accept(first, nil)
	}
	return true
}

// dial connects to the upstream, retrying per WithDialRetry. It gives up
// early if the proxy or the connection is closed.
func (p *Proxy) dial(c *conn) (net.Conn, error) {
	deadline := time.Now().Add(p.cfg.dialRetry)
	backoff := 5 * time.Millisecond
	var d net.Dialer
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		up, err := d.DialContext(ctx, "tcp", p.upstream)
		cancel()
		if err == nil {
			if attempt > 1 {
				p.mu.Lock()
				p.logConn(c, "dial %s succeeded after %d attempts", p.upstream, attempt)
				p.mu.Unlock()
			}
			return up, nil
		}
		if p.ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			if attempt > 1 {
				err = fmt.Errorf("%d attempts: %w", attempt, err)
			}
			return nil, err
		}
		p.mu.Lock()
		closed := c.closed
		if attempt == 1 && !closed {
			p.logConn(c, "dial %s failed: %v; retrying for up to %v", p.upstream, err, p.cfg.dialRetry)
		}
		p.mu.Unlock()
		if closed {
			return nil, errors.New("connection closed while dialing")
		}
		t := time.NewTimer(backoff)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return nil, p.ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

package faultproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/zk19/zk19/internal/server/jute"
)

// conn is one proxied connection. Fields other than id, p and client are
// guarded by p.mu; upstream and the pipes' src/dst are set once, under the
// lock, before the pumps start.
type conn struct {
	p           *Proxy
	id          int
	client      net.Conn
	upstream    net.Conn
	established bool   // upstream dialed, pumps started
	closed      bool   // both sockets closed
	reason      string // why it was closed
	cut         End    // ends closed by Cut
	holed       bool   // a blackhole discarded some of its bytes
	pipes       [2]*pipe
}

func newConn(p *Proxy, id int, client net.Conn) *conn {
	c := &conn{p: p, id: id, client: client}
	for i := range c.pipes {
		c.pipes[i] = &pipe{c: c, idx: i, cond: sync.NewCond(&p.mu)}
	}
	c.pipes[0].src = client
	c.pipes[1].dst = client
	return c
}

// closeConn closes both sockets of c once. Callers hold p.mu.
func (p *Proxy) closeConn(c *conn, reason string) {
	if c.closed {
		return
	}
	c.closed = true
	c.reason = reason
	c.client.Close()
	if c.upstream != nil {
		c.upstream.Close()
	}
	for _, pp := range c.pipes {
		pp.discardQueue(false)
		pp.cond.Broadcast()
	}
}

// resetConn closes both sockets of c with a reset (RST) rather than a FIN,
// as a TCP stack does with a connection that cannot go on. Callers hold
// p.mu.
func (p *Proxy) resetConn(c *conn, reason string) {
	for _, s := range []net.Conn{c.client, c.upstream} {
		if tc, ok := s.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
	p.closeConn(c, reason)
}

// logConn logs one line about connection c.
func (p *Proxy) logConn(c *conn, format string, args ...any) {
	p.logf("conn#%d "+format, append([]any{c.id}, args...)...)
}

// item is one chunk (raw mode) or frame (ZooKeeper mode) waiting in a pipe.
type item struct {
	b []byte
	// drop, if set, is the LoseReply fault that wants b (a reply) discarded
	// and the connection closed when b reaches the head of the queue, if
	// the fault is still pending then.
	drop *Drop
	// seen is what the frame is, counted once it is delivered.
	seen seen
}

// seen is what a delivered frame adds to the proxy's counts of ZooKeeper
// traffic: a request's opcode going Up, a notification's path going Down.
type seen struct {
	op   int32 // request opcode (Up); 0 for none
	note bool  // a watch notification (Down)
	path string
}

// pipe is one direction of a conn: a reader goroutine fills q from src, a
// writer goroutine drains it to dst according to the direction's mode.
type pipe struct {
	c    *conn
	idx  int // 0 Up, 1 Down
	src  net.Conn
	dst  net.Conn
	cond *sync.Cond // L is &p.mu; signals queue, mode and state changes

	// Guarded by p.mu.
	q        []item
	qBytes   int64
	held     []item // kept by a HoldCommit (Down only), in order, not yet in q
	srcDone  bool   // the reader has stopped
	srcErr   error  // why: io.EOF for a clean close
	finished bool   // the writer has delivered the end of the stream

	// Owned by the reader goroutine.
	br          *bufio.Reader // ZooKeeper or quorum mode
	raw         bool          // ZooKeeper or quorum mode fell back to raw copying
	frames      int           // frames or quorum packets read so far
	snapshotDue bool          // quorum mode: a SNAP was read, its snapshot comes next
}

func (pp *pipe) dir() Dir { return dirs[pp.idx] }

// srcEnd is the end this pipe reads from; the other end is its dst.
func (pp *pipe) srcEnd() End {
	if pp.idx == 0 {
		return ClientEnd
	}
	return UpstreamEnd
}

func (pp *pipe) dstEnd() End { return BothEnds &^ pp.srcEnd() }

// discardQueue drops everything queued. If blackholed, the bytes are lost
// to a blackhole: a pending LoseReply found in the queue takes effect, and
// the stream has a hole. Callers hold p.mu.
func (pp *pipe) discardQueue(blackholed bool) {
	p := pp.c.p
	for _, it := range pp.q {
		if blackholed && it.drop.pendingOn(pp.c) {
			p.executeDrop(it.drop, pp.c)
		}
		if blackholed {
			pp.lose(int64(len(it.b)))
		} else {
			p.discarded[pp.idx] += int64(len(it.b))
		}
	}
	clear(pp.q)
	pp.q = pp.q[:0]
	pp.qBytes = 0
	if pp.idx == 1 && len(p.holds) > 0 {
		why := "the connection closed or was cut"
		if blackholed {
			why = "blackholed"
		}
		pp.loseHeld(why)
	}
}

// readLoop reads chunks or frames from src until it fails.
func (pp *pipe) readLoop() {
	c, p := pp.c, pp.c.p
	quorum := p.cfg.quorum && pp.idx == 1
	if p.cfg.zk || quorum {
		pp.br = bufio.NewReaderSize(pp.src, 64<<10)
	}
	buf := make([]byte, 32<<10)
	for {
		var b []byte
		var frameNo int
		var pkt *jute.QuorumPacket
		var err error
		if quorum {
			b, pkt, err = pp.nextPacket(buf)
		} else {
			b, frameNo, err = pp.next(buf)
		}
		if len(b) > 0 {
			pp.handle(b, frameNo, pkt)
		}
		if err != nil {
			p.mu.Lock()
			pp.srcDone = true
			pp.srcErr = err
			if !c.closed && c.cut != 0 && c.cut&pp.srcEnd() == 0 {
				p.closeConn(c, fmt.Sprintf("%s closed the socket left open by cut", pp.srcEnd()))
			}
			pp.cond.Broadcast()
			p.mu.Unlock()
			return
		}
	}
}

// next returns the next chunk read from src. In ZooKeeper mode it returns
// whole frames, with frameNo counting them from 1; frameNo is 0 for raw
// bytes. A clean end of stream, even inside a frame, is io.EOF.
func (pp *pipe) next(buf []byte) (b []byte, frameNo int, err error) {
	if pp.br == nil {
		n, err := pp.src.Read(buf)
		return clone(buf[:n]), 0, err
	}
	if !pp.raw {
		hdr, err := pp.br.Peek(4)
		if err != nil {
			if len(hdr) == 0 {
				return nil, 0, err
			}
			pp.raw = true // a partial prefix before EOF: pass it on raw
		} else if n := int32(binary.BigEndian.Uint32(hdr)); n < 0 || n > jute.MaxFrame {
			pp.raw = true
			p := pp.c.p
			p.mu.Lock()
			p.logConn(pp.c, "%s: frame length %d is not ZooKeeper framing; copying raw bytes from now on", pp.dir(), n)
			p.mu.Unlock()
		} else {
			frame := make([]byte, 4+int(n))
			m, err := io.ReadFull(pp.br, frame)
			if err != nil {
				pp.raw = true
				if errors.Is(err, io.ErrUnexpectedEOF) {
					err = io.EOF
				}
				return frame[:m], 0, err
			}
			pp.frames++
			return frame, pp.frames, nil
		}
	}
	n, err := pp.br.Read(buf)
	return clone(buf[:n]), 0, err
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// parsed is what a frame's headers say, read before taking the lock.
type parsed struct {
	req     jute.RequestHeader
	reqOK   bool
	cands   []candidate // armed drops whose rule selects req
	reply   jute.ReplyHeader
	replyOK bool
	seen    seen
	session *Session // the server's handshake reply, read for Sessions
}

// parse reads the header of a ZooKeeper frame: a request header going Up,
// a reply header going Down, never a reply body. Frame 1 of each direction
// is the session handshake, which has no header: the server's reply is
// read for the session it grants (Sessions), the client's never.
func (pp *pipe) parse(b []byte, frameNo int) (f parsed) {
	p := pp.c.p
	if p.cfg.zk && frameNo == 1 && pp.idx == 1 {
		if s, err := decodeConnectResponse(b[4:]); err == nil {
			s.Conn = pp.c.id
			f.session = &s
		}
	}
	if !p.cfg.zk || frameNo <= 1 {
		return f
	}
	if pp.idx == 0 {
		req, body, err := jute.DecodeRequestHeader(b[4:])
		if f.reqOK = err == nil; f.reqOK {
			f.req, f.cands = req, p.matchingDrops(req, body)
			f.seen.op = req.Type
		}
		return f
	}
	reply, body, err := jute.DecodeReplyHeader(b[4:])
	f.reply, f.replyOK = reply, err == nil
	if f.replyOK && reply.Xid == jute.XidNotification {
		if ev, err := jute.DecodeWatcherEvent(body); err == nil {
			f.seen = seen{note: true, path: ev.Path}
		}
	}
	return f
}

// handle queues or discards b according to the direction's mode and the
// connection's state, applies LoseReply faults to ZooKeeper frames, and
// HoldCommit faults to quorum packets (pkt, when b is one).
func (pp *pipe) handle(b []byte, frameNo int, pkt *jute.QuorumPacket) {
	f := pp.parse(b, frameNo)
	t := readTxn(pkt)
	c, p := pp.c, pp.c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(len(b))
	if f.session != nil {
		p.sessions = append(p.sessions, *f.session)
	}
	if c.closed || c.cut != 0 {
		p.discarded[pp.idx] += n
		return
	}
	m := p.modes[pp.idx]
	if f.reqOK && m != blackhole && p.bindFirst(f.cands, c, f.req, m) {
		p.discarded[pp.idx] += n
		return
	}
	var drop *Drop
	if f.replyOK {
		var consumed bool
		if drop, consumed = pp.replyArrived(f.reply, m, n); consumed {
			return
		}
	}
	if m == blackhole {
		pp.lose(n)
		return
	}
	if pp.idx == 1 && p.cfg.quorum && len(p.holds) > 0 && pp.holdPacket(pkt, t, b) {
		return
	}
	pp.q = append(pp.q, item{b: b, drop: drop, seen: f.seen})
	pp.qBytes += n
	pp.cond.Broadcast()
	for !c.closed && c.cut == 0 && p.modes[pp.idx] == pass && pp.qBytes >= maxQueued {
		pp.cond.Wait()
	}
}

// replyArrived applies reply header h, read in mode m, to the drop waiting
// for it on this connection, if any. It returns the drop to queue with the
// frame, or consumed if the frame is already gone: lost at once because
// the direction is blackholed. Callers hold p.mu.
func (pp *pipe) replyArrived(h jute.ReplyHeader, m mode, n int64) (pending *Drop, consumed bool) {
	c, p := pp.c, pp.c.p
	d := p.boundDrop(c, h.Xid)
	if d == nil {
		return nil, false
	}
	d.res.Zxid, d.res.Err = h.Zxid, h.Err
	switch {
	case h.Err != d.rule.err:
		p.logConn(c, "reply xid=%d zxid=%#x err=%d: %s; DropReply spent without dropping (it loses err=%d)",
			h.Xid, h.Zxid, h.Err, verb(m), d.rule.err)
		p.finishDrop(d, false, fmt.Sprintf("forwarded(err=%d)", h.Err))
		return nil, false
	case m == blackhole:
		p.discarded[pp.idx] += n
		p.executeDrop(d, c)
		return nil, true
	}
	d.state = dropPending
	return d, false
}

// lose discards n bytes read while the direction is blackholed: the
// stream now has a hole, which Heal ends by resetting the connection.
// Callers hold p.mu.
func (pp *pipe) lose(n int64) {
	pp.c.p.discarded[pp.idx] += n
	if n > 0 {
		pp.c.holed = true
	}
}

// verb describes what mode m does with a frame, for log lines.
func verb(m mode) string {
	switch m {
	case hold:
		return "held"
	case blackhole:
		return "discarded (blackhole)"
	}
	return "forwarded"
}

// accept queues b like handle does for raw bytes. Callers hold p.mu.
func (pp *pipe) accept(b []byte, drop *Drop) {
	p := pp.c.p
	if p.modes[pp.idx] == blackhole {
		pp.lose(int64(len(b)))
		return
	}
	pp.q = append(pp.q, item{b: b, drop: drop})
	pp.qBytes += int64(len(b))
	pp.cond.Broadcast()
}

// writeLoop delivers queued items to dst while the direction passes, then
// the end of the stream.
func (pp *pipe) writeLoop() {
	c, p := pp.c, pp.c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case c.closed:
			pp.discardQueue(false)
			return
		case c.cut != 0:
			// Silent: nothing more is written to the end left open.
			pp.discardQueue(false)
			if pp.srcDone {
				return
			}
		case p.modes[pp.idx] != pass:
			// Held (or blackholed, with an empty queue): wait.
		case len(pp.q) > 0:
			pp.deliverHead()
			continue
		case pp.srcDone && len(pp.held) == 0: // the end waits behind held packets too
			pp.finish()
			return
		}
		pp.cond.Wait()
	}
}

// deliverHead writes the item at the head of the queue to dst, or drops
// it if a LoseReply fault is pending on it. It releases p.mu while
// writing. Callers hold p.mu.
func (pp *pipe) deliverHead() {
	c, p := pp.c, pp.c.p
	it := pp.q[0]
	pp.q[0] = item{}
	pp.q = pp.q[1:]
	pp.qBytes -= int64(len(it.b))
	pp.cond.Broadcast() // the reader may wait for room
	if it.drop.pendingOn(c) {
		p.discarded[pp.idx] += int64(len(it.b))
		p.executeDrop(it.drop, c)
		return
	}
	if it.seen.op != 0 {
		// Before the write: the server may answer before this goroutine
		// takes the lock again, and the count must not lag the reply.
		p.count(it.seen)
	}
	p.mu.Unlock()
	_, err := pp.dst.Write(it.b)
	p.mu.Lock()
	if err != nil {
		p.discarded[pp.idx] += int64(len(it.b))
		if !c.closed && c.cut == 0 {
			p.closeConn(c, fmt.Sprintf("write to %s failed: %v", pp.dstEnd(), err))
		}
		return
	}
	p.delivered[pp.idx] += int64(len(it.b))
	if it.seen.note {
		p.count(it.seen)
	}
}

// finish passes the end of the source stream on, once everything before it
// was delivered: a clean EOF half-closes dst (both sockets close when the
// other direction has finished too); any other read error closes both.
// Callers hold p.mu.
func (pp *pipe) finish() {
	c, p := pp.c, pp.c.p
	pp.finished = true
	if !errors.Is(pp.srcErr, io.EOF) {
		p.closeConn(c, fmt.Sprintf("read from %s failed: %v", pp.srcEnd(), pp.srcErr))
		return
	}
	if other := c.pipes[1-pp.idx]; other.finished {
		p.closeConn(c, fmt.Sprintf("%s closed, then %s closed", other.srcEnd(), pp.srcEnd()))
		return
	}
	if cw, ok := pp.dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		p.closeConn(c, fmt.Sprintf("%s closed", pp.srcEnd()))
	}
}

package faultproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/zk19/zk19/internal/jute"
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

// logConn logs one line about connection c.
func (p *Proxy) logConn(c *conn, format string, args ...any) {
	p.logf("conn#%d "+format, append([]any{c.id}, args...)...)
}

// item is one chunk (raw mode) or frame (ZooKeeper mode) waiting in a pipe.
type item struct {
	b []byte
	// drop, if set, is the DropReply fault that wants b (a reply) discarded
	// and the connection closed when b reaches the head of the queue, if
	// the fault is still pending then.
	drop *Drop
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
	srcDone  bool  // the reader has stopped
	srcErr   error // why: io.EOF for a clean close
	finished bool  // the writer has delivered the end of the stream

	// Owned by the reader goroutine.
	br     *bufio.Reader // ZooKeeper mode
	raw    bool          // ZooKeeper mode fell back to raw copying
	frames int           // frames read so far
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

// discardQueue drops everything queued. If executeDrops, a pending
// DropReply found in the queue takes effect. Callers hold p.mu.
func (pp *pipe) discardQueue(executeDrops bool) {
	p := pp.c.p
	for _, it := range pp.q {
		if executeDrops && it.drop.pendingOn(pp.c) {
			p.executeDrop(it.drop, pp.c)
		}
		p.discarded[pp.idx] += int64(len(it.b))
	}
	clear(pp.q)
	pp.q = pp.q[:0]
	pp.qBytes = 0
}

// readLoop reads chunks or frames from src until it fails.
func (pp *pipe) readLoop() {
	c, p := pp.c, pp.c.p
	if p.cfg.zk {
		pp.br = bufio.NewReaderSize(pp.src, 64<<10)
	}
	buf := make([]byte, 32<<10)
	for {
		b, frameNo, err := pp.next(buf)
		if len(b) > 0 {
			pp.handle(b, frameNo)
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

// handle queues or discards b according to the direction's mode and the
// connection's state, and applies DropReply faults to ZooKeeper frames.
func (pp *pipe) handle(b []byte, frameNo int) {
	c, p := pp.c, pp.c.p
	// Frame 1 is the session handshake: never parsed.
	parse := p.cfg.zk && frameNo > 1
	var (
		req        jute.RequestHeader
		reqBody    []byte
		reqOK      bool
		candidates []*Drop
		reply      jute.ReplyHeader
		replyOK    bool
	)
	if parse && pp.idx == 0 {
		var err error
		req, reqBody, err = jute.DecodeRequestHeader(b[4:])
		if reqOK = err == nil; reqOK {
			candidates = p.matchingDrops(req, reqBody)
		}
	} else if parse {
		var err error
		reply, _, err = jute.DecodeReplyHeader(b[4:])
		replyOK = err == nil
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(len(b))
	if c.closed || c.cut != 0 {
		p.discarded[pp.idx] += n
		return
	}
	m := p.modes[pp.idx]
	var drop *Drop
	if reqOK && m != blackhole {
		for _, d := range candidates {
			if d.state == dropArmed {
				p.bindDrop(d, c, req, reqBody, m)
				break
			}
		}
	}
	if replyOK {
		if d := p.boundDrop(c, reply.Xid); d != nil {
			d.res.Zxid, d.res.Err = reply.Zxid, reply.Err
			switch {
			case reply.Err != 0:
				p.logConn(c, "reply xid=%d zxid=%#x err=%d: %s; DropReply spent without dropping (error reply)",
					reply.Xid, reply.Zxid, reply.Err, verb(m))
				p.finishDrop(d, false, fmt.Sprintf("reply had err=%d and was forwarded", reply.Err))
			case m == blackhole:
				p.discarded[pp.idx] += n
				p.executeDrop(d, c)
				return
			default:
				d.state = dropPending
				drop = d
			}
		}
	}
	if m == blackhole {
		p.discarded[pp.idx] += n
		return
	}
	pp.q = append(pp.q, item{b: b, drop: drop})
	pp.qBytes += n
	pp.cond.Broadcast()
	for !c.closed && c.cut == 0 && p.modes[pp.idx] == pass && pp.qBytes >= maxQueued {
		pp.cond.Wait()
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
		p.discarded[pp.idx] += int64(len(b))
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
			it := pp.q[0]
			pp.q[0] = item{}
			pp.q = pp.q[1:]
			pp.qBytes -= int64(len(it.b))
			pp.cond.Broadcast() // the reader may wait for room
			if it.drop.pendingOn(c) {
				p.discarded[pp.idx] += int64(len(it.b))
				p.executeDrop(it.drop, c)
				continue
			}
			p.mu.Unlock()
			_, err := pp.dst.Write(it.b)
			p.mu.Lock()
			if err != nil {
				p.discarded[pp.idx] += int64(len(it.b))
				if !c.closed && c.cut == 0 {
					p.closeConn(c, fmt.Sprintf("write to %s failed: %v", pp.dstEnd(), err))
				}
				continue
			}
			p.delivered[pp.idx] += int64(len(it.b))
			continue
		case pp.srcDone:
			pp.finished = true
			if !errors.Is(pp.srcErr, io.EOF) {
				p.closeConn(c, fmt.Sprintf("read from %s failed: %v", pp.srcEnd(), pp.srcErr))
				return
			}
			if other := c.pipes[1-pp.idx]; other.finished {
				p.closeConn(c, fmt.Sprintf("%s closed, then %s closed", other.srcEnd(), pp.srcEnd()))
				return
			}
			// Pass the EOF on and let the other direction finish.
			if cw, ok := pp.dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			} else {
				p.closeConn(c, fmt.Sprintf("%s closed", pp.srcEnd()))
			}
			return
		}
		pp.cond.Wait()
	}
}

package faultproxy

import (
	"fmt"
	"strings"

	"github.com/zk19/zk19/internal/jute"
)

type dropState int

const (
	dropArmed    dropState = iota // waiting for a matching request
	dropBound                     // request seen; waiting for its reply
	dropPending                   // err=0 reply queued; drops when it reaches the head
	dropFinished                  // done; see DropResult
)

// DropResult describes what a DropReply fault did.
type DropResult struct {
	Conn    int    // proxied connection number as in log lines; 0 if no request matched
	Xid     int32  // xid of the matched request
	Op      int32  // opcode of the matched request
	Zxid    int64  // zxid from the reply header, if the reply arrived
	Err     int32  // err from the reply header, if the reply arrived
	Dropped bool   // the reply was discarded and the connection closed
	Reason  string // how the fault ended, for test messages
}

// Drop is a one-shot fault armed by Proxy.DropReply.
type Drop struct {
	p     *Proxy
	match func(jute.RequestHeader, []byte) bool
	done  chan struct{}

	// Guarded by p.mu.
	state dropState
	conn  *conn
	res   DropResult
}

// DropReply arms a one-shot fault; it needs WithZooKeeperFrames. The first
// request (after a connection's handshake, on any connection) for which
// match(header, body) is true has its xid recorded and is forwarded. When
// the complete reply frame with that xid arrives on that connection:
//   - if its err is 0, the proxy discards the frame without decoding its
//     body, closes the client and upstream sockets of that connection, and
//     the fault is spent (Result().Dropped is true);
//   - otherwise the frame is forwarded and the fault is spent too
//     (Dropped is false, Err is set).
//
// The fault also ends, without dropping, if that connection closes first,
// on Cancel, or on Close. Later connections pass normally. match may be
// called concurrently from several connections and must not keep body.
// On a proxy without WithZooKeeperFrames, or a closed one, the returned
// Drop is already done, with Dropped false.
func (p *Proxy) DropReply(match func(req jute.RequestHeader, body []byte) bool) *Drop {
	d := &Drop{p: p, match: match, done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		d.end(false, "proxy closed")
	case !p.cfg.zk:
		d.end(false, "proxy is not in ZooKeeper frame mode")
		p.logf("DropReply ignored: not in ZooKeeper frame mode")
	default:
		p.drops = append(p.drops, d)
		p.logf("DropReply armed")
	}
	return d
}

// Done returns a channel closed when the fault has ended: the reply was
// dropped or forwarded, or the fault ended otherwise.
func (d *Drop) Done() <-chan struct{} { return d.done }

// Result returns what the fault has done so far; it is final once Done is
// closed.
func (d *Drop) Result() DropResult {
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	return d.res
}

// Cancel ends the fault if it has not ended yet; a reply it was waiting for
// is forwarded normally.
func (d *Drop) Cancel() {
	p := d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if d.state == dropFinished {
		return
	}
	p.finishDrop(d, false, "canceled")
	p.logf("DropReply canceled")
}

// pendingOn reports whether d is set to drop a queued reply of c. A nil d
// is never pending. Callers hold p.mu.
func (d *Drop) pendingOn(c *conn) bool {
	return d != nil && d.state == dropPending && d.conn == c
}

// end marks d finished and closes done. Callers hold p.mu (or own d).
func (d *Drop) end(dropped bool, reason string) {
	d.state = dropFinished
	d.res.Dropped = dropped
	d.res.Reason = reason
	close(d.done)
}

// finishDrop ends d and forgets it. Callers hold p.mu.
func (p *Proxy) finishDrop(d *Drop, dropped bool, reason string) {
	if d.state == dropFinished {
		return
	}
	for i, x := range p.drops {
		if x == d {
			p.drops = append(p.drops[:i], p.drops[i+1:]...)
			break
		}
	}
	d.end(dropped, reason)
}

// matchingDrops returns the armed drops whose match accepts the request.
// It calls match without holding p.mu.
func (p *Proxy) matchingDrops(h jute.RequestHeader, body []byte) []*Drop {
	p.mu.Lock()
	var armed []*Drop
	for _, d := range p.drops {
		if d.state == dropArmed {
			armed = append(armed, d)
		}
	}
	p.mu.Unlock()
	var out []*Drop
	for _, d := range armed {
		if d.match(h, body) {
			out = append(out, d)
		}
	}
	return out
}

// bindDrop records that d waits for the reply to request h on c. Callers
// hold p.mu.
func (p *Proxy) bindDrop(d *Drop, c *conn, h jute.RequestHeader, body []byte, m mode) {
	d.state = dropBound
	d.conn = c
	d.res.Conn, d.res.Xid, d.res.Op = c.id, h.Xid, h.Type
	path := ""
	if jute.IsCreate(h.Type) {
		if cr, err := jute.DecodeCreateRequest(body); err == nil {
			path = " path=" + cr.Path
		}
	}
	p.logConn(c, "xid=%d op=%s%s: %s; DropReply will drop its reply", h.Xid, jute.OpName(h.Type), path, verb(m))
}

// boundDrop returns the drop waiting for reply xid on c, if any. Callers
// hold p.mu.
func (p *Proxy) boundDrop(c *conn, xid int32) *Drop {
	for _, d := range p.drops {
		if d.state == dropBound && d.conn == c && d.res.Xid == xid {
			return d
		}
	}
	return nil
}

// executeDrop discards d's reply: it closes c's sockets and ends d. Callers
// hold p.mu.
func (p *Proxy) executeDrop(d *Drop, c *conn) {
	p.closeConn(c, "reply dropped")
	p.stats.DroppedReplies++
	p.logConn(c, "reply xid=%d zxid=%#x err=%d: dropped; client and upstream connections closed",
		d.res.Xid, d.res.Zxid, d.res.Err)
	p.finishDrop(d, true, "reply dropped; connection closed")
}

// endDropsOf ends the drops still waiting on c, which has closed. Callers
// hold p.mu.
func (p *Proxy) endDropsOf(c *conn) {
	for _, d := range append([]*Drop(nil), p.drops...) {
		if d.conn != c {
			continue
		}
		p.logConn(c, "DropReply for xid=%d ended: connection closed before the reply was dropped", d.res.Xid)
		p.finishDrop(d, false, fmt.Sprintf("connection closed before the reply was dropped (%s)", c.reason))
	}
}

// MatchCreateUnder returns a DropReply matcher for create requests (create,
// create2, createContainer, createTTL; not creates inside a multi) whose
// path is strictly under parent, i.e. starts with parent + "/". It decodes
// the request body only; it never looks at a reply.
func MatchCreateUnder(parent string) func(jute.RequestHeader, []byte) bool {
	prefix := strings.TrimSuffix(parent, "/") + "/"
	return func(h jute.RequestHeader, body []byte) bool {
		if !jute.IsCreate(h.Type) {
			return false
		}
		cr, err := jute.DecodeCreateRequest(body)
		return err == nil && strings.HasPrefix(cr.Path, prefix)
	}
}

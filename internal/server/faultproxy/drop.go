package faultproxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zk19/zk19/internal/server/jute"
)

type dropState int

const (
	dropArmed    dropState = iota // waiting for a matching request
	dropBound                     // request seen; waiting for its reply
	dropPending                   // awaited reply queued; drops when it reaches the head
	dropFinished                  // done; see DropResult
)

// DropResult describes what a LoseReply fault did.
type DropResult struct {
	Conn int    // proxied connection number as in log lines; 0 if no request matched
	Xid  int32  // xid of the matched request
	Op   int32  // opcode of the matched request
	Path string // path the matched request named, if jute.RequestPath decodes its opcode
	Zxid int64  // zxid from the reply header, if the reply arrived
	Err  int32  // err from the reply header, if the reply arrived
	// Dropped is true if the reply was discarded and the connection closed.
	Dropped bool
	Reason  string // how the fault ended, for test messages
}

// Match selects the request whose reply a LoseReply fault loses, and the
// reply err code that is lost. The proxy reads a request's body only when
// its opcode is in Ops, and then only as far as the path; of a reply it
// reads the header alone, never the body.
type Match struct {
	// Ops are the opcodes that match (jute.OpCreate, jute.OpDelete, ...).
	// At least one is required. go-zookeeper sends create for Create and
	// getChildren2 for Children and ChildrenW.
	Ops []int32
	// Path, if set, is the exact path the request must name.
	Path string
	// Under, if set, is a node the request's path must lie strictly under.
	// Path and Under need opcodes that jute.RequestPath decodes.
	Under string
	// Err is the err code of the reply to lose; 0, the default, loses a
	// success. A reply with another err code is forwarded and spends the
	// fault.
	Err int32
}

// String describes m for log lines, such as "delete under /lock, reply err=0".
func (m Match) String() string {
	s := opNames(m.Ops)
	switch {
	case m.Path != "":
		s += " of " + m.Path
	case m.Under != "":
		s += " under " + m.Under
	}
	return fmt.Sprintf("%s, reply err=%d", s, m.Err)
}

// check reports why m can never match, or nil.
func (m Match) check() error {
	if len(m.Ops) == 0 {
		return errors.New("no opcode")
	}
	if m.Path != "" && m.Under != "" {
		return errors.New("both Path and Under are set")
	}
	if m.Path == "" && m.Under == "" {
		return nil
	}
	for _, op := range m.Ops {
		if _, err := jute.RequestPath(op, nil); errors.Is(err, errors.ErrUnsupported) {
			return fmt.Errorf("a path is required but %s has no path decoder", jute.OpName(op))
		}
	}
	return nil
}

// request reports whether a request matches m, and the path it names when
// m needed it.
func (m Match) request(h jute.RequestHeader, body []byte) (path string, ok bool) {
	if !slices.Contains(m.Ops, h.Type) {
		return "", false
	}
	path, err := jute.RequestPath(h.Type, body)
	switch {
	case m.Path == "" && m.Under == "":
		return path, true // the opcode is all m asks for
	case err != nil:
		return "", false
	case m.Path != "":
		return path, path == m.Path
	}
	return path, under(path, m.Under)
}

// opNames names opcodes for log lines, such as "create|create2".
func opNames(ops []int32) string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = jute.OpName(op)
	}
	return strings.Join(names, "|")
}

// under reports whether path lies strictly under node parent.
func under(path, parent string) bool {
	return strings.HasPrefix(path, strings.TrimSuffix(parent, "/")+"/")
}

// rule is what a Drop waits for: a request it selects, and the reply err
// code it loses; or, for LoseRequest, the request itself.
type rule struct {
	desc        string
	request     func(h jute.RequestHeader, body []byte) (path string, ok bool)
	err         int32
	loseRequest bool
}

// Drop is a one-shot fault armed by Proxy.LoseReply.
type Drop struct {
	p    *Proxy
	rule rule
	done chan struct{}

	// Guarded by p.mu.
	state dropState
	conn  *conn
	res   DropResult
}

// LoseReply arms a one-shot fault that loses the reply to one request; it
// needs WithZooKeeperFrames. The first request (after a connection's
// handshake, on any connection, outside a blackhole) that m selects has
// its xid recorded and is forwarded. When the complete reply frame with
// that xid arrives on that connection:
//   - if its err is m.Err, the proxy discards the frame without decoding
//     its body, closes the client and upstream sockets of that connection,
//     and the fault is spent (Result().Dropped is true): the request took
//     effect on the server and the client sees a connection loss;
//   - otherwise the frame is forwarded and the fault is spent too
//     (Dropped is false, Err is set).
//
// The fault also ends, without dropping, if that connection closes first,
// on Cancel, or on Close. Later connections pass normally. On a proxy
// without WithZooKeeperFrames, a closed one, or with a Match that can never
// match, the returned Drop is already done, with Dropped false and the
// reason in Result().Reason.
func (p *Proxy) LoseReply(m Match) *Drop {
	if err := m.check(); err != nil {
		return p.arm(rule{desc: m.String()}, "invalid match: "+err.Error())
	}
	return p.arm(rule{desc: m.String(), request: m.request, err: m.Err}, "")
}

// LoseRequest arms a one-shot fault that loses one request on its way to
// the server; it needs WithZooKeeperFrames. The first request (after a
// connection's handshake, on any connection, outside a blackhole) that m
// selects (m.Err is not used) is discarded, never forwarded, and the
// proxy closes the client and upstream sockets of that connection at once:
// the request never took effect, and the client sees a connection loss
// (Result().Dropped is true). The fault also ends, without dropping, on
// Cancel or Close. Later connections pass normally. Like LoseReply, it is
// done at once where it cannot run.
func (p *Proxy) LoseRequest(m Match) *Drop {
	desc := strings.TrimSuffix(m.String(), fmt.Sprintf(", reply err=%d", m.Err)) + ", the request itself"
	if err := m.check(); err != nil {
		return p.arm(rule{desc: desc, loseRequest: true}, "invalid match: "+err.Error())
	}
	return p.arm(rule{desc: desc, request: m.request, loseRequest: true}, "")
}

// arm registers a Drop for r, or returns it already ended if invalid is
// set or the proxy cannot run it.
func (p *Proxy) arm(r rule, invalid string) *Drop {
	d := &Drop{p: p, rule: r, done: make(chan struct{})}
	name := "DropReply"
	if r.loseRequest {
		name = "DropRequest"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		d.end(false, "proxy closed")
	case !p.cfg.zk:
		d.end(false, "proxy is not in ZooKeeper frame mode")
		p.logf("%s ignored: not in ZooKeeper frame mode", name)
	case invalid != "":
		d.end(false, invalid)
		p.logf("%s ignored: %s (%s)", name, invalid, r.desc)
	default:
		p.drops = append(p.drops, d)
		p.logf("%s armed: %s", name, r.desc)
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
	if i := slices.Index(p.drops, d); i >= 0 {
		p.drops = slices.Delete(p.drops, i, i+1)
	}
	d.end(dropped, reason)
}

// candidate is an armed drop whose rule selected a request.
type candidate struct {
	d    *Drop
	path string
}

// matchingDrops returns the armed drops whose rule selects the request. It
// runs the rules without holding p.mu.
func (p *Proxy) matchingDrops(h jute.RequestHeader, body []byte) []candidate {
	p.mu.Lock()
	var armed []*Drop
	for _, d := range p.drops {
		if d.state == dropArmed {
			armed = append(armed, d)
		}
	}
	p.mu.Unlock()
	var out []candidate
	for _, d := range armed {
		if path, ok := d.rule.request(h, body); ok {
			out = append(out, candidate{d, path})
		}
	}
	return out
}

// bindFirst makes the first candidate still armed wait for the reply to
// request h on c; or, if it loses requests, loses this one at once, closing
// c, and reports the request consumed. Callers hold p.mu.
func (p *Proxy) bindFirst(cands []candidate, c *conn, h jute.RequestHeader, m mode) (consumed bool) {
	for _, cd := range cands {
		d := cd.d
		if d.state != dropArmed {
			continue
		}
		d.conn = c
		d.res.Conn, d.res.Xid, d.res.Op, d.res.Path = c.id, h.Xid, h.Type, cd.path
		path := ""
		if cd.path != "" {
			path = " path=" + cd.path
		}
		if d.rule.loseRequest {
			p.closeConn(c, "request dropped")
			p.stats.DroppedRequests++
			p.logConn(c, "xid=%d op=%s%s: request dropped; client and upstream connections closed", h.Xid, jute.OpName(h.Type), path)
			p.finishDrop(d, true, "request dropped; connection closed")
			return true
		}
		d.state = dropBound
		p.logConn(c, "xid=%d op=%s%s: %s; DropReply will drop its reply", h.Xid, jute.OpName(h.Type), path, verb(m))
		return false
	}
	return false
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
	for _, d := range slices.Clone(p.drops) {
		if d.conn != c {
			continue
		}
		p.logConn(c, "DropReply for xid=%d ended: connection closed before the reply was dropped", d.res.Xid)
		p.finishDrop(d, false, fmt.Sprintf("connection closed before the reply was dropped (%s)", c.reason))
	}
}

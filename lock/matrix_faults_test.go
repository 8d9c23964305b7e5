package lock_test

// The faults of the matrix (matrix_test.go), armed at the moment the
// recipe is about to send the request of a cell: from inside locktrace's
// Request callback, which runs on the recipe's goroutine just before the
// request goes out, or (for requests the recipe does not trace: the hold's
// own-node watch) just before the call that sends it. Each fault records
// its own observation that it took (cell.saw): the proxy's account of the
// request or reply it dropped, the reconnect it refused after the cut, the
// server's answer to the closeSession that ended the session, the context
// ended while the call had not returned. Without it the cell is "not
// shown".

import (
	"fmt"
	"time"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/lock/locktrace"

	"github.com/go-zookeeper/zk"
)

// fault is what happens to the subject's session while a request is in
// flight.
type fault int

const (
	// requestLost: the proxy discards the request and closes the
	// connection (faultproxy.LoseRequest): the server never saw it.
	requestLost fault = iota + 1
	// replyLost: the server applied the request; the proxy discards its
	// reply and closes the connection (faultproxy.LoseReply).
	replyLost
	// cut: the request reached the server, its reply is held, then the
	// connection is cut (faultproxy.Cut) and the client's next connection
	// refused once before Heal: the reply is lost and the client gets
	// zk.ErrNoServer on top of zk.ErrConnectionClosed.
	cut
	// expired: the request reached the server, its reply is held, then the
	// server ends the session (a connection of the test's own resumes it
	// with its password and closes it: to the client and the recipe this
	// is an expiry, learnt at the next handshake, which the server answers
	// with session 0), and the held reply is lost with the connection.
	// It takes one reconnect instead of a session timeout and a tickTime.
	expired
	// ctxEnded: the request reached the server, its reply is held, and the
	// caller's context is cancelled; the reply flows again once the call
	// has returned.
	ctxEnded
)

var allFaults = []fault{requestLost, replyLost, cut, expired, ctxEnded}

func (f fault) String() string {
	switch f {
	case requestLost:
		return "request-lost"
	case replyLost:
		return "reply-lost"
	case cut:
		return "cut"
	case expired:
		return "expired"
	case ctxEnded:
		return "ctx-ended"
	}
	return "fault?"
}

// zNoNode is ZooKeeper's NONODE reply code.
const zNoNode = -101

// opNone is the "request" of a parked waiter: none is in flight, the
// watch set by its exists is.
const opNone locktrace.Op = 0

// wireOps are the opcodes go-zookeeper sends for a recipe request.
func wireOps(op locktrace.Op) []int32 {
	switch op {
	case locktrace.OpCreate:
		return []int32{jute.OpCreate, jute.OpCreate2}
	case locktrace.OpChildren:
		return []int32{jute.OpGetChildren, jute.OpGetChildren2}
	case locktrace.OpExists:
		return []int32{jute.OpExists}
	case locktrace.OpDelete:
		return []int32{jute.OpDelete}
	case locktrace.OpSync:
		return []int32{jute.OpSync}
	case locktrace.OpCreateParent:
		return []int32{jute.OpCreateContainer}
	}
	return nil
}

// matchOf selects the request on the wire: a create by its parent (the
// server picks the name), a sync by its opcode (the proxy decodes no sync
// path; the recipe's are the only syncs on the subject's proxy), the
// others by their exact path.
func (c *cell) matchOf(op locktrace.Op, path string) faultproxy.Match {
	m := faultproxy.Match{Ops: wireOps(op)}
	if c.st.at.lookAgain && op == locktrace.OpExists {
		m.Err = zNoNode // the look-again finds the node gone: the lost delete was applied
	}
	switch op {
	case locktrace.OpCreate:
		m.Under = c.parent
	case locktrace.OpSync:
	default:
		m.Path = path
	}
	return m
}

// inject makes c's fault happen to request op of path, about to be sent
// (or, for opNone, to the parked waiter). It returns at once for the
// proxy's one-shot faults; for the others it waits until the subject's
// client has a session (a request queued while it reconnects goes out
// after the handshake, whose reply a hold would keep), holds the replies,
// and lets a goroutine do the rest once the request has reached the
// server. c.faultDone is closed when the fault has run its course.
func (c *cell) inject(op locktrace.Op, path string) {
	c.logf("fault: %s while %s %s is in flight (state %s)", c.f, op, path, c.st.name)
	if c.seamStopsFault() {
		return
	}
	switch c.f {
	case requestLost:
		c.afterDrop(c.w.px.LoseRequest(c.matchOf(op, path)))
		return
	case replyLost:
		c.afterDrop(c.w.px.LoseReply(c.matchOf(op, path)))
		return
	}
	if op != opNone {
		if err := tb.WaitUntil(answerWithin, "the subject's client to have a session", func() (bool, string) {
			s := c.w.c.State()
			return s == zk.StateHasSession, s.String()
		}); err != nil {
			c.faultFailed(err)
			return
		}
	}
	ops := wireOps(op)
	before := c.w.px.Requests(ops...)
	if op != opNone {
		c.w.px.Hold(faultproxy.Down)
	}
	go func() {
		defer close(c.faultDone)
		if op != opNone {
			if err := tb.WaitUntil(answerWithin, fmt.Sprintf("%s %s on the wire", op, path), func() (bool, string) {
				n := c.w.px.Requests(ops...)
				return n > before, fmt.Sprintf("%d passed, %d before", n, before)
			}); err != nil {
				c.faultErr.Store(err.Error())
				return
			}
		}
		c.act(op != opNone)
	}()
}

// act does the fault once the request is on the wire (held: the replies
// are held), and records what shows that it took.
func (c *cell) act(held bool) {
	switch c.f {
	case cut:
		refused := c.w.px.Stats().Refused
		c.w.px.Cut(faultproxy.BothEnds)
		if err := tb.WaitUntil(answerWithin, "the subject's reconnect to be refused", func() (bool, string) {
			n := c.w.px.Stats().Refused
			return n > refused, fmt.Sprintf("%d refused", n)
		}); err != nil {
			c.faultErr.Store(err.Error())
		} else {
			c.saw("cut, reconnect refused", fmt.Sprintf("the proxy refused a reconnect after the cut: %d refused", c.w.px.Stats().Refused))
		}
		c.w.px.Heal()
		c.logf("fault: cut, a reconnect refused, healed")
	case expired:
		if sid, err := c.endSession(); err != nil {
			c.faultErr.Store(err.Error())
		} else {
			c.saw("session ended", fmt.Sprintf("the server answered the closeSession of 0x%x", sid))
		}
		if held {
			c.w.px.Blackhole(faultproxy.Down) // the held reply is lost
			c.w.px.Heal()
		}
	case ctxEnded:
		inFlight := !c.returned.Load()
		c.endCtx()
		if inFlight {
			c.saw("ctx ended in flight", "the caller's context ended before the call returned")
		} else {
			c.faultErr.Store("the call had returned before its context ended")
		}
	}
}

// afterDrop waits (on a goroutine) for a one-shot proxy fault to end.
func (c *cell) afterDrop(d *faultproxy.Drop) {
	go func() {
		defer close(c.faultDone)
		select {
		case <-d.Done():
		case <-time.After(2 * answerWithin):
			c.faultErr.Store("the proxy's fault did not end within " + (2 * answerWithin).String())
			d.Cancel()
			return
		}
		r := d.Result()
		if !r.Dropped {
			c.faultErr.Store("the proxy did not drop: " + r.Reason)
			return
		}
		what := "reply dropped"
		if c.f == requestLost {
			what = "request dropped"
		}
		c.saw(what, fmt.Sprintf("the proxy's conn#%d, xid %d, op %d %s: %s", r.Conn, r.Xid, r.Op, r.Path, r.Reason))
	}()
}

func (c *cell) faultFailed(err error) {
	c.faultErr.Store(err.Error())
	close(c.faultDone)
}

// endCtx cancels the call's context and notes when.
func (c *cell) endCtx() {
	c.cancelOnce.Do(func() {
		now := time.Now()
		c.cancelAt.Store(&now)
		c.logf("fault: the caller's context ends")
		c.cancel()
		close(c.cancelled)
	})
}

// endSession ends the subject's current session on the server (endSessionOf)
// and returns it.
func (c *cell) endSession() (int64, error) {
	sid := c.w.c.SessionID()
	if err := endSessionOf(c.w.px, sid); err != nil {
		return 0, err
	}
	c.logf("fault: the server ended session 0x%x", sid)
	return sid, nil
}

// endSessionOf ends session sid, granted through px, on the server, as its
// expiry does: a connection of the test's own resumes the session with
// its password and sends closeSession. The server deletes the session's
// ephemeral nodes and closes its connections; the client learns it at its
// next handshake (session 0: expired) and go-zookeeper opens a new session.
func endSessionOf(px *faultproxy.Proxy, sid int64) error {
	var s faultproxy.Session
	for _, g := range px.Sessions() {
		if g.ID == sid {
			s = g
		}
	}
	if s.ID == 0 {
		return fmt.Errorf("session 0x%x was not granted through the proxy", sid)
	}
	return closeSession(server().Client, s)
}

// closeSession resumes s on a connection of its own to addr and closes it.
func closeSession(addr string, s faultproxy.Session) error {
	nc, _, err := faultproxy.ResumeSession(addr, s, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(answerWithin))
	hdr := jute.RequestHeader{Xid: 1, Type: jute.OpCloseSession}.Append(nil)
	if _, err := nc.Write(jute.AppendFrame(nil, hdr)); err != nil {
		return fmt.Errorf("closeSession 0x%x: %w", s.ID, err)
	}
	if _, err := jute.ReadFrame(nc, jute.MaxFrame); err != nil {
		return fmt.Errorf("closeSession 0x%x: reply: %w", s.ID, err)
	}
	return nil
}

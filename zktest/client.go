package zktest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Client is a go-zookeeper session whose every connection goes through a
// Proxy of its own: the faults of its Proxy reach this client and no
// other. It records the session states the library reports, so a test can
// wait for one.
type Client struct {
	*zk.Conn
	Proxy  *Proxy
	Server *Server // the server its proxy fronts

	c *zkclient.Client
}

// ConnectOption configures Connect.
type ConnectOption func(*connectConfig)

type connectConfig struct {
	server  *Server
	timeout time.Duration
}

// To connects to server s (by default the ensemble's first server).
func To(s *Server) ConnectOption { return func(c *connectConfig) { c.server = s } }

// SessionTimeout asks for a session timeout (default 1 s); the server
// grants one within 2 to 20 tickTimes.
func SessionTimeout(d time.Duration) ConnectOption { return func(c *connectConfig) { c.timeout = d } }

// ConnectWithin bounds Connect's wait for a session.
const ConnectWithin = zkclient.ConnectWithin

// Connect opens a session named name through a new Proxy in front of one
// server, and waits up to ConnectWithin until it has one. The session and
// the proxy are closed when t ends.
func (e *Ensemble) Connect(t TB, name string, opts ...ConnectOption) *Client {
	t.Helper()
	cc := connectConfig{server: e.Servers[0], timeout: time.Second}
	for _, o := range opts {
		o(&cc)
	}
	p := NewProxy(t, name+"-proxy", cc.server.Addr)
	zc := zkclient.Connect(t, name, []string{p.Addr()}, zkclient.WithSessionTimeout(cc.timeout))
	return &Client{Conn: zc.Conn, Proxy: p, Server: cc.server, c: zc}
}

// SessionHex is the session id as ZooKeeper's logs print it, "0x…".
func (c *Client) SessionHex() string { return c.c.SessionHex() }

// States is every session state the client reported, in order.
func (c *Client) States() []zk.State { return c.c.States() }

// Mark is a position in States, for WaitStateSince.
func (c *Client) Mark() int { return c.c.Mark() }

// WaitStateSince waits up to within until the client reports state at or
// after position mark; the error names the states it saw.
func (c *Client) WaitStateSince(mark int, state zk.State, within time.Duration) error {
	return c.c.WaitStateSince(mark, state, within)
}

// WaitExpired waits up to within until the client learns that its session
// expired (zk.StateExpired); the error names the states it saw. A client
// learns it only when it reaches a server again: after a Freeze or a Cut,
// Heal first.
func (c *Client) WaitExpired(within time.Duration) error {
	return c.c.WaitState(zk.StateExpired, within)
}

// Expire freezes the client (Proxy.Freeze) until the server has expired its
// session on its own clock, then heals the proxy and waits until the
// client hears of it and has opened a new session (go-zookeeper does so by
// itself). It waits up to within for each step, and returns an
// error naming the step and what it saw last. The session expired on the
// server when it is gone from the server's session tracker (the four-letter
// word dump, asked of the leader), not when the client says so.
func (c *Client) Expire(within time.Duration) error {
	id := c.SessionHex()
	mark := c.Mark()
	c.Proxy.Freeze()
	gone := tb.WaitUntil(within, "session "+id+" to leave the server's session tracker", func() (bool, string) {
		return sessionGone(c.Server, id)
	})
	c.Proxy.Heal()
	if gone != nil {
		return gone
	}
	if err := c.c.WaitStateSince(mark, zk.StateExpired, within); err != nil {
		return err
	}
	// go-zookeeper opens a new session by itself once it hears of the expiry.
	expired := mark + slices.Index(c.States()[mark:], zk.StateExpired)
	return c.c.WaitStateSince(expired+1, zk.StateHasSession, within)
}

// sessionGone asks the ensemble's leader (or the standalone server) for
// dump and reports whether session id is missing from it.
func sessionGone(s *Server, id string) (bool, string) {
	ask := s
	if len(s.e.Servers) > 1 {
		if ask = s.e.leaderNow(); ask == nil {
			return false, "no server leads: " + s.e.modes()
		}
	}
	a, err := zkserver.FourLetter(ask.Addr, "dump", 2*time.Second)
	if err != nil {
		return false, fmt.Sprintf("%s: dump: %v", ask, err)
	}
	if slices.Contains(strings.Fields(a), id) {
		return false, fmt.Sprintf("%s still tracks %s", ask, id)
	}
	return true, ""
}

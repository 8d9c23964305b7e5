// Package zkclient opens go-zookeeper sessions for tests: one named client
// per session, its session events recorded and logged, bounded waits for
// states, and Close registered as cleanup.
package zkclient

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zk19/zk19/internal/zkserver"
)

// Client is one named ZooKeeper session.
type Client struct {
	*zk.Conn
	Name string

	t       zkserver.TB
	mu      sync.Mutex
	states  []zk.State
	changed chan struct{} // closed and replaced on every state change
	drained chan struct{}
}

type options struct {
	timeout time.Duration
	dialer  zk.Dialer
	quiet   bool
	wait    bool
}

// Option configures Connect.
type Option func(*options)

// WithSessionTimeout asks for a session timeout; the server clamps it to
// [2, 20] × tickTime.
func WithSessionTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithDialer routes the connection, for example through a fault proxy.
func WithDialer(d zk.Dialer) Option { return func(o *options) { o.dialer = d } }

// Quiet stops the client from logging its session events.
func Quiet() Option { return func(o *options) { o.quiet = true } }

// NoWait returns before the session is established.
func NoWait() Option { return func(o *options) { o.wait = false } }

// ConnectWithin bounds the wait for a session.
const ConnectWithin = 20 * time.Second

type logger struct {
	name string
	logf func(string, ...any)
}

func (l logger) Printf(format string, args ...any) {
	l.logf("%s zk-client: %s", l.name, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// Connect opens a session to servers and waits until it has one. Close is
// registered as cleanup, and the cleanup waits until the library's event
// stream has ended.
func Connect(t zkserver.TB, name string, servers []string, opts ...Option) *Client {
	t.Helper()
	o := options{timeout: 10 * time.Second, dialer: net.DialTimeout, wait: true}
	for _, f := range opts {
		f(&o)
	}
	c := &Client{Name: name, t: t, changed: make(chan struct{}), drained: make(chan struct{})}
	logf := t.Logf
	if o.quiet {
		logf = func(string, ...any) {}
	}
	var logMu sync.Mutex
	logging := true
	safeLogf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		if logging {
			logf(format, args...)
		}
	}
	conn, events, err := zk.Connect(servers, o.timeout,
		zk.WithDialer(o.dialer), zk.WithLogInfo(false), zk.WithLogger(logger{name, safeLogf}))
	if err != nil {
		t.Fatalf("%s: connect %v: %v", name, servers, err)
	}
	c.Conn = conn
	go func() {
		defer close(c.drained)
		for ev := range events {
			if ev.Type != zk.EventSession {
				continue
			}
			c.mu.Lock()
			c.states = append(c.states, ev.State)
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
			if ev.State == zk.StateHasSession || ev.State == zk.StateExpired || ev.State == zk.StateDisconnected {
				safeLogf("%s info session %s (server %s, session 0x%x)", name, stateName(ev.State), ev.Server, conn.SessionID())
			}
		}
	}()
	t.Cleanup(func() {
		logMu.Lock()
		logging = false // a closed client's last events are not evidence
		logMu.Unlock()
		conn.Close()
		select {
		case <-c.drained:
		case <-time.After(10 * time.Second):
			t.Logf("%s: event stream still open 10s after Close", name)
		}
	})
	if o.wait {
		if err := c.WaitState(zk.StateHasSession, ConnectWithin); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return c
}

func stateName(s zk.State) string {
	return strings.TrimPrefix(s.String(), "State")
}

// States returns every session state seen so far, in order.
func (c *Client) States() []zk.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]zk.State(nil), c.states...)
}

// Seen reports whether state has been seen.
func (c *Client) Seen(state zk.State) bool {
	for _, s := range c.States() {
		if s == state {
			return true
		}
	}
	return false
}

// Mark returns a position in the state history for WaitStateSince.
func (c *Client) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.states)
}

// WaitState waits until state is seen (now or earlier).
func (c *Client) WaitState(state zk.State, within time.Duration) error {
	return c.WaitStateSince(0, state, within)
}

// WaitStateSince waits until state is seen at or after position mark.
func (c *Client) WaitStateSince(mark int, state zk.State, within time.Duration) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		var seen []zk.State
		if mark < len(c.states) {
			seen = append(seen, c.states[mark:]...)
		}
		c.mu.Unlock()
		for _, s := range seen {
			if s == state {
				return nil
			}
		}
		select {
		case <-ch:
		case <-c.drained:
			return fmt.Errorf("%s: event stream ended before %s; states seen: %v", c.Name, stateName(state), seen)
		case <-deadline.C:
			return fmt.Errorf("%s: no %s within %v; states seen: %v", c.Name, stateName(state), within, seen)
		}
	}
}

// SessionHex is the session id as the record prints it.
func (c *Client) SessionHex() string { return fmt.Sprintf("0x%x", c.SessionID()) }

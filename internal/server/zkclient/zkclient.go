// Package zkclient opens go-zookeeper sessions for tests: one named client
// per session, its session events recorded and logged, bounded waits for
// states, and Close registered as cleanup.
package zkclient

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zk19/zk19/internal/server/tb"
)

// Client is one named ZooKeeper session.
type Client struct {
	*zk.Conn
	Name string

	mu      sync.Mutex
	states  []zk.State
	changed chan struct{} // closed and replaced on every state change
	drained chan struct{} // closed when the library's event stream ends
}

type options struct {
	timeout time.Duration
	dialer  zk.Dialer
	quiet   bool
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

// ConnectWithin bounds the wait for a session.
const ConnectWithin = 20 * time.Second

// closeWithin bounds the wait for the library's goroutines after Close.
const closeWithin = 10 * time.Second

type logger struct {
	name string
	logf func(string, ...any)
}

func (l logger) Printf(format string, args ...any) {
	l.logf("%s zk-client: %s", l.name, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// gatedLog forwards to logf until it is closed: a closed client's last
// events are not evidence.
type gatedLog struct {
	mu     sync.Mutex
	logf   func(string, ...any)
	closed bool
}

func (g *gatedLog) Logf(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.logf(format, args...)
	}
}

func (g *gatedLog) close() { g.mu.Lock(); g.closed = true; g.mu.Unlock() }

// Connect opens a session to servers and waits until it has one. Close is
// registered as cleanup, and the cleanup waits until the library's event
// stream has ended.
func Connect(t tb.TB, name string, servers []string, opts ...Option) *Client {
	t.Helper()
	c, err := TryConnect(t, name, servers, opts...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return c
}

// TryConnect is Connect for a goroutine other than the test's: it returns
// the error instead of failing t. The cleanup is registered on t all the
// same (Cleanup is safe from any goroutine), also when it fails.
func TryConnect(t tb.TB, name string, servers []string, opts ...Option) (*Client, error) {
	o := options{timeout: 10 * time.Second, dialer: net.DialTimeout}
	for _, f := range opts {
		f(&o)
	}
	log := &gatedLog{logf: t.Logf}
	if o.quiet {
		log.logf = func(string, ...any) {}
	}
	conn, events, err := zk.Connect(servers, o.timeout,
		zk.WithDialer(o.dialer), zk.WithLogInfo(false), zk.WithLogger(logger{name, log.Logf}))
	if err != nil {
		return nil, fmt.Errorf("%s: connect %v: %w", name, servers, err)
	}
	c := &Client{Conn: conn, Name: name, changed: make(chan struct{}), drained: make(chan struct{})}
	go c.record(events, log.Logf)
	t.Cleanup(func() {
		log.close()
		if err := c.CloseWait(closeWithin); err != nil {
			t.Logf("%v", err)
		}
	})
	if err := c.WaitState(zk.StateHasSession, ConnectWithin); err != nil {
		return nil, err
	}
	return c, nil
}

// record keeps the session states the library reports, until its event
// stream ends.
func (c *Client) record(events <-chan zk.Event, logf func(string, ...any)) {
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
			logf("%s info session %s (server %s, session 0x%x)", c.Name, stateName(ev.State), ev.Server, c.SessionID())
		}
	}
}

// CloseWait closes the session and waits until the library's goroutines
// have ended (its event stream is closed then). It may be called more than
// once; the cleanup Connect registers calls it too.
func (c *Client) CloseWait(within time.Duration) error {
	c.Conn.Close()
	select {
	case <-c.drained:
		return nil
	case <-time.After(within):
		return fmt.Errorf("%s: event stream still open %v after Close", c.Name, within)
	}
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
func (c *Client) Seen(state zk.State) bool { return slices.Contains(c.States(), state) }

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
	return c.waitStates(within, stateName(state), func(seen []zk.State) bool {
		return mark < len(seen) && slices.Contains(seen[mark:], state)
	})
}

// WaitConnected waits until the client has a session now: the last state
// it reported is HasSession. (WaitState(HasSession) also returns for a
// session seen earlier and since lost.)
func (c *Client) WaitConnected(within time.Duration) error {
	return c.waitStates(within, "HasSession as the last state", func(seen []zk.State) bool {
		return len(seen) > 0 && seen[len(seen)-1] == zk.StateHasSession
	})
}

// waitStates waits, woken by every state change, until ok holds for the
// states seen so far.
func (c *Client) waitStates(within time.Duration, what string, ok func([]zk.State) bool) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ch, seen := c.changed, c.states
		done := ok(seen)
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-c.drained:
			return fmt.Errorf("%s: event stream ended before %s; states seen: %v", c.Name, what, seen)
		case <-deadline.C:
			return fmt.Errorf("%s: no %s within %v; states seen: %v", c.Name, what, within, seen)
		}
	}
}

// SessionHex is the session id as the record prints it.
func (c *Client) SessionHex() string { return fmt.Sprintf("0x%x", c.SessionID()) }

// SortedChildren is p's children, sorted, as c sees them; an error fails t.
func (c *Client) SortedChildren(t tb.TB, p string) []string {
	t.Helper()
	kids, _, err := c.Children(p)
	if err != nil {
		t.Fatalf("%s: children %s: %v", c.Name, p, err)
	}
	slices.Sort(kids)
	return kids
}

// MustExists is whether p exists and its stat, as c sees them; an error
// fails t.
func (c *Client) MustExists(t tb.TB, p string) (bool, *zk.Stat) {
	t.Helper()
	ok, st, err := c.Exists(p)
	if err != nil {
		t.Fatalf("%s: exists %s: %v", c.Name, p, err)
	}
	return ok, st
}

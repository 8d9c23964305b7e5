package peer

import (
	"context"
	"time"
)

// Reply is what every reply carries.
type Reply struct {
	ElapsedSeconds float64 `json:"elapsed"`
}

// Elapsed is the time the driver spent serving the request, from reading it
// to printing the reply: for an acquire, the time kazoo's acquire took.
func (r Reply) Elapsed() time.Duration {
	return time.Duration(r.ElapsedSeconds * float64(time.Second))
}

// State is kazoo's view of its connection.
type State struct {
	Reply
	State       string `json:"state"`        // KazooState: CONNECTED, SUSPENDED or LOST
	KeeperState string `json:"keeper_state"` // the finer KeeperState, e.g. CONNECTING, EXPIRED_SESSION
	Session     string `json:"session"`      // the session id as hex, "" when there is none
}

// LockInfo is what the driver's kazoo Lock object says about itself.
type LockInfo struct {
	Reply
	Prefix     string `json:"prefix"`      // the node name's start: kazoo's GUID then "__lock__"
	Node       string `json:"node"`        // the node it took as its own ("" for none)
	IsAcquired bool   `json:"is_acquired"` // kazoo's is_acquired
}

// Acquired is the outcome of kazoo's acquire.
type Acquired struct {
	LockInfo
	Acquired bool `json:"acquired"` // what acquire returned
}

// Released is the outcome of kazoo's release.
type Released struct {
	Reply
	Released   bool `json:"released"`    // what release returned
	IsAcquired bool `json:"is_acquired"` // is_acquired afterwards
}

// Child is one child of a lock dir as the driver's session sees it.
type Child struct {
	Name  string `json:"name"`
	Owner string `json:"owner"` // ephemeralOwner as hex; "0x0" for a persistent node
	Data  string `json:"data"`  // the node's data (kazoo writes the identifier)
	Gone  bool   `json:"gone"`  // deleted between the listing and the read
}

// Children is a listing of a lock dir.
type Children struct {
	Reply
	Children []Child `json:"children"` // sorted by name
}

// Connect starts kazoo's client on hosts (host:port,...; a client proxy's
// address so faults are the same bytes on the wire) with the session
// timeout asked for, and waits until it is connected: within ctx's
// deadline, or 15s without one.
func (k *Kazoo) Connect(ctx context.Context, hosts string, sessionTimeout time.Duration) (State, error) {
	args := map[string]any{"hosts": hosts, "session_timeout": seconds(sessionTimeout)}
	if d, ok := ctx.Deadline(); ok {
		args["connect_timeout"] = seconds(time.Until(d))
	}
	var s State
	err := k.call(ctx, "connect", args, &s)
	return s, err
}

// Lock makes the driver's kazoo Lock for path (once per path; the identifier
// of the first call stays) and returns its GUID prefix, before any node.
func (k *Kazoo) Lock(ctx context.Context, path, identifier string) (LockInfo, error) {
	var l LockInfo
	err := k.call(ctx, "lock", map[string]any{"path": path, "identifier": identifier}, &l)
	return l, err
}

// Acquire runs kazoo's acquire on path's Lock and waits for its outcome.
// timeout is kazoo's timeout argument; 0 or less passes None (wait for
// ever: only ctx, a cancel or Close ends the wait then).
func (k *Kazoo) Acquire(ctx context.Context, path, identifier string, timeout time.Duration) (Acquired, error) {
	return k.AcquireAsync(path, identifier, timeout).Wait(ctx)
}

// AcquireCall is an acquire sent and not necessarily answered.
type AcquireCall struct {
	k *Kazoo
	p *pending
}

// AcquireAsync sends an acquire and returns at once, so the test can act
// (release, cancel, inject a fault) while kazoo waits.
func (k *Kazoo) AcquireAsync(path, identifier string, timeout time.Duration) *AcquireCall {
	args := map[string]any{"path": path, "identifier": identifier}
	if timeout > 0 {
		args["timeout"] = seconds(timeout)
	}
	return &AcquireCall{k: k, p: k.send("acquire", args)}
}

// Done is closed when the acquire's reply has arrived (or never will).
func (c *AcquireCall) Done() <-chan struct{} { return c.p.done }

// Wait returns the acquire's outcome, waiting for it within ctx. It can be
// called again after a deadline passed.
func (c *AcquireCall) Wait(ctx context.Context) (Acquired, error) {
	var a Acquired
	err := c.k.wait(ctx, c.p, &a)
	return a, err
}

// Release runs kazoo's release on path's Lock.
func (k *Kazoo) Release(ctx context.Context, path string) (Released, error) {
	var r Released
	err := k.call(ctx, "release", map[string]any{"path": path}, &r)
	return r, err
}

// Cancel runs kazoo's cancel on path's Lock: a pending acquire raises
// CancelledError; with none pending, kazoo keeps the flag for the next one.
func (k *Kazoo) Cancel(ctx context.Context, path string) error {
	return k.call(ctx, "cancel", map[string]any{"path": path}, nil)
}

// IsAcquired reads kazoo's is_acquired (and node) on path's Lock.
func (k *Kazoo) IsAcquired(ctx context.Context, path string) (LockInfo, error) {
	var l LockInfo
	err := k.call(ctx, "is_acquired", map[string]any{"path": path}, &l)
	return l, err
}

// State reads kazoo's connection state and session id.
func (k *Kazoo) State(ctx context.Context) (State, error) {
	var s State
	err := k.call(ctx, "state", nil, &s)
	return s, err
}

// Children lists path's children with their owners through the driver's own
// session (these reads are not reported as the recipe's calls).
func (k *Kazoo) Children(ctx context.Context, path string) (Children, error) {
	var c Children
	err := k.call(ctx, "children", map[string]any{"path": path}, &c)
	return c, err
}

// CloseSession stops kazoo's client (closing its session, so its ephemeral
// nodes go at once) and ends the driver. Close is still needed after it.
func (k *Kazoo) CloseSession(ctx context.Context) error {
	return k.call(ctx, "close", nil, nil)
}

package peer

import (
	"context"
	"time"
)

// The requests of the protocol (testdata/peers/PROTOCOL.md) and their
// replies. Fields a driver does not send stay at their zero value.

// Reply is what every reply carries.
type Reply struct {
	ElapsedSeconds float64 `json:"elapsed"`
}

// Elapsed is the time the driver spent serving the request, from reading it
// to printing the reply: for an acquire, the time the recipe's acquire took.
func (r Reply) Elapsed() time.Duration {
	return time.Duration(r.ElapsedSeconds * float64(time.Second))
}

// State is the client's view of its connection.
type State struct {
	Reply
	// State is the library's own word for its last state: kazoo's
	// KazooState (CONNECTED, SUSPENDED, LOST), Curator's ConnectionState as
	// its ConnectionStateListener last saw it (CONNECTED, SUSPENDED,
	// RECONNECTED, LOST).
	State       string `json:"state"`
	KeeperState string `json:"keeper_state"` // the finer ZooKeeper state, e.g. CONNECTING, EXPIRED_SESSION
	Session     string `json:"session"`      // the session id as hex, "" when there is none
	Connected   bool   `json:"connected"`    // the client has a session now (Curator's isConnected)
	// LostSeen: a connection listener was told LOST since connect (the
	// library's own notice that the session, and so the lock, is gone).
	LostSeen bool     `json:"lost_seen"`
	States   []string `json:"states"` // every state the listener saw, oldest first, where the driver keeps them
	Config   string   `json:"config"` // connect: the client's settings as the driver made them
}

// LockInfo is what the driver's lock object says about itself.
type LockInfo struct {
	Reply
	Prefix     string `json:"prefix"`      // kazoo: the node name's start, its GUID then "__lock__"
	Node       string `json:"node"`        // the node it took as its own ("" for none)
	IsAcquired bool   `json:"is_acquired"` // kazoo's is_acquired; Curator's isAcquiredInThisProcess()
	// Owned is Curator's isOwnedByCurrentThread(), asked on the thread that
	// acquires and releases (nil where the recipe has no such notion).
	Owned *bool `json:"owned"`
	// OwnerBusy: the owning thread was inside acquire, so Owned was not
	// asked there.
	OwnerBusy bool `json:"owner_busy"`
}

// Acquired is the outcome of an acquire.
type Acquired struct {
	LockInfo
	Acquired bool `json:"acquired"` // what acquire returned
}

// Released is the outcome of a release.
type Released struct {
	LockInfo
	Released bool `json:"released"` // what release returned
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

// ConnectOptions are the client's settings beyond the hosts.
type ConnectOptions struct {
	SessionTimeout time.Duration // asked of the server; 0: the driver's default
	// Curator's: the connection timeout of its RetryLoop and the
	// ExponentialBackoffRetry it is built with; 0: the driver's defaults.
	ConnectionTimeout time.Duration
	RetryBaseSleep    time.Duration
	RetryMax          int
}

// Connect starts the driver's client on hosts (host:port,...; a client
// proxy's address so faults are the same bytes on the wire) and waits until
// it is connected: within ctx's deadline, or 15s without one.
func (k *Driver) Connect(ctx context.Context, hosts string, o ConnectOptions) (State, error) {
	args := map[string]any{"hosts": hosts}
	if o.SessionTimeout > 0 {
		args["session_timeout"] = seconds(o.SessionTimeout)
	}
	if o.ConnectionTimeout > 0 {
		args["connection_timeout"] = seconds(o.ConnectionTimeout)
	}
	if o.RetryBaseSleep > 0 {
		args["retry_base_sleep"] = seconds(o.RetryBaseSleep)
	}
	if o.RetryMax > 0 {
		args["retry_max"] = o.RetryMax
	}
	if d, ok := ctx.Deadline(); ok {
		args["connect_timeout"] = seconds(time.Until(d))
	}
	var s State
	err := k.call(ctx, "connect", args, &s)
	return s, err
}

// Lock makes the driver's lock object for path (once per path; the
// identifier of the first call stays) and returns what it says, before any
// node.
func (k *Driver) Lock(ctx context.Context, path, identifier string) (LockInfo, error) {
	var l LockInfo
	err := k.call(ctx, "lock", map[string]any{"path": path, "identifier": identifier}, &l)
	return l, err
}

// Acquire runs the recipe's acquire on path's lock and waits for its
// outcome. timeout 0 or less asks for no timeout (wait for ever: only ctx,
// a cancel or Close ends the wait then).
func (k *Driver) Acquire(ctx context.Context, path, identifier string, timeout time.Duration) (Acquired, error) {
	return k.AcquireAsync(path, identifier, timeout).Wait(ctx)
}

// AcquireCall is an acquire sent and not necessarily answered.
type AcquireCall struct {
	k *Driver
	p *pending
}

// AcquireAsync sends an acquire and returns at once, so the test can act
// (release, cancel, inject a fault) while the recipe waits.
func (k *Driver) AcquireAsync(path, identifier string, timeout time.Duration) *AcquireCall {
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

// Release runs the recipe's release on path's lock. When it raises, the
// reply still carries what the lock object says afterwards.
func (k *Driver) Release(ctx context.Context, path string) (Released, error) {
	var r Released
	err := k.call(ctx, "release", map[string]any{"path": path}, &r)
	return r, err
}

// Cancel cancels a pending acquire on path's lock: kazoo's cancel (the
// acquire raises CancelledError; with none pending, kazoo keeps the flag for
// the next one), Curator's Thread.interrupt() of the acquiring thread.
func (k *Driver) Cancel(ctx context.Context, path string) error {
	return k.call(ctx, "cancel", map[string]any{"path": path}, nil)
}

// IsAcquired reads the lock object's own account of path's lock.
func (k *Driver) IsAcquired(ctx context.Context, path string) (LockInfo, error) {
	var l LockInfo
	err := k.call(ctx, "is_acquired", map[string]any{"path": path}, &l)
	return l, err
}

// State reads the client's connection state and session id.
func (k *Driver) State(ctx context.Context) (State, error) {
	var s State
	err := k.call(ctx, "state", nil, &s)
	return s, err
}

// Children lists path's children with their owners through the driver's own
// session (these reads are not reported as the recipe's calls).
func (k *Driver) Children(ctx context.Context, path string) (Children, error) {
	var c Children
	err := k.call(ctx, "children", map[string]any{"path": path}, &c)
	return c, err
}

// CloseSession closes the driver's client (and its session, so its
// ephemeral nodes go at once) and ends the driver. Close is still needed
// after it.
func (k *Driver) CloseSession(ctx context.Context) error {
	return k.call(ctx, "close", nil, nil)
}

package zk19_test

// What the lock, recovery and fencing families share: contenders (a session
// with a Locker whose steps are logged as an actor's lines), acquisitions
// running in the background, the article's A→B→C chain, and what an
// observer sees of the nodes that carry a GUID. Every helper takes
// zkserver.TB, so the Examples use the same ones as the Tests.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/lock"
	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// Natural expiry needs a short session: with tickTime 100 ms the server
// accepts sessions of 200 ms to 2 s. The claims that use these are about
// what happens when a session runs out.
const (
	expiryTick           = 100 * time.Millisecond
	expirySessionTimeout = time.Second
)

// expiryServer starts a server of the test's own whose sessions can run
// out within seconds (expiryTick). A session runs out when a client proxy
// cuts its client off, which works in front of any server: on the external
// backend it is the user's server, whose tickTime the harness cannot set,
// and the claim skips unless a session expires there within the bound the
// claims wait for expiry.
func expiryServer(t zkserver.TB, opts ...zkserver.Option) *zkserver.Server {
	t.Helper()
	s := zkserver.Start(t, append([]zkserver.Option{zkserver.WithTickTime(expiryTick), zkserver.AllowExternal()}, opts...)...)
	if why := expiryDoesNotFit(s); why != "" {
		t.Skipf("skipped: %s", why)
	}
	return s
}

// expiryWithin is how long the expiry claims wait for a silent session to
// run out: 10 × expirySessionTimeout.
const expiryWithin = 10 * expirySessionTimeout

// expiryDoesNotFit says why a silent session of expirySessionTimeout may
// outlive expiryWithin on s, or "" if it cannot.
func expiryDoesNotFit(s *zkserver.Server) string {
	d, err := s.SessionExpiry(expirySessionTimeout)
	var na *zkserver.NotAllowedError
	switch {
	case errors.As(err, &na):
		return fmt.Sprintf("the claim reads the server's conf to know when a session expires; %v", na)
	case err != nil:
		return fmt.Sprintf("conf of %s: %v", s.Label, err)
	case d > expiryWithin:
		return fmt.Sprintf("a session asking for %v lives up to %v on %s (the granted timeout, within minSessionTimeout and maxSessionTimeout, plus one tickTime); the claim waits %v for it to expire: lower tickTime or minSessionTimeout", expirySessionTimeout, d, s.Client, expiryWithin)
	}
	return ""
}

// joinOpts configures a contender.
type joinOpts struct {
	quiet       bool // no session lines, no trace lines
	client      []zkclient.Option
	lock        []lock.Option
	beforeWatch func(own, pred string) // the Probe's L8 hook
	// onTrace runs on the recipe's goroutine at each of its steps, after
	// the step is logged: a scenario that must act at one exact step (while
	// a Release is between its lost delete and its look again) acts here.
	onTrace func(typ, op, detail string)
}

// contender is one lock participant: its own session, a Locker on it with
// a Probe, and the Probe's trace logged as the actor's record lines.
type contender struct {
	name   string
	c      *zkclient.Client
	l      *lock.Locker
	probe  *lock.Probe
	a      actor
	parent string
	o      joinOpts
	waits  chan string  // predecessors an acquisition blocked on, in order
	made   chan string  // own node names the creates returned, in order
	events atomic.Int64 // watch events the acquisitions received

	mu       sync.Mutex
	muted    bool
	received []string // each watch event as the recipe traced it: type and path
}

// join connects a named session to servers and makes its Locker for parent.
func join(t zkserver.TB, name string, servers []string, parent string, o joinOpts) *contender {
	t.Helper()
	copts := o.client
	if o.quiet {
		copts = append(slices.Clip(copts), zkclient.Quiet())
	}
	p := &contender{name: name, a: newActor(t, name), parent: parent, o: o, muted: o.quiet,
		waits: make(chan string, 4096), made: make(chan string, 4096)}
	p.c = zkclient.Connect(t, name, servers, copts...)
	// Registered after the client, so it runs before the client closes: no
	// goroutine of the recipe logs after the test has ended.
	t.Cleanup(p.mute)
	p.probe = &lock.Probe{BeforeWatch: o.beforeWatch, Trace: p.trace}
	p.relock()
	return p
}

// relock gives p a fresh Locker on its client's current session.
func (p *contender) relock() {
	p.l = lock.New(p.c.Conn, p.parent, append([]lock.Option{p.probe}, p.o.lock...)...)
}

func (p *contender) trace(typ, op, detail string) {
	switch {
	case typ == "info" && op == "wait":
		select {
		case p.waits <- path.Base(detail):
		default:
		}
	case typ == "ok" && op == "create":
		select {
		case p.made <- detail:
		default:
		}
	case typ == "info" && op == "event":
		typ, at, _ := strings.Cut(detail, " ")
		p.mu.Lock()
		p.received = append(p.received, strings.TrimSpace(typ+" "+path.Base(at)))
		p.mu.Unlock()
		p.events.Add(1)
	}
	p.mu.Lock()
	if !p.muted {
		p.a.log(typ, "%s", strings.TrimSpace(op+" "+detail))
	}
	p.mu.Unlock()
	if p.o.onTrace != nil {
		p.o.onTrace(typ, op, detail)
	}
}

// eventsReceived returns the watch events p's acquisitions have received so
// far, oldest first, as "EventNodeDataChanged <node name>".
func (p *contender) eventsReceived() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.received)
}

// mute stops p's trace lines.
func (p *contender) mute() { p.mu.Lock(); p.muted = true; p.mu.Unlock() }

// pending is an acquisition running in its own goroutine.
type pending struct {
	p      *contender
	own    string // the candidate's node name
	cancel context.CancelFunc
	done   returned
	held   *lock.Held
	err    error
}

// start begins an acquisition of p's in the background and returns once
// its candidate exists, so its name is known. An acquisition of p must not
// be running. Cleanup cancels it, waits for it and releases a hold.
func start(t zkserver.TB, p *contender) *pending {
	t.Helper()
	for len(p.made) > 0 {
		<-p.made // names of earlier acquisitions
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &pending{p: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.held, w.err = p.l.Acquire(ctx)
	}()
	t.Cleanup(func() { w.stop(t) })
	select {
	case w.own = <-p.made:
	case <-w.done:
		t.Fatalf("%s: acquisition returned before its candidate was created: %v", p.name, w.err)
	case <-time.After(within):
		t.Fatalf("%s: no candidate created within %v", p.name, within)
	}
	return w
}

func (w *pending) stop(t zkserver.TB) {
	w.cancel()
	select {
	case <-w.done:
	case <-time.After(within):
		t.Logf("%s: acquisition still running %v after cancel", w.p.name, within)
		return
	}
	if w.held != nil {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		_ = w.held.Release(ctx)
	}
}

// result waits for the acquisition to return.
func (w *pending) result(t zkserver.TB) (*lock.Held, error) {
	t.Helper()
	w.done.await(t, fmt.Sprintf("%s: the acquisition of %s", w.p.name, w.own))
	return w.held, w.err
}

// expectWaiting waits until an acquisition of p blocks on the watch of
// pred.
func expectWaiting(p *contender, pred string) error {
	timeout := time.After(within)
	for {
		select {
		case got := <-p.waits:
			if got == pred {
				return nil
			}
		case <-timeout:
			return &waitError{p.name, pred}
		}
	}
}

type waitError struct{ who, pred string }

func (e *waitError) Error() string {
	return e.who + " did not wait on " + e.pred + " within " + within.String()
}

// settle returns the state of p's acquisition of candidate own, certain
// about notifications (see settledAttempt).
func settle(t zkserver.TB, p *contender, own string) lock.Attempt {
	t.Helper()
	return settledAttempt(t, p.c, p.probe, own)
}

// chain is the article's A→B→C picture: A holds, B waits on A, C waits on
// B, each in its own session. D observes, with the test's root.
type chain struct {
	d       *zkclient.Client
	root    string
	ctx     context.Context
	a, b, c *contender
	ha      *lock.Held
	pb, pc  *pending
}

// lockRoom opens a lock scene: D, an observer session that may change
// anything, and under it this test's own lock parent; ctx bounds the
// scene's acquisitions.
func lockRoom(t zkserver.TB, servers []string) (d *zkclient.Client, da actor, root string, ctx context.Context) {
	t.Helper()
	d = zkclient.Connect(t, "D", servers)
	return d, newActor(t, "D"), testRoot(t, d), lockCtx(t)
}

// queue is a lock room where holder holds and waiter waits right behind.
type queue struct {
	d              *zkclient.Client
	da             actor
	root           string
	ctx            context.Context
	holder, waiter *contender
	held           *lock.Held // the holder's
	next           *pending   // the waiter's acquisition
}

// queueOfTwo opens a lock room on s with two contenders, holder and waiter,
// clients of s, and queues waiter right behind holder.
func queueOfTwo(t zkserver.TB, s *zkserver.Server, holder, waiter string) queue {
	t.Helper()
	q := queue{}
	q.d, q.da, q.root, q.ctx = lockRoom(t, []string{s.Client})
	q.holder = join(t, holder, []string{s.Client}, q.root, joinOpts{})
	q.waiter = join(t, waiter, []string{s.Client}, q.root, joinOpts{})
	q.held, q.next = waitBehind(t, q.ctx, q.holder, q.waiter)
	return q
}

// waitBehind makes holder acquire and waiter queue right behind it, and
// returns the hold and the waiting acquisition.
func waitBehind(t zkserver.TB, ctx context.Context, holder, waiter *contender) (*lock.Held, *pending) {
	t.Helper()
	h, err := holder.l.Acquire(ctx)
	if err != nil {
		t.Fatalf("%s: %v", holder.name, err)
	}
	w := start(t, waiter)
	if err := expectWaiting(waiter, path.Base(h.Path)); err != nil {
		t.Fatalf("%v", err)
	}
	return h, w
}

// handOver releases h (the hold of who) and returns the hold that next,
// waiting right behind it, takes. A failure starts with id: the claim, as
// "L4 violated" where the hand-over is what the claim says.
func handOver(t zkserver.TB, ctx context.Context, id string, h *lock.Held, who string, next *pending) *lock.Held {
	t.Helper()
	if err := h.Release(ctx); err != nil {
		t.Fatalf("%s: %s's release: got %v; want nil", id, who, err)
	}
	hn, err := next.result(t)
	if err != nil {
		t.Fatalf("%s: %s after %s's release: got %v; want a hold", id, next.p.name, who, err)
	}
	return hn
}

func startChain(t zkserver.TB, servers []string, o joinOpts) *chain {
	t.Helper()
	ch := &chain{}
	ch.d = zkclient.Connect(t, "D", servers, o.client...)
	ch.root = testRoot(t, ch.d)
	ch.ctx = lockCtx(t)
	ch.a = join(t, "A", servers, ch.root, o)
	ch.b = join(t, "B", servers, ch.root, o)
	ch.c = join(t, "C", servers, ch.root, o)
	var err error
	if ch.ha, err = ch.a.l.Acquire(ch.ctx); err != nil {
		t.Fatalf("A: %v", err)
	}
	ch.pb = start(t, ch.b)
	if err := expectWaiting(ch.b, path.Base(ch.ha.Path)); err != nil {
		t.Fatalf("%v", err)
	}
	ch.pc = start(t, ch.c)
	if err := expectWaiting(ch.c, ch.pb.own); err != nil {
		t.Fatalf("%v", err)
	}
	return ch
}

// holdOf names a hold for a failure message.
func holdOf(h *lock.Held) string {
	if h == nil {
		return "no hold"
	}
	return "a hold of " + path.Base(h.Path)
}

// lockCtx bounds a scenario's lock calls.
func lockCtx(t zkserver.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*within)
	t.Cleanup(cancel)
	return ctx
}

// carrying lists, as c sees them directly on the server, the children of
// root whose name carries guid, with their owners (ephemeralOwner).
func carrying(t zkserver.TB, c *zkclient.Client, a actor, root, guid string) map[string]int64 {
	t.Helper()
	a.invoke("children %s (nodes carrying %s)", root, guid)
	out := map[string]int64{}
	for _, k := range listChildren(t, c, root) {
		if !strings.Contains(k, guid) {
			continue
		}
		if ok, st := statOf(t, c, root+"/"+k); ok {
			out[k] = st.EphemeralOwner
		}
	}
	a.ok("%d: %v", len(out), out)
	return out
}

func listChildren(t zkserver.TB, c *zkclient.Client, p string) []string {
	t.Helper()
	kids, _, err := c.Children(p)
	if err != nil {
		t.Fatalf("%s: children %s: %v", c.Name, p, err)
	}
	slices.Sort(kids)
	return kids
}

func statOf(t zkserver.TB, c *zkclient.Client, p string) (bool, *zk.Stat) {
	t.Helper()
	ok, st, err := c.Exists(p)
	if err != nil {
		t.Fatalf("%s: exists %s: %v", c.Name, p, err)
	}
	return ok, st
}

// waitWatching waits until the server lists session sess among the
// watchers of p (a node under root).
func waitWatching(t zkserver.TB, s *zkserver.Server, root, p, sess string) {
	t.Helper()
	s.RequireWords(t, "wchp") // here: the wait asks from its own goroutine
	wait.For(t, within, sess+" to watch "+p, func() (bool, string) {
		w := watchTable(t, s, "wchp", root)[p]
		return slices.Contains(w, sess), "watchers: " + strings.Join(w, " ")
	})
}

func (w *pending) finished() bool { return w.done.finished() }

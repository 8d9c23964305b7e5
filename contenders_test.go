package zk19_test

// The lock scenes' one vocabulary, in the manner of hashicorp/raft's test
// cluster: a room (an observer session O and this test's own lock parent)
// and contenders (a session with a Locker whose steps are logged as an
// actor's lines, reached through proxies that count the wire), with verbs:
//
//	r := newRoom(t, servers)                            // O, a fresh lock parent, the scene's bound
//	A, B := r.join("A", joinOpts{}), r.join("B", joinOpts{})
//	heldByA := A.acquire()                              // holds now, or the test fails
//	b := B.acquireInBackground().waitsOn(nodeOf(heldByA))
//	st := b.settled()                                   // certain about notifications (witness_test.go)
//	heldByB := r.handOver("L4", heldByA, b)             // A releases; B holds
//
// Every wait is bounded: wait.For for a state, wait.Receive for a result.
// A wait on the recipe's answer that gives up states a verdict on the claim
// the test proves (claimOf), with the last state seen: not shown when it
// was a step of the scene (result, settled, waitsOn), refuted when the
// claim's observation is that answer (resultOr, settledOr, waitsOnOr
// with refutedNow).
// The R and F families, and the peer table's driver for ours, use the same
// contenders. Every helper fails the test it was given, so the Examples
// (a zkserver.Scope) use the same ones as the Tests.

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

	"github.com/zk19/zk19/internal/wait"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// Natural expiry needs a short session: with tickTime 100 ms the server
// accepts sessions of 200 ms to 2 s. The claims that use these are about
// what happens when a session runs out.
const (
	expiryTick           = 100 * time.Millisecond
	expirySessionTimeout = time.Second
)

// expiryServer lends the test a server of its own (from the pool, see
// pool_test.go) whose sessions can run out within seconds (expiryTick).
// A session runs out when a client proxy cuts its client off, which works
// in front of any server: on the external
// backend it is the user's server, whose tickTime the harness cannot set,
// and the claim skips unless a session expires there within the bound the
// claims wait for expiry.
func expiryServer(t zkserver.TB) *zkserver.Server {
	t.Helper()
	s := leaseServer(t, expiryKind)
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
	quiet  bool     // no session lines, no trace lines
	via    []string // the addresses to dial instead of the room's servers (a fault proxy)
	client []zkclient.Option
	lock   []lock.Option
	// trace is the scenario's own callbacks, called after the contender's
	// record lines for the same step: L8 deletes the predecessor in its
	// Watching; a scenario that must act while a Release is between its
	// lost delete and its look again acts in its Reply.
	trace *locktrace.Trace
}

// room is a lock scene: O, an observer session that may change anything,
// this test's own lock parent under it, and ctx, the bound of the scene's
// lock calls.
type room struct {
	t       zkserver.TB
	servers []string
	O       *zkclient.Client
	o       actor // O's record lines
	parent  string
	ctx     context.Context
	quiet   bool // contenders join quiet (the Examples)
}

// newRoom opens a lock room on servers; opts configure O's client.
func newRoom(t zkserver.TB, servers []string, opts ...zkclient.Option) *room {
	t.Helper()
	r := &room{t: t, servers: servers, o: newActor(t, "O"), ctx: lockCtx(t)}
	r.O = zkclient.Connect(t, "O", servers, opts...)
	r.parent = testRoot(t, r.O)
	return r
}

// exampleRoom is the room of the lock Examples: on the shared server, with
// O and the contenders quiet (an Example's standard error is not read).
func exampleRoom(sc *zkserver.Scope) *room {
	r := newRoom(sc, []string{sharedServer(sc).Client}, zkclient.Quiet())
	r.quiet = true
	return r
}

// join connects contender name to the room (or through o.via) and makes
// its Locker for the room's parent; its lock calls share the room's bound.
func (r *room) join(name string, o joinOpts) *contender {
	r.t.Helper()
	servers := r.servers
	if o.via != nil {
		servers = o.via
	}
	o.quiet = o.quiet || r.quiet
	p := join(r.t, name, servers, r.parent, o)
	p.ctx = r.ctx
	return p
}

// session opens a plain session on the room's servers (no Locker).
func (r *room) session(name string) *zkclient.Client {
	r.t.Helper()
	return zkclient.Connect(r.t, name, r.servers, zkclient.Quiet())
}

// handOver releases h and returns the hold that next, waiting right
// behind it, takes. A release or an acquisition that fails here is the
// scene's, not claim id's own observation (what the claim counts is checked
// by its test): the proof of id stops, not shown.
func (r *room) handOver(id string, h *lock.Held, next *acquisition) *lock.Held {
	r.t.Helper()
	if err := h.Release(r.ctx); err != nil {
		notShown(r.t, id, "the release of %s: got %v; want nil", nodeOf(h), err)
	}
	hn, err := next.result()
	if err != nil {
		notShown(r.t, id, "%s after the release of %s: got %v; want a hold", next.p.name, nodeOf(h), err)
	}
	return hn
}

// nodeOf is a hold's node name, as a predecessor is named.
func nodeOf(h *lock.Held) string { return path.Base(h.Path) }

// contender is one lock participant: its own session, reached through
// proxies of its own that count what crosses the wire (see witness), and a
// Locker on it whose Trace writes the actor's record lines.
type contender struct {
	t      zkserver.TB
	name   string
	c      *zkclient.Client
	l      *lock.Locker
	w      *witness
	a      actor
	parent string
	ctx    context.Context // bounds acquire
	o      joinOpts
	made   chan string  // own node names the creates returned, in order
	events atomic.Int64 // watch events the acquisitions received

	mu       sync.Mutex
	muted    bool
	stopped  atomic.Bool // the test's cleanup has begun: the referee only records
	received []string    // each watch event as the recipe traced it: type and path
	last     string      // the recipe's last step as its record line says it
}

// join connects a named session to servers and makes its Locker for
// parent: a contender outside a room (an election, the peer table).
func join(t zkserver.TB, name string, servers []string, parent string, o joinOpts) *contender {
	t.Helper()
	copts := o.client
	if o.quiet {
		copts = append(slices.Clip(copts), zkclient.Quiet())
	}
	p := &contender{t: t, name: name, a: newActor(t, name), parent: parent, o: o, muted: o.quiet,
		ctx: lockCtx(t), made: make(chan string, 4096)}
	var addrs []string
	p.w, addrs = newWitness(t, name, parent, servers)
	p.c = zkclient.Connect(t, name, addrs, copts...)
	// Registered after the client, so it runs before the client closes: no
	// goroutine of the recipe logs after the test has ended.
	t.Cleanup(p.mute)
	p.relock()
	return p
}

// relock gives p a fresh Locker on its client's current session.
func (p *contender) relock() {
	tr := locktrace.Compose(p.w.trace(), recordTrace(p.line), p.observe(), p.referee(), p.o.trace)
	p.l = lock.New(p.c.Conn, p.parent, append([]lock.Option{lock.WithTrace(tr)}, p.o.lock...)...)
}

// observe feeds the contender's records: the creates and the events, in
// the order the recipe took them.
func (p *contender) observe() *locktrace.Trace {
	return &locktrace.Trace{
		Reply: func(r locktrace.ReplyInfo) {
			if r.Op == locktrace.OpCreate && r.Err == nil {
				select {
				case p.made <- r.Node:
				default:
				}
			}
		},
		Woke: func(i locktrace.WokeInfo) {
			p.mu.Lock()
			p.received = append(p.received, strings.TrimSpace(i.Event.Type.String()+" "+path.Base(i.Event.Path)))
			p.mu.Unlock()
			p.events.Add(1)
		},
	}
}

// line writes one of the recipe's steps as the actor's record line.
func (p *contender) line(typ, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = strings.TrimSpace(typ + " " + fmt.Sprintf(format, args...))
	if !p.muted {
		p.a.log(typ, format, args...)
	}
}

// lastStep is the recipe's last step on p's session, as its record line
// says it.
func (p *contender) lastStep() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == "" {
		return "none yet"
	}
	return p.last
}

// eventsReceived returns the watch events p's acquisitions have received so
// far, oldest first, as "EventNodeDataChanged <node name>".
func (p *contender) eventsReceived() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.received)
}

// mute stops p's trace lines.
func (p *contender) mute() { p.mu.Lock(); p.muted = true; p.mu.Unlock(); p.stopped.Store(true) }

// acquire takes the lock now, within the scene's bound, or fails the test.
func (p *contender) acquire() *lock.Held {
	p.t.Helper()
	h, err := p.l.Acquire(p.ctx)
	if err != nil {
		p.t.Fatalf("%s: acquire: %v", p.name, err)
	}
	return h
}

// settled returns the state of p's acquisition of candidate own, certain
// about notifications: a read on p's own connection first (see
// witness.settle). An acquisition that does not settle within the bound
// is a step of the scene that did not take: not shown.
func (p *contender) settled(own string) attempt {
	p.t.Helper()
	return p.settledOr(notShown, own)
}

// settledOr is settled for a state the claim observes: j judges an
// acquisition that does not settle.
func (p *contender) settledOr(j judge, own string) attempt {
	p.t.Helper()
	return p.w.settle(judged(p.t, claimOf(p.t), j), func() error { _, _, err := p.c.Exists("/"); return err }, own)
}

// acquisition is an Acquire running in its own goroutine.
type acquisition struct {
	t         zkserver.TB
	p         *contender // nil when started on a bare Locker
	own       string     // the candidate's node name, when p is known
	cancel    context.CancelFunc
	cancelled atomic.Pointer[time.Time] // when cancel was first called
	done      returned
	held      *lock.Held // set before done is closed
	err       error
}

// acquireInBackground starts l.Acquire(ctx) in its own goroutine. Cleanup
// cancels it if still running, waits for it and releases a hold.
func acquireInBackground(t zkserver.TB, ctx context.Context, l *lock.Locker) *acquisition {
	ctx, cancel := context.WithCancel(ctx)
	acq := &acquisition{t: t, done: make(returned)}
	acq.cancel = func() {
		now := time.Now()
		acq.cancelled.CompareAndSwap(nil, &now)
		cancel()
	}
	go func() {
		defer close(acq.done)
		acq.held, acq.err = l.Acquire(ctx)
	}()
	t.Cleanup(acq.stop)
	return acq
}

// acquireInBackground starts an acquisition of p's and returns once its
// candidate exists, so its name is known. p's acquisitions start one at a
// time; each runs until it holds, fails or is cancelled.
func (p *contender) acquireInBackground() *acquisition {
	p.t.Helper()
	for len(p.made) > 0 {
		<-p.made // names of earlier acquisitions
	}
	acq := acquireInBackground(p.t, context.Background(), p.l)
	acq.p = p
	select {
	case acq.own = <-p.made:
	case <-acq.done:
		judged(p.t, claimOf(p.t), notShown).Fatalf("%s: acquisition returned before its candidate was created: %v", p.name, acq.err)
	case <-time.After(within):
		judged(p.t, claimOf(p.t), notShown).Fatalf("%s: no candidate created within %v; last seen: %s", p.name, within, p.lastStep())
	}
	return acq
}

// stop cancels the acquisition, waits for it and releases a hold.
func (acq *acquisition) stop() {
	acq.cancel()
	if err := wait.Until(within, "the cancelled acquisition to return", func() (bool, string) { return acq.finished(), acq.seen() }); err != nil {
		acq.t.Logf("%v", err)
		return
	}
	if acq.held != nil {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		_ = acq.held.Release(ctx)
	}
}

// result waits for the acquisition to return, as a step of the scene: a
// return that does not come within the bound is not shown, with where the
// acquisition stood.
func (acq *acquisition) result() (*lock.Held, error) {
	acq.t.Helper()
	return acq.resultOr(notShown)
}

// resultOr waits for the acquisition to return; j judges a return that
// does not come within the bound (refutedNow when that return is what the
// claim observes), naming where the acquisition stood.
func (acq *acquisition) resultOr(j judge) (*lock.Held, error) {
	acq.t.Helper()
	wait.ReceiveSeen(judged(acq.t, claimOf(acq.t), j), within, acq.what(), acq.done, acq.seen)
	return acq.held, acq.err
}

func (acq *acquisition) what() string {
	if acq.p == nil {
		return "the acquisition's return"
	}
	return fmt.Sprintf("the return of %s's acquisition of %s", acq.p.name, acq.own)
}

// seen says where the acquisition stands: its return, or the recipe's
// account of its wait (the predecessor it waits on, listings and wake-ups
// counted on the wire) and its contender's last step.
func (acq *acquisition) seen() string {
	if acq.finished() {
		return fmt.Sprintf("returned %s, %v", holdOf(acq.held), acq.err)
	}
	s := "not returned"
	if at := acq.cancelled.Load(); at != nil {
		s = fmt.Sprintf("cancelled %v ago, not returned", time.Since(*at).Round(time.Millisecond))
	}
	if acq.p == nil {
		return s
	}
	if at, ok := acq.p.w.now(acq.own); ok {
		s += fmt.Sprintf(", waiting=%v on %q after %d listing(s) and %d wake-up(s) on the wire", at.Waiting, at.Pred, at.Rounds, at.Wakeups)
	}
	return fmt.Sprintf("%s; %s's last step: %s", s, acq.p.name, acq.p.lastStep())
}

// finished reports, without waiting, whether the acquisition has returned.
func (acq *acquisition) finished() bool { return acq.done.finished() }

// waitsOn waits until the acquisition blocks on the watch of pred, and
// returns it; as a step of the scene, one that does not is not shown.
func (acq *acquisition) waitsOn(pred string) *acquisition {
	acq.t.Helper()
	return acq.waitsOnOr(notShown, pred)
}

// waitsOnOr is waitsOn for a wait the claim observes: j judges an
// acquisition that does not block on pred.
func (acq *acquisition) waitsOnOr(j judge, pred string) *acquisition {
	acq.t.Helper()
	t := judged(acq.t, claimOf(acq.t), j)
	if at := acq.p.w.waitingOn(t, pred); at.Own != acq.own {
		t.Fatalf("%s: got its acquisition of %s waiting on %s; want the one of %s", acq.p.name, at.Own, pred, acq.own)
	}
	return acq
}

// settled is the acquisition's state, certain about notifications (see
// contender.settled).
func (acq *acquisition) settled() attempt {
	acq.t.Helper()
	return acq.p.settled(acq.own)
}

// settledOr is settled for a state the claim observes (see
// contender.settledOr).
func (acq *acquisition) settledOr(j judge) attempt {
	acq.t.Helper()
	return acq.p.settledOr(j, acq.own)
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

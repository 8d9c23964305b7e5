package scene

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// JoinOpts configures a contender.
type JoinOpts struct {
	Quiet  bool     // no session lines, no trace lines
	Via    []string // the addresses to dial instead of the scene's servers (a fault proxy)
	Client []zkclient.Option
	Lock   []lock.Option
	// trace is the scenario's own callbacks, called after the contender's
	// record lines for the same step: L8 deletes the predecessor in its
	// Watching; a scenario that must act while a Release is between its
	// lost delete and its look again acts in its Reply.
	Trace *locktrace.Trace
}

// Scene is a lock scene: O, an observer session that may change anything,
// this test's own lock parent under it, and ctx, the bound of the scene's
// lock calls.
type Scene struct {
	t       zkserver.TB
	servers []string
	O       *zkclient.Client
	OLog    claims.Actor // O's record lines
	Parent  string
	Ctx     context.Context
}

// NewScene opens a lock scene on servers; opts configure O's client.
func NewScene(t zkserver.TB, servers []string, opts ...zkclient.Option) *Scene {
	t.Helper()
	r := &Scene{t: t, servers: servers, OLog: claims.NewActor(t, "O"), Ctx: LockCtx(t)}
	r.O = zkclient.Connect(t, "O", servers, opts...)
	r.Parent = harness.TestRoot(t, r.O)
	return r
}

// ExampleScene is the scene of the lock Examples, on the shared server: O
// and the contenders log every call and answer, as a Test's do, for the
// record to draw the Example's diagram from.
func ExampleScene(sc *zkserver.Scope) *Scene {
	return NewScene(sc, []string{harness.SharedServer(sc).Client})
}

// Join connects contender name to the scene (or through o.Via) and makes
// its Locker for the scene's parent; its lock calls share the scene's bound.
func (r *Scene) Join(name string, o JoinOpts) *Contender {
	r.t.Helper()
	servers := r.servers
	if o.Via != nil {
		servers = o.Via
	}
	p := Join(r.t, name, servers, r.Parent, o)
	p.ctx = r.Ctx
	return p
}

// Session opens a plain session on the scene's servers (no Locker).
func (r *Scene) Session(name string) *zkclient.Client {
	r.t.Helper()
	return zkclient.Connect(r.t, name, r.servers, zkclient.Quiet())
}

// HandOver releases h and returns the hold that next, waiting right
// behind it, takes. A release or an acquisition that fails here is the
// scene's, not claim id's own observation (what the claim counts is checked
// by its test): the proof of id stops, not shown.
func (r *Scene) HandOver(id string, h *lock.Held, next *Acquisition) *lock.Held {
	r.t.Helper()
	if err := h.Release(r.Ctx); err != nil {
		claims.NotShown(r.t, id, "the release of %s: got %v; want nil", NodeOf(h), err)
	}
	hn, err := next.Result()
	if err != nil {
		claims.NotShown(r.t, id, "%s after the release of %s: got %v; want a hold", next.p.Name, NodeOf(h), err)
	}
	return hn
}

// NodeOf is a hold's node name, as a predecessor is named.
func NodeOf(h *lock.Held) string { return path.Base(h.Path) }

// Contender is one lock participant: its own session, reached through
// proxies of its own that count what crosses the wire (see Witness), and a
// Locker on it whose Trace writes the actor's record lines.
type Contender struct {
	t       zkserver.TB
	Name    string
	Session *zkclient.Client
	Locker  *lock.Locker
	Witness *Witness
	Log     claims.Actor
	parent  string
	ctx     context.Context // bounds acquire
	o       JoinOpts
	made    chan string  // own node names the creates returned, in order
	Events  atomic.Int64 // watch events the acquisitions received
	Guards  atomic.Int64 // watches its holds set on their own nodes

	mu       sync.Mutex
	muted    bool
	stopped  atomic.Bool // the test's cleanup has begun: the referee only records
	received []string    // each watch event as the recipe traced it: type and path
	last     string      // the recipe's last step as its record line says it
}

// Join connects a named session to servers and makes its Locker for
// parent: a contender outside a scene (the peer table).
func Join(t zkserver.TB, name string, servers []string, parent string, o JoinOpts) *Contender {
	t.Helper()
	copts := o.Client
	if o.Quiet {
		copts = append(slices.Clip(copts), zkclient.Quiet())
	}
	p := &Contender{t: t, Name: name, Log: claims.NewActor(t, name), parent: parent, o: o, muted: o.Quiet,
		ctx: LockCtx(t), made: make(chan string, 4096)}
	var addrs []string
	p.Witness, addrs = newWitness(t, name, parent, servers)
	p.Session = zkclient.Connect(t, name, addrs, copts...)
	// Registered after the client, so it runs before the client closes: no
	// goroutine of the recipe logs after the test has ended.
	t.Cleanup(p.Mute)
	p.Relock()
	return p
}

// Relock gives p a fresh Locker on its client's current session. The
// article's tokens are the sequence numbers alone (§5's diagram: token 0,
// token 1), so a contender's Locker opts out of the parent's czxid domain
// unless JoinOpts.Lock turns it back on (lock.WithCzxidDomain), as the §6
// proofs of the domain do.
func (p *Contender) Relock() {
	tr := locktrace.Compose(p.Witness.trace(), RecordTrace(p.line), p.observe(), p.referee(), p.o.Trace)
	opts := append([]lock.Option{lock.WithTrace(tr), lock.WithoutCzxidDomain()}, p.o.Lock...)
	p.Locker = lock.New(p.Session.Conn, p.parent, opts...)
}

// observe feeds the contender's records: the creates and the events, in
// the order the recipe took them.
func (p *Contender) observe() *locktrace.Trace {
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
			p.Events.Add(1)
		},
		Guarded: func(locktrace.NodeInfo) { p.Guards.Add(1) },
	}
}

// line writes one of the recipe's steps as the actor's record line.
func (p *Contender) line(typ, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = strings.TrimSpace(typ + " " + fmt.Sprintf(format, args...))
	if !p.muted {
		p.Log.Log(typ, format, args...)
	}
}

// LastStep is the recipe's last step on p's session, as its record line
// says it.
func (p *Contender) LastStep() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == "" {
		return "none yet"
	}
	return p.last
}

// EventsReceived returns the watch events p's acquisitions have received so
// far, oldest first, as "EventNodeDataChanged <node name>".
func (p *Contender) EventsReceived() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.received)
}

// Mute stops p's trace lines.
func (p *Contender) Mute() { p.mu.Lock(); p.muted = true; p.mu.Unlock(); p.stopped.Store(true) }

// Acquire takes the lock now, within the scene's bound, or fails the test.
func (p *Contender) Acquire() *lock.Held {
	p.t.Helper()
	h, err := p.Locker.Acquire(p.ctx)
	if err != nil {
		p.t.Fatalf("%s: acquire: %v", p.Name, err)
	}
	return h
}

// Settled returns the state of p's acquisition of candidate own, certain
// about notifications: a read on p's own connection first (see
// Witness.settle). An acquisition that does not settle within the bound
// is a step of the scene that did not take: not shown.
func (p *Contender) Settled(own string) Attempt {
	p.t.Helper()
	return p.settledOr(claims.NotShown, own)
}

// settledOr is settled for a state the claim observes: j judges an
// Acquisition that does not settle.
func (p *Contender) settledOr(j claims.Judge, own string) Attempt {
	p.t.Helper()
	return p.Witness.settle(claims.Judged(p.t, claims.OpenedOn(p.t), j), func() error { _, _, err := p.Session.Exists("/"); return err }, own)
}

// Acquisition is an Acquire running in its own goroutine.
type Acquisition struct {
	t         zkserver.TB
	p         *Contender // nil when started on a bare Locker
	Own       string     // the candidate's node name, when p is known
	Cancel    context.CancelFunc
	cancelled atomic.Pointer[time.Time] // when cancel was first called
	done      harness.Returned
	Held      *lock.Held // set before done is closed
	Err       error
}

// acquireInBackground starts l.Acquire(ctx) in its own goroutine. Cleanup
// cancels it if still running, waits for it and releases a hold.
func acquireInBackground(t zkserver.TB, ctx context.Context, l *lock.Locker) *Acquisition {
	ctx, cancel := context.WithCancel(ctx)
	acq := &Acquisition{t: t, done: make(harness.Returned)}
	acq.Cancel = func() {
		now := time.Now()
		acq.cancelled.CompareAndSwap(nil, &now)
		cancel()
	}
	go func() {
		defer close(acq.done)
		acq.Held, acq.Err = l.Acquire(ctx)
	}()
	t.Cleanup(acq.stop)
	return acq
}

// AcquireInBackground starts an acquisition of p's and returns once its
// candidate exists, so its name is known. p's acquisitions start one at a
// time; each runs until it holds, fails or is cancelled.
func (p *Contender) AcquireInBackground() *Acquisition {
	p.t.Helper()
	for len(p.made) > 0 {
		<-p.made // names of earlier acquisitions
	}
	acq := acquireInBackground(p.t, context.Background(), p.Locker)
	acq.p = p
	select {
	case acq.Own = <-p.made:
	case <-acq.done:
		claims.Judged(p.t, claims.OpenedOn(p.t), claims.NotShown).Fatalf("%s: acquisition returned before its candidate was created: %v", p.Name, acq.Err)
	case <-time.After(harness.Within):
		claims.Judged(p.t, claims.OpenedOn(p.t), claims.NotShown).Fatalf("%s: no candidate created within %v; last seen: %s", p.Name, harness.Within, p.LastStep())
	}
	return acq
}

// stop cancels the acquisition, waits for it and releases a hold.
func (acq *Acquisition) stop() {
	acq.Cancel()
	if err := tb.WaitUntil(harness.Within, "the cancelled acquisition to return", func() (bool, string) { return acq.Finished(), acq.seen() }); err != nil {
		acq.t.Logf("%v", err)
		return
	}
	if acq.Held != nil {
		ctx, cancel := context.WithTimeout(context.Background(), harness.Within)
		defer cancel()
		_ = acq.Held.Release(ctx)
	}
}

// Result waits for the acquisition to return, as a step of the scene: a
// return that does not come within the bound is not shown, with where the
// Acquisition stood.
func (acq *Acquisition) Result() (*lock.Held, error) {
	acq.t.Helper()
	return acq.ResultOr(claims.NotShown)
}

// ResultOr waits for the acquisition to return; j, the proof's judge,
// judges a return that does not come within the bound, naming where the
// acquisition stood.
func (acq *Acquisition) ResultOr(j claims.Judge) (*lock.Held, error) {
	acq.t.Helper()
	tb.ReceiveSeen(claims.Judged(acq.t, claims.OpenedOn(acq.t), j), harness.Within, acq.what(), acq.done, acq.seen)
	return acq.Held, acq.Err
}

// WaitReturn waits up to within for the acquisition to return; past it,
// t fails (as its judge says) naming what it awaited and where the
// acquisition stood.
func (acq *Acquisition) WaitReturn(t tb.Waiter, within time.Duration, what string) {
	t.Helper()
	tb.ReceiveSeen(t, within, what, acq.done, acq.seen)
}

func (acq *Acquisition) what() string {
	if acq.p == nil {
		return "the acquisition's return"
	}
	return fmt.Sprintf("the return of %s's acquisition of %s", acq.p.Name, acq.Own)
}

// seen says where the acquisition stands: its return, or the recipe's
// account of its wait (the predecessor it waits on, listings and wake-ups
// counted on the wire) and its contender's last step.
func (acq *Acquisition) seen() string {
	if acq.Finished() {
		return fmt.Sprintf("returned %s, %v", HoldOf(acq.Held), acq.Err)
	}
	s := "not returned"
	if at := acq.cancelled.Load(); at != nil {
		s = fmt.Sprintf("cancelled %v ago, not returned", time.Since(*at).Round(time.Millisecond))
	}
	if acq.p == nil {
		return s
	}
	if at, ok := acq.p.Witness.now(acq.Own); ok {
		s += fmt.Sprintf(", waiting=%v on %q after %d listing(s) and %d wake-up(s) on the wire", at.Waiting, at.Pred, at.Rounds, at.Wakeups)
	}
	return fmt.Sprintf("%s; %s's last step: %s", s, acq.p.Name, acq.p.LastStep())
}

// Finished reports, without waiting, whether the acquisition has returned.
func (acq *Acquisition) Finished() bool { return acq.done.Finished() }

// WaitsOn waits until the acquisition blocks on the watch of pred, and
// returns it; as a step of the scene, one that does not is not shown.
func (acq *Acquisition) WaitsOn(pred string) *Acquisition {
	acq.t.Helper()
	return acq.WaitsOnOr(claims.NotShown, pred)
}

// WaitsOnOr is waitsOn for a wait the claim observes: j judges an
// Acquisition that does not block on pred.
func (acq *Acquisition) WaitsOnOr(j claims.Judge, pred string) *Acquisition {
	acq.t.Helper()
	t := claims.Judged(acq.t, claims.OpenedOn(acq.t), j)
	at, ok := acq.p.Witness.waitingOn(t, pred, acq.Finished)
	if !ok {
		t.Fatalf("%s; want %s waiting on %s", acq.instead(pred), acq.p.Name, pred)
	}
	if at.Own != acq.Own {
		t.Fatalf("%s: got its acquisition of %s waiting on %s; want the one of %s", acq.p.Name, at.Own, pred, acq.Own)
	}
	return acq
}

// instead says what an acquisition that returned did instead of waiting
// on pred: the hold it returned, or its error. A hold while pred, below
// its node, is still on the server is two holders at once, as the
// contender's own session reads the server: the line says so whether or
// not the referee saw it.
func (acq *Acquisition) instead(pred string) string {
	p := acq.p
	if acq.Held == nil {
		return fmt.Sprintf("%s's acquisition of %s returned %v while the scene waited for it to wait on %s", p.Name, acq.Own, acq.Err, pred)
	}
	how := "instead of waiting on"
	if p.Witness.waitedOn(acq.Own, pred) {
		how = "after waiting on"
	}
	got := fmt.Sprintf("%s returned %s %s %s", p.Name, HoldOf(acq.Held), how, pred)
	exists, st, err := p.Session.Exists(p.parent + "/" + pred)
	switch {
	case err != nil:
		return fmt.Sprintf("%s (whether %s is still on the server: %v)", got, pred, err)
	case exists:
		return fmt.Sprintf("two holders at once: %s, while %s, below it, is still on the server (session 0x%x)", got, pred, st.EphemeralOwner)
	}
	return got + "; " + pred + " is gone from the server"
}

// Settled is the acquisition's state, certain about notifications (see
// contender.settled).
func (acq *Acquisition) Settled() Attempt {
	acq.t.Helper()
	return acq.p.Settled(acq.Own)
}

// SettledOr is settled for a state the claim observes (see
// contender.settledOr).
func (acq *Acquisition) SettledOr(j claims.Judge) Attempt {
	acq.t.Helper()
	return acq.p.settledOr(j, acq.Own)
}

// HoldOf names a hold for a failure message.
func HoldOf(h *lock.Held) string {
	if h == nil {
		return "no hold"
	}
	return "a hold of " + path.Base(h.Path)
}

// LockCtx bounds a scenario's lock calls.
func LockCtx(t zkserver.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*harness.Within)
	t.Cleanup(cancel)
	return ctx
}

// Carrying lists, as c sees them directly on the server, the children of
// root whose name carries guid, with their owners (ephemeralOwner).
func Carrying(t zkserver.TB, c *zkclient.Client, a claims.Actor, root, guid string) map[string]int64 {
	t.Helper()
	a.Invoke("children %s (nodes carrying %s)", root, guid)
	out := map[string]int64{}
	for _, k := range ListChildren(t, c, root) {
		if !strings.Contains(k, guid) {
			continue
		}
		if ok, st := StatOf(t, c, root+"/"+k); ok {
			out[k] = st.EphemeralOwner
		}
	}
	a.Ok("%d: %v", len(out), out)
	return out
}

// ListChildren is p's children, sorted, as c sees them.
func ListChildren(t zkserver.TB, c *zkclient.Client, p string) []string {
	t.Helper()
	return c.SortedChildren(t, p)
}

// StatOf is whether p exists and its stat, as c sees them.
func StatOf(t zkserver.TB, c *zkclient.Client, p string) (bool, *zk.Stat) {
	t.Helper()
	return c.MustExists(t, p)
}

// WaitWatching waits until the server lists session sess among the
// watchers of p (a node under root).
func WaitWatching(t zkserver.TB, s *zkserver.Server, root, p, sess string) {
	t.Helper()
	s.RequireWords(t, "wchp") // here: the wait asks from its own goroutine
	tb.WaitFor(t, harness.Within, sess+" to watch "+p, func() (bool, string) {
		w := harness.WatchTable(t, s, "wchp", root)[p]
		return slices.Contains(w, sess), "watchers: " + strings.Join(w, " ")
	})
}

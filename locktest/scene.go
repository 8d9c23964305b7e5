package locktest

// The scenes' machinery: the lock recipes behind one interface (ours and
// go-zookeeper's zk.Lock here; kazoo's Lock, Curator's InterProcessMutex,
// the drivers of ZK19_PEERS and any Recipe in drivers.go), the scene a
// scenario plays in (a lock dir of its own, an observer O who plants and
// deletes nodes directly on the server, a client proxy for every
// contender), and how a cell is judged and logged.
//
// "kept": the recipe kept a lock's guarantees in the scenario (one holder,
// on a node of its own session, told the truth about holding). "broke":
// it did not; the source line is the peer's code responsible. "n/a": the
// recipe has no such feature. "not shown": the scene could not be set.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

// The table's recipe columns.
const (
	recipeOurs    = "ours"
	recipeGoZK    = "go-zookeeper"
	recipeKazoo   = "kazoo"
	recipeCurator = "curator"
)

// Cell verdicts.
const (
	peerKept  = Kept
	peerBroke = Broken
	peerNone  = NoFeature
)

// peerCallWithin bounds one recipe call that involves a reconnect:
// go-zookeeper redials a lone server only after a second, kazoo backs off
// its reconnects, and a session may have to expire first.
const peerCallWithin = 4 * harness.Within

// peerCell is one recipe's outcome in one scenario.
type peerCell struct {
	verdict Verdict // peerKept, peerBroke, peerNone, NotShown
	outcome zh.Text // a few words, in English and Chinese (the catalogue's phrases)
	source  string  // the peer's code responsible for a broke or n/a, as cited by cite
}

func kept(format string, args ...any) peerCell {
	return peerCell{verdict: peerKept, outcome: zh.Say(format, args...)}
}

func broke(source, format string, args ...any) peerCell {
	return peerCell{verdict: peerBroke, outcome: zh.Say(format, args...), source: source}
}

func none(source, format string, args ...any) peerCell {
	return peerCell{verdict: peerNone, outcome: zh.Say(format, args...), source: source}
}

// peerRecipe is a lock recipe (a column of the table) and how it names its
// nodes.
type peerRecipe struct {
	name string
	// prefix is a node's name up to the suffix the server appends, for a
	// contender GUID: what a plant needs to look like one of the recipe's.
	prefix func(guid string) string
	join   func(sc *peerScene, who string, sessionTimeout time.Duration) peerLock
	// ready, if set, skips the recipe's subtest when it cannot run here
	// (its library is not installed) before the scenario plants anything.
	ready func(t zkserver.TB, skip skipFunc)
	// noCancel, if set, says why the recipe's acquire can neither be
	// cancelled nor time out: the scenarios about giving up read n/a.
	noCancel string
}

// skipFunc skips a test, saying why.
type skipFunc func(t zkserver.TB, why zh.Text)

// builtinRecipes are the columns of this module's peer table that every
// run has; Table adds the drivers of ZK19_PEERS and the Go recipes given.
var builtinRecipes = []peerRecipe{
	{name: recipeOurs, prefix: func(g string) string { return g + fence.LockInfix }, join: joinOurs},
	// zk.Lock's names are CreateProtectedEphemeralSequential's: "_c_", the
	// GUID, "-", then zk.Lock's "lock-".
	{name: recipeGoZK, prefix: func(g string) string { return "_c_" + g + "-lock-" }, join: joinGoZK, noCancel: "zk.Lock has no cancel and no timeout"},
	kazooRecipe,
	curatorRecipe,
}

// plantGUID is the GUID of the n-th planted node: 32 hex digits like the
// peers' own, and unlike any a contender makes.
func plantGUID(n int) string { return fmt.Sprintf("%032x", 0xd000+n) }

// peerLock is one contender: a session of its own, through its own client
// proxy, with the recipe's lock object on the scene's dir.
type peerLock interface {
	who() string
	// session is the session the client has now, as the server's watch
	// tables print it.
	session() string
	// acquire starts an acquisition in the background; timeout 0 means
	// none (the recipe waits until it holds or fails).
	acquire(timeout time.Duration) *peerTry
	// release runs the recipe's release and says what it returned.
	release() (string, error)
	// cancel cancels the pending acquisition; false when the recipe has no
	// way to.
	cancel() bool
	proxy() *faultproxy.Proxy
	// mark and reconnected: wait, after a fault, until the client has a
	// session again (the same one or a new one).
	mark() int
	reconnected(mark int) error
}

// peerTry is an acquisition running in the background.
type peerTry struct {
	who   string
	l     peerLock // the contender acquiring
	began time.Time
	done  harness.Returned
	// Set before done is closed.
	held bool
	node string // the node the recipe says is its own; "" when it does not say
	err  error
	took time.Duration
}

func newTry(l peerLock) *peerTry {
	return &peerTry{who: l.who(), l: l, began: time.Now(), done: make(chan struct{})}
}

func (p *peerTry) finish(held bool, node string, err error) {
	p.held, p.node, p.err, p.took = held, node, err, time.Since(p.began)
	close(p.done)
}

// peerScene is one recipe's run of one scenario.
type peerScene struct {
	t    *sceneTB
	s    *zkserver.Server
	r    peerRecipe
	sp   scenario
	ver  string           // the recipe's version, for the cell
	O    *zkclient.Client // the observer: plants and deletes nodes
	o    actor
	dir  string
	skip skipFunc
	// pendingRelease is a release left running by releaseCutOff.
	pendingRelease chan error
}

// sceneTB is the test a scene plays in: while the scene's body runs, a
// Fatalf (the scene's own, or a helper's on its behalf) ends the scene
// with a NotShown cell instead of the test, so that Check can return it.
type sceneTB struct {
	zkserver.TB
	playing bool // set by play, in the scene's goroutine
}

// Fatalf ends the scene, while it plays, with a NotShown cell.
func (s *sceneTB) Fatalf(format string, args ...any) {
	s.TB.Helper()
	if !s.playing {
		s.TB.Fatalf(format, args...)
		return
	}
	s.TB.Logf("not shown: "+format, args...)
	panic(sceneEnd{peerCell{verdict: NotShown, outcome: value(fmt.Sprintf(format, args...))}})
}

// playOne plays scenario s for recipe r in t (the column's test) on
// server srv, and returns the Result: a skipped or failed t is NotShown.
func playOne(t zkserver.TB, s scenario, srv *zkserver.Server, r peerRecipe, skip skipFunc) (res Result) {
	t.Helper()
	res = Result{Scenario: s.id, Recipe: r.name, Verdict: NotShown, Observation: "the scenario did not end"}
	res.ObservationZh = res.Observation
	if r.ready != nil {
		r.ready(t, skip)
	}
	st := &sceneTB{TB: t}
	sc := &peerScene{t: st, s: srv, r: r, sp: s, o: newActor(t, "O"), skip: skip}
	if r.name == recipeGoZK {
		sc.ver = goZKModule().version
	}
	sc.O = zkclient.Connect(t, "O", []string{srv.Client})
	sc.dir = harness.TestRoot(t, sc.O)
	c := sc.play(s.play)
	res.Version, res.Verdict, res.Source = sc.ver, c.verdict, c.source
	res.Observation, res.ObservationZh = c.outcome.En, c.outcome.Zh
	return res
}

// sceneEnd ends a scene before its body returns, with the recipe's cell:
// its answer did not come within the scene's bound (see result), or the
// scene could not be set (sceneTB.Fatalf).
type sceneEnd struct{ cell peerCell }

// play runs the scene's body and returns its cell, also when a recipe's
// silence or a setup that did not come about ended the scene (sceneEnd).
func (sc *peerScene) play(body func(sc *peerScene) peerCell) (c peerCell) {
	sc.t.playing = true
	defer func() {
		sc.t.playing = false
		if r := recover(); r != nil {
			end, ok := r.(sceneEnd)
			if !ok {
				panic(r)
			}
			c = end.cell
		}
	}()
	return body(sc)
}

// noCancel is why the scene's recipe cannot give up an acquisition, or "".
func (sc *peerScene) noCancel() string { return sc.r.noCancel }

// join makes contender who of the scene's recipe; sessionTimeout 0 is the
// clients' default.
func (sc *peerScene) join(who string, sessionTimeout time.Duration) peerLock {
	sc.t.Helper()
	return sc.r.join(sc, who, sessionTimeout)
}

// plant creates dir/name as O, an ephemeral node of O's session (sequential
// when seq), and returns its name.
func (sc *peerScene) plant(name string, seq bool, why string) string {
	sc.t.Helper()
	flags := int32(zk.FlagEphemeral)
	if seq {
		flags |= zk.FlagSequence
	}
	sc.o.Invoke("create %s/%s (%s)", sc.dir, name, why)
	p, err := sc.O.Create(sc.dir+"/"+name, nil, flags, zk.WorldACL(zk.PermAll))
	if err != nil {
		sc.o.Fail("%v", err)
		sc.t.Fatalf("O create %s/%s: %v", sc.dir, name, err)
	}
	sc.o.Ok("%s", path.Base(p))
	return path.Base(p)
}

// remove deletes dir/name as O.
func (sc *peerScene) remove(name string) {
	sc.t.Helper()
	deleteAs(sc.t, sc.O, sc.o, sc.dir+"/"+name)
}

// owners lists the dir's children with their owners (ephemeralOwner as the
// watch tables print sessions), as O sees them.
func (sc *peerScene) owners() map[string]string {
	sc.t.Helper()
	out := map[string]string{}
	for _, k := range listChildren(sc.t, sc.O, sc.dir) {
		if ok, st := statOf(sc.t, sc.O, sc.dir+"/"+k); ok {
			out[k] = fmt.Sprintf("0x%x", st.EphemeralOwner)
		}
	}
	return out
}

// ownedBy lists the dir's children whose owner is session sess.
func (sc *peerScene) ownedBy(sess string) []string {
	sc.t.Helper()
	var out []string
	for name, owner := range sc.owners() {
		if owner == sess {
			out = append(out, name)
		}
	}
	return out
}

// settle waits until l's acquisition has returned or l waits on the watch
// of a node of the dir, and returns that node ("" when it returned). What
// the server's watch table says is the recipe's own account of where it
// stands, whatever the recipe. A watch on a node of l's own session is no
// wait on another: a holder may watch its own node for its loss (ours
// does, from lock.Held.Lost), and that watch can reach the server before
// the acquisition's return reaches the scene.
func (sc *peerScene) settle(l peerLock, try *peerTry) string {
	sc.t.Helper()
	sc.s.RequireWords(sc.t, "wchc") // here: the wait asks from its own goroutine
	watched := ""
	tb.WaitFor(sc.t, harness.Within, l.who()+"'s acquisition to return or to wait on a node", func() (bool, string) {
		if try.finished() {
			watched = ""
			return true, ""
		}
		sess := l.session()
		var own []string
		for _, p := range harness.WatchTable(sc.t, sc.s, "wchc", sc.dir)[sess] {
			if ok, st := statOf(sc.t, sc.O, p); ok && fmt.Sprintf("0x%x", st.EphemeralOwner) == sess {
				own = append(own, path.Base(p))
				continue
			}
			watched = path.Base(p)
			return true, ""
		}
		if len(own) > 0 {
			return false, fmt.Sprintf("session %s watches only its own %v under %s, and its acquisition has not returned", sess, own, sc.dir)
		}
		return false, fmt.Sprintf("session %s watches nothing under %s", sess, sc.dir)
	})
	if watched != "" {
		newActor(sc.t, l.who()).Info("waits on %s", watched)
	}
	return watched
}

// mustWaitOn settles l's try and stops the scenario unless l waits on
// node (what says whose): the scenario's observation needs it waiting there.
func (sc *peerScene) mustWaitOn(l peerLock, try *peerTry, node, what string) {
	sc.t.Helper()
	if got := sc.settle(l, try); got != node {
		sc.t.Fatalf("%s: got waiting on %q; want waiting on %s %s", l.who(), got, what, node)
	}
}

// waiterBehindHolder plants a holder's node and has W wait on it.
func (sc *peerScene) waiterBehindHolder() (holder string, w peerLock, tw *peerTry) {
	sc.t.Helper()
	holder = sc.plant(sc.r.prefix(plantGUID(1)), true, "the holder")
	w = sc.join("W", 0)
	tw = w.acquire(0)
	sc.mustWaitOn(w, tw, holder, "the holder")
	return holder, w, tw
}

// result waits, within bound, for the acquisition to return and logs what
// it returned. When ours does not return within bound, that is its answer
// to the scenario: the scene ends there, its cell says broke with where
// the acquisition stood, and the test fails as ours did not keep. A peer
// answers through its library or its driver's process, and a silence
// there may be the driver's: the test fails, the observation not made,
// with the same account.
func (sc *peerScene) result(try *peerTry, bound time.Duration) *peerTry {
	sc.t.Helper()
	if why := sc.awaitReturn(try, bound); why.En != "" {
		if sc.r.name == recipeOurs {
			panic(sceneEnd{peerCell{verdict: peerBroke, outcome: why}})
		}
		sc.t.Fatalf("%s: %s", sc.sp.id, why)
	}
	return try
}

// awaitReturn waits, within bound, for the acquisition to return and logs
// what it returned; or, once bound has passed, logs and returns where it
// stood then.
func (sc *peerScene) awaitReturn(try *peerTry, bound time.Duration) zh.Text {
	sc.t.Helper()
	a := newActor(sc.t, try.who)
	if err := tb.WaitUntil(bound, "the return of "+try.who+"'s acquisition", func() (bool, string) { return try.finished(), "not returned" }); err != nil {
		why := zh.Say("%v; %s", err, sc.seen(try))
		a.Info("no return: %s", why)
		return why
	}
	if try.held {
		a.Ok("held %s (after %v)", orUnsaid(try.node), try.took.Round(time.Millisecond))
	} else {
		a.Fail("%v (after %v)", try.err, try.took.Round(time.Millisecond))
	}
	return zh.Text{}
}

// seen says where an acquisition stands as the server shows it: the nodes
// its session owns in the dir and the nodes there it watches. It reads
// without failing the test: it explains a failure.
func (sc *peerScene) seen(try *peerTry) string {
	sess := try.l.session()
	s := fmt.Sprintf("%s's session %s", try.who, sess)
	kids, _, err := sc.O.Children(sc.dir)
	if err != nil {
		return fmt.Sprintf("%s; O's children %s: %v", s, sc.dir, err)
	}
	var mine []string
	for _, k := range kids {
		if ok, st, err := sc.O.Exists(sc.dir + "/" + k); err == nil && ok && fmt.Sprintf("0x%x", st.EphemeralOwner) == sess {
			mine = append(mine, k)
		}
	}
	s += fmt.Sprintf(" owns %v of the dir's %d children", mine, len(kids))
	return fmt.Sprintf("%s and watches %v", s, sc.watchedBy(sess))
}

// watchedBy lists the nodes of the dir that session sess watches, as the
// server's wchc shows them; nil when it cannot tell.
func (sc *peerScene) watchedBy(sess string) []string {
	a, err := zkserver.FourLetter(sc.s.Client, "wchc", 2*time.Second)
	if err != nil {
		return nil
	}
	var watched []string
	for _, p := range harness.ParseWatchTable(a, "wchc", sc.dir)[sess] {
		watched = append(watched, path.Base(p))
	}
	return watched
}

func orUnsaid(node string) zh.Text {
	if node == "" {
		return zh.Say("(the recipe does not say which node)")
	}
	return value(node)
}

// mustHold is result for an acquisition the scenario needs to succeed:
// without it the observation cannot be made.
func (sc *peerScene) mustHold(try *peerTry, why string) {
	sc.t.Helper()
	if seen := sc.awaitReturn(try, peerCallWithin); seen.En != "" {
		sc.t.Fatalf("%s: %s (%s)", sc.sp.id, seen, why)
	}
	if !try.held {
		sc.t.Fatalf("%s: %s's acquisition: got %v; want a hold (%s)", sc.sp.id, try.who, try.err, why)
	}
}

// heldOnceGone removes node, which l's try waits behind, and reports kept
// (held, a kept cell) once l holds, broke if it fails instead.
func (sc *peerScene) heldOnceGone(l peerLock, try *peerTry, node string, behind zh.Text, held peerCell) peerCell {
	sc.remove(node)
	if sc.result(try, harness.Within); !try.held {
		return broke("", "waited behind %s, then failed: %s", behind, brief(try.err))
	}
	sc.releaseNow(l)
	return held
}

// releaseNow releases l's hold, logging what the recipe said.
func (sc *peerScene) releaseNow(l peerLock) {
	sc.t.Helper()
	a := newActor(sc.t, l.who())
	a.Invoke("release")
	said, err := l.release()
	if err != nil {
		a.Fail("%v", err)
		return
	}
	a.Ok("%s", said)
}

// suffixless cuts the server's 10-character suffix off a node name.
func suffixless(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[:len(name)-10]
}

// behindProxy gives who's client a proxy of its own, and the client
// options for the session timeout a scenario asks for (0: the default).
func (sc *peerScene) behindProxy(who string, sessionTimeout time.Duration) (*faultproxy.Proxy, []zkclient.Option) {
	px := zkserver.ClientProxy(sc.t, who+"-proxy", sc.s)
	var copts []zkclient.Option
	if sessionTimeout > 0 {
		copts = append(copts, zkclient.WithSessionTimeout(sessionTimeout))
	}
	return px, copts
}

// --- ours: package lock ----------------------------------------------------

type oursLock struct {
	sc   *peerScene
	p    *contender
	px   *faultproxy.Proxy
	stop context.CancelFunc
	mu   sync.Mutex
	held *lock.Held
}

// joinOurs tells the Locker the session timeout the scenario asked for, as
// a caller who wants a Suspension's ExpiresBy does.
func joinOurs(sc *peerScene, who string, sessionTimeout time.Duration) peerLock {
	px, copts := sc.behindProxy(who, sessionTimeout)
	var lopts []lock.Option
	if sessionTimeout > 0 {
		lopts = append(lopts, lock.WithSessionTimeout(sessionTimeout))
	}
	c := zkclient.Connect(sc.t, who, []string{px.Addr()}, copts...)
	l := lock.New(c.Conn, sc.dir, append([]lock.Option{lock.WithoutCzxidDomain()}, lopts...)...)
	return &oursLock{sc: sc, px: px, p: &contender{Name: who, Session: c, Locker: l, Log: newActor(sc.t, who)}}
}

// contender is ours' contender: its session and the Locker on it.
type contender struct {
	Name    string
	Session *zkclient.Client
	Locker  *lock.Locker
	Log     actor
}

func (o *oursLock) who() string              { return o.p.Name }
func (o *oursLock) session() string          { return o.p.Session.SessionHex() }
func (o *oursLock) proxy() *faultproxy.Proxy { return o.px }
func (o *oursLock) mark() int                { return o.p.Session.Mark() }
func (o *oursLock) reconnected(mark int) error {
	return o.p.Session.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin)
}

// acquire does what the recipe asks of its caller: Acquire, which
// recovers a lost create reply by itself in the same session. A hold's
// Lost needs no arming: the hold watches its own node from the start.
func (o *oursLock) acquire(timeout time.Duration) *peerTry {
	var ctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	o.stop = cancel
	try := newTry(o)
	o.p.Log.Invoke("Acquire %s (timeout %v)", o.sc.dir, timeout)
	go func() {
		defer cancel()
		h, err := o.p.Locker.Acquire(ctx)
		node := ""
		if h != nil {
			node = path.Base(h.Path)
		}
		o.mu.Lock()
		o.held = h
		o.mu.Unlock()
		try.finish(h != nil, node, err)
	}()
	o.sc.t.Cleanup(func() {
		cancel()
		select {
		case <-try.done:
		case <-time.After(peerCallWithin):
			o.sc.t.Logf("%s: acquisition still running %v after cancel", o.who(), peerCallWithin)
		}
	})
	return try
}

func (o *oursLock) hold() *lock.Held {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.held
}

func (o *oursLock) release() (string, error) {
	h := o.hold()
	if h == nil {
		return "", errors.New("ours: nothing held")
	}
	ctx, cancel := context.WithTimeout(context.Background(), peerCallWithin)
	defer cancel()
	if err := h.Release(ctx); err != nil {
		return "", err
	}
	return "released " + path.Base(h.Path), nil
}

func (o *oursLock) cancel() bool { o.stop(); return true }

// --- go-zookeeper's zk.Lock ---------------------------------------------------

type gozkLock struct {
	goClient
	sc *peerScene
	a  actor
	l  *zk.Lock
}

func joinGoZK(sc *peerScene, who string, sessionTimeout time.Duration) peerLock {
	gc := sc.goClient(who, sessionTimeout)
	return &gozkLock{goClient: gc, sc: sc, a: newActor(sc.t, who), l: zk.NewLock(gc.c.Conn, sc.dir, zk.WorldACL(zk.PermAll))}
}

// goClient is a contender's go-zookeeper session through its own proxy,
// for a recipe written in Go: who it is, its session, its proxy.
type goClient struct {
	c  *zkclient.Client
	px *faultproxy.Proxy
}

func (sc *peerScene) goClient(who string, sessionTimeout time.Duration) goClient {
	px, copts := sc.behindProxy(who, sessionTimeout)
	return goClient{c: zkclient.Connect(sc.t, who, []string{px.Addr()}, copts...), px: px}
}

func (g goClient) who() string              { return g.c.Name }
func (g goClient) session() string          { return g.c.SessionHex() }
func (g goClient) proxy() *faultproxy.Proxy { return g.px }
func (g goClient) mark() int                { return g.c.Mark() }
func (g goClient) reconnected(mark int) error {
	return g.c.WaitStateSince(mark, zk.StateHasSession, zkclient.ConnectWithin)
}

// acquire runs zk.Lock, which takes no timeout: a scenario that asks for
// one is a bug of the test.
func (g *gozkLock) acquire(timeout time.Duration) *peerTry {
	if timeout > 0 {
		g.sc.t.Fatalf("go-zookeeper's zk.Lock takes no timeout; the scenario asked for %v", timeout)
	}
	try := newTry(g)
	g.a.Invoke("zk.Lock %s", g.sc.dir)
	go func() {
		err := g.l.Lock()
		try.finish(err == nil, "", err)
	}()
	// zk.Lock returns only when it holds, fails, or its client closes.
	g.sc.t.Cleanup(func() {
		if err := g.c.CloseWait(peerCallWithin); err != nil {
			g.sc.t.Logf("%v", err)
		}
		select {
		case <-try.done:
		case <-time.After(peerCallWithin):
			g.sc.t.Logf("%s: zk.Lock still running %v after its client closed", g.who(), peerCallWithin)
		}
	})
	return try
}

func (g *gozkLock) release() (string, error) {
	if err := g.l.Unlock(); err != nil {
		return "", err
	}
	return "Unlock returned nil", nil
}

func (g *gozkLock) cancel() bool { return false }

func (p *peerTry) finished() bool { return p.done.Finished() }

package locktest

// The recipes the peer family drives in a process of their own, over the
// line protocol of testdata/peers/PROTOCOL.md (internal/proof/peer): kazoo's Lock
// (Python), Apache Curator's InterProcessMutex (Java), and any driver named
// in ZK19_PEERS. Each is a column of the table "How other recipes fare",
// with the same scenarios, the same faults and the same bytes on the wire
// as ours.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/peer"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// The drivers, from the module root.
const (
	peerScript    = "../testdata/peers/kazoo_lock.py"
	curatorSource = "../testdata/peers/CuratorLock.java"
)

// curatorConnect is how the Curator driver builds its client, beside the
// session timeout each scenario asks for: an ExponentialBackoffRetry, as
// Curator's documentation has every client built with, short enough that a
// retried call ends within a scenario's bounds, and a connection timeout
// of 2 s for each try.
var curatorConnect = peer.ConnectOptions{ConnectionTimeout: 2 * time.Second, RetryBaseSleep: 200 * time.Millisecond, RetryMax: 3}

var kazooRecipe = driverRecipe(recipeKazoo, "{guid}__lock__", func(name string) (peer.Config, error) {
	return peer.KazooConfig(peerScript, "", name)
}, peer.ConnectOptions{})

// Curator's names are protected mode's: "_c_", a UUID, "-", then
// InterProcessMutex's "lock-".
var curatorRecipe = driverRecipe(recipeCurator, "_c_{uuid}-lock-", func(name string) (peer.Config, error) {
	return peer.CuratorConfig(curatorSource, name)
}, curatorConnect)

// tableRecipes are the columns of a Table: the built-in ones, then the
// drivers of ZK19_PEERS. A malformed ZK19_PEERS fails the test.
func tableRecipes(t *testing.T) []peerRecipe {
	t.Helper()
	env, err := peer.ParseEnv(os.Getenv(peer.EnvPeers))
	if err != nil {
		t.Fatalf("%v", err)
	}
	var extra []peerRecipe
	for _, d := range env {
		extra = append(extra, driverRecipe(d.Name, "", func(who string) (peer.Config, error) { return d.Config(who), nil }, peer.ConnectOptions{}))
	}
	rs := append(append([]peerRecipe(nil), builtinRecipes...), extra...)
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.name] {
			t.Fatalf("two recipes named %q: a column needs a name of its own", r.name)
		}
		seen[r.name] = true
	}
	return rs
}

// driverRecipe is a column whose contenders are driver processes. nodeName
// is the template of its node names ({guid}: 32 hex digits; {uuid}: the same
// as a UUID); "" asks a driver's hello for it, once.
func driverRecipe(name, nodeName string, config func(who string) (peer.Config, error), opts peer.ConnectOptions) peerRecipe {
	template := sync.OnceValues(func() (string, error) {
		if nodeName != "" {
			return nodeName, nil
		}
		cfg, err := config(name + "-hello")
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		k, err := peer.Start(ctx, cfg)
		if err != nil {
			return "", err
		}
		k.Close()
		if !strings.Contains(k.Hello.NodeName, "{guid}") && !strings.Contains(k.Hello.NodeName, "{uuid}") {
			return "", fmt.Errorf("%s's hello: got node_name %q; want a template with {guid} or {uuid}", name, k.Hello.NodeName)
		}
		return k.Hello.NodeName, nil
	})
	return peerRecipe{
		name: name,
		prefix: func(guid string) string {
			tpl, err := template()
			if err != nil {
				panic(fmt.Sprintf("%s: node names unknown: %v", name, err))
			}
			return expandNodeName(tpl, guid)
		},
		join: func(sc *peerScene, who string, sessionTimeout time.Duration) peerLock {
			return joinDriver(sc, who, sessionTimeout, config, opts)
		},
		// A driver that cannot run here skips before the scene plants
		// anything: its command cannot be built (Curator's jars or javac
		// missing), or its hello says its library is missing.
		ready: func(t zkserver.TB, skip skipFunc) {
			_, err := config(name + "-check")
			if err == nil {
				_, err = template()
			}
			if errors.Is(err, peer.ErrMissing) {
				skip(t, zh.Say("skipped: %v", err))
			} else if err != nil {
				t.Fatalf("%v", err)
			}
		},
	}
}

// expandNodeName fills a node name template with a 32-hex-digit GUID.
func expandNodeName(tpl, guid string) string {
	uuid := guid
	if len(guid) == 32 {
		uuid = guid[:8] + "-" + guid[8:12] + "-" + guid[12:16] + "-" + guid[16:20] + "-" + guid[20:]
	}
	return strings.NewReplacer("{guid}", guid, "{uuid}", uuid).Replace(tpl)
}

// --- a driver process as a contender ------------------------------------------

type driverLock struct {
	sc   *peerScene
	name string
	k    *peer.Driver
	px   *faultproxy.Proxy
}

func joinDriver(sc *peerScene, who string, sessionTimeout time.Duration, config func(who string) (peer.Config, error), opts peer.ConnectOptions) peerLock {
	sc.t.Helper()
	cfg, err := config(sc.r.name + "-" + who)
	if errors.Is(err, peer.ErrMissing) {
		sc.skip(sc.t.TB, zh.Say("skipped: %v", err))
	}
	if err != nil {
		sc.t.Fatalf("%v", err)
	}
	if sc.r.name == recipeCurator {
		sc.o.Info("Curator driver %s", peer.CuratorBuildNote(curatorSource))
	}
	k := peer.MustStart(sc.t, cfg)
	sc.ver = k.Hello.Version
	peerLibraries.Store(sc.r.name, k.Hello.Library)
	px := zkserver.ClientProxy(sc.t, who+"-proxy", sc.s)
	if sessionTimeout == 0 {
		sessionTimeout = 10 * time.Second
	}
	opts.SessionTimeout = sessionTimeout
	ctx, cancel := context.WithTimeout(context.Background(), zkclient.ConnectWithin)
	defer cancel()
	st, err := k.Connect(ctx, px.Addr(), opts)
	if err != nil || !st.Connected {
		sc.t.Fatalf("%s-%s connect: got %+v, %v; want connected", sc.r.name, who, st, err)
	}
	return &driverLock{sc: sc, name: who, k: k, px: px}
}

func (k *driverLock) who() string              { return k.name }
func (k *driverLock) proxy() *faultproxy.Proxy { return k.px }
func (k *driverLock) mark() int                { return len(k.k.Events()) }

func (k *driverLock) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), peerCallWithin)
}

func (k *driverLock) state() peer.State {
	ctx, cancel := k.ctx()
	defer cancel()
	st, err := k.k.State(ctx)
	if err != nil {
		k.sc.t.Fatalf("%s-%s state: %v", k.sc.r.name, k.name, err)
	}
	return st
}

func (k *driverLock) session() string { return k.state().Session }

// reconnected waits for a state event that says the client has a session
// again (kazoo's CONNECTED, Curator's RECONNECTED).
func (k *driverLock) reconnected(mark int) error {
	ctx, cancel := k.ctx()
	defer cancel()
	_, err := k.k.WaitEvent(ctx, k.sc.r.name+" connected again", mark, func(e peer.Event) bool {
		return e.Kind == "state" && e.Connected != nil && *e.Connected
	})
	return err
}

func (k *driverLock) acquire(timeout time.Duration) *peerTry {
	if timeout > 0 && !k.k.Hello.Timeout {
		k.sc.t.Fatalf("%s's driver says its acquire takes no timeout; the scenario asked for %v", k.sc.r.name, timeout)
	}
	try := newTry(k)
	call := k.k.AcquireAsync(k.sc.dir, k.name, timeout)
	go func() {
		r, err := call.Wait(context.Background())
		try.finish(err == nil && r.Acquired, r.Node, acquireErr(r, err))
	}()
	// The driver's exit ends the wait of a call nobody answered.
	k.sc.t.Cleanup(func() {
		k.k.Close()
		<-try.done
	})
	return try
}

// acquireErr is the recipe's exception, or what acquire returned when it
// was false (kazoo: its retry deadline passed; Curator: its timeout).
func acquireErr(r peer.Acquired, err error) error {
	if err == nil && !r.Acquired {
		return errors.New("kazoo: acquire() returned False")
	}
	return err
}

func (k *driverLock) isAcquired() (peer.LockInfo, error) {
	ctx, cancel := k.ctx()
	defer cancel()
	return k.k.IsAcquired(ctx, k.sc.dir)
}

// release waits for the recipe's release as long as a release with its
// client cut off may run (releaseCut), and then as long as any call.
func (k *driverLock) release() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseCut+peerCallWithin)
	defer cancel()
	r, err := k.k.Release(ctx, k.sc.dir)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("release returned %v, is_acquired %v", r.Released, r.IsAcquired), nil
}

func (k *driverLock) cancel() bool {
	if !k.k.Hello.Cancel {
		return false
	}
	ctx, cancel := k.ctx()
	defer cancel()
	if err := k.k.Cancel(ctx, k.sc.dir); err != nil {
		k.sc.t.Fatalf("%s-%s cancel: %v", k.sc.r.name, k.name, err)
	}
	return true
}

// knowsItLost asks the driver's lock object whether it still holds, and,
// separately, whether a connection listener was told LOST: the two notions
// of "knows it no longer holds" a caller can use. The cell's verdict is the
// lock object's; the listener's account is written beside it.
func (k *driverLock) knowsItLost(sc *peerScene, src map[string][2]string) peerCell {
	a := newActor(sc.t, k.name)
	li, err := k.isAcquired()
	st := k.state()
	listener := zh.Say("a connection listener saw LOST: %v (states %s)", st.LostSeen, strings.Join(st.States, ","))
	if st.States == nil {
		listener = zh.Say("a connection listener saw LOST: %v", st.LostSeen)
	}
	object := zh.Say("is_acquired %v", li.IsAcquired)
	if li.Owned != nil {
		object = zh.Say("isAcquiredInThisProcess %v, isOwnedByCurrentThread %v", li.IsAcquired, *li.Owned)
	}
	if err != nil || (!li.IsAcquired && (li.Owned == nil || !*li.Owned)) {
		return kept("knows: lock object says %s (%v); %s", object, err, listener)
	}
	ctx, cancel := k.ctx()
	r, rerr := k.k.Release(ctx, k.sc.dir)
	cancel()
	a.Info("release: released=%v is_acquired=%v%s", r.Released, r.IsAcquired, errSuffix(rerr))
	released := zh.Say("release() returns without error (released=%v)", r.Released)
	if rerr != nil {
		released = zh.Say("release() raises %s", brief(rerr))
	}
	return broke(sc.citeFrom(src), "lock object does not know: %s with its node gone, and %s; %s", object, released, listener)
}

// --- a Go recipe (Recipe) ------------------------------------------------------

type goLock struct {
	goClient
	sc   *peerScene
	a    actor
	l    Lock
	stop context.CancelFunc
}

// goRecipe is the column of a Recipe named name. A Lock that is
// Uncancellable makes the column's noCancel.
func goRecipe(name string, r Recipe) peerRecipe {
	pr := peerRecipe{name: name, prefix: r.NodeName, join: func(sc *peerScene, who string, sessionTimeout time.Duration) peerLock {
		gc := sc.goClient(who, sessionTimeout)
		return &goLock{goClient: gc, sc: sc, a: newActor(sc.t, who), l: r.NewLock(gc.c.Conn, sc.dir)}
	}}
	if u, ok := r.(Uncancellable); ok {
		pr.noCancel = u.Uncancellable()
	}
	return pr
}

func (g *goLock) acquire(timeout time.Duration) *peerTry {
	ctx, cancel := context.WithCancel(context.Background())
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
	}
	g.stop = cancel
	try := newTry(g)
	g.a.Invoke("Acquire %s (timeout %v)", g.sc.dir, timeout)
	go func() {
		defer cancel()
		node, err := g.l.Acquire(ctx)
		if node != "" {
			node = path.Base(node)
		}
		try.finish(err == nil, node, err)
	}()
	g.sc.t.Cleanup(func() {
		cancel()
		select {
		case <-try.done:
		case <-time.After(peerCallWithin):
			g.sc.t.Logf("%s: acquisition still running %v after cancel", g.who(), peerCallWithin)
		}
	})
	return try
}

func (g *goLock) release() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), peerCallWithin)
	defer cancel()
	if err := g.l.Release(ctx); err != nil {
		return "", err
	}
	return "released", nil
}

// cancel cancels the acquisition's context, unless the recipe is
// Uncancellable.
func (g *goLock) cancel() bool {
	if g.sc.noCancel() != "" {
		return false
	}
	g.stop()
	return true
}

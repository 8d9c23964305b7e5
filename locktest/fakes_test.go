package locktest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/locktest"
)

// Two recipes wrong on purpose, so that a scenario that stops judging
// (always kept, or kept where its fault never took) fails a test: zk.Lock
// (TestZkLockThroughRecipe) keeps some promises; these break others.

// careless is a lock recipe with the bugs the peer table found in the
// peers, each where a scenario looks: it adopts any node carrying its
// lock object's one GUID (kazoo #732's cousin: no owner check), gives up on
// the first error without deleting its node (go-zookeeper #229), leaves
// its node when cancelled, forgets its node when a release fails
// (CURATOR-678), never learns that its session expired, and orders names
// by their last ten characters.
type careless struct{}

func (careless) NodeName(guid string) string { return guid + "-careless-" }

func (careless) NewLock(conn *zk.Conn, dir string) locktest.Lock {
	b := make([]byte, 16)
	rand.Read(b)
	return &carelessLock{c: conn, dir: dir, prefix: hex.EncodeToString(b) + "-careless-"}
}

type carelessLock struct {
	c           *zk.Conn
	dir, prefix string
	mu          sync.Mutex
	node        string
	held        bool
}

func (l *carelessLock) Acquire(ctx context.Context) (string, error) {
	node, err := l.enqueue()
	if err != nil {
		return "", err
	}
	for {
		kids, _, err := l.c.Children(l.dir)
		if err != nil {
			return "", err
		}
		slices.SortFunc(kids, func(a, b string) int { return strings.Compare(last10(a), last10(b)) })
		i := slices.Index(kids, node)
		switch {
		case i < 0:
			return "", errors.New("careless: its node is gone")
		case i == 0:
			l.mu.Lock()
			l.node, l.held = node, true
			l.mu.Unlock()
			return node, nil
		}
		ok, _, ch, err := l.c.ExistsW(l.dir + "/" + kids[i-1])
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err() // its node stays
		}
	}
}

// enqueue adopts a child carrying the prefix, whoever owns it, or creates
// one.
func (l *carelessLock) enqueue() (string, error) {
	kids, _, err := l.c.Children(l.dir)
	if err != nil {
		return "", err
	}
	for _, k := range kids {
		if strings.HasPrefix(k, l.prefix) {
			return k, nil
		}
	}
	p, err := l.c.Create(l.dir+"/"+l.prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	return path.Base(p), err
}

func last10(s string) string { return s[max(0, len(s)-10):] }

func (l *carelessLock) Release(context.Context) error {
	l.mu.Lock()
	node := l.node
	l.node, l.held = "", false
	l.mu.Unlock()
	return l.c.Delete(l.dir+"/"+node, -1)
}

func (l *carelessLock) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// liar says it holds at once and creates nothing: a scenario whose scene
// needs a node of the contender's, or a wait, cannot be set (NotShown);
// one that only looks at the answer sees a hold.
type liar struct{}

func (liar) NodeName(guid string) string { return guid + "-liar-" }

func (liar) NewLock(*zk.Conn, string) locktest.Lock { return &liarLock{} }

type liarLock struct{ held bool }

func (l *liarLock) Acquire(context.Context) (string, error) { l.held = true; return "", nil }
func (l *liarLock) Release(context.Context) error           { l.held = false; return nil }
func (l *liarLock) Held() bool                              { return l.held }

// TestWrongRecipesAreJudged: careless and liar get, scenario by scenario,
// the verdicts their bugs earn (see careless and liar for the bugs).
func TestWrongRecipesAreJudged(t *testing.T) {
	k, b, n := locktest.Kept, locktest.Broken, locktest.NotShown
	for _, c := range []struct {
		name string
		r    locktest.Recipe
		want map[string]locktest.Verdict
	}{
		{"careless", careless{}, map[string]locktest.Verdict{
			"stranger": k, "own-node-deleted": k, "suffix-order": k, "wrap-older": k, "wrap-newer": k, "over-long": k,
			"lost-reply": b, "lost-reply-expired": k, "foreign-guid": k, "reacquire-foreign": b, "cancel": b,
			"cleanup-reply-lost": b, "expiry-holding": b, "total-deadline": k, "lost-children-reply": n,
			"foreign-child-first": b, "lost-lookup": n, "cleanup-request-lost": b, "release-cut-off": b,
			"stale-session-node": k, "suspended-holding": b,
		}},
		{"liar", liar{}, map[string]locktest.Verdict{
			"stranger": k, "own-node-deleted": n, "suffix-order": b, "wrap-older": b, "wrap-newer": n, "over-long": b,
			"lost-reply": n, "lost-reply-expired": n, "foreign-guid": n, "reacquire-foreign": n, "cancel": n,
			"cleanup-reply-lost": n, "expiry-holding": n, "total-deadline": b, "lost-children-reply": n,
			"foreign-child-first": k, "lost-lookup": n, "cleanup-request-lost": n, "release-cut-off": n,
			"stale-session-node": n, "suspended-holding": n,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range locktest.Check(t, c.name, c.r) {
				if want := c.want[r.Scenario]; r.Verdict != want {
					t.Errorf("%s, scenario %s: got %s: %s; want %s", c.name, r.Scenario, r.Verdict, r.Observation, want)
				}
			}
		})
	}
}

// optimist takes a create whose reply was lost for a success: Acquire
// returns a hold at once when its create fails with the connection, on a
// node it cannot name. Otherwise it is careless. Only a scenario that
// looks at the node after the session that made it is gone tells it
// apart: lost-reply-expired.
type optimist struct{ careless }

func (o optimist) NewLock(conn *zk.Conn, dir string) locktest.Lock {
	return &optimistLock{carelessLock: o.careless.NewLock(conn, dir).(*carelessLock)}
}

type optimistLock struct{ *carelessLock }

func (l *optimistLock) Acquire(ctx context.Context) (string, error) {
	node, err := l.carelessLock.Acquire(ctx)
	if errors.Is(err, zk.ErrConnectionClosed) {
		l.mu.Lock()
		l.held = true
		l.mu.Unlock()
		return "", nil
	}
	return node, err
}

// TestAnOptimistBreaksTheLostReplyAfterExpiry: a recipe that takes a lost
// create reply for a success holds on no node once the session that made
// the node has expired, and lost-reply-expired says broken.
func TestAnOptimistBreaksTheLostReplyAfterExpiry(t *testing.T) {
	t.Parallel()
	for _, r := range locktest.Check(t, "optimist", optimist{}, locktest.Only("lost-reply-expired")) {
		if r.Verdict != locktest.Broken {
			t.Errorf("optimist, scenario %s: got %s: %s; want %s", r.Scenario, r.Verdict, r.Observation, locktest.Broken)
		}
	}
}

// signalling is careless with Signals: while it holds, it polls its
// client's state every 10 ms and says Suspended when the client has no
// session, Resumed when it has one again; Release stops the polling.
type signalling struct{ careless }

func (s signalling) NewLock(conn *zk.Conn, dir string) locktest.Lock {
	return &signallingLock{carelessLock: s.careless.NewLock(conn, dir).(*carelessLock), conn: conn, signals: make(chan locktest.Signal, 8)}
}

type signallingLock struct {
	*carelessLock
	conn    *zk.Conn
	signals chan locktest.Signal
	stop    chan struct{}
}

func (l *signallingLock) Signals() <-chan locktest.Signal { return l.signals }

func (l *signallingLock) Acquire(ctx context.Context) (string, error) {
	node, err := l.carelessLock.Acquire(ctx)
	if err == nil {
		l.stop = make(chan struct{})
		go l.poll(l.stop)
	}
	return node, err
}

func (l *signallingLock) Release(ctx context.Context) error {
	if l.stop != nil {
		close(l.stop)
		l.stop = nil
	}
	return l.carelessLock.Release(ctx)
}

// poll sends a Signal on each change of whether the client has a session,
// until stop closes.
func (l *signallingLock) poll(stop chan struct{}) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	connected := true
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		has := l.conn.State() == zk.StateHasSession
		switch {
		case connected && !has:
			l.signals <- locktest.Suspended
		case !connected && has:
			l.signals <- locktest.Resumed
		}
		connected = has
	}
}

// TestSignallerIsHeard: a Lock that says Suspended while cut off and
// Resumed once back keeps suspended-holding, which careless, without
// Signals, breaks (TestWrongRecipesAreJudged).
func TestSignallerIsHeard(t *testing.T) {
	r := locktest.Check(t, "signalling", signalling{}, locktest.Only("suspended-holding"))
	if r[0].Verdict != locktest.Kept || !strings.Contains(r[0].Observation, "told: Suspended") {
		t.Errorf("got %v; want kept, told: Suspended … after the cut", r[0])
	}
}

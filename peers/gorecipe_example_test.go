//go:build zk19example

package peers_test

// How a recipe written in Go takes the peer scenarios (docs/peers.md, "Test your
// own lock recipe"): go-zookeeper's zk.Lock behind peer.GoRecipe, as a
// column of its own, "zk.Lock-via-GoRecipe". Built only with
// -tags zk19example, so that the table's go-zookeeper column is not there
// twice in every run.

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/peer"
)

func init() { peer.Register("zk.Lock-via-GoRecipe", zkLockRecipe{}) }

type zkLockRecipe struct{}

// NodeName: zk.Lock's nodes are CreateProtectedEphemeralSequential's.
func (zkLockRecipe) NodeName(guid string) string { return "_c_" + guid + "-lock-" }

func (zkLockRecipe) NewLock(conn *zk.Conn, dir string) peer.GoLock {
	return &zkLockObject{l: zk.NewLock(conn, dir, zk.WorldACL(zk.PermAll))}
}

type zkLockObject struct {
	l    *zk.Lock
	mu   sync.Mutex
	held bool
}

// Acquire runs zk.Lock, which takes no context: when ctx ends first,
// Acquire returns ctx's error while zk.Lock goes on in the background, as a
// caller that wraps it this way would have it.
func (o *zkLockObject) Acquire(ctx context.Context) (string, error) {
	done := make(chan error, 1)
	go func() { done <- o.l.Lock() }()
	select {
	case err := <-done:
		o.mu.Lock()
		o.held = err == nil
		o.mu.Unlock()
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (o *zkLockObject) Release(context.Context) error {
	o.mu.Lock()
	o.held = false
	o.mu.Unlock()
	return o.l.Unlock()
}

// Held is the wrapper's own account: zk.Lock has no way to ask.
func (o *zkLockObject) Held() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.held
}

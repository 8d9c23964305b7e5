package locktest_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/locktest"
)

// zkLockRecipe is go-zookeeper's zk.Lock behind locktest.Recipe, as a
// recipe author would wrap a lock of their own.
type zkLockRecipe struct{}

// NodeName: zk.Lock's nodes are CreateProtectedEphemeralSequential's.
func (zkLockRecipe) NodeName(guid string) string { return "_c_" + guid + "-lock-" }

func (zkLockRecipe) NewLock(conn *zk.Conn, dir string) locktest.Lock {
	return &zkLock{l: zk.NewLock(conn, dir, zk.WorldACL(zk.PermAll))}
}

// Uncancellable: zk.Lock takes no context and no timeout.
func (zkLockRecipe) Uncancellable() string { return "zk.Lock takes no context and no timeout" }

type zkLock struct {
	l    *zk.Lock
	mu   sync.Mutex
	held bool
}

// Acquire runs zk.Lock; when ctx ends first (the scenario's cleanup),
// Acquire returns ctx's error while zk.Lock goes on until its client
// closes.
func (z *zkLock) Acquire(ctx context.Context) (string, error) {
	done := make(chan error, 1)
	go func() { done <- z.l.Lock() }()
	select {
	case err := <-done:
		z.mu.Lock()
		z.held = err == nil
		z.mu.Unlock()
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Release runs zk.Unlock. A failed Unlock keeps zk.Lock's path, so the
// lock object still holds and a second Release may succeed.
func (z *zkLock) Release(context.Context) error {
	err := z.l.Unlock()
	if err == nil {
		z.mu.Lock()
		z.held = false
		z.mu.Unlock()
	}
	return err
}

// Held is the wrapper's own account: zk.Lock has no way to ask.
func (z *zkLock) Held() bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.held
}

// go-zookeeper's zk.Lock through five of the scenarios: it orders by
// suffix and recovers a lost create reply, but a stranger's child in the
// dir makes it fail and leave its node, it holds with no node of its own
// once that node is deleted under it, and it has no cancel.
func ExampleVerdicts() {
	results, err := locktest.Verdicts("zk.Lock", zkLockRecipe{},
		locktest.Only("suffix-order", "lost-reply", "stranger", "own-node-deleted", "cancel"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		fmt.Printf("%-17s %s\n", r.Scenario, r.Verdict)
	}
	// Output:
	// suffix-order      kept
	// lost-reply        kept
	// stranger          broke
	// own-node-deleted  broke
	// cancel            n/a
}

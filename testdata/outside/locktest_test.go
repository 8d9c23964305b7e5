// Package outside is a module of its own that imports locktest as a recipe
// author would: locktest's TestOutsideModule copies it to a temporary
// directory, gives it a go.mod that replaces github.com/zk19/zk19 by this
// repository, and runs its test. It puts go-zookeeper's zk.Lock through
// every scenario and writes each verdict, one "<scenario> <verdict>" a line,
// to the file ZK19_OUTSIDE_VERDICTS names.
package outside

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/locktest"
)

func TestMain(m *testing.M) { locktest.Main(m) }

// TestZkLockVerdicts runs every scenario against zk.Lock and writes the
// verdicts; it fails only when it cannot write them.
func TestZkLockVerdicts(t *testing.T) {
	var b strings.Builder
	for _, r := range locktest.Check(t, "zk.Lock", recipe{}) {
		fmt.Fprintf(&b, "%s %s\n", r.Scenario, r.Verdict)
		t.Logf("%v", r)
	}
	if out := os.Getenv("ZK19_OUTSIDE_VERDICTS"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatalf("write the verdicts: %v", err)
		}
	}
}

// recipe is zk.Lock behind locktest.Recipe.
type recipe struct{}

func (recipe) NodeName(guid string) string { return "_c_" + guid + "-lock-" }

func (recipe) NewLock(conn *zk.Conn, dir string) locktest.Lock {
	return &lockObject{l: zk.NewLock(conn, dir, zk.WorldACL(zk.PermAll))}
}

func (recipe) Uncancellable() string { return "zk.Lock takes no context and no timeout" }

type lockObject struct {
	l    *zk.Lock
	mu   sync.Mutex
	held bool
}

func (o *lockObject) Acquire(ctx context.Context) (string, error) {
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

func (o *lockObject) Release(context.Context) error {
	err := o.l.Unlock()
	if err == nil {
		o.mu.Lock()
		o.held = false
		o.mu.Unlock()
	}
	return err
}

func (o *lockObject) Held() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.held
}

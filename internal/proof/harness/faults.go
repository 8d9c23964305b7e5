package harness

import (
	"fmt"

	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// FaultEnded waits until the lost-reply fault d (a *zktest.Fault, or a
// *faultproxy.Drop of a proxy of one's own) has acted (or given up),
// and fails t naming what it waited for and the fault's state otherwise.
// A fault that never acted is cancelled: it must not outlive the wait.
func FaultEnded[R any, F interface {
	Done() <-chan struct{}
	Cancel()
	Result() R
}](t zkserver.TB, d F, what string) R {
	t.Helper()
	defer d.Cancel() // a no-op once the fault has acted
	tb.WaitFor(t, Within, what, func() (bool, string) {
		select {
		case <-d.Done():
			return true, ""
		default:
			return false, fmt.Sprintf("%+v", d.Result())
		}
	})
	return d.Result()
}

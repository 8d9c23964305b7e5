package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/lock"
	"github.com/zk19/zk19/lock/locktrace"
)

// TestLostCreatesCountWhatTheRecipeDid: C1's summary counts each create
// whose reply was lost by what the recipe's trace shows it did next, so
// the row moves when lost creates happen. The trace is played as package
// lock calls it after a lost reply: sync and list the parent, then adopt
// the node (Recovered) or create again; or the acquisition ends with the
// session changed, ambiguous, or undecided. A create that failed
// otherwise, or whose caller stopped waiting, is no lost reply.
func TestLostCreatesCountWhatTheRecipeDid(t *testing.T) {
	s := NewSummary(ResMemory)
	c := &lostCreates{sum: s}
	// Composed with callbacks that do nothing, so that every callback the
	// test calls is there, whichever of them c's trace has.
	tr := locktrace.Compose(c.trace(), &locktrace.Trace{
		Request: func(locktrace.RequestInfo) {}, Reply: func(locktrace.ReplyInfo) {}, Recovered: func(locktrace.NodeInfo) {},
	})
	create := func(err error) {
		tr.Request(locktrace.RequestInfo{Op: locktrace.OpCreate, Path: "/p/guid-lock-"})
		tr.Reply(locktrace.ReplyInfo{Op: locktrace.OpCreate, Path: "/p/guid-lock-", Err: err})
	}
	look := func() {
		for _, op := range []locktrace.Op{locktrace.OpSync, locktrace.OpChildren} {
			tr.Request(locktrace.RequestInfo{Op: op, Path: "/p"})
			tr.Reply(locktrace.ReplyInfo{Op: op, Path: "/p"})
		}
	}
	// Adopted in the same session.
	create(zk.ErrConnectionClosed)
	look()
	tr.Recovered(locktrace.NodeInfo{Path: "/p/guid-lock-0000000001"})
	c.after(nil)
	// None found: created again, and that create answered.
	create(zk.ErrConnectionClosed)
	look()
	create(nil)
	c.after(nil)
	// The session changed while the recipe looked.
	create(zk.ErrNoServer)
	c.after(fmt.Errorf("lock: %w: pinned 0x1, connection now has 0x2", lock.ErrSessionChanged))
	// Several nodes of the GUID.
	create(zk.ErrConnectionClosed)
	look()
	c.after(&lock.CreateError{GUID: "guid", Err: zk.ErrConnectionClosed, Recovery: lock.ErrAmbiguous})
	// The acquisition ended before the recovery decided.
	create(zk.ErrConnectionClosed)
	c.after(context.DeadlineExceeded)
	// No lost reply: refused by the server, or left by its caller.
	create(zk.ErrNodeExists)
	c.after(&lock.CreateError{GUID: "guid", Err: zk.ErrNodeExists})
	create(context.Canceled)
	c.after(context.Canceled)

	want := "| 5: 1 / 1 / 1 / 1 / 1 |"
	for _, row := range Table([]zh.Text{{En: "one", Zh: "一"}}, []*Summary{s}) {
		if strings.HasPrefix(row.En, "| lost create replies") {
			if !strings.HasSuffix(row.En, want) || !strings.HasPrefix(row.Zh, "| 丢失的 create 回复") {
				t.Errorf("got the row %q (in Chinese %q); want it to end %q: 5 lost replies, one of each outcome", row.En, row.Zh, want)
			}
			return
		}
	}
	t.Errorf("got a table without the lost creates' row; want one")
}

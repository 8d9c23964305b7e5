package locktest

import (
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// actor logs what one participant of a scene does, one line a step:
// "<name> <invoke|ok|fail|info> <what>".
type actor struct {
	name string
	t    zkserver.TB
}

func newActor(t zkserver.TB, name string) actor { return actor{name: name, t: t} }

func (a actor) log(kind, format string, args ...any) {
	a.t.Helper()
	if msg := fmt.Sprintf(format, args...); msg != "" {
		a.t.Logf("%s %s %s", a.name, kind, msg)
	} else {
		a.t.Logf("%s %s", a.name, kind)
	}
}

// Invoke logs a call the actor makes.
func (a actor) Invoke(format string, args ...any) { a.t.Helper(); a.log("invoke", format, args...) }

// Ok logs a call's success.
func (a actor) Ok(format string, args ...any) { a.t.Helper(); a.log("ok", format, args...) }

// Fail logs a call's failure.
func (a actor) Fail(format string, args ...any) { a.t.Helper(); a.log("fail", format, args...) }

// Info logs what the actor saw.
func (a actor) Info(format string, args ...any) { a.t.Helper(); a.log("info", format, args...) }

// createOps are the ops of a create, for a fault's Match.
var createOps = []int32{jute.OpCreate, jute.OpCreate2}

// listChildren is p's children, sorted, as c sees them.
func listChildren(t zkserver.TB, c *zkclient.Client, p string) []string {
	t.Helper()
	return c.SortedChildren(t, p)
}

// statOf is whether p exists and its stat, as c sees them.
func statOf(t zkserver.TB, c *zkclient.Client, p string) (bool, *zk.Stat) {
	t.Helper()
	return c.MustExists(t, p)
}

// deleteAs deletes p as client c, logged as actor a's step.
func deleteAs(t zkserver.TB, c *zkclient.Client, a actor, p string) {
	t.Helper()
	a.Invoke("delete %s", p)
	if err := c.Delete(p, -1); err != nil {
		a.Fail("%v", err)
		t.Fatalf("%s delete %s: %v", c.Name, p, err)
	}
	a.Ok("")
}

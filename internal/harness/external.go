package harness

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// E3 on the external backend: the user's server is not the harness's to
// stop, so what a scenario must leave as it found is the server's tree, and
// its own proxy, client and goroutines.

// ScopeLeavesNothingOnTheUsersServer runs a scenario on the user's server
// (a client proxy, a client, a parent with a persistent and an ephemeral
// node under it) in its own Scope, closes it, and checks that the parent
// is gone from the server, the proxy no longer accepts and no goroutine
// of it is left.
func ScopeLeavesNothingOnTheUsersServer(t *testing.T) {
	keep := goleak.IgnoreCurrent()
	sc := zkserver.NewScope("E3-scenario")
	p := zkserver.ClientProxy(sc, "E3-proxy", SharedServer(t))
	c := zkclient.Connect(sc, "E3", []string{p.Addr()})
	root := TestRoot(sc, c)
	for _, n := range []struct {
		name  string
		flags int32
	}{{"/persistent", 0}, {"/ephemeral", zk.FlagEphemeral}} {
		if _, err := c.Create(root+n.name, []byte("x"), n.flags, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", root+n.name, err)
		}
	}
	proxyAddr := p.Addr()
	t.Logf("scenario: proxy %s, client session 0x%x, parent %s with a persistent and an ephemeral node", proxyAddr, c.SessionID(), root)
	sc.Close()

	// Before O connects: its goroutines are not the scenario's.
	if conn, err := net.DialTimeout("tcp", proxyAddr, time.Second); err == nil {
		conn.Close()
		claims.Refuted(t, "E3", "the proxy's %s still accepts connections; want it closed", proxyAddr)
	}
	if err := goleak.Find(append(zkserver.LeakOptions(), keep)...); err != nil {
		claims.Refuted(t, "E3", "goroutines left: %v", err)
	}
	o := zkclient.Connect(t, "O", []string{SharedServer(t).Client}, zkclient.Quiet())
	exists, _, err := o.Exists(root)
	if err != nil {
		claims.NotShown(t, "E3", "O: exists %s: %v", root, err)
	}
	claims.Evidence(t, "after the scenario's Scope closed, its parent %s exists on the user's server: %v", root, exists)
	if exists {
		claims.Refuted(t, "E3", "%s is still on the user's server after the scenario's Scope closed; want it removed with everything below it", root)
	}
}

// InterruptLeavesNoParentOnTheUsersServer runs test in a child of this
// test binary that sends itself SIGINT right after it made the test's
// parent on the user's server (zkserver.AtTestRoot), and checks that the
// child's handler removed it: the user's ensemble is left as it was found.
func InterruptLeavesNoParentOnTheUsersServer(test string) func(t *testing.T) {
	return func(t *testing.T) {
		if os.Getenv(zkserver.EnvInterruptAt) != "" {
			t.Skip("skipped: this is the interrupted child")
		}
		root := rootPrefix + zkserver.SafeName(test)
		pid, code, out, err := runInterruptedChild(test, zkserver.AtTestRoot+":1")
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		o := zkclient.Connect(t, "O", []string{SharedServer(t).Client}, zkclient.Quiet())
		kids, _, err := o.Children("/")
		if err != nil {
			claims.NotShown(t, "E3", "O: children of /: %v", err)
		}
		left := slices.Contains(kids, strings.TrimPrefix(root, "/"))
		removed := lineWith(out, "zk19: removed the test parents made on")
		claims.Evidence(t, "SIGINT in child %d right after it made %s on the user's server: it exited %d and said %q; %s on the server afterwards: %v", pid, root, code, removed, root, left)
		switch {
		case code != 130 || !strings.Contains(out, "zk19: interrupt"):
			claims.BrokenCheck(t, "E3", "the child exited %d without its interrupt handler running; want 130 from the handler:\n%s", code, out)
		case left:
			claims.Refuted(t, "E3", "%s is still on the user's server after the interrupted child; want its handler to have removed it", root)
		case !strings.Contains(removed, root):
			claims.BrokenCheck(t, "E3", "the child's handler did not name %s among the parents it removed (%q): something else removed it, and the interrupt path was not shown", root, removed)
		}
	}
}

// lineWith returns the first line of out that contains s, or "".
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

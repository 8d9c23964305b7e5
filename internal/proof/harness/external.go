package harness

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// E3 on the external backend: the user's server is not the harness's to
// stop, so what a scenario must leave as it found is the server's tree, and
// its own proxy, client and goroutines.

// ScopeLeavesNothingOnTheUsersServer runs a scenario on the user's server
// (a client proxy, a client, a parent with a persistent and an ephemeral
// node under it) in its own Scope, closes it, and returns what is left for
// E3 to judge: whether the proxy still accepts, the goroutines left, and
// whether the parent is still on the server. Its goroutines carry the
// scenario's pprof label (zkserver.Own), so E3 runs beside other tests.
func ScopeLeavesNothingOnTheUsersServer(t *testing.T) UsersScopeLeft {
	var left UsersScopeLeft
	zkserver.Own(e3Scenario, func() {
		sc := zkserver.NewScope(e3Scenario)
		t.Cleanup(sc.Close) // a scenario that fails halfway leaves nothing either; Close is idempotent
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
		left.Proxy, left.Root = p.Addr(), root
		t.Logf("scenario: proxy %s, client session 0x%x, parent %s with a persistent and an ephemeral node", left.Proxy, c.SessionID(), root)
		sc.Close()
	})
	if conn, err := net.DialTimeout("tcp", left.Proxy, time.Second); err == nil {
		conn.Close()
		left.ProxyAccepts = true
	}
	left.Leak = zkserver.OwnGoroutines(e3Scenario, Within)
	o := zkclient.Connect(t, "O", []string{SharedServer(t).Client}, zkclient.Quiet())
	left.Exists, _, left.ExistsErr = o.Exists(left.Root)
	return left
}

// UsersScopeLeft is what a closed scenario left on the user's server and
// in this process: whether its proxy still accepts, the stacks of its
// goroutines still running ("" when none is), and whether its parent Root
// exists on the server (O's exists, with its error).
type UsersScopeLeft struct {
	Proxy, Root          string
	ProxyAccepts, Exists bool
	Leak                 string
	ExistsErr            error
}

// InterruptOnTheUsersServer runs test in a child of this test binary that
// sends itself SIGINT right after it made the test's parent on the user's
// server (zkserver.AtTestRoot), and returns what the child said and whether
// the parent is left on the server, for E3 to judge.
func InterruptOnTheUsersServer(t *testing.T, test string) UsersInterrupted {
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
	return UsersInterrupted{Root: root, Code: code, Out: out, Removed: removed, Left: left}
}

// UsersInterrupted is what InterruptOnTheUsersServer saw: the child's exit
// code and output, the line in which its handler named what it removed,
// and whether the test's parent Root is left on the user's server.
type UsersInterrupted struct {
	Root, Out, Removed string
	Code               int
	Left               bool
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

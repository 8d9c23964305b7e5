package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// curatorSource is the driver as seen from this package's directory.
const curatorSource = "../../../testdata/peers/CuratorLock.java"

// curator starts a Curator driver, logging how its classes were obtained
// and its start-up time.
func curator(t *testing.T, name string) *Driver {
	t.Helper()
	cfg, err := CuratorConfig(curatorSource, name)
	if errors.Is(err, ErrMissing) {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: driver %s", name, CuratorBuildNote(curatorSource))
	k := MustStart(t, cfg)
	t.Logf("%s: driver start-up %v (curator %s %s, %s)", name, k.Hello.Startup.Round(time.Millisecond), k.Hello.Version, k.Hello.LockObject, k.Hello.Runtime)
	return k
}

// curatorLockNode is how InterProcessMutex names a node: protected mode's
// "_c_", a UUID, "-", then "lock-" and the server's suffix.
func curatorLockNode(name string) bool {
	return strings.HasPrefix(name, "_c_") && len(name) == len("_c_")+36+len("-lock-")+10 && strings.Contains(name, "-lock-")
}

// TestCuratorDriverHandsTheLockOver drives Curator 5.4.0's InterProcessMutex
// from two sessions, as TestKazooDriverHandsTheLockOver drives kazoo's: A
// acquires, B waits on A's node (a getData with a watcher, on B's owner
// thread), A releases, B acquires.
func TestCuratorDriverHandsTheLockOver(t *testing.T) {
	ctx, a, b, sa, sb := twoClients(t, curator, "curator")
	const dir = "/curator-driver"

	ga, err := a.Acquire(ctx, dir, "A", 10*time.Second)
	if err != nil || !ga.Acquired || !ga.IsAcquired || ga.Owned == nil || !*ga.Owned || !curatorLockNode(ga.Node) {
		t.Fatalf("A acquire: got %+v, %v; want acquired, owned by its thread, on a node named _c_<uuid>-lock-<seq>", ga, err)
	}
	since := len(b.Events())
	call := b.AcquireAsync(dir, "B", 0)
	curatorWaits(t, ctx, b, since, dir+"/"+ga.Node)
	quick, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	if li, err := b.IsAcquired(quick, dir); err != nil || li.IsAcquired || !li.OwnerBusy {
		t.Fatalf("B is_acquired while waiting: got %+v, %v; want false, its owner thread busy in acquire", li, err)
	}
	ls := listing(t, ctx, a, dir)
	if len(ls) != 2 || ls[0].Owner == ls[1].Owner || (ls[0].Owner != sa.Session && ls[1].Owner != sa.Session) ||
		(ls[0].Owner != sb.Session && ls[1].Owner != sb.Session) {
		t.Fatalf("lock dir while B waits: got %+v; want one node of %s and one of %s", ls, sa.Session, sb.Session)
	}
	if r, err := a.Release(ctx, dir); err != nil || !r.Released || r.IsAcquired {
		t.Fatalf("A release: got %+v, %v; want released and not acquired", r, err)
	}
	gb, err := call.Wait(ctx)
	if err != nil || !gb.Acquired || gb.Owned == nil || !*gb.Owned {
		t.Fatalf("B acquire: got %+v, %v; want acquired and owned by its thread", gb, err)
	}
	if ls := listing(t, ctx, a, dir); len(ls) != 1 || ls[0].Name != gb.Node || ls[0].Owner != sb.Session {
		t.Fatalf("lock dir after the hand-over: got %+v; want only B's node %s owned by %s", ls, gb.Node, sb.Session)
	}
	closeWhileWaiting(t, ctx, a, dir)
}

// curatorWaits waits until k's recipe has read node with a watcher (its
// getData, traced as GetDataBuilderImpl-Foreground): it waits on it then.
func curatorWaits(t *testing.T, ctx context.Context, k *Driver, since int, node string) {
	t.Helper()
	waitWatch(t, ctx, k, "a getData with a watcher on "+node, since, node)
}

// TestCuratorDriverReportsTimeoutAndInterrupt has B give up on a lock A
// holds, once by acquire(time, unit), which returns false, and once by
// Thread.interrupt() of its owner thread, which raises
// InterruptedException; each time Curator deletes B's node.
func TestCuratorDriverReportsTimeoutAndInterrupt(t *testing.T) {
	ctx, a, b, sa, _ := twoClients(t, curator, "curator")
	const dir = "/curator-driver"
	ga, err := a.Acquire(ctx, dir, "A", 10*time.Second)
	if err != nil || !ga.Acquired {
		t.Fatalf("A acquire: got %+v, %v; want acquired", ga, err)
	}
	// B's node goes, but not always before B's acquire returns: an
	// interrupt ends the acquiring thread's wait for the reply to the
	// delete Curator sends (and its guaranteed delete retries in the
	// background), so the server may delete the node a moment later.
	onlyA := func(when string) {
		t.Helper()
		tb.WaitFor(t, 10*time.Second, "the lock dir to hold only A's node "+ga.Node+" after B's "+when, func() (bool, string) {
			c, err := a.Children(ctx, dir)
			if err != nil {
				return false, fmt.Sprintf("children %s: %v", dir, err)
			}
			ls := c.Children
			return len(ls) == 1 && ls[0].Name == ga.Node && ls[0].Owner == sa.Session, fmt.Sprintf("%+v", ls)
		})
	}
	const timeout = 300 * time.Millisecond
	r, err := b.Acquire(ctx, dir, "B", timeout)
	if err != nil || r.Acquired || r.IsAcquired || r.Elapsed() < timeout {
		t.Fatalf("B acquire with timeout %v: got %+v, %v; want false after at least %v", timeout, r, err, timeout)
	}
	onlyA("timeout")

	since := len(b.Events())
	call := b.AcquireAsync(dir, "B", 0)
	curatorWaits(t, ctx, b, since, dir+"/"+ga.Node)
	if err := b.Cancel(ctx, dir); err != nil {
		t.Fatalf("B cancel: %v", err)
	}
	var rerr *RecipeError
	if r, err := call.Wait(ctx); !errors.As(err, &rerr) || rerr.Class != "InterruptedException" {
		t.Fatalf("B acquire after the interrupt: got %+v, %v; want InterruptedException", r, err)
	}
	onlyA("interrupt")
	// The owner thread serves the next request: the interrupt did not
	// outlive the acquire it ended.
	if li, err := b.IsAcquired(ctx, dir); err != nil || li.IsAcquired || li.Owned == nil || *li.Owned {
		t.Fatalf("B is_acquired after the interrupt: got %+v, %v; want not acquired, not owned", li, err)
	}
}

// TestProxyReadsTheJavaClientsFrames: the proxy every client goes through
// must frame the Java client's bytes as it frames go-zookeeper's and
// kazoo's: skip its handshake (a ConnectRequest with the readOnly flag),
// then read each request's header and path. The proof is that a LoseReply
// aimed by opcode and path hits Curator's calls: its protected create is a
// create2 (ZooKeeper.create with a Stat), its wait a getData with a watcher
// on the predecessor. Each lost reply costs Curator its connection, and the
// recipe still ends up holding.
func TestProxyReadsTheJavaClientsFrames(t *testing.T) {
	a, b := curator(t, "curator-A"), curator(t, "curator-B")
	srv := zkserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pa, pb := zkserver.ClientProxy(t, "curator-A", srv), zkserver.ClientProxy(t, "curator-B", srv)
	connect(t, ctx, a, pa)
	connect(t, ctx, b, pb)
	const dir = "/curator-frames"
	// The dir exists first: Curator's first create under a missing parent
	// fails with NoNode, and that reply would spend the fault.
	d := zkclient.Connect(t, "D", []string{srv.Client})
	if _, err := d.Create(dir, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("D create %s: %v", dir, err)
	}

	create := pa.LoseReply(faultproxy.Match{Ops: []int32{jute.OpCreate, jute.OpCreate2}, Under: dir})
	ga, err := a.Acquire(ctx, dir, "A", 30*time.Second)
	res := create.Result()
	t.Logf("A's create: %+v", res)
	if !res.Dropped || res.Op != jute.OpCreate2 || !strings.HasPrefix(res.Path, dir+"/_c_") {
		t.Fatalf("the reply to A's create: got %+v; want a create2 of %s/_c_… read and its reply dropped", res, dir)
	}
	if err != nil || !ga.Acquired || res.Path == "" || !strings.HasPrefix(dir+"/"+ga.Node, res.Path) {
		t.Fatalf("A acquire after the lost create reply: got %+v, %v; want held on the node its create made (%s…)", ga, err, res.Path)
	}

	get := pb.LoseReply(faultproxy.Match{Ops: []int32{jute.OpGetData}, Path: dir + "/" + ga.Node})
	call := b.AcquireAsync(dir, "B", 0)
	select {
	case <-get.Done():
	case <-ctx.Done():
		t.Fatalf("B's getData on A's node: no reply lost: %+v", get.Result())
	}
	if res := get.Result(); !res.Dropped || res.Op != jute.OpGetData {
		t.Fatalf("the reply to B's getData: got %+v; want a getData of %s/%s read and its reply dropped", res, dir, ga.Node)
	}
	since := len(b.Events())
	curatorWaits(t, ctx, b, since, dir+"/"+ga.Node)
	if _, err := a.Release(ctx, dir); err != nil {
		t.Fatalf("A release: %v", err)
	}
	if gb, err := call.Wait(ctx); err != nil || !gb.Acquired {
		t.Fatalf("B acquire: got %+v, %v; want acquired once A released", gb, err)
	}
	if s := pa.Stats(); s.DroppedReplies != 1 || s.Accepted < 2 {
		t.Fatalf("A's proxy: got %+v; want one reply dropped and a second connection after it", s)
	}
}

// TestCuratorMissingSaysHowToGetIt: where Debian's Curator jars are not
// installed, the driver cannot be built, and the error a test skips with
// names the jars and the packages.
func TestCuratorMissingSaysHowToGetIt(t *testing.T) {
	t.Setenv(envCuratorClasspath, "")
	was := javaLib
	javaLib = t.TempDir()
	t.Cleanup(func() { javaLib = was })
	_, err := CuratorConfig(t.TempDir()+"/CuratorLock.java", "curator-X")
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "curator-recipes.jar") || !strings.Contains(err.Error(), "libcurator-recipes-java") {
		t.Fatalf("got %v; want ErrMissing naming curator-recipes.jar and libcurator-recipes-java", err)
	}
}

// TestCuratorDriverMapsTheClassArchiveItsFirstDriverTaught: where there is
// no class archive, the first driver writes the list of classes it loads
// and the second gets neither that flag nor an archive; once the first has
// exited, the list is the archive, and the next driver maps it (its
// /proc/<pid>/maps names the file) and says hello as before.
func TestCuratorDriverMapsTheClassArchiveItsFirstDriverTaught(t *testing.T) {
	shared := buildOf(curatorSource) // its classes; its own archive is left alone
	if errors.Is(shared.err, ErrMissing) {
		t.Skipf("skipped: %v", shared.err)
	} else if shared.err != nil {
		t.Fatal(shared.err)
	}
	b := &curatorBuild{jar: shared.jar, classpath: shared.classpath, java: shared.java, archive: curatorArchive{dir: t.TempDir()}}

	first, err := b.config("curator-first")
	if err != nil {
		t.Fatal(err)
	}
	if !hasFlag(first.Command, "-XX:DumpLoadedClassList=") || first.Exited == nil {
		t.Fatalf("first driver: got %q (Exited set: %t); want -XX:DumpLoadedClassList and an Exited func", first.Command, first.Exited != nil)
	}
	second, _ := b.config("curator-second")
	if hasFlag(second.Command, "-XX:DumpLoadedClassList=") || hasFlag(second.Command, "-XX:SharedArchiveFile=") || second.Exited != nil {
		t.Fatalf("second driver while the first trains: got %q; want neither the class list nor an archive", second.Command)
	}
	k := MustStart(t, first)
	k.Close()
	t.Logf("after the first driver exited: %s", b.archive.note)

	third, _ := b.config("curator-third")
	if !hasFlag(third.Command, "-XX:SharedArchiveFile="+b.archive.path) {
		t.Fatalf("third driver: got %q (%s); want -XX:SharedArchiveFile=%s", third.Command, b.archive.note, b.archive.path)
	}
	k = MustStart(t, third)
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", k.Hello.PID))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(maps), b.archive.path) {
		t.Fatalf("third driver (pid %d): got maps without %s; want the archive mapped", k.Hello.PID, b.archive.path)
	}
	t.Logf("curator-third maps %s; start-up %v", b.archive.path, k.Hello.Startup.Round(time.Millisecond))
}

func hasFlag(command []string, prefix string) bool {
	for _, a := range command {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

package harness

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zklinks"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Within bounds every wait on an event of a scenario that has no bound of
// its own (a claim's timing constant).
const Within = 5 * time.Second

// ExampleScope opens the Scope of the Example that calls it, named after
// it; everything the Example opens is registered with it. The Example
// defers EndExample right after, so its body reads as the diagram's steps.
// The run's first call starts, beside the Examples, what a later Example
// needs that takes long to start (Ahead); that Example gets the Scope the
// start ran in.
func ExampleScope() *zkserver.Scope { return exampleScope(callerName(1)) }

// failedPrefix starts the line EndExample prints for a failure.
const failedPrefix = "FAILED: "

// EndExample, deferred by an Example, prints a failure inside it (the
// Scope's Fatalf panics) to the Example's output, so the Example fails with
// the reason and the test binary goes on with the next test; then it closes
// everything the Example opened; a cleanup that failed (Errorf) is printed
// the same way, after the Example's own lines, so the Example fails.
func EndExample(sc *zkserver.Scope) {
	if r := recover(); r != nil {
		fmt.Printf("%s%v\n", failedPrefix, r)
	}
	sc.Close()
	for _, e := range sc.Errors() {
		fmt.Printf("%s%s: %s\n", failedPrefix, sc.Name(), e)
	}
}

// SharedServer returns the standalone server TestMain started.
func SharedServer(t zkserver.TB) *zkserver.Server {
	t.Helper()
	if shared == nil {
		zkserver.MustResolve(t)
		t.Fatalf("no shared server: %v", NoServer)
	}
	return shared
}

// TestRoot creates a fresh persistent /zk19-<test name> node and removes it
// with everything below it when the test ends, so a shared server is left
// as it was found. An existing node of that name is not the test's: it
// fails the test and is left alone. A cleanup that cannot remove it fails
// the test (or the Example, through EndExample): a proof that leaves its
// parent behind does not pass.
func TestRoot(t zkserver.TB, c *zkclient.Client) string {
	t.Helper()
	root := rootPrefix + zkserver.SafeName(t.Name())
	if _, err := c.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", root, err)
	}
	madeRoots.Store(root, true)
	if zkserver.InterruptPoint(zkserver.AtTestRoot) {
		// E3's interrupted child: the handler removes root and ends the
		// process; the test must not remove it first.
		err := tb.WaitUntil(interruptEnds, "the interrupt handler to remove "+root, func() (bool, string) {
			_, ok := madeRoots.Load(root)
			return !ok, "still among the parents to remove"
		})
		t.Fatalf("the interrupt after making %s did not end the process (%v)", root, err)
	}
	addr := c.Server()
	t.Cleanup(func() {
		if err := DeleteTree(c.Conn, root); err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Errorf("cleanup: got %v deleting %s on %s; want it and everything below it deleted (the test leaves its parent behind)", err, root, addr)
			return
		}
		madeRoots.Delete(root)
	})
	return root
}

// interruptEnds bounds how long an interrupted process takes to end.
const interruptEnds = 30 * time.Second

// rootPrefix starts the name of every parent TestRoot makes: the suite
// deletes nothing whose path does not start with it.
const rootPrefix = "/zk19-"

// madeRoots holds the parents TestRoot made and has not removed yet, for
// an interrupted run to remove (removeRoots).
var madeRoots sync.Map

// removeRoots removes, on the external backend's servers, every parent a
// test made and did not remove: an interrupted run (TestMain's signal
// handler) leaves the user's ensemble as it found it. It returns what it
// removed and what it could not remove.
func removeRoots(servers []string) (removed, left []string) {
	var roots []string
	madeRoots.Range(func(k, _ any) bool { roots = append(roots, k.(string)); return true })
	if len(roots) == 0 {
		return nil, nil
	}
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discardLog{}))
	if err != nil {
		return nil, roots
	}
	defer conn.Close()
	for _, root := range roots {
		err := tb.WaitUntil(Within, "remove "+root, func() (bool, string) {
			err := DeleteTree(conn, root) // a test still running may add a node meanwhile
			return err == nil || errors.Is(err, zk.ErrNoNode), fmt.Sprint(err)
		})
		if err != nil {
			left = append(left, root)
			continue
		}
		madeRoots.Delete(root)
		removed = append(removed, root)
	}
	return removed, left
}

type discardLog struct{}

func (discardLog) Printf(string, ...any) {}

// DeleteTree removes path and its descendants; it refuses a path outside
// the parents TestRoot makes.
func DeleteTree(c *zk.Conn, path string) error {
	if !strings.HasPrefix(path, rootPrefix) {
		return fmt.Errorf("delete %s: refused, the suite deletes only below its own parents (%s*)", path, rootPrefix)
	}
	return removeTree(c, path)
}

// removeTree deletes path and everything below it, whatever its name:
// call deleteTree on a server that may be a user's, and removeTree only on
// servers the suite owns (the pool's). A path that is gone when listed is
// ErrNoNode; one that goes while it is deleted is not an error.
func removeTree(c *zk.Conn, path string) error {
	kids, _, err := c.Children(path)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := removeTree(c, path+"/"+k); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	err = c.Delete(path, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// WatchTable parses the server's wchp (path -> sessions) or wchc (session
// -> paths) into key -> sorted values, keeping only paths under root.
func WatchTable(t zkserver.TB, s *zkserver.Server, word, root string) map[string][]string {
	t.Helper()
	return ParseWatchTable(s.Word(t, word), word, root)
}

// ParseWatchTable is watchTable on a wchp or wchc answer already read.
func ParseWatchTable(answer, word, root string) map[string][]string {
	out := map[string][]string{}
	key := ""
	sc := bufio.NewScanner(strings.NewReader(answer))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, "\t") {
			key = strings.TrimSpace(line)
			continue
		}
		v := strings.TrimSpace(line)
		p := key
		if word == "wchc" {
			p = v
		}
		if strings.HasPrefix(p, root+"/") {
			out[key] = append(out[key], v)
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// Cluster is an ensemble with a fault proxy on every server-to-server link,
// and the verbs the scenarios use: who leads, who follows, hold and release
// the leader's stream to one follower, partition, heal.
type Cluster struct {
	t zkserver.TB
	*zkserver.Ensemble
	Links *zklinks.Links
}

// StartCluster starts n servers with link proxies and waits for a leader.
// Every fault set through the cluster is undone at cleanup.
func StartCluster(t zkserver.TB, n int, opts ...zkserver.Option) *Cluster {
	t.Helper()
	e, links := zklinks.StartLinkedEnsemble(t, n, opts...)
	return newCluster(t, e, links)
}

// newCluster is the fixture over servers that run: every fault set through
// it is undone at t's cleanup, and it waits for a leader.
func newCluster(t zkserver.TB, e *zkserver.Ensemble, links *zklinks.Links) *Cluster {
	t.Helper()
	c := &Cluster{t: t, Ensemble: e, Links: links}
	t.Cleanup(links.Heal)
	leader := c.Leader()
	t.Logf("roles: leader %s, followers %v", leader.Label, Labels(c.Followers()))
	return c
}

// Leader returns the server that reports leading now, waiting for one.
func (c *Cluster) Leader() *zkserver.Server {
	c.t.Helper()
	l, err := c.Ensemble.Leader(Within)
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	return l
}

// HoldStream makes follower f lag: whatever the leader sends it is kept by
// the link proxy until ReleaseStream (or the cleanup's heal).
func (c *Cluster) HoldStream(f *zkserver.Server) {
	c.t.Helper()
	c.Links.Hold(c.Leader().ID, f.ID)
}

// ReleaseStream delivers, in order, what the leader sent f while held.
func (c *Cluster) ReleaseStream(f *zkserver.Server) {
	c.t.Helper()
	c.Links.Release(c.Leader().ID, f.ID)
}

// StreamProxy is the proxy follower f dials to reach the leader: the
// leader's stream to f flows Down, f's forwarded requests flow Up.
func (c *Cluster) StreamProxy(f *zkserver.Server) *faultproxy.Proxy {
	return c.Links.Proxy(zkserver.QuorumPort, f.ID, c.Leader().ID)
}

// HeldDown waits until p holds bytes in its Down direction and returns how
// many, or 0 if it holds none within the bound. A proxy counts bytes when it
// has read them, which can be after the sender's write was acknowledged
// elsewhere, so a count read at once can be short. Held bytes only
// accumulate and leave all at once on release, so a positive count read
// before the caller releases shows the hold in force since it began.
func HeldDown(p *faultproxy.Proxy) int64 {
	var n atomic.Int64 // written by the wait's goroutine
	_ = tb.WaitUntil(Within, "the proxy to hold bytes", func() (bool, string) {
		n.Store(p.Stats().DownHeld)
		return n.Load() > 0, fmt.Sprintf("%d bytes held", n.Load())
	})
	return n.Load()
}

func Labels(ss []*zkserver.Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Label
	}
	return out
}

// IDs returns the servers' ids, as the link proxies name them.
func IDs(ss ...*zkserver.Server) []int {
	out := make([]int, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// RequireHistory asserts porcupine's verdict on a register history and, when
// it is the wanted one, marks it as the claim's evidence.
func RequireHistory(t *testing.T, id string, what zh.Text, rec *history.Recorder, linearizable bool) {
	t.Helper()
	if linearizable {
		history.RequireLinearizable(t, rec, id)
	} else {
		history.RequireNotLinearizable(t, rec, id)
	}
	if !t.Failed() {
		claims.Evidence(t, "porcupine: %s is linearizable: %v (%d operations)", what, linearizable, len(rec.Operations()))
	}
}

// Mntr reads the numeric lines of a server's mntr answer.
func Mntr(t zkserver.TB, s *zkserver.Server) map[string]int64 {
	t.Helper()
	return parseMntr(s.Word(t, "mntr"))
}

// parseMntr reads the numeric lines of an mntr answer.
func parseMntr(answer string) map[string]int64 {
	m := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(answer))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

// Returned is closed when a call run in the background has returned
// (tb.Receive waits for it).
type Returned chan struct{}

// Finished reports, without waiting, whether the call has returned.
func (r Returned) Finished() bool {
	select {
	case <-r:
		return true
	default:
		return false
	}
}

// sideBySide counts the tests that called parallel and have not ended. A
// top-level test runs its body up to t.Parallel while the sequential tests
// run, one after another, so every parallel test of the run is counted
// before the first of them is released: E4 waits for the count to reach
// zero to see every ensemble the run's Tests started.
var sideBySide sync.WaitGroup

// Parallel runs t beside the other parallel tests once every sequential
// test has ended (testing runs those first, alone). It is for a test that
// mostly waits (on an expiry, an election, a window, a peer's scene) on
// servers of its own, or on the shared server below its own parent
// (TestRoot) without reading anything server-wide there (mntr, cons, an
// unfiltered wchc or wchp) and without asserting how long something took:
// those stay sequential. How many run at once is -test.parallel
// (defaultParallel unless given).
func Parallel(t *testing.T) {
	t.Helper()
	parallelTests.Store(t.Name(), true)
	sideBySide.Add(1)
	t.Cleanup(sideBySide.Done)
	t.Parallel()
}

// parallelTests holds the names of the tests that called parallel.
var parallelTests sync.Map

// InParallel reports whether t runs beside other tests (called parallel):
// its subtests may then run beside each other too.
func InParallel(t *testing.T) bool { _, ok := parallelTests.Load(t.Name()); return ok }

// defaultParallel is how many parallel tests run at once when -parallel
// is not given (go test's default is GOMAXPROCS, 2 on the smallest machine
// the suite runs on). The parallel tests spend most of their time waiting
// on servers, not computing, and most of them borrow their servers from
// the pool (pool.go) instead of starting JVMs. On 2 cores, 8 took the
// process backend's root package from 154 s to 122 s. The container
// Backend is bound by the CPU (Docker's work comes on top of the JVMs'):
// 8 left its root package where it was, so it keeps 4. (Measured again
// once the binaries of a run shared one host-network probe: 8 took the
// root package, run alone, from 152 s to 121 s, but in go test ./... Y2's
// ZOOKEEPER-1675 window did not open once in the first run: "old leader
// reported … not currently serving requests before B's sync".)
func defaultParallel(k zkserver.Kind) int {
	if k == zkserver.Container {
		return 4
	}
	return 8
}

// setDefaultParallel sets -test.parallel to defaultParallel(k) unless the
// command line gave it.
func setDefaultParallel(k zkserver.Kind) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(defaultParallel(k)))
	}
}

// MedianMicros is the median of d in microseconds, 0 for no durations.
func MedianMicros(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}

// callerName is the name, without its package, of the function skip
// frames above the caller of callerName: the Example that opens a Scope.
func callerName(skip int) string {
	pc, _, _, ok := runtime.Caller(skip + 1)
	if !ok {
		return "Example"
	}
	fn := runtime.FuncForPC(pc).Name()
	return fn[strings.LastIndex(fn, ".")+1:]
}

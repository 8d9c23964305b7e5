package zk19_test

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

// mainScope owns what TestMain starts: the shared standalone server that
// Examples and read-only claims use.
var (
	mainScope *zkserver.Scope
	shared    *zkserver.Server
	backend   zkserver.Backend
	version   zkserver.Srvr
	noServer  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	zkserver.SetShort(testing.Short())
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	// Cleanup comes before anything is created: an interrupt at any point,
	// the backend's host-network probe included, stops what this binary
	// started.
	mainScope = zkserver.NewScope("TestMain")
	stopInterrupts := handleInterrupts()
	b, err := zkserver.Resolve()
	if err != nil {
		defer stopInterrupts()
		noServer = err
		if !testing.Short() {
			fmt.Fprintf(os.Stderr, "zk19: %v\n", err)
			return 1
		}
		fmt.Println("# zk19: no ZooKeeper server (-short): server tests and examples skip; run scripts/setup to get one")
		skipExamples("^Example")
		return m.Run()
	}
	backend = b
	reapEarlierRuns()
	defer func() { code = leftBehind(code, stopInterrupts) }()
	if err := startShared(); err != nil {
		fmt.Fprintf(os.Stderr, "zk19: cannot start the shared server: %v\n", err)
		return 1
	}
	if !b.CanInjectFaults() {
		skipExternalExamples()
	}
	if err := printHeader(); err != nil {
		fmt.Fprintf(os.Stderr, "zk19: record header: %v\n", err)
		return 1
	}
	return m.Run()
}

// handleInterrupts stops every server, container and server dir of this
// run on SIGINT or SIGTERM, then exits 130. It returns the function that
// stops handling them.
func handleInterrupts() (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			// Said before the work: a test that fails because its server
			// was stopped may end the binary before this goroutine prints.
			fmt.Fprintf(os.Stderr, "zk19: %v: stopping every server, container and server dir of this run\n", s)
			if b, err := zkserver.Resolve(); err == nil && b.Kind == zkserver.External {
				left := removeRoots(b.Servers)
				fmt.Fprintf(os.Stderr, "zk19: removed the test parents made on %v; left: %v\n", b.Servers, left)
			}
			fmt.Fprintf(os.Stderr, "zk19: stopped %v\n", zkserver.KillAll())
			mainScope.Close()
			os.Exit(130)
		case <-done:
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

// reapEarlierRuns does Ryuk's job: it removes what earlier runs left when
// they died without cleaning up.
func reapEarlierRuns() {
	line, err := zkserver.Reap()
	if line != "" {
		fmt.Println(line)
	}
	if err != nil {
		fmt.Printf("# zk19: reaping what earlier runs left: %v\n", err)
	}
}

// leftBehind closes what TestMain opened, stops handling interrupts, and
// turns the suite's exit code into a failure when a server or a goroutine
// outlived it (claim E3).
func leftBehind(code int, stopInterrupts func()) int {
	mainScope.Close()
	n := zkserver.Live()
	stopInterrupts()
	if n > 0 {
		fmt.Fprintf(os.Stderr, "E3 violated: %d servers still run after the suite: %v\n", n, zkserver.KillAll())
		return 1
	}
	if code == 0 {
		if err := goleak.Find(zkserver.LeakOptions()...); err != nil {
			fmt.Fprintf(os.Stderr, "E3 violated: goroutines leaked: %v\n", err)
			return 1
		}
	}
	return code
}

// skipExamples adds the Examples skip matches to -test.skip: an Example
// cannot skip itself when what it needs is missing.
func skipExamples(skip string) {
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		skip = f.Value.String() + "|" + skip
	}
	_ = flag.Set("test.skip", skip)
}

// Examples that need more of the external backend than a client connection
// and a client proxy in front of its server.
var (
	examplesOwnServers = []string{"Example_staleReadFromLaggingFollower", "Example_syncInZK1675Window"} // an ensemble with link proxies
	examplesExpiry     = []string{"Example_x2ExpiryIsNotRejection"}                                     // a session that expires behind a client proxy
)

// skipExternalExamples leaves out of the run, and says why, the Examples
// the external server cannot serve; every other Example runs.
func skipExternalExamples() {
	skip := examplesOwnServers
	fmt.Printf("# zk19: external backend: %s skipped: they need servers of their own and proxies on server-to-server links\n", strings.Join(examplesOwnServers, ", "))
	if why := expiryDoesNotFit(shared); why != "" {
		skip = append(skip, examplesExpiry...)
		fmt.Printf("# zk19: external backend: %s skipped: %s\n", strings.Join(examplesExpiry, ", "), why)
	}
	skipExamples("^(" + strings.Join(skip, "|") + ")$")
}

func startShared() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	sc, err := sharedServerScope()
	if err != nil {
		return err
	}
	shared = zkserver.Start(sc, zkserver.WithLabel("shared"), zkserver.AllowExternal())
	version, err = shared.Srvr()
	var na *zkserver.NotAllowedError
	if errors.As(err, &na) {
		// Only an external server refuses srvr; the record says so, and
		// the claims that need the version skip.
		version, versionErr = zkserver.Srvr{Version: "unknown", Full: na.Error()}, na
		return nil
	}
	return err
}

// versionErr is why the shared server's version is unknown.
var versionErr error

// printedHeader is the header exactly as TestMain printed it at the top of
// the record; E4 checks this text, not a copy made again later.
var printedHeader string

// recordHeader is the first thing the record says (claim E4): the backend,
// the server version, and the ensemble sizes the claims need, read from the
// claim index.
func recordHeader() (string, error) {
	ix, err := loadIndex()
	if err != nil {
		return "", err
	}
	bySize := map[string][]string{}
	for _, c := range ix.Claims {
		size := "standalone"
		for _, n := range c.Needs {
			if k, ok := strings.CutPrefix(n, "ensemble-"); ok {
				size = k + " servers"
			}
		}
		bySize[size] = append(bySize[size], c.ID)
	}
	var sizes []string
	for _, size := range slices.Sorted(maps.Keys(bySize)) {
		sizes = append(sizes, fmt.Sprintf("%s (%s)", size, strings.Join(bySize[size], " ")))
	}
	return fmt.Sprintf(`# zk19 verification record
# backend:   %s
# chosen:    %s
# server:    ZooKeeper %s (srvr: %q)
# ensembles: %s
# started:   %s`, backend.Describe(), backend.Why, version.Version, version.Full, strings.Join(sizes, "; "), time.Now().UTC().Format(time.RFC3339)), nil
}

func printHeader() error {
	h, err := recordHeader()
	if err != nil {
		return err
	}
	printedHeader = h
	fmt.Println(h)
	return nil
}

// TestE4_RecordStartsWithServerVersionBackendAndSize checks the header that
// TestMain printed before any claim ran (claim E4, section §7): it names the
// backend, the version the shared server reports now through srvr, and
// every ensemble size a claim of the index needs. cmd/evidence checks the
// same on the record as a reader gets it: the header comes before the first
// test.
func TestE4_RecordStartsWithServerVersionBackendAndSize(t *testing.T) {
	s := sharedServer(t)
	claim(t, "E4")
	if versionErr != nil {
		t.Skipf("skipped: the header names the server's version, read with srvr; %v", versionErr)
	}
	st, err := s.Srvr()
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	if !regexp.MustCompile(`^3\.\d+\.\d+$`).MatchString(st.Version) {
		t.Errorf("E4 violated: got server version %q; want 3.x.y", st.Version)
	}
	ix, err := loadIndex()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"# zk19 verification record\n", "# backend:   " + string(backend.Kind), "ZooKeeper " + st.Version + " ", "standalone ("}
	for _, c := range ix.Claims {
		for _, n := range c.Needs {
			if k, ok := strings.CutPrefix(n, "ensemble-"); ok && !slices.Contains(want, k+" servers (") {
				want = append(want, k+" servers (")
			}
		}
	}
	for _, w := range want {
		if !strings.Contains(printedHeader, w) {
			t.Errorf("E4 violated: got a printed header without %q; want it:\n%s", w, printedHeader)
		}
	}
	if !strings.HasPrefix(printedHeader, "# zk19 verification record") {
		t.Errorf("E4 violated: got a header starting %q; want the record's title first", printedHeader)
	}
	evidence(t, "the record began with: %s", strings.ReplaceAll(printedHeader, "\n", " | "))
}

// TestE1_ServersListenOnlyOnLoopback: every socket of the experiment is on
// 127.0.0.1 with a port chosen at run time (claim E1, section "三个本机场景的证
// 据"): the shared server, a 3-server ensemble with its election and quorum
// listeners, the link proxies between its servers, a client proxy, and the
// clients. It is shown from outside each server (the sockets its process
// has, read from /proc), from the server (conf reports the client port the
// harness chose), and for this test process, which runs every proxy and
// client: each of its TCP sockets, listening or connected, has 127.0.0.1 at
// both ends.
func TestE1_ServersListenOnlyOnLoopback(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "E1")
	s := sharedServer(t)
	conf := zkserver.Fields(s.Word(t, "conf"))
	if _, port, _ := net.SplitHostPort(s.Client); port != conf["clientPort"] {
		t.Errorf("E1 violated: got the harness connecting to %s and the server saying clientPort=%s; want the same port", s.Client, conf["clientPort"])
	}
	c := startCluster(t, 3)
	p := zkserver.ClientProxy(t, "E1-proxy", s)
	zkclient.Connect(t, "E1", []string{p.Addr()})
	for _, srv := range append([]*zkserver.Server{s}, c.Servers...) {
		ls, err := srv.Listeners()
		if err != nil {
			t.Fatalf("listeners of %s: %v", srv.Label, err)
		}
		t.Logf("%s listens on %v", srv.Label, ls)
		want := []string{srv.Client}
		if srv != s {
			want = append(want, srv.Election)
		}
		for _, w := range want {
			if !slices.Contains(ls, w) {
				t.Errorf("E1 check broken: got %s listening on %v; want %s among them", srv.Label, ls, w)
			}
		}
		for _, l := range ls {
			requireLoopback(t, srv.Label+" listens on", l)
		}
	}
	own, err := zkserver.Sockets(os.Getpid())
	if err != nil {
		t.Fatalf("sockets of this process: %v", err)
	}
	listening := 0
	for _, k := range own {
		requireLoopback(t, "this process's socket at", k.Local)
		if k.Listening {
			listening++
			continue
		}
		requireLoopback(t, "this process's socket to", k.Remote)
	}
	evidence(t, "%d servers and this process (%d listening proxies, %d TCP sockets in all): every address is 127.0.0.1 with a port drawn at run time", len(c.Servers)+1, listening, len(own))
}

// requireLoopback fails E1 unless addr is 127.0.0.1 with a port the harness
// drew (not a well-known one, nor ZooKeeper's defaults).
func requireLoopback(t *testing.T, what, addr string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	switch {
	case err != nil || perr != nil:
		t.Errorf("E1 violated: %s %q: got an address that does not parse (%v %v); want 127.0.0.1:port", what, addr, err, perr)
	case host != "127.0.0.1":
		t.Errorf("E1 violated: %s %s; got host %s, want 127.0.0.1", what, addr, host)
	case n < 1024 || slices.Contains([]int{2181, 2888, 3888, 8080}, n):
		t.Errorf("E1 violated: %s %s; got port %d, want one drawn at run time", what, addr, n)
	}
}

// TestE3_ScenarioLeavesNothingBehind: whatever a scenario starts is gone
// when it ends, and also when the run is interrupted (claim E3, section §7).
//   - A scenario runs in its own Scope and is checked right after it closes:
//     the server process (or container), the proxy's listener, the client's
//     goroutines and the temporary directory are gone. TestMain repeats the
//     process and goroutine checks for the whole suite.
//   - This test binary is run again as a child that interrupts itself
//     (SIGINT, through zkserver.EnvInterruptAt) at three points where a
//     server is being made: the shared server starting, a test's own server
//     starting, and an ensemble started but not ready. Once the child has
//     exited, no container, server process or server dir of it is left.
func TestE3_ScenarioLeavesNothingBehind(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "E3")
	t.Run("a scenario leaves nothing behind when its scope closes", scopeLeavesNothing)
	t.Run("an interrupted run leaves nothing behind", interruptLeavesNothing)
}

func scopeLeavesNothing(t *testing.T) {
	keep := goleak.IgnoreCurrent()
	live := zkserver.Live()
	sc := zkserver.NewScope("E3-scenario")
	s := zkserver.Start(sc)
	pid, err := s.PID()
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	dir := sc.TempDir()
	p := zkserver.ClientProxy(sc, "E3-proxy", s)
	c := zkclient.Connect(sc, "E3", []string{p.Addr()})
	if _, err := c.Create("/e3", []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}
	proxyAddr, clientAddr := p.Addr(), s.Client
	t.Logf("scenario: server pid %d on %s, proxy %s, client session 0x%x, temp dir %s", pid, clientAddr, proxyAddr, c.SessionID(), dir)
	sc.Close()

	if n := zkserver.Live(); n != live {
		t.Errorf("E3 violated: %d servers tracked as running after the scenario; want %d", n, live)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("E3 violated: server process %d still exists (kill -0: %v)", pid, err)
	}
	for _, a := range []string{proxyAddr, clientAddr} {
		if conn, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			conn.Close()
			t.Errorf("E3 violated: %s still accepts connections", a)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("E3 violated: temp dir %s still exists (%v)", dir, err)
	}
	if err := goleak.Find(append(zkserver.LeakOptions(), keep)...); err != nil {
		t.Errorf("E3 violated: goroutines left: %v", err)
	}
	t.Logf("after close: process gone, ports closed, temp dir removed, no new goroutines")
}

// interruptLeavesNothing runs TestY8 in a child test binary that sends
// itself SIGINT at each point, and checks what the child left.
func interruptLeavesNothing(t *testing.T) {
	if os.Getenv(zkserver.EnvInterruptAt) != "" {
		t.Skip("skipped: this is the interrupted child")
	}
	made := "process-start"
	if backend.Kind == zkserver.Container {
		made = "container-create"
	}
	// The n-th time a point is reached: the shared server of TestMain is
	// the first server made; TestY8's ensemble is the first ensemble.
	for _, point := range []string{made + ":1", made + ":2", "ensemble-start:1"} {
		pid, code, out := runInterruptedChild(t, "TestY8_BarrierIsNoSnapshotAcrossPaths", point)
		left, err := zkserver.Leftovers(pid)
		if err != nil {
			t.Fatalf("leftovers of child %d: %v", pid, err)
		}
		evidence(t, "SIGINT at %s: child %d exited %d; left behind: %d things %v", point, pid, code, len(left), left)
		if code != 130 && code != 1 {
			t.Errorf("E3 check broken: interrupted at %s the child exited %d; want 130 (interrupted) or 1 (failed first):\n%s", point, code, out)
		}
		if !strings.Contains(out, "zk19: interrupt") {
			t.Errorf("E3 check broken: interrupted at %s the child never saw the interrupt; want its handler to run:\n%s", point, out)
		}
		if len(left) > 0 {
			t.Errorf("E3 violated: interrupted at %s the child left %v; want nothing", point, left)
		}
	}
}

// runInterruptedChild runs one test of this binary in a child that
// interrupts itself at point, and returns its pid, exit code and output.
func runInterruptedChild(t *testing.T, test, point string) (int, int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), zkserver.EnvInterruptAt+"="+point)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("child at %s: %v", point, err)
	}
	return cmd.Process.Pid, cmd.ProcessState.ExitCode(), out.String()
}

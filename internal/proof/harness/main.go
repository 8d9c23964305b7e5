package harness

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/server/reaper"
	"github.com/zk19/zk19/internal/server/sqldb"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// mainScope owns what TestMain starts: the shared standalone server that
// Examples and read-only claims use.
var (
	mainScope *zkserver.Scope
	shared    *zkserver.Server
	Backend   zkserver.Backend
	Version   zkserver.Srvr
	NoServer  error
)

// Main is the root's TestMain: it resolves the backend, registers cleanup
// and the interrupt handler before anything starts, reaps what earlier runs
// left, starts the shared server, prints the record's header (claim E4),
// runs the tests, and checks afterwards that the header named what ran and
// that nothing was left behind. Under go test -list nothing of this runs.
func Main(m *testing.M) { exit(m, func() int { return runMain(m, true) }) }

// KitMain is Main for a package whose tests prove no claim (./peers): the
// same backend, shared server, reaper and cleanup, without the record's
// header or the root's Examples to skip.
func KitMain(m *testing.M) { exit(m, func() int { return runMain(m, false) }) }

// BenchMain is KitMain for the benchmarks (./bench): without -bench,
// nothing starts, so go test ./... passes through.
func BenchMain(m *testing.M) {
	exit(m, func() int {
		if flag.Lookup("test.bench").Value.String() == "" {
			return m.Run()
		}
		return runMain(m, false)
	})
}

func exit(m *testing.M, run func() int) {
	zkserver.SkipWith = SkipUnavailable // the server wing's skips, worded in both languages
	flag.Parse()
	zkserver.SetShort(testing.Short())
	if zkserver.Listing() { // go test -list: nothing of the harness runs
		os.Exit(m.Run())
	}
	os.Exit(run())
}

func runMain(m *testing.M, record bool) (code int) {
	// Cleanup comes before anything is created: an interrupt at any point,
	// the backend's host-network probe included, stops what this binary
	// started.
	mainScope = zkserver.NewScope("TestMain")
	sqldb.BindShared(mainScope) // the fenced resources' PostgreSQL, started on first use, stops with mainScope
	stopInterrupts := zkserver.HandleInterrupts(func() {
		// On the user's own servers, nothing is stopped: the test parents
		// this run made there go instead.
		if b, err := zkserver.Resolve(); err == nil && b.Kind == zkserver.External {
			removed, left := removeRoots(b.Servers)
			fmt.Fprintf(os.Stderr, "zk19: removed the test parents made on %v: %v; left: %v\n", b.Servers, removed, left)
		}
		mainScope.Close()
	})
	b, err := zkserver.Resolve()
	if err != nil {
		defer stopInterrupts()
		NoServer = err
		if !testing.Short() {
			fmt.Fprintf(os.Stderr, "zk19: %v\n", err)
			return 1
		}
		fmt.Println("# zk19: no ZooKeeper server (-short): server tests and examples skip; run scripts/setup to get one")
		skipExamples("^Example")
		return m.Run()
	}
	Backend = b
	setDefaultParallel(b.Kind)
	reapEarlierRuns()
	defer func() { code = leftBehind(runMatchesHeader(code), stopInterrupts) }()
	if err := startTheShared(record); err != nil {
		fmt.Fprintf(os.Stderr, "zk19: cannot start the shared server: %v\n", err)
		return 1
	}
	if !record {
		fmt.Printf("# zk19: backend %s, ZooKeeper %s\n", b.Kind, Version.Version)
		return m.Run()
	}
	if !b.CanInjectFaults() {
		skipExternalExamples()
	}
	var before []string
	if b.Kind == zkserver.External {
		if before, err = topLevel(b.Servers); err != nil {
			fmt.Fprintf(os.Stderr, "zk19: the nodes under / of %v before the run: %v\n", b.Servers, err)
			return 1
		}
		fmt.Printf("# zk19: external backend: under / before the run: %s\n", strings.Join(before, " "))
	}
	if err := printHeader(); err != nil {
		fmt.Fprintf(os.Stderr, "zk19: record header: %v\n", err)
		return 1
	}
	code = m.Run()
	if b.Kind == zkserver.External {
		code = nothingLeftOn(b.Servers, before, code)
	}
	return code
}

// startTheShared starts the shared ZooKeeper server. When the whole root
// package runs, the PostgreSQL server that C1 (the first test) and the
// fencing proofs use starts beside it.
func startTheShared(record bool) error {
	if record && flag.Lookup("test.run").Value.String() == "" {
		sqldb.StartSharedAhead()
	}
	return startShared()
}

// topLevel lists the nodes under / of the user's servers, sorted.
func topLevel(servers []string) ([]string, error) {
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discardLog{}))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var kids []string
	err = tb.WaitUntil(Within, "the children of / on "+strings.Join(servers, ","), func() (bool, string) {
		kids, _, err = conn.Children("/")
		return err == nil, fmt.Sprint(err)
	})
	slices.Sort(kids)
	return kids, err
}

// nothingLeftOn checks, after the run, that the user's servers hold no
// parent the run made (rootPrefix) that was not there before it, and says
// so for the record: the evidence of claim E3 on the external backend,
// stated by TestMain's Scope (cmd/evidence reads it with E3's).
func nothingLeftOn(servers, before []string, code int) int {
	after, err := topLevel(servers)
	if err != nil {
		refutedAfterTheSuite("E3", "the nodes under / of %v after the run: %v", servers, err)
		return 1
	}
	var left []string
	for _, k := range after {
		if strings.HasPrefix("/"+k, rootPrefix) && !slices.Contains(before, k) {
			left = append(left, "/"+k)
		}
	}
	fmt.Printf("# zk19: external backend: under / after the run: %s\n", strings.Join(after, " "))
	if len(left) > 0 {
		refutedAfterTheSuite("E3", "the run left %d parents of its own on the user's server %v: %v; want none (under / before the run: %v)", len(left), servers, left, before)
		return 1
	}
	claims.Evidence(mainScope, "on the user's server %s the run left no node of its own: under / before the run %v, after it %v (no %s* parent left)", strings.Join(servers, ","), before, after, rootPrefix)
	return code
}

// reapEarlierRuns does Ryuk's job: it removes what earlier runs left when
// they died without cleaning up.
func reapEarlierRuns() {
	// E3's interrupted children run side by side, after their parent
	// reaped: one child's reaper must not remove what a sibling that just
	// died left, before the parent checks it.
	if os.Getenv(zkserver.EnvInterruptAt) != "" {
		return
	}
	line, err := reaper.Reap()
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
		refutedAfterTheSuite("E3", "%d servers still run after the suite: %v", n, zkserver.KillAll())
		return 1
	}
	if code == 0 {
		if err := goleak.Find(zkserver.LeakOptions()...); err != nil {
			refutedAfterTheSuite("E3", "goroutines leaked: %v", err)
			return 1
		}
	}
	return code
}

// refutedAfterTheSuite is refuted for a check TestMain makes after the
// last test, where there is no *testing.T: TestMain's Scope states the
// verdict (printed as the record line of the attribute, which cmd/evidence
// reads from the package's output), and the reason follows on stderr.
func refutedAfterTheSuite(id, format string, args ...any) {
	mainScope.Attr(claims.VerdictKey(id), claims.VerdictRefuted)
	fmt.Fprintf(os.Stderr, "%s refuted: %s\n", id, fmt.Sprintf(format, args...))
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
	examplesOwnServers = []string{"Example_s1StaleReadFromLaggingFollower", "Example_s2SyncInZK1675Window"} // an ensemble with link proxies
	examplesExpiry     = []string{"Example_s8bX2ExpiryIsNotRejection"}                                      // a session that expires behind a client proxy
)

// skipExternalExamples leaves out of the run, and says why, the Examples
// the external server cannot serve; every other Example runs.
func skipExternalExamples() {
	skip := examplesOwnServers
	fmt.Printf("# zk19: external backend: %s skipped: they need servers of their own and proxies on server-to-server links\n", strings.Join(examplesOwnServers, ", "))
	if why := ExpiryDoesNotFit(shared); why.En != "" {
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
	Version, err = shared.Srvr()
	var na *zkserver.NotAllowedError
	if errors.As(err, &na) {
		// Only an external server refuses srvr; the record says so, and
		// the claims that need the version skip.
		Version, VersionErr = zkserver.Srvr{Version: "unknown", Full: na.Error()}, na
		return nil
	}
	return err
}

// VersionErr is why the shared server's version is unknown.
var VersionErr error

// PrintedHeader is the header exactly as TestMain printed it at the top of
// the record; E4 checks this text, not a copy made again later.
var PrintedHeader string

// recordHeader is the first thing the record says (claim E4): the backend,
// the server version, and the ensemble sizes the claims need, read from the
// claim index.
func recordHeader() (string, error) {
	ix, err := claims.LoadIndex()
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
# started:   %s`, Backend.Describe(), Backend.Why, Version.Version, Version.Full, strings.Join(sizes, "; "), time.Now().UTC().Format(time.RFC3339)), nil
}

func printHeader() error {
	h, err := recordHeader()
	if err != nil {
		return err
	}
	PrintedHeader = h
	fmt.Println(h)
	return nil
}

// AfterTheOtherTests waits, bounded by the run's -timeout, until every
// other parallel test has ended. With -parallel 1 it cannot: the test
// holds the only slot, so it says so and goes on with what has ended.
func AfterTheOtherTests(t *testing.T) {
	t.Helper()
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == "1" {
		t.Logf("-parallel 1: the parallel tests still to run are not waited for; the ensembles they start are checked by TestMain after the run")
		return
	}
	ended := make(Returned)
	go func() { sideBySide.Wait(); close(ended) }()
	bound := 30 * time.Minute
	if d, ok := t.Deadline(); ok {
		bound = time.Until(d) - 10*time.Second
	}
	tb.Receive(t, bound, "the other parallel tests to end", ended)
	t.Logf("the other tests have ended")
}

// SizeName is how the header names an ensemble of n servers.
func SizeName(n int) string {
	if n == 1 {
		return "standalone"
	}
	return fmt.Sprintf("%d servers", n)
}

// headerEnsembles is the header's ensembles line.
var headerEnsembles = regexp.MustCompile(`(?m)^# ensembles: (.*)$`)

// UnnamedSizes returns the sizes of started ensembles that the header's
// ensembles line does not name.
func UnnamedSizes(header string, ran []*zkserver.Ensemble) []string {
	line := ""
	if m := headerEnsembles.FindStringSubmatch(header); m != nil {
		line = "; " + m[1]
	}
	var out []string
	for _, e := range ran {
		name := SizeName(len(e.Servers))
		if !strings.Contains(line, "; "+name+" (") && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// StartedSizes counts started ensembles by size: "standalone ×3, 3
// servers ×2", in both languages.
func StartedSizes(ran []*zkserver.Ensemble) zh.Text {
	count := map[int]int{}
	for _, e := range ran {
		count[len(e.Servers)]++
	}
	var parts []zh.Text
	for _, n := range slices.Sorted(maps.Keys(count)) {
		if n == 1 {
			parts = append(parts, zh.Say("standalone ×%d", count[n]))
		} else {
			parts = append(parts, zh.Say("%d servers ×%d", n, count[n]))
		}
	}
	return zh.Join(parts, zh.Text{En: ", ", Zh: "，"})
}

// runMatchesHeader ends the record with the ensembles the whole run started
// and fails the run (claim E4) if the header left one of their sizes out;
// after a full run (no -run, -skip or -short) that passed, also if the
// header names a size nothing started.
func runMatchesHeader(code int) int {
	if PrintedHeader == "" {
		return code
	}
	ran := zkserver.Started()
	fmt.Printf("# zk19: ensembles this run started: %s\n", StartedSizes(ran))
	var wrong []string
	for _, miss := range UnnamedSizes(PrintedHeader, ran) {
		wrong = append(wrong, "the run started "+miss+", which the header does not name")
	}
	full := Backend.CanInjectFaults() && !testing.Short() && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
	if m := headerEnsembles.FindStringSubmatch(PrintedHeader); m != nil && full && code == 0 {
		for _, part := range strings.Split(m[1], "; ") {
			name, _, _ := strings.Cut(part, " (")
			if !slices.ContainsFunc(ran, func(e *zkserver.Ensemble) bool { return SizeName(len(e.Servers)) == name }) {
				wrong = append(wrong, "the header names "+name+", which no test started")
			}
		}
	}
	if len(wrong) > 0 {
		refutedAfterTheSuite("E4", "%s", strings.Join(wrong, "; "))
		return 1
	}
	return code
}

// TrioPatience bounds E1's wait for a trio that other tests hold, before it
// starts one of its own.
const TrioPatience = 90 * time.Second

// ServerOnLoopback reads a running server from outside (the sockets its
// process listens on) and from inside (its conf answer: its own ports, and
// every address its membership lines name, which for the other servers are
// the link proxies), and returns for E1 to judge every address it saw and
// every port of the harness beside the one the conf names. A standalone
// server binds its client port only.
func ServerOnLoopback(t *testing.T, srv *zkserver.Server, standalone bool) (addrs []SeenAddr, ports []ConfPort) {
	t.Helper()
	ls, err := srv.Listeners()
	if err != nil {
		claims.NotShown(t, "E1", "listeners of %s: %v", srv.Label, err)
	}
	t.Logf("%s listens on %v", srv.Label, ls)
	own := map[string]string{"clientPort": srv.Client}
	if !standalone {
		own["electionPort"], own["quorumPort"] = srv.Election, srv.Quorum
	}
	for _, l := range ls {
		addrs = append(addrs, SeenAddr{srv.Label + " listens on", l, "drawn"})
	}
	if !slices.Contains(ls, srv.Client) || !standalone && !slices.Contains(ls, srv.Election) {
		claims.BrokenCheck(t, "E1", "got %s listening on %v; want its client and (in an ensemble) election ports %s, %s among them", srv.Label, ls, srv.Client, srv.Election)
	}
	conf := zkserver.Fields(srv.Word(t, "conf"))
	for _, key := range slices.Sorted(maps.Keys(own)) {
		ports = append(ports, ConfPort{Key: key, Own: own[key], Conf: conf[key]})
		addrs = append(addrs, SeenAddr{srv.Label + "'s conf has " + key + " at", own[key], "drawn"})
	}
	var members []string
	for _, key := range slices.Sorted(maps.Keys(conf)) {
		m := memberAddr.FindStringSubmatch(key + "=" + conf[key])
		if m == nil {
			continue
		}
		members = append(members, m[0])
		addrs = append(addrs, SeenAddr{srv.Label + "'s conf has " + key + " at", net.JoinHostPort(m[1], m[2]), ""},
			SeenAddr{srv.Label + "'s conf has " + key + " at", net.JoinHostPort(m[1], m[3]), ""})
	}
	if !standalone && len(members) == 0 {
		claims.BrokenCheck(t, "E1", "%s's conf names no member (server.N=host:quorum:election); got %v", srv.Label, conf)
	}
	t.Logf("%s's conf: clientPort=%s electionPort=%s quorumPort=%s %v", srv.Label, conf["clientPort"], conf["electionPort"], conf["quorumPort"], members)
	return addrs, ports
}

// SeenAddr is an address E1 saw (What names where) and how its port must
// have been chosen: "drawn" by the harness, or "" for either way (see
// zkserver.RunTimePort).
type SeenAddr struct{ What, Addr, How string }

// ConfPort is a server's port as the harness uses it (Own, host:port) and
// as its conf answer's Key says it (Conf, a port).
type ConfPort struct{ Key, Own, Conf string }

// memberAddr is a membership line of a conf answer:
// "server.2=127.0.0.1:40001:40002:participant".
var memberAddr = regexp.MustCompile(`^server\.\d+=([^:]+):(\d+):(\d+)`)

// OwnSockets returns every TCP socket of this process, its local and (for
// a connection) its remote address, for E1 to judge.
func OwnSockets(t *testing.T) []SeenAddr {
	t.Helper()
	own, err := zkserver.Sockets(os.Getpid())
	if err != nil {
		claims.NotShown(t, "E1", "sockets of this process: %v", err)
	}
	var addrs []SeenAddr
	listening := 0
	for _, k := range own {
		addrs = append(addrs, SeenAddr{"this process's socket at", k.Local, ""})
		if k.Listening {
			listening++
			continue
		}
		addrs = append(addrs, SeenAddr{"this process's socket to", k.Remote, ""})
	}
	t.Logf("this process: %d TCP sockets, %d listening", len(own), listening)
	return addrs
}

// e3Scenario names E3's scenario: its Scope, so its servers and dirs, and
// the pprof label its goroutines carry (zkserver.Own).
const e3Scenario = "E3-scenario"

// ScopeLeavesNothing runs a scenario (a server, a client proxy, a client
// with an ephemeral node) in its own Scope, closes it, and returns what is
// left of it for E3 to judge. What it counts is the scenario's own (its
// Scope's name marks its servers, and its goroutines carry that name as
// their pprof label, zkserver.Own), so E3 runs beside other tests.
func ScopeLeavesNothing(t *testing.T) ScopeLeft {
	var left ScopeLeft
	var addrs []string // the proxy's and the server's
	zkserver.Own(e3Scenario, func() {
		sc := zkserver.NewScope(e3Scenario)
		t.Cleanup(sc.Close) // a scenario that fails halfway leaves nothing either; Close is idempotent
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
		addrs = []string{p.Addr(), s.Client}
		t.Logf("scenario: server pid %d on %s, proxy %s, client session 0x%x, temp dir %s", pid, s.Client, p.Addr(), c.SessionID(), dir)
		sc.Close()
		left.PID, left.Dir = pid, dir
	})
	left.Live, left.Kill = zkserver.LiveOf(e3Scenario), syscall.Kill(left.PID, 0)
	for _, a := range addrs {
		if conn, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			conn.Close()
			left.Accepting = append(left.Accepting, a)
		}
	}
	_, left.Stat = os.Stat(left.Dir)
	left.Leak = zkserver.OwnGoroutines(e3Scenario, Within)
	return left
}

// ScopeLeft is what a scenario's closed Scope left: its servers still
// tracked as running, kill -0's answer for its server process, the
// addresses that still accept, os.Stat's answer for its temp dir, and the
// stacks of its goroutines still running ("" when none is).
type ScopeLeft struct {
	Live       []string
	PID        int
	Kill, Stat error
	Leak       string
	Accepting  []string
	Dir        string
}

// InterruptLeavesNothing runs TestY8 in a child test binary that sends
// itself SIGINT at each point, and returns, point by point, what each
// child said and left, for E3 to judge.
func InterruptLeavesNothing(t *testing.T) []Interrupted {
	if os.Getenv(zkserver.EnvInterruptAt) != "" {
		t.Skip("skipped: this is the interrupted child")
	}
	made := "process-start"
	if Backend.Kind == zkserver.Container {
		made = "container-create"
	}
	// The n-th time a point is reached: the shared server of TestMain is
	// the first server made; TestY8's ensemble is the first ensemble. The
	// children run side by side (each is checked by its own pid) and are
	// checked in this order.
	points := []string{made + ":1", made + ":2", "ensemble-start:1"}
	children := make([]chan Interrupted, len(points))
	for i, point := range points {
		children[i] = make(chan Interrupted, 1)
		go func() {
			c := Interrupted{Point: point}
			c.PID, c.Code, c.Out, c.err = runInterruptedChild("TestY8_BarrierIsNoSnapshotAcrossPaths", point)
			children[i] <- c
		}()
	}
	var out []Interrupted
	for i, point := range points {
		c := <-children[i]
		if c.err != nil {
			t.Fatalf("child at %s: %v", point, c.err)
		}
		left, err := reaper.Leftovers(c.PID)
		if err != nil {
			t.Fatalf("leftovers of child %d: %v", c.PID, err)
		}
		c.Left = left
		claims.Evidence(t, "SIGINT at %s: child %d exited %d; left behind: %d things %v", point, c.PID, c.Code, len(left), left)
		out = append(out, c)
	}
	return out
}

// Interrupted is a child run interrupted at Point: its pid, exit code and
// output, and what it left behind.
type Interrupted struct {
	Point     string
	PID, Code int
	Out       string
	Left      []string
	err       error
}

// runInterruptedChild runs one test of this binary in a child that
// interrupts itself at point, and returns its pid, exit code and output.
// An error is one of starting or waiting for the child, not its exit code.
func runInterruptedChild(test, point string) (pid, code int, output string, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), zkserver.EnvInterruptAt+"="+point)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return 0, 0, "", fmt.Errorf("start child: %w", err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return cmd.Process.Pid, 0, out.String(), err
	}
	return cmd.Process.Pid, cmd.ProcessState.ExitCode(), out.String(), nil
}

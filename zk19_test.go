package zk19_test

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

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
	b, err := zkserver.Resolve()
	if err != nil {
		noServer = err
		if !testing.Short() {
			fmt.Fprintf(os.Stderr, "zk19: %v\n", err)
			return 1
		}
		fmt.Println("# zk19: no ZooKeeper server (-short): server tests and examples skip; run scripts/setup to get one")
		skipExamples()
		return m.Run()
	}
	backend = b
	mainScope = zkserver.NewScope("TestMain")
	defer func() {
		mainScope.Close()
		if n := zkserver.Live(); n > 0 {
			fmt.Fprintf(os.Stderr, "E3 violated: %d servers still run after the suite: %v\n", n, zkserver.KillAll())
			code = 1
		}
		if code == 0 {
			if err := goleak.Find(zkserver.LeakOptions()...); err != nil {
				fmt.Fprintf(os.Stderr, "E3 violated: goroutines leaked: %v\n", err)
				code = 1
			}
		}
	}()
	// SIGINT or SIGTERM: stop every server this binary started, then exit.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	stopSignals := make(chan struct{})
	defer func() { signal.Stop(sigs); close(stopSignals) }()
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "zk19: %v: stopping %v\n", s, zkserver.KillAll())
			mainScope.Close()
			os.Exit(130)
		case <-stopSignals:
		}
	}()

	if !b.CanInjectFaults() {
		// Examples cannot skip; every fault-free one still runs as a Test.
		fmt.Println("# zk19: the external backend cannot inject faults: examples are skipped")
		skipExamples()
	}
	if err := startShared(); err != nil {
		fmt.Fprintf(os.Stderr, "zk19: cannot start the shared server: %v\n", err)
		return 1
	}
	printHeader()
	return m.Run()
}

// skipExamples adds every Example to -test.skip: an Example cannot skip
// itself when what it needs is missing.
func skipExamples() {
	skip := "^Example"
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		skip = f.Value.String() + "|" + skip
	}
	_ = flag.Set("test.skip", skip)
}

func startShared() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	shared = zkserver.Start(mainScope, zkserver.WithLabel("shared"), zkserver.AllowExternal())
	version, err = shared.Srvr()
	return err
}

// recordHeader is the first thing the record says (claim E4).
func recordHeader() string {
	return fmt.Sprintf(`# zk19 verification record
# backend:   %s
# chosen:    %s
# server:    ZooKeeper %s (srvr: %q)
# ensembles: standalone (L, R, F, T, E, X); 3 servers (S, Y1, Y3-Y6, L9); 5 servers (Y2)
# started:   %s`, backend.Describe(), backend.Why, version.Version, version.Full, time.Now().UTC().Format(time.RFC3339))
}

func printHeader() { fmt.Println(recordHeader()) }

// TestE4_RecordStartsWithServerVersionBackendAndSize checks the header that
// TestMain printed before any claim ran: it names the backend, the server
// version read from srvr, and the ensemble sizes (claim E4, section
// "三个本机场景的证据").
func TestE4_RecordStartsWithServerVersionBackendAndSize(t *testing.T) {
	s := sharedServer(t)
	claim(t, "E4")
	h := recordHeader()
	st, err := s.Srvr()
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	for _, want := range []string{"# backend:   " + string(backend.Kind), "ZooKeeper " + st.Version, "3 servers", "5 servers", "standalone"} {
		if !strings.Contains(h, want) {
			t.Errorf("E4 violated: header lacks %q:\n%s", want, h)
		}
	}
	if st.Version == "" || !regexp.MustCompile(`^3\.\d+\.\d+$`).MatchString(st.Version) {
		t.Errorf("E4 violated: got server version %q; want 3.x.y", st.Version)
	}
	t.Logf("header:\n%s", h)
}

// TestE1_ServersListenOnlyOnLoopback: every listener the suite opens is on
// 127.0.0.1 with a port chosen at run time, never a fixed one (claim E1,
// "三个本机场景的证据"). Proxies listen on port 0; servers get a free port drawn
// just below the kernel's ephemeral range, so that no proxy or outgoing
// connection can take it between the draw and the server's bind. Shown from
// outside the server (the sockets its process listens on, read from /proc),
// from the server (conf reports the client port the harness chose) and from
// the harness (the address it connects to).
func TestE1_ServersListenOnlyOnLoopback(t *testing.T) {
	s := sharedServer(t)
	claim(t, "E1")
	if backend.Kind == zkserver.External {
		t.Skip("skipped: the external backend's listeners are not the suite's")
	}
	conf := zkserver.Fields(s.Word(t, "conf"))
	host, port, _ := strings.Cut(s.Client, ":")
	t.Logf("harness connects to %s; server conf says clientPort=%s", s.Client, conf["clientPort"])
	if host != "127.0.0.1" || port != conf["clientPort"] {
		t.Errorf("E1 violated: harness connects to %s; server says port %s; want 127.0.0.1 and the same port", s.Client, conf["clientPort"])
	}
	ls, err := s.Listeners()
	if err != nil {
		t.Fatalf("listeners of %s: %v", s.Label, err)
	}
	t.Logf("server process listens on %v", ls)
	if len(ls) == 0 {
		t.Fatalf("E1 check broken: found no listening socket of the server process; want at least the client port")
	}
	for _, l := range ls {
		h, p, _ := strings.Cut(l, ":")
		if h != "127.0.0.1" {
			t.Errorf("E1 violated: server listens on %s; want 127.0.0.1 only", l)
		}
		if n := atoi(p); n < 1024 {
			t.Errorf("E1 violated: server listens on port %d; want an ephemeral port", n)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestE3_ScenarioLeavesNothingBehind: whatever a scenario starts is gone
// when it ends: the server process (or container), the proxy's listener,
// the client's goroutines and the temporary directory (claim E3, evidence).
// The scenario runs in its own Scope and is checked right after it closes;
// TestMain repeats the process and goroutine checks for the whole suite.
func TestE3_ScenarioLeavesNothingBehind(t *testing.T) {
	zkserver.RequireFaults(t)
	claim(t, "E3")
	keep := goleak.IgnoreCurrent()
	live := zkserver.Live()
	sc := zkserver.NewScope("E3-scenario")
	s := zkserver.Start(sc)
	pid, err := s.PID()
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	dir := sc.TempDir()
	p := clientProxy(sc, "E3-proxy", s)
	c := connect(sc, "E3", []string{p.Addr()})
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

package zkserver

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/reaper"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	flag.Parse()
	SetShort(testing.Short())
	if Listing() { // go test -list: nothing of the harness runs
		os.Exit(m.Run())
	}
	line, err := reaper.Reap()
	if line != "" {
		fmt.Println(line)
	}
	if err != nil {
		fmt.Printf("# zk19: reaping what earlier runs left: %v\n", err)
	}
	// As the root TestMain does: an interrupt kills and removes what the
	// tests made, then exits.
	sigs, done := make(chan os.Signal, 1), make(chan struct{})
	if os.Getenv(envNoHandler) == "" {
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	}
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "zkserver: %v: stopping %v\n", s, KillAll())
			os.Exit(130)
		case <-done:
		}
	}()
	code := m.Run()
	signal.Stop(sigs)
	close(done)
	if code == 0 {
		if err := goleak.Find(LeakOptions()...); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	if n := Live(); n > 0 {
		os.Stderr.WriteString("servers left running; killing them\n")
		KillAll()
		code = 1
	}
	os.Exit(code)
}

func TestRenderConfigGivesEachServerItsOwnPeerAddresses(t *testing.T) {
	all := []ports{{2181, 3001, 4001}, {2182, 3002, 4002}, {2183, 3003, 4003}}
	o := buildOptions([]Option{WithTickTime(100 * time.Millisecond), WithPeerAddr(func(from, to int, k PortKind, real string) string {
		if k == QuorumPort {
			return addr(10000 + from*10 + to)
		}
		return addr(20000 + from*10 + to)
	})})
	cfg := renderConfig(2, all, "/data", o)
	for _, want := range []string{
		"tickTime=100", "clientPort=2182", "clientPortAddress=127.0.0.1", "4lw.commands.whitelist=*",
		"server.1=127.0.0.1:10021:20021", "server.2=127.0.0.1:3002:4002", "server.3=127.0.0.1:10023:20023",
	} {
		if !strings.Contains(cfg, want+"\n") {
			t.Errorf("server 2's zoo.cfg lacks %q:\n%s", want, cfg)
		}
	}
}

func TestParseSrvr(t *testing.T) {
	s, err := parseSrvr("Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nLatency min/avg/max: 0/0.0/0\nZxid: 0x100000003\nMode: follower\nNode count: 5\n")
	if err != nil || s.Version != "3.8.0" || s.Mode != "follower" || s.Zxid != 0x100000003 {
		t.Fatalf("got %+v, %v; want version 3.8.0, follower, zxid 0x100000003", s, err)
	}
	if _, err := parseSrvr("This ZooKeeper instance is not currently serving requests\n"); err == nil {
		t.Fatal("got no error for a server that is not serving; want one")
	}
}

func TestStandaloneServerStartsAndStops(t *testing.T) {
	s := Start(t, WithTickTime(200*time.Millisecond))
	st, err := s.Srvr()
	if err != nil || st.Mode != "standalone" {
		t.Fatalf("srvr: got %+v, %v; want Mode standalone", st, err)
	}
	t.Logf("server %s version %s", s.Client, st.Version)
	if b, _ := Resolve(); !b.CanInjectFaults() {
		return
	}
	s.Restart(t)
	if m, err := s.Mode(); m != "standalone" {
		t.Fatalf("after restart: got mode %q (%v); want standalone", m, err)
	}
	s.RestartWiped(t)
	if st, err := s.Srvr(); st.Mode != "standalone" || st.Zxid != 0 {
		t.Fatalf("after a wiped restart: got %+v (%v); want mode standalone and zxid 0", st, err)
	}
}

func TestEnsembleOfThreeElectsOneLeader(t *testing.T) {
	e := StartEnsemble(t, 3, WithTickTime(200*time.Millisecond))
	l, err := e.Leader(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(e.Followers()); got != 2 {
		t.Fatalf("got %d followers; want 2", got)
	}
	t.Logf("leader %s", l.Label)
}

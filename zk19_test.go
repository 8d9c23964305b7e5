package zk19_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/claims"
	"github.com/zk19/zk19/internal/scene"
	"github.com/zk19/zk19/internal/zkclient"
	"github.com/zk19/zk19/internal/zkserver"
)

func TestMain(m *testing.M) { scene.Main(m) }

// TestE4_RecordStartsWithServerVersionBackendAndSize checks the header that
// TestMain printed before any claim ran (claim E4, section §7) against what
// ran: it names the backend of every ensemble started so far, the version
// the shared server reports now through srvr, and the size of every
// ensemble this run has started (zkserver.Started). It checks after every
// other Test of the run and sees what they started: as a parallel test it
// begins once the sequential ones have ended, and then waits for the other
// parallel tests to end (sideBySide); the Examples run after it, and
// TestMain repeats the size check over the whole run once they have ended.
// cmd/evidence checks the record as a reader gets it: the header comes
// before the first test.
func TestE4_RecordStartsWithServerVersionBackendAndSize(t *testing.T) {
	t.Parallel()
	s := scene.SharedServer(t)
	claims.Open(t, "E4")
	scene.AfterTheOtherTests(t)
	if scene.VersionErr != nil {
		t.Skipf("skipped: the header names the server's version, read with srvr; %v", scene.VersionErr)
	}
	st, err := s.Srvr()
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	if !regexp.MustCompile(`^3\.\d+\.\d+$`).MatchString(st.Version) {
		claims.Refuted(t, "E4", "got server version %q; want 3.x.y", st.Version)
	}
	want := []string{"# zk19 verification record\n", "# backend:   " + string(scene.Backend.Kind), "ZooKeeper " + st.Version + " "}
	for _, w := range want {
		if !strings.Contains(scene.PrintedHeader, w) {
			claims.Refuted(t, "E4", "got a printed header without %q; want it:\n%s", w, scene.PrintedHeader)
		}
	}
	if !strings.HasPrefix(scene.PrintedHeader, "# zk19 verification record") {
		claims.Refuted(t, "E4", "got a header starting %q; want the record's title first", scene.PrintedHeader)
	}
	ran := zkserver.Started()
	if scene.Backend.Kind != zkserver.External && len(ran) == 0 {
		claims.NotShown(t, "E4", "the run's record of started ensembles is empty; want at least the shared server")
	}
	for _, e := range ran {
		if e.Backend.Kind != scene.Backend.Kind {
			claims.Refuted(t, "E4", "an ensemble of %s ran on the %s backend; the header says %s", scene.SizeName(len(e.Servers)), e.Backend.Kind, scene.Backend.Kind)
		}
	}
	for _, miss := range scene.UnnamedSizes(scene.PrintedHeader, ran) {
		claims.Refuted(t, "E4", "the run started %s, which the header's ensembles line does not name:\n%s", miss, scene.PrintedHeader)
	}
	claims.Evidence(t, "the record began with: %s; ensembles the run's Tests started: %s", strings.ReplaceAll(scene.PrintedHeader, "\n", " | "), scene.StartedSizes(ran))
}

// TestE1_ServersListenOnlyOnLoopback: every socket of the experiment is on
// 127.0.0.1 with a port chosen at run time (claim E1, section "三个本机场景的证
// 据"): drawn by the harness for a server (a random free port, never handed
// out twice in one run) or assigned by the kernel to a listener bound to
// port 0 (every proxy) or to an outgoing connection. A port written into a
// config, default or not, is neither.
//
// It is shown for the shared server and for a 3- and a 5-server ensemble
// with link proxies, a client proxy and a client each, while they run: from
// outside each server (the sockets its process listens on, read from /proc),
// from the server (every address its conf answer names), and for this test
// process, which runs every proxy and client (each of its TCP sockets,
// listening or connected). Then for every server of every ensemble this run
// has started so far, running or gone (zkserver.Started): each of its ports
// was drawn at run time, and no two servers got the same one.
//
// The 3-server ensemble is the pool's trio, borrowed: where a server and its
// proxies listen is what E1 checks, and no earlier lease changes it. The
// five is E1's own. Lent from the pool, E1's lease came before Y2's, and
// the new side of Y2's partition then took 1.8–5.7 s to elect, against
// 0.6–0.9 s on a five that Y2 had first (ten runs), and Y2's window closed
// before its sync once in three go test ./... runs.
func TestE1_ServersListenOnlyOnLoopback(t *testing.T) {
	scene.Parallel(t)
	zkserver.RequireFaults(t)
	claims.Open(t, "E1")
	scene.RequireServerOnLoopback(t, scene.SharedServer(t), true)
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d servers", n), func(t *testing.T) {
			var c *scene.Cluster
			if n == 3 {
				c = scene.LeaseWhenFree(t, scene.TrioKind, scene.E1Patience)
			} else {
				c = scene.StartCluster(t, n)
			}
			p := zkserver.ClientProxy(t, "E1-proxy", c.Servers[0])
			zkclient.Connect(t, "E1", []string{p.Addr()})
			for _, srv := range c.Servers {
				scene.RequireServerOnLoopback(t, srv, false)
			}
			scene.RequireOwnSocketsOnLoopback(t)
		})
	}
	if t.Failed() {
		return
	}
	ran := zkserver.Started()
	bySize := map[int]int{}
	owner := map[string]string{} // address -> the server that got it
	servers := 0
	for i, e := range ran {
		bySize[len(e.Servers)]++
		for _, srv := range e.Servers {
			servers++
			who := fmt.Sprintf("%s of ensemble %d (%d servers)", srv.Label, i+1, len(e.Servers))
			for _, a := range []string{srv.Client, srv.Quorum, srv.Election} {
				scene.RequireRunTimeAddr(t, who+" was given", a, "drawn")
				if other, ok := owner[a]; ok {
					claims.Refuted(t, "E1", "%s was given %s, which %s was given too; want a port drawn for each server", who, a, other)
				}
				owner[a] = who
			}
		}
	}
	if bySize[3] == 0 || bySize[5] == 0 {
		claims.NotShown(t, "E1", "the run's record of started ensembles holds sizes %v; want the 3-server one this test borrowed and the 5-server one it started", bySize)
	}
	claims.Evidence(t, "while running, the shared server, a 3- and a 5-server ensemble, their proxies and this process listen on and dial only 127.0.0.1; all %d servers of the ensembles this run started so far (%s) were given %d distinct ports, each drawn at run time", servers, scene.StartedSizes(ran), len(owner))
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
	claims.Open(t, "E3")
	t.Run("a scenario leaves nothing behind when its scope closes", scene.ScopeLeavesNothing)
	t.Run("an interrupted run leaves nothing behind", scene.InterruptLeavesNothing)
}

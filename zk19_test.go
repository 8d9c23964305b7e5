package zk19_test

// §7 of the article (三个本机场景的证据): what makes the record evidence.
// TestMain (internal/proof/harness.Main) resolves the backend, prints the record's
// header and leaves nothing behind; E1 to E4 check that servers listen on
// loopback only, that no wait guesses a window, that a scenario leaves
// nothing behind even when interrupted, and that the header names what ran.
// F10 and A1 are the section's remarks on expiry and on ACLs.

import (
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

func TestMain(m *testing.M) { harness.Main(m) }

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
	s := harness.SharedServer(t)
	claims.Open(t, "E4")
	harness.AfterTheOtherTests(t)
	if harness.VersionErr != nil {
		claims.Skip(t, "skipped: the header names the server's version, read with srvr; %v", harness.VersionErr)
	}
	st, err := s.Srvr()
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	if !regexp.MustCompile(`^3\.\d+\.\d+$`).MatchString(st.Version) {
		claims.Refuted(t, "E4", "got server version %q; want 3.x.y", st.Version)
	}
	want := []string{"# zk19 verification record\n", "# backend:   " + string(harness.Backend.Kind), "ZooKeeper " + st.Version + " "}
	for _, w := range want {
		if !strings.Contains(harness.PrintedHeader, w) {
			claims.Refuted(t, "E4", "got a printed header without %q; want it:\n%s", w, harness.PrintedHeader)
		}
	}
	if !strings.HasPrefix(harness.PrintedHeader, "# zk19 verification record") {
		claims.Refuted(t, "E4", "got a header starting %q; want the record's title first", harness.PrintedHeader)
	}
	ran := zkserver.Started()
	if harness.Backend.Kind != zkserver.External && len(ran) == 0 {
		claims.NotShown(t, "E4", "the run's record of started ensembles is empty; want at least the shared server")
	}
	for _, e := range ran {
		if e.Backend.Kind != harness.Backend.Kind {
			claims.Refuted(t, "E4", "an ensemble of %s ran on the %s backend; the header says %s", harness.SizeName(len(e.Servers)), e.Backend.Kind, harness.Backend.Kind)
		}
	}
	for _, miss := range harness.UnnamedSizes(harness.PrintedHeader, ran) {
		claims.Refuted(t, "E4", "the run started %s, which the header's ensembles line does not name:\n%s", miss, harness.PrintedHeader)
	}
	claims.Evidence(t, "the record began with: %s; ensembles the run's Tests started: %s", strings.ReplaceAll(harness.PrintedHeader, "\n", " | "), harness.StartedSizes(ran))
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
//
// On the external backend the server is the user's, at the address the
// user gave: its interfaces and ports are not the harness's to choose, and
// it starts no ensemble. There E1 checks the harness's own side
// (e1OnTheUsersServer).
func TestE1_ServersListenOnlyOnLoopback(t *testing.T) {
	harness.Parallel(t)
	if harness.Backend.Kind == zkserver.External {
		claims.Open(t, "E1")
		e1OnTheUsersServer(t)
		return
	}
	zkserver.RequireFaults(t)
	claims.Open(t, "E1")
	requireServerOnLoopback(t, harness.SharedServer(t), true)
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d servers", n), func(t *testing.T) {
			var c *harness.Cluster
			if n == 3 {
				c = harness.LeaseWhenFree(t, harness.TrioKind, harness.TrioPatience)
			} else {
				c = harness.StartCluster(t, n)
			}
			p := zkserver.ClientProxy(t, "E1-proxy", c.Servers[0])
			zkclient.Connect(t, "E1", []string{p.Addr()})
			for _, srv := range c.Servers {
				requireServerOnLoopback(t, srv, false)
			}
			for _, a := range harness.OwnSockets(t) {
				requireRunTimeAddr(t, a.What, a.Addr, a.How)
			}
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
				requireRunTimeAddr(t, who+" was given", a, "drawn")
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
	claims.Evidence(t, "while running, the shared server, a 3- and a 5-server ensemble, their proxies and this process listen on and dial only 127.0.0.1; all %d servers of the ensembles this run started so far (%s) were given %d distinct ports, each drawn at run time", servers, harness.StartedSizes(ran), len(owner))
}

// e1OnTheUsersServer is E1 on the external backend: with a client proxy
// in front of the user's server and a client through it, every TCP socket
// of this process (every proxy and client of the run so far) listens on
// and dials only 127.0.0.1 with a port chosen at run time; a socket to the
// user's server dials the address the user gave, and is only counted.
func e1OnTheUsersServer(t *testing.T) {
	t.Helper()
	users := map[string]bool{}
	for _, a := range harness.Backend.Servers {
		ua, err := net.ResolveTCPAddr("tcp", a)
		if err != nil {
			claims.NotShown(t, "E1", "the user's server %s: %v", a, err)
		}
		users[ua.String()] = true
	}
	p := zkserver.ClientProxy(t, "E1-proxy", harness.SharedServer(t))
	zkclient.Connect(t, "E1", []string{p.Addr()})
	own, err := zkserver.Sockets(os.Getpid())
	if err != nil {
		claims.NotShown(t, "E1", "sockets of this process: %v", err)
	}
	var listening, toUsers, proxy, viaProxy int
	for _, k := range own {
		if !k.Listening && users[k.Remote] {
			toUsers++
			continue
		}
		requireRunTimeAddr(t, "this process's socket at", k.Local, "")
		if k.Listening {
			listening++
			proxy += count(k.Local == p.Addr())
			continue
		}
		requireRunTimeAddr(t, "this process's socket to", k.Remote, "")
		viaProxy += count(k.Remote == p.Addr())
	}
	if proxy == 0 || viaProxy == 0 {
		claims.BrokenCheck(t, "E1", "got %d listening sockets and %d connections at E1's proxy %s among this process's %d; want one of each at least", proxy, viaProxy, p.Addr(), len(own))
	}
	claims.Evidence(t, "on the user's server %v (its address the user's, not the harness's): of this process's %d TCP sockets, %d listening (client proxies, E1's %s among them) and %d connected are on 127.0.0.1 with ports chosen at run time; the other %d dial the user's server",
		harness.Backend.Servers, len(own), listening, p.Addr(), len(own)-listening-toUsers, toUsers)
}

// count is 1 for true and 0 for false.
func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestE2_NoSleepGuessesAWindow: no proof, and no step of a scene a proof
// plays (internal/proof/harness and the scene packages, internal/proof/chaos, ./peers),
// waits a guessed time for a window to open (claim E2, "三个本机场景的证据").
// A wait on time alone
// (time.Sleep, a bare receive from time.After or a timer's channel, a select
// whose only cases are timers, a range over a ticker, time.AfterFunc) must
// be for a named constant of this package that is a session timeout. A
// bounded wait is a select with a real event beside its timer, or
// internal/server/tb and poll, which call no timer here. The check is first shown
// to refuse such waits in sources written for it.
func TestE2_NoSleepGuessesAWindow(t *testing.T) {
	claims.Open(t, "E2")
	t.Run("the check refuses waits on time alone", func(t *testing.T) {
		for _, tc := range claims.SleepBites {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x_test.go", "package x\nimport \"time\"\nconst aSessionTimeout = time.Second\n"+tc.Src, 0)
			if err != nil {
				t.Fatalf("%s: %v", tc.Name, err)
			}
			_, refused := claims.ScanSleeps(fset, []*ast.File{f}, []*ast.File{f})
			if (len(refused) > 0) != tc.Refused {
				claims.BrokenCheck(t, "E2", "%s: refused %q; want refused=%v", tc.Name, refused, tc.Refused)
			}
		}
	})
	// The root's proofs, and the packages that hold their scenes' steps
	// (the harness, the lock, replica and fencing scenes, E5's codec
	// check, C1's workers, the peer table and its scenarios in locktest):
	// in the root and ./peers the test files, in the others every file.
	var allowed, refused []string
	files := 0
	for _, dir := range []string{".", "internal/proof/harness", "internal/proof/scene", "internal/proof/replicas", "internal/proof/fencescene", "internal/proof/chaos", "peers", "locktest"} {
		fset := token.NewFileSet()
		var all, scanned []*ast.File
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range names {
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", name, err)
			}
			all = append(all, f)
			if strings.HasSuffix(name, "_test.go") == (dir == "." || dir == "peers") {
				scanned = append(scanned, f)
			}
		}
		a, r := claims.ScanSleeps(fset, all, scanned)
		allowed, refused, files = append(allowed, a...), append(refused, r...), files+len(scanned)
	}
	for _, r := range refused {
		claims.Refuted(t, "E2", "%s", r)
	}
	for _, a := range allowed {
		t.Logf("%s", a)
	}
	if !t.Failed() {
		claims.Evidence(t, "%d waits on time alone in %d files of the proofs and their scenes, each for a named session-timeout constant; none guesses a window", len(allowed), files)
	}
}

// TestE3_ScenarioLeavesNothingBehind: whatever a scenario starts is gone
// when it ends, and also when the run is interrupted (claim E3, section §7).
//   - A scenario runs in its own Scope and is checked right after it closes:
//     the server process (or container), the proxy's listener, the client's
//     goroutines and the temporary directory are gone. What it counts is
//     the scenario's own (the servers named after its Scope, the goroutines
//     that carry its pprof label), so E3 runs beside other tests; TestMain
//     repeats the process and goroutine checks for the whole suite.
//   - This test binary is run again as a child that interrupts itself
//     (SIGINT, through zkserver.EnvInterruptAt) at three points where a
//     server is being made: the shared server starting, a test's own server
//     starting, and an ensemble started but not ready. Once the child has
//     exited, no container, server process or server dir of it is left.
//
// On the external backend, whose server is the user's and not the
// harness's to stop, a scenario's Scope on it must leave no node there
// once closed, and a child interrupted right after it made its test's
// parent on the user's server must have removed it.
func TestE3_ScenarioLeavesNothingBehind(t *testing.T) {
	harness.Parallel(t)
	if harness.Backend.Kind == zkserver.External {
		claims.Open(t, "E3")
		t.Run("a scenario leaves no node on the user's server when its scope closes", scopeLeavesNothingOnTheUsersServer)
		t.Run("an interrupted run leaves no parent of its own on the user's server", interruptLeavesNoParentOnTheUsersServer)
		return
	}
	zkserver.RequireFaults(t)
	claims.Open(t, "E3")
	t.Run("a scenario leaves nothing behind when its scope closes", scopeLeavesNothing)
	t.Run("an interrupted run leaves nothing behind", interruptLeavesNothing)
}

// TestA1_OpenACLLetsAThiefMakeASecondHolder: under an open ACL any session
// deletes the holder's node, and the next candidate then holds too (claim
// A1, §7 ¶6). A creator-only ACL on the candidate nodes alone changes
// nothing: the server checks a delete against the parent's ACL, which is
// open.
func TestA1_OpenACLLetsAThiefMakeASecondHolder(t *testing.T) {
	claims.Open(t, "A1")
	t.Run("an open ACL lets another session delete the holder's node and the next candidate holds too", func(t *testing.T) {
		thiefMakesSecondHolder(t, zk.WorldACL(zk.PermAll), zk.WorldACL(zk.PermAll))
	})
	t.Run("a creator-only ACL on the candidates under an open parent does not stop the thief", func(t *testing.T) {
		thiefMakesSecondHolder(t, zk.WorldACL(zk.PermAll), zk.AuthACL(zk.PermAll))
	})
}

// TestA1_CreatorOnlyACLRefusesTheThief: with a creator-only ACL on the lock
// parent and its candidates, and the participants authenticated with one
// digest identity, a session of another identity gets NoAuth when it
// deletes the holder's node; the node stays, the next candidate keeps
// waiting, and one holder remains (claim A1, §7 ¶6).
func TestA1_CreatorOnlyACLRefusesTheThief(t *testing.T) {
	claims.Open(t, "A1")
	sc := scene.NewACLScene(t, zk.AuthACL(zk.PermAll), zk.AuthACL(zk.PermAll))
	hA, pB := sc.HoldAndWait(t)
	stolen := sc.Steal(t, hA.Path)
	exists, _ := scene.StatOf(t, sc.O, hA.Path)
	st := pB.Settled()
	claims.Evidence(t, "creator-only ACL on the parent and the candidates (both carry %v on the server): T's delete of A's node got %v; A's node exists: %v; B still waits on A: %v, acquired: %v", scene.StoredACL(zk.AuthACL(zk.PermAll), scene.LockIdentity), stolen, exists, st.Waiting && st.Pred == path.Base(hA.Path), st.Acquired)
	if !errors.Is(stolen, zk.ErrNoAuth) {
		claims.Refuted(t, "A1", "T's delete of A's node got %v; want zk.ErrNoAuth", stolen)
	}
	if !exists || st.Done || !st.Waiting {
		claims.Refuted(t, "A1", "after T's attempt A's node exists=%v and B's acquisition done=%v (acquired %v, waiting %v); want A's node kept and B still waiting: one holder", exists, st.Done, st.Acquired, st.Waiting)
	}
	if err := hA.Release(scene.LockCtx(t)); err != nil {
		t.Fatalf("A: release: %v", err)
	}
	if _, err := pB.Result(); err != nil {
		t.Fatalf("B after A's release: %v", err)
	}
	sc.B.Log.Ok("holds after A released")
}

// thiefMakesSecondHolder is A1's proof: T deletes A's node, and B,
// waiting on it, acquires while A's hold was never released.
func thiefMakesSecondHolder(t *testing.T, parentACL, nodeACL []zk.ACL) {
	t.Helper()
	sc := scene.NewACLScene(t, parentACL, nodeACL)
	hA, pB := sc.HoldAndWait(t)
	stolen := sc.Steal(t, hA.Path)
	if stolen != nil {
		claims.RefutedNow(t, "A1", "T's delete of A's node under parent ACL %v, node ACL %v: got %v; want it to succeed", parentACL, nodeACL, stolen)
	}
	hB, err := pB.ResultOr(claims.RefutedNow)
	if err != nil {
		claims.RefutedNow(t, "A1", "after the theft B's acquisition returned %v; want a hold", err)
	}
	sc.B.Log.Ok("holds %s", path.Base(hB.Path))
	sc.A.Log.Info("A never released; its worker still acts on %s", path.Base(hA.Path))
	late := hA.Release(scene.LockCtx(t))
	sc.A.Log.Info("A's Release, when A gets to it: %v", late)
	claims.Evidence(t, "parent ACL %v, node ACL %v (both candidates carry %v on the server): T deleted A's node (err %v); B then held %s while A's hold was never released: two holders; A's later Release reports lost candidacy: %v", parentACL, nodeACL, scene.StoredACL(nodeACL, scene.LockIdentity), stolen, path.Base(hB.Path), errors.Is(late, lock.ErrLostCandidacy))
	if !errors.Is(late, lock.ErrLostCandidacy) {
		claims.BrokenCheck(t, "A1", "A's Release after the theft returned %v; want lock.ErrLostCandidacy", late)
	}
}

// requireServerOnLoopback judges E1 on a running server
// (harness.ServerOnLoopback): every address it listens on or its conf
// names is on loopback with a port chosen at run time, and its conf names
// the ports the harness uses.
func requireServerOnLoopback(t *testing.T, srv *zkserver.Server, standalone bool) {
	t.Helper()
	addrs, ports := harness.ServerOnLoopback(t, srv, standalone)
	for _, p := range ports {
		if _, port, _ := net.SplitHostPort(p.Own); port != p.Conf {
			claims.Refuted(t, "E1", "got the harness using %s and %s saying %s=%s; want the same port", p.Own, srv.Label, p.Key, p.Conf)
		}
	}
	for _, a := range addrs {
		requireRunTimeAddr(t, a.What, a.Addr, a.How)
	}
}

// requireRunTimeAddr fails E1 unless addr is 127.0.0.1 with a port chosen
// at run time (see zkserver.RunTimePort); how, if set, is the way it must
// have been chosen.
func requireRunTimeAddr(t *testing.T, what, addr, how string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	got := zkserver.RunTimePort(n)
	switch {
	case err != nil || perr != nil:
		claims.Refuted(t, "E1", "%s %q: got an address that does not parse (%v %v); want 127.0.0.1:port", what, addr, err, perr)
	case host != "127.0.0.1":
		claims.Refuted(t, "E1", "%s %s; got host %s, want 127.0.0.1", what, addr, host)
	case got == "" || how != "" && got != how:
		claims.Refuted(t, "E1", "%s %s; got port %d, chosen %q; want one chosen at run time (%s)", what, addr, n, got, cmp.Or(how, "drawn by the harness or assigned by the kernel"))
	}
}

// scopeLeavesNothing judges E3 on a scenario's closed Scope
// (harness.ScopeLeavesNothing): its server process, its ports, its temp
// dir and its goroutines are gone.
func scopeLeavesNothing(t *testing.T) {
	left := harness.ScopeLeavesNothing(t)
	if len(left.Live) > 0 {
		claims.Refuted(t, "E3", "servers of the scenario still tracked as running after it: %v; want none", left.Live)
	}
	if !errors.Is(left.Kill, syscall.ESRCH) {
		claims.Refuted(t, "E3", "server process %d still exists (kill -0: %v)", left.PID, left.Kill)
	}
	for _, a := range left.Accepting {
		claims.Refuted(t, "E3", "%s still accepts connections", a)
	}
	if !errors.Is(left.Stat, os.ErrNotExist) {
		claims.Refuted(t, "E3", "temp dir %s still exists (%v)", left.Dir, left.Stat)
	}
	if left.Leak != "" {
		claims.Refuted(t, "E3", "goroutines of the scenario left after its Scope closed:\n%s", left.Leak)
	}
	t.Logf("after close: process gone, ports closed, temp dir removed, no goroutine of the scenario left")
}

// interruptLeavesNothing judges E3 on children of this binary interrupted
// while a server is being made (harness.InterruptLeavesNothing): each
// exits by its interrupt handler and leaves nothing behind.
func interruptLeavesNothing(t *testing.T) {
	for _, c := range harness.InterruptLeavesNothing(t) {
		if c.Code != 130 && c.Code != 1 {
			claims.BrokenCheck(t, "E3", "interrupted at %s the child exited %d; want 130 (interrupted) or 1 (failed first):\n%s", c.Point, c.Code, c.Out)
		}
		if !strings.Contains(c.Out, "zk19: interrupt") {
			claims.BrokenCheck(t, "E3", "interrupted at %s the child never saw the interrupt; want its handler to run:\n%s", c.Point, c.Out)
		}
		if len(c.Left) > 0 {
			claims.Refuted(t, "E3", "interrupted at %s the child left %v; want nothing", c.Point, c.Left)
		}
	}
}

// scopeLeavesNothingOnTheUsersServer judges E3 on the external backend
// (harness.ScopeLeavesNothingOnTheUsersServer): once the scenario's Scope
// closed, its proxy no longer accepts, none of its goroutines is left and
// its parent is gone from the user's server.
func scopeLeavesNothingOnTheUsersServer(t *testing.T) {
	left := harness.ScopeLeavesNothingOnTheUsersServer(t)
	if left.ProxyAccepts {
		claims.Refuted(t, "E3", "the proxy's %s still accepts connections; want it closed", left.Proxy)
	}
	if left.Leak != "" {
		claims.Refuted(t, "E3", "goroutines of the scenario left after its Scope closed:\n%s", left.Leak)
	}
	if left.ExistsErr != nil {
		claims.NotShown(t, "E3", "O: exists %s: %v", left.Root, left.ExistsErr)
	}
	claims.Evidence(t, "after the scenario's Scope closed, its parent %s exists on the user's server: %v", left.Root, left.Exists)
	if left.Exists {
		claims.Refuted(t, "E3", "%s is still on the user's server after the scenario's Scope closed; want it removed with everything below it", left.Root)
	}
}

// interruptLeavesNoParentOnTheUsersServer judges E3 on a child interrupted
// right after it made its test's parent on the user's server
// (harness.InterruptOnTheUsersServer): its handler removed the parent.
func interruptLeavesNoParentOnTheUsersServer(t *testing.T) {
	c := harness.InterruptOnTheUsersServer(t, "TestL1_FreshGUIDEphemeralSequentialUnderOneParent")
	switch {
	case c.Code != 130 || !strings.Contains(c.Out, "zk19: interrupt"):
		claims.BrokenCheck(t, "E3", "the child exited %d without its interrupt handler running; want 130 from the handler:\n%s", c.Code, c.Out)
	case c.Left:
		claims.Refuted(t, "E3", "%s is still on the user's server after the interrupted child; want its handler to have removed it", c.Root)
	case !strings.Contains(c.Removed, c.Root):
		claims.BrokenCheck(t, "E3", "the child's handler did not name %s among the parents it removed (%q): something else removed it, and the interrupt path was not shown", c.Root, c.Removed)
	}
}

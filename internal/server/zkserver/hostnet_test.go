package zkserver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/reaper"
)

// probeImage is an image the probe can run, or a skip.
func probeImage(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped: the host-network probe starts a container (-short)")
	}
	img, _, err := containerImage(false)
	if err != nil {
		t.Skipf("skipped: no image for the host-network probe: %v", err)
	}
	return img
}

// deadAddr is a loopback address nobody listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	// Bound, never listening, until the test ends: a dial is refused, and
	// no listener of a test running beside this one (a proxy on port 0, a
	// server's drawn port) can take the port meanwhile. A listener closed
	// at once left it free, and once a proxy got it and answered ruok.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// assertOneLineAdvice checks the error a user on Docker Desktop without
// host networking reads at the start of the suite.
func assertOneLineAdvice(t *testing.T, err error, detail string) {
	t.Helper()
	var h errHostNet
	if !errors.As(err, &h) {
		t.Fatalf("got %v; want the host-network error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("got a message of %d lines; want one line:\n%s", strings.Count(msg, "\n")+1, msg)
	}
	for _, want := range []string{detail, "Enable host networking", "Docker Desktop 4.34+", "ZK19_BACKEND=process", "ZK19_ZOOKEEPER_HOME"} {
		if !strings.Contains(msg, want) {
			t.Errorf("got %q; want it to say %q", msg, want)
		}
	}
	t.Logf("the one line: %s", msg)
}

// assertNoProbeLeft checks that the probe removed its container.
func assertNoProbeLeft(t *testing.T) {
	t.Helper()
	left, err := reaper.Leftovers(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		if strings.Contains(l, "hostnet-probe") {
			t.Errorf("got %s after the probe; want its container removed", l)
		}
	}
}

// noSharedProbe makes checkHostNetwork probe, whatever another binary of
// this go test found.
func noSharedProbe(t *testing.T) {
	shareProbes = false
	t.Cleanup(func() { shareProbes = true })
}

func TestHostNetworkProbeSeesTheLoopbackSharedBothWays(t *testing.T) {
	img := probeImage(t)
	noSharedProbe(t)
	why, err := checkHostNetwork(img, "image present")
	if err != nil {
		t.Fatalf("got %v; want the probe to pass on a host network that works", err)
	}
	t.Logf("%s: %s", img, why)
	assertNoProbeLeft(t)
}

func TestHostNetworkProbeFailsInOneLine(t *testing.T) {
	img := probeImage(t)
	t.Run("this host cannot dial the container", func(t *testing.T) {
		dead := deadAddr(t)
		p := hostNetProbe{within: readyWithin, client: func(int) string { return dead }, peer: addr}
		assertOneLineAdvice(t, p.run(img), "this host cannot dial the container's "+dead)
		assertNoProbeLeft(t)
	})
	t.Run("the container cannot dial this host", func(t *testing.T) {
		dead := deadAddr(t)
		p := hostNetProbe{within: readyWithin, client: addr, peer: func(int) string { return dead }}
		assertOneLineAdvice(t, p.run(img), "the container cannot dial "+dead+" on this host")
		assertNoProbeLeft(t)
	})
}

// TestResolveWhenTheHostNetworkIsMissing checks Resolve's choices with a
// probe that fails as it does on Docker Desktop without host networking.
func TestResolveWhenTheHostNetworkIsMissing(t *testing.T) {
	img := probeImage(t)
	noSharedProbe(t)
	orig := runProbe
	t.Cleanup(func() { runProbe = orig })
	runProbe = func(img string) error { return errHostNet{img, "this host cannot dial the container's 127.0.0.1:1"} }
	t.Setenv(envServers, "")
	t.Setenv(envJar, "")

	t.Run("container asked for", func(t *testing.T) {
		t.Setenv(envBackend, "container")
		_, err := resolve()
		assertOneLineAdvice(t, err, "ZK19_BACKEND=container: a container of "+img)
	})
	t.Run("auto with no ZooKeeper install", func(t *testing.T) {
		t.Setenv(envBackend, "auto")
		t.Setenv(envHome, t.TempDir()) // no lib/: the process backend is unusable
		b, err := resolve()
		if err == nil {
			t.Fatalf("got the %s backend (%s); want the host-network error", b.Kind, b.Why)
		}
		assertOneLineAdvice(t, err, "a container of "+img)
	})
	t.Run("auto with a ZooKeeper install", func(t *testing.T) {
		t.Setenv(envBackend, "auto")
		t.Setenv(envHome, "")
		if _, err := processBackend(""); err != nil {
			t.Skipf("skipped: no process backend here: %v", err)
		}
		b, err := resolve()
		if err != nil || b.Kind != Process || !strings.Contains(b.Why, "do not share 127.0.0.1") {
			t.Fatalf("got %s (%s), %v; want the process backend, saying why not the container one", b.Kind, b.Why, err)
		}
		t.Logf("auto chose: %s", b.Why)
	})
}

// TestHostNetworkProbeIsSharedWithinOneRun: the binaries of one go test
// share a probe's pass. A binary that looks while another probes waits for
// its answer; a failure is not shared; a binary a test starts inherits the
// pass. The run is one of this test's own, and no probe runs.
func TestHostNetworkProbeIsSharedWithinOneRun(t *testing.T) {
	t.Setenv("ZK19_CACHE", t.TempDir())
	t.Setenv(envProbed, "")
	orig := probeRun
	t.Cleanup(func() { probeRun = orig })
	run := 0
	probeRun = func() (string, bool) { return fmt.Sprintf("go-%d-1", run), true }
	const img = "zk19/example:1"

	run = 1
	if earlier, done := sharedProbe(img); earlier != "" {
		t.Fatalf("first look of run 1: got %q; want no earlier probe", earlier)
	} else {
		done(false, time.Second)
	}
	earlier, done := sharedProbe(img)
	if earlier != "" {
		t.Fatalf("after a failed probe: got %q; want no earlier probe (a failure is not shared)", earlier)
	}
	looked := make(chan string)
	go func() { e, d := sharedProbe(img); d(false, 0); looked <- e }()
	select {
	case e := <-looked:
		t.Fatalf("a sibling looking while this binary probes: got %q at once; want it to wait for the answer", e)
	case <-time.After(200 * time.Millisecond): // a bound on a wait that must not end, not a guess at one that must
	}
	t.Setenv(envProbed, "") // done sets it for this process's children; the sibling stands for another binary
	done(true, 2*time.Second)
	want := fmt.Sprintf("probed by pid %d of this go test in 2s", os.Getpid())
	if e := <-looked; e != want {
		t.Fatalf("the sibling that waited: got %q; want %q", e, want)
	}
	if got := os.Getenv(envProbed); got != img {
		t.Fatalf("%s after the sibling found the pass: got %q; want %q, for the binaries its tests start", envProbed, got, img)
	}
	if e, _ := sharedProbe(img); e != "probed by the test binary that started this one" {
		t.Fatalf("a child binary: got %q; want the parent's pass", e)
	}
	t.Setenv(envProbed, "")
	if e, d := sharedProbe("zk19/other:2"); e != "" {
		t.Fatalf("another image: got %q; want no earlier probe", e)
	} else {
		d(false, 0)
	}
	run = 2
	if e, d := sharedProbe(img); e != "" {
		t.Fatalf("another go test run: got %q; want no earlier probe", e)
	} else {
		d(false, 0)
	}
}

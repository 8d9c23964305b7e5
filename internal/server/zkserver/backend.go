package zkserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/tb"
)

// Kind names a backend.
type Kind string

// The backends.
const (
	Process   Kind = "process"   // a local java QuorumPeerMain per server
	Container Kind = "container" // a Docker container per server (testcontainers-go), host network
	External  Kind = "external"  // servers that already run (ZK19_SERVERS); client proxies only
)

// Environment variables read by Resolve.
const (
	envBackend = "ZK19_BACKEND"          // process | container | external | auto (default)
	envJar     = "ZK19_ZOOKEEPER_JAR"    // a zookeeper.jar (process backend)
	envHome    = "ZK19_ZOOKEEPER_HOME"   // a ZooKeeper distribution with lib/*.jar (process backend)
	envImage   = "ZK19_IMAGE"            // the image (container backend)
	envServers = "ZK19_SERVERS"          // host:port,... (external backend)
	envLog     = "ZK19_SERVER_LOG_LEVEL" // error | warn (default) | info | debug
)

// Images the container backend knows. The official image is the default; the
// local one is what scripts/setup builds from Debian trixie where nothing can
// be pulled. The local tag never pretends to be the official one.
const (
	officialImage = "zookeeper:3.9.6"
	localImage    = "zk19/zookeeper:3.9.3-trixie"
	debianJar     = "/usr/share/java/zookeeper.jar"
	debianSLF4J   = "/usr/share/java/slf4j-simple.jar"
)

// howToGetAServer is the advice printed when no backend is usable.
const howToGetAServer = `no ZooKeeper server is available to zk19. Either:
  - run scripts/setup (installs Debian's openjdk-17-jre-headless, libzookeeper-java and
    libslf4j-java for the process backend, and builds a local image where Docker has no registry), or
  - set ZK19_ZOOKEEPER_JAR=/path/to/zookeeper.jar or ZK19_ZOOKEEPER_HOME=/path/to/apache-zookeeper-x.y.z-bin
    with a java on PATH (process backend), or
  - run a Docker engine that has, or can pull, ZK19_IMAGE (default zookeeper:3.9.6) (container backend), or
  - set ZK19_BACKEND=external ZK19_SERVERS=host:port,... to use servers that already run.
Use go test -short to skip the server tests instead.`

// Backend is the resolved way of getting servers.
type Backend struct {
	Kind      Kind
	Java      string   // process: the java binary
	Classpath string   // process: the class path
	Image     string   // container: the image
	Servers   []string // external: the client addresses
	Why       string   // how it was chosen
}

// Describe is the backend's line in the record header.
func (b Backend) Describe() string {
	switch b.Kind {
	case Process:
		return fmt.Sprintf("process (java %s, classpath %s)", b.Java, b.Classpath)
	case Container:
		return fmt.Sprintf("container (image %s, host network; %s)", b.Image, prepareTestcontainers())
	case External:
		return fmt.Sprintf("external (%s)", strings.Join(b.Servers, ","))
	}
	return string(b.Kind)
}

// CanInjectFaults reports whether the harness controls the servers' lifecycle
// and addresses, which every claim that restarts, pauses or wipes a server
// or holds a server-to-server link needs. Client-side faults (a client
// proxy in front of a server) work on every backend.
func (b Backend) CanInjectFaults() bool { return b.Kind != External }

// errNoServer is returned by Resolve when no backend is usable.
//
//lint:ignore ST1005 the advice is printed as it is, a list ending in a sentence
var errNoServer = errors.New(howToGetAServer)

var (
	resolveOnce sync.Once
	resolved    Backend
	resolveErr  error
)

// Resolve picks the backend once per test binary from ZK19_BACKEND:
// auto (the default) takes the container backend when a Docker engine answers,
// the image is present or pullable and a container on the host network shares
// 127.0.0.1 with this host (see hostNetProbe), else the process backend when a
// ZooKeeper install is found. When neither works it returns errNoServer, or,
// when only the host network is missing, one line saying how to get it.
func Resolve() (Backend, error) {
	resolveOnce.Do(func() { resolved, resolveErr = resolve() })
	return resolved, resolveErr
}

func resolve() (Backend, error) {
	want := Kind(strings.ToLower(strings.TrimSpace(os.Getenv(envBackend))))
	switch want {
	case Process:
		return processBackend("ZK19_BACKEND=process")
	case Container:
		img, why, err := containerImage(true)
		if err == nil {
			why, err = checkHostNetwork(img, why)
		}
		if err != nil {
			return Backend{}, fmt.Errorf("ZK19_BACKEND=container: %w", err)
		}
		return Backend{Kind: Container, Image: img, Why: "ZK19_BACKEND=container; " + why}, nil
	case External:
		s := splitServers(os.Getenv(envServers))
		if len(s) == 0 {
			return Backend{}, errors.New("ZK19_BACKEND=external needs ZK19_SERVERS, a comma-separated list of host:port")
		}
		return Backend{Kind: External, Servers: s, Why: "ZK19_BACKEND=external"}, nil
	case "", "auto":
	default:
		return Backend{}, fmt.Errorf("ZK19_BACKEND=%q: want process, container, external or auto", want)
	}
	if s := splitServers(os.Getenv(envServers)); len(s) > 0 {
		return Backend{Kind: External, Servers: s, Why: "auto: ZK19_SERVERS is set"}, nil
	}
	img, why, err := containerImage(false)
	if err != nil {
		if b, err := processBackend("auto: no usable image"); err == nil {
			return b, nil
		}
		return Backend{}, errNoServer
	}
	if why, err = checkHostNetwork(img, why); err == nil {
		return Backend{Kind: Container, Image: img, Why: "auto: " + why}, nil
	}
	// A laptop with Java and a ZooKeeper distribution still runs every claim.
	if b, perr := processBackend("auto: " + img + ": " + shortReason(err)); perr == nil {
		return b, nil
	}
	return Backend{}, err
}

func splitServers(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// LocalInstall finds a ZooKeeper install on this machine as the process
// backend would (ZK19_ZOOKEEPER_JAR, ZK19_ZOOKEEPER_HOME, Debian's
// libzookeeper-java), whatever backend runs the servers: the external
// backend's servers keep their jars elsewhere, and a claim that reads the
// official classes can use a local jar of the version they report.
func LocalInstall() (Backend, error) { return processBackend("a local install") }

func processBackend(why string) (Backend, error) {
	java := "java"
	if h := os.Getenv("JAVA_HOME"); h != "" {
		java = filepath.Join(h, "bin", "java")
	}
	javaPath, err := exec.LookPath(java)
	if err != nil {
		return Backend{}, fmt.Errorf("process backend: no java (%v)\n%s", err, howToGetAServer)
	}
	var cp []string
	switch {
	case os.Getenv(envJar) != "":
		jar := os.Getenv(envJar)
		if _, err := os.Stat(jar); err != nil {
			return Backend{}, fmt.Errorf("process backend: %s=%s: %v", envJar, jar, err)
		}
		cp = append(cp, jar)
		if _, err := os.Stat(debianSLF4J); err == nil {
			cp = append(cp, debianSLF4J)
		}
		why += "; " + envJar
	case os.Getenv(envHome) != "":
		home := os.Getenv(envHome)
		if _, err := os.Stat(filepath.Join(home, "lib")); err != nil {
			return Backend{}, fmt.Errorf("process backend: %s=%s has no lib/: %v", envHome, home, err)
		}
		cp = append(cp, filepath.Join(home, "lib", "*"), filepath.Join(home, "conf"))
		why += "; " + envHome
	default:
		if _, err := os.Stat(debianJar); err != nil {
			return Backend{}, fmt.Errorf("process backend: no %s (install libzookeeper-java) and neither %s nor %s is set\n%s",
				debianJar, envJar, envHome, howToGetAServer)
		}
		cp = append(cp, debianJar)
		if _, err := os.Stat(debianSLF4J); err == nil {
			cp = append(cp, debianSLF4J)
		}
		why += "; Debian's libzookeeper-java"
	}
	return Backend{Kind: Process, Java: javaPath, Classpath: strings.Join(cp, ":"), Why: why}, nil
}

// dockerOK reports whether a Docker engine answers.
func dockerOK() bool {
	if _, err := exec.LookPath("docker"); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").Run() == nil
}

func imagePresent(img string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "image", "inspect", img).Run() == nil
}

func imagePull(img string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "pull", "-q", img).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker pull %s: %v: %s", img, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// containerImage finds an image for the container backend: ZK19_IMAGE if set,
// else the official image, else the locally built one.
func containerImage(explicit bool) (string, string, error) {
	if !dockerOK() {
		return "", "", errors.New("no Docker engine answers `docker info`")
	}
	if img := os.Getenv(envImage); img != "" {
		if imagePresent(img) {
			return img, "ZK19_IMAGE present", nil
		}
		if err := imagePull(img); err != nil {
			return "", "", err
		}
		return img, "ZK19_IMAGE pulled", nil
	}
	if imagePresent(officialImage) {
		return officialImage, "official image present", nil
	}
	if imagePresent(localImage) {
		return localImage, "local image present (scripts/setup built it)", nil
	}
	if err := imagePull(officialImage); err != nil {
		return "", "", fmt.Errorf("%v; and no %s (run scripts/setup)", err, localImage)
	}
	return officialImage, "official image pulled", nil
}

// hostNetAdvice ends the one line printed when containers on the host
// network do not share this host's 127.0.0.1.
const hostNetAdvice = "turn host networking on (Docker Desktop 4.34+: Settings → Resources → Network → " +
	"Enable host networking, then Apply and restart), or run ZK19_BACKEND=process with ZK19_ZOOKEEPER_HOME " +
	"pointing at a ZooKeeper binary distribution (apache-zookeeper-x.y.z-bin) and a java on PATH"

// errHostNet says a probe container and this host do not share 127.0.0.1.
type errHostNet struct{ image, detail string }

func (e errHostNet) Error() string {
	return fmt.Sprintf("a container of %s on Docker's host network does not share 127.0.0.1 with this host (%s): %s",
		e.image, e.detail, hostNetAdvice)
}

// shortReason is err without the advice, for the record header's backend line.
func shortReason(err error) string {
	var h errHostNet
	if errors.As(err, &h) {
		return "its containers do not share 127.0.0.1 with this host (" + h.detail + ")"
	}
	return err.Error()
}

// hostNetProbe checks, before the container backend is chosen, what every
// claim needs of it: clients and link proxies on this host dial servers in
// containers on 127.0.0.1, and servers dial the link proxies there. Docker
// Engine on Linux shares the host's network namespace with such containers;
// Docker Desktop does only with host networking turned on, and otherwise
// runs them in its VM, where 127.0.0.1 is the VM's own.
//
// The probe is the image's own ZooKeeper, as member 1 of a two-member
// ensemble whose member 2's election port is a listener on this host. The
// server binds its client port before it opens election connections, so
// the listener's accept is the readiness signal for the dial back, and the
// server's "Cannot open channel" warning is the failure signal: no wait
// guesses how long a JVM takes to start.
type hostNetProbe struct {
	within time.Duration
	// client and peer give the address dialled for a real port: this host
	// dials client(probe server's client port); the probe server dials
	// peer(the listener's port). Tests point one at a port nobody listens on.
	client, peer func(port int) string
}

// runProbe is the probe Resolve runs; tests of Resolve's choices replace it.
var runProbe = hostNetProbe{within: readyWithin, client: addr, peer: addr}.run

// checkHostNetwork runs the probe against img and returns why, extended
// with how long the probe took, or the one-line error.
// A probe that another binary of the same go test command passed for img
// is not run again (sharedProbe).
func checkHostNetwork(img, why string) (string, error) {
	earlier, done := sharedProbe(img)
	if earlier != "" {
		return fmt.Sprintf("%s; 127.0.0.1 shared with a container both ways (%s)", why, earlier), nil
	}
	t0 := time.Now()
	err := runProbe(img)
	took := time.Since(t0)
	done(err == nil, took)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s; 127.0.0.1 shared with a container both ways (probe %v)", why,
		took.Round(100*time.Millisecond)), nil
}

// cannotOpen is the warning of a server that cannot dial a peer's election port.
const cannotOpen = "Cannot open channel to 2"

func (p hostNetProbe) run(img string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("host-network probe: %w", err)
	}
	accepted, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if c, err := ln.Accept(); err == nil {
			_ = c.Close()
			close(accepted)
		}
	}()
	defer func() { _ = ln.Close(); <-done }()
	all, err := allocatePorts(2)
	if err != nil {
		return fmt.Errorf("host-network probe: %w", err)
	}
	hostPort := ln.Addr().(*net.TCPAddr).Port
	o := buildOptions([]Option{WithPeerAddr(func(_, _ int, k PortKind, real string) string {
		if k == ElectionPort {
			return p.peer(hostPort)
		}
		return real
	})})
	log := NewLogWriter("", nil)
	log.Watch(cannotOpen)
	stop, err := startProbe(img, renderConfig(1, all, "/data", o), log)
	if err != nil {
		return fmt.Errorf("host-network probe: %w", err)
	}
	defer stop()
	return p.await(img, accepted, log, all[0].client, hostPort)
}

// startProbe starts the probe container, registered before it exists, and
// follows its log into log with docker logs: a container's log consumer
// stops when its start call returns. stop removes both.
func startProbe(img, cfg string, log *LogWriter) (stop func(), err error) {
	// QuorumCnxManager is quieter than warn by default; its warning is the signal.
	flags := jvmFlags("warn", map[string]string{"org.apache.zookeeper.server.quorum.QuorumCnxManager": "warn"})
	c, err := newContainer(Backend{Kind: Container, Image: img}, "hostnet-probe", 1, 2, cfg, flags, io.Discard)
	if err != nil {
		return nil, err
	}
	// The interrupt points count the servers tests make; the probe is none.
	c.probe = true
	if err := c.start(); err != nil {
		_ = c.close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	follow := exec.CommandContext(ctx, "docker", "logs", "--follow", c.name)
	follow.Stdout, follow.Stderr = log, log
	if err := follow.Start(); err != nil {
		cancel()
		_ = c.close()
		return nil, fmt.Errorf("docker logs %s: %w", c.name, err)
	}
	return func() {
		cancel()
		_ = follow.Wait()
		log.Close()
		_ = c.close()
	}, nil
}

// await waits for the probe server's dial of this host, then dials it back.
func (p hostNetProbe) await(img string, accepted <-chan struct{}, log *LogWriter, client, hostPort int) error {
	err := tb.WaitUntil(p.within, "the probe server to dial this host's "+p.peer(hostPort), func() (bool, string) {
		select {
		case <-accepted:
			return true, ""
		default:
		}
		if log.First(cannotOpen) != "" {
			return true, ""
		}
		return false, lastLogLine(log)
	})
	if err != nil {
		return fmt.Errorf("host-network probe with %s: %w", img, err)
	}
	select {
	case <-accepted:
	default:
		return errHostNet{img, "the container cannot dial " + p.peer(hostPort) + " on this host"}
	}
	target := p.client(client)
	answer, err := FourLetter(target, "ruok", 10*time.Second)
	if err != nil {
		return errHostNet{img, "this host cannot dial the container's " + target + ": " + oneLine(err.Error())}
	}
	if answer != "imok" {
		return errHostNet{img, fmt.Sprintf("ruok to the container's %s: got %q; want imok", target, answer)}
	}
	return nil
}

func lastLogLine(log *LogWriter) string {
	tail := log.Tail()
	if len(tail) == 0 {
		return "no output from the container yet"
	}
	return tail[len(tail)-1]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

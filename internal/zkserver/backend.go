package zkserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Kind names a backend.
type Kind string

// The backends.
const (
	Process   Kind = "process"   // a local java QuorumPeerMain per server
	Container Kind = "container" // a Docker container per server (testcontainers-go), host network
	External  Kind = "external"  // servers that already run (ZK19_SERVERS); no fault injection
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
// and addresses, which every fault-injecting claim needs.
func (b Backend) CanInjectFaults() bool { return b.Kind != External }

// errNoServer is returned by Resolve when no backend is usable.
var errNoServer = errors.New(howToGetAServer)

var (
	resolveOnce sync.Once
	resolved    Backend
	resolveErr  error
)

// Resolve picks the backend once per test binary from ZK19_BACKEND:
// auto (the default) takes the container backend when a Docker engine answers
// and the image is present or pullable, else the process backend when a
// ZooKeeper install is found, else it returns errNoServer.
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
		if err != nil {
			return Backend{}, fmt.Errorf("ZK19_BACKEND=container: %w", err)
		}
		return Backend{Kind: Container, Image: img, Why: "ZK19_BACKEND=container; " + why}, nil
	case External:
		s := splitServers(os.Getenv(envServers))
		if len(s) == 0 {
			return Backend{}, fmt.Errorf("ZK19_BACKEND=external needs ZK19_SERVERS=host:port,...")
		}
		return Backend{Kind: External, Servers: s, Why: "ZK19_BACKEND=external"}, nil
	case "", "auto":
	default:
		return Backend{}, fmt.Errorf("ZK19_BACKEND=%q: want process, container, external or auto", want)
	}
	if s := splitServers(os.Getenv(envServers)); len(s) > 0 {
		return Backend{Kind: External, Servers: s, Why: "auto: ZK19_SERVERS is set"}, nil
	}
	if img, why, err := containerImage(false); err == nil {
		return Backend{Kind: Container, Image: img, Why: "auto: " + why}, nil
	}
	if b, err := processBackend("auto: no usable image"); err == nil {
		return b, nil
	}
	return Backend{}, errNoServer
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

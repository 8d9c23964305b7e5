package zkserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/zk19/zk19/internal/server/reaper"
)

// prepareTestcontainers runs once before the first container: Ryuk, the
// reaper container, needs an image that may not be pullable; zk19 does
// Ryuk's job itself (Cleanup, KillAll on SIGINT, Reap at the next run), so
// Ryuk is disabled
// unless the user set TESTCONTAINERS_RYUK_DISABLED. Testcontainers' own
// lifecycle chatter is silenced: the harness logs what it does.
var prepareTestcontainers = sync.OnceValue(func() string {
	tclog.SetDefault(tclog.NewNoopLogger())
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		return "ryuk disabled by zk19 (TESTCONTAINERS_RYUK_DISABLED was unset)"
	}
	return "TESTCONTAINERS_RYUK_DISABLED=" + os.Getenv("TESTCONTAINERS_RYUK_DISABLED")
})

// containerRunner runs one server in a container on the host network, with
// the harness's own zoo.cfg at /conf/zoo.cfg. Host networking keeps the
// config identical to the process backend: the server binds 127.0.0.1 (E1),
// and the proxies on server-to-server links work unchanged.
type containerRunner struct {
	b     Backend
	name  string
	id    int
	cfg   string
	flags []string // the JVM's flags (see jvmFlags)
	out   io.Writer
	probe bool // the host-network probe (backend.go): no test's server, so no interrupt point

	mu     sync.Mutex
	ctr    testcontainers.Container
	up     bool
	paused bool // docker-paused: a stop unpauses it first
	state  struct {
		at      time.Time // when docker last said whether it runs
		running bool
	}
	attempted bool // creation began: docker may know the name
}

var ctrSeq struct {
	sync.Mutex
	n int
}

// newContainer registers a server container under a name of its own; start
// creates it, so the interrupt path knows the name before docker does.
func newContainer(b Backend, testName string, id, n int, cfg string, flags []string, out io.Writer) (*containerRunner, error) {
	ctrSeq.Lock()
	ctrSeq.n++
	seq := ctrSeq.n
	ctrSeq.Unlock()
	// The unique part comes first: a long test name is cut, not the owner
	// or the sequence number.
	name := fmt.Sprintf("zk19-%s-%d-zk%d-%s", reaper.Self(), seq, id, SafeName(testName))
	if len(name) > 120 {
		name = name[:120]
	}
	c := &containerRunner{b: b, name: name, id: id, cfg: cfg, flags: flags, out: out}
	if err := register(c, "container "+name); err != nil {
		return nil, err
	}
	return c, nil
}

type logSink struct{ w io.Writer }

func (l logSink) Accept(g testcontainers.Log) { _, _ = l.w.Write(g.Content) }

func (c *containerRunner) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Checked under c.mu: KillAll, which sets it, waits for c.mu, so a
	// creation in flight ends before KillAll removes the container.
	if isStopping() {
		return errStopping
	}
	ctx, started := startContext()
	defer started()
	if c.ctr != nil { // restart after stop: same container, same /data
		if err := c.ctr.Start(ctx); err != nil {
			return fmt.Errorf("start container %s: %w", c.name, err)
		}
		c.up, c.state.at = true, time.Time{}
		return nil
	}
	prepareTestcontainers()
	command, err := imageCommand(c.b.Image)
	if err != nil {
		return err
	}
	c.attempted = true
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: c.request(command), Started: true})
	if ctr != nil {
		c.ctr = ctr
	}
	if err != nil {
		return fmt.Errorf("start container %s from %s: %w", c.name, c.b.Image, err)
	}
	c.up, c.state.at = true, time.Time{}
	return nil
}

// request describes the container: labelled with the harness and its owner
// (this process), so the reaper of a later run can remove it if this
// process dies without doing so. Its entrypoint is startScript in front of
// command, the image's own entrypoint and command.
func (c *containerRunner) request(command []string) testcontainers.ContainerRequest {
	return testcontainers.ContainerRequest{
		Image:      c.b.Image,
		Name:       c.name,
		Labels:     map[string]string{reaper.ContainerLabel: "1", reaper.OwnerLabel: reaper.Self().String()},
		Entrypoint: append([]string{"/bin/sh", "-c", startScript, "zk19-start"}, command...),
		Cmd:        []string{},
		Env: map[string]string{
			"ZOO_MY_ID":         strconv.Itoa(c.id),
			envZooCfg:           c.cfg,
			"JVMFLAGS":          "-Xmx256m -XX:+UseSerialGC",
			"JAVA_TOOL_OPTIONS": strings.Join(c.flags, " "),
		},
		HostConfigModifier: func(hc *container.HostConfig) { hc.NetworkMode = "host" },
		LogConsumerCfg:     &testcontainers.LogConsumerConfig{Consumers: []testcontainers.LogConsumer{logSink{c.out}}},
		LifecycleHooks: []testcontainers.ContainerLifecycleHooks{{
			PostCreates: []testcontainers.ContainerHook{func(context.Context, testcontainers.Container) error {
				if !c.probe {
					interruptAt(atContainerCreate)
				}
				return nil
			}},
		}},
	}
}

// startScript writes the harness's zoo.cfg (from envZooCfg) to
// /conf/zoo.cfg and, unless /data keeps one from an earlier start, the
// server's id to /data/myid, then execs the image's own entrypoint. It
// replaces copying the two files into the container: each copy had docker
// mount the container's fuse-overlayfs and run a helper process, about
// 0.2 CPU s a copy on this 2-core machine, where the server's JVM needs
// 0.7 to start. On a restart of the same container it runs again; /data
// keeps its myid.
const startScript = `set -e
mkdir -p /conf /data
printf '%s\n' "$` + envZooCfg + `" > /conf/zoo.cfg
[ -s /data/myid ] || printf '%s\n' "$ZOO_MY_ID" > /data/myid
exec "$@"`

// envZooCfg carries the server's zoo.cfg into its container.
const envZooCfg = "ZK19_ZOO_CFG"

// pullWithin bounds the pull of an image that is not present yet.
const pullWithin = 5 * time.Minute

// imageCommands caches imageCommand per image.
var imageCommands sync.Map // image -> []string

// imageCommand is image's own entrypoint followed by its command, which
// startScript execs. An image that is not present yet is pulled first
// (Resolve has checked that it can be).
func imageCommand(image string) ([]string, error) {
	if v, ok := imageCommands.Load(image); ok {
		return v.([]string), nil
	}
	inspect := func() (string, error) {
		return reaper.DockerCLI("image", "inspect", "-f", "{{json .Config.Entrypoint}}\n{{json .Config.Cmd}}", image)
	}
	out, err := inspect()
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), pullWithin)
		pulled, perr := exec.CommandContext(ctx, "docker", "pull", "-q", image).CombinedOutput()
		cancel()
		if perr != nil {
			return nil, fmt.Errorf("image %s: %v; docker pull: %v: %s", image, err, perr, strings.TrimSpace(string(pulled)))
		}
		if out, err = inspect(); err != nil {
			return nil, fmt.Errorf("image %s: %w", image, err)
		}
	}
	var command []string
	for _, line := range strings.SplitN(strings.TrimSpace(out), "\n", 2) {
		var part []string
		if err := json.Unmarshal([]byte(line), &part); err != nil {
			return nil, fmt.Errorf("image %s: entrypoint and command %q: %w", image, out, err)
		}
		command = append(command, part...)
	}
	if len(command) == 0 {
		return nil, fmt.Errorf("image %s has neither an entrypoint nor a command", image)
	}
	imageCommands.Store(image, command)
	return command, nil
}

// startContext bounds a container's start by two minutes without ending,
// when the start returns, the log production that testcontainers derives
// from the same context (a context cancelled at return stopped it at once,
// and no server line of a container ever reached the record). The log
// production ends with the container. Call started when the start returns.
func startContext() (ctx context.Context, started func()) {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(2*time.Minute, cancel)
	return ctx, func() { timer.Stop() }
}

// aliveFor is how long alive's answer from docker is taken as still true.
// WaitMode asks at every check (every tb.WaitInterval) while srvr fails, as
// it does throughout a server's start; an inspection each time cost
// dockerd more CPU than the start itself needs of it. An exit is seen at
// most aliveFor late.
const aliveFor = 250 * time.Millisecond

func (c *containerRunner) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil || !c.up {
		return false
	}
	if time.Since(c.state.at) < aliveFor {
		return c.state.running
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.ctr.State(ctx)
	c.state.at, c.state.running = time.Now(), err == nil && st.Running
	return c.state.running
}

// stop docker-stops the container and keeps it, so that Restart keeps /data.
func (c *containerRunner) stop(kill bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if kill {
		_ = exec.CommandContext(ctx, "docker", "kill", c.ctr.GetContainerID()).Run()
	}
	timeout := 10 * time.Second
	if c.up {
		if c.paused {
			_ = exec.CommandContext(ctx, "docker", "unpause", c.ctr.GetContainerID()).Run()
		}
		c.paused = false
		if err := c.ctr.Stop(ctx, &timeout); err != nil && !kill {
			return fmt.Errorf("stop container %s: %w", c.name, err)
		}
	}
	c.up = false
	return nil
}

// close removes the container; by name when creation failed before
// testcontainers handed it back (docker may have made it all the same).
func (c *containerRunner) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer unregister(c)
	if c.ctr == nil {
		if !c.attempted {
			return nil
		}
		c.attempted = false
		if _, err := reaper.DockerCLI("rm", "-f", c.name); err != nil && !strings.Contains(err.Error(), "No such container") {
			return err
		}
		return nil
	}
	err := testcontainers.TerminateContainer(c.ctr, testcontainers.StopTimeout(0))
	c.ctr, c.up, c.attempted = nil, false, false
	return err
}

// wipe removes the stopped container, and /data with it: the next start
// creates a fresh one under the same name, still registered.
func (c *containerRunner) wipe() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil {
		return nil
	}
	if c.up {
		return fmt.Errorf("wipe container %s: it still runs", c.name)
	}
	err := testcontainers.TerminateContainer(c.ctr, testcontainers.StopTimeout(0))
	c.ctr, c.attempted = nil, false
	if err != nil {
		return fmt.Errorf("wipe container %s: %w", c.name, err)
	}
	return nil
}

func (c *containerRunner) docker(verb string, paused bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil || !c.up {
		return fmt.Errorf("container %s is not running", c.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", verb, c.ctr.GetContainerID()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %s %s: %v: %s", verb, c.name, err, strings.TrimSpace(string(out)))
	}
	c.paused = paused
	return nil
}

func (c *containerRunner) pause() error  { return c.docker("pause", true) }
func (c *containerRunner) resume() error { return c.docker("unpause", false) }

func (c *containerRunner) pid() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil || !c.up {
		return 0, fmt.Errorf("container %s is not running", c.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Pid}}", c.ctr.GetContainerID()).Output()
	if err != nil {
		return 0, fmt.Errorf("docker inspect %s: %w", c.name, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

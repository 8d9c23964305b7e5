package zkserver

import (
	"context"
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
)

// prepareTestcontainers runs once before the first container: Ryuk, the
// reaper container, needs an image that may not be pullable; zk19 removes
// its own containers (Cleanup, and KillAll on SIGINT), so Ryuk is disabled
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

// ContainerLabel marks every container the harness starts, so that a leak
// is easy to find: docker ps -a --filter label=org.zk19.harness
const ContainerLabel = "org.zk19.harness"

// containerRunner runs one server in a container on the host network, with
// the harness's own zoo.cfg at /conf/zoo.cfg. Host networking keeps the
// config identical to the process backend: the server binds 127.0.0.1 (E1),
// and the proxies on server-to-server links work unchanged.
type containerRunner struct {
	b     Backend
	name  string
	id    int
	cfg   string
	level string
	out   io.Writer

	mu  sync.Mutex
	ctr testcontainers.Container
	up  bool
}

var ctrSeq struct {
	sync.Mutex
	n int
}

func newContainer(b Backend, testName string, id, n int, cfg, level string, out io.Writer) (*containerRunner, error) {
	ctrSeq.Lock()
	ctrSeq.n++
	seq := ctrSeq.n
	ctrSeq.Unlock()
	name := fmt.Sprintf("zk19-%s-%d-%d-%d", strings.ToLower(unsafeName.ReplaceAllString(testName, "-")), id, seq, time.Now().UnixNano()%100000)
	if len(name) > 120 {
		name = name[:120]
	}
	return &containerRunner{b: b, name: name, id: id, cfg: cfg, level: level, out: out}, nil
}

type logSink struct{ w io.Writer }

func (l logSink) Accept(g testcontainers.Log) { _, _ = l.w.Write(g.Content) }

func (c *containerRunner) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if c.ctr != nil { // restart after stop: same container, same /data
		if err := c.ctr.Start(ctx); err != nil {
			return fmt.Errorf("start container %s: %w", c.name, err)
		}
		c.up = true
		track(c, "container "+c.name)
		return nil
	}
	prepareTestcontainers()
	jvm := strings.Join(jvmFlags(c.level), " ")
	req := testcontainers.ContainerRequest{
		Image:  c.b.Image,
		Name:   c.name,
		Labels: map[string]string{ContainerLabel: "1"},
		Env: map[string]string{
			"ZOO_MY_ID":         strconv.Itoa(c.id), // the official image writes /data/myid from it
			"JVMFLAGS":          "-Xmx256m -XX:+UseSerialGC",
			"JAVA_TOOL_OPTIONS": jvm,
		},
		Files: []testcontainers.ContainerFile{
			{Reader: strings.NewReader(c.cfg), ContainerFilePath: "/conf/zoo.cfg", FileMode: 0o644},
			{Reader: strings.NewReader(strconv.Itoa(c.id) + "\n"), ContainerFilePath: "/data/myid", FileMode: 0o644},
		},
		HostConfigModifier: func(hc *container.HostConfig) { hc.NetworkMode = "host" },
		LogConsumerCfg:     &testcontainers.LogConsumerConfig{Consumers: []testcontainers.LogConsumer{logSink{c.out}}},
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if ctr != nil {
		c.ctr = ctr
		track(c, "container "+c.name)
	}
	if err != nil {
		return fmt.Errorf("start container %s from %s: %w", c.name, c.b.Image, err)
	}
	c.up = true
	return nil
}

func (c *containerRunner) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil || !c.up {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.ctr.State(ctx)
	return err == nil && st.Running
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
		_ = exec.CommandContext(ctx, "docker", "unpause", c.ctr.GetContainerID()).Run()
		if err := c.ctr.Stop(ctx, &timeout); err != nil && !kill {
			return fmt.Errorf("stop container %s: %w", c.name, err)
		}
	}
	c.up = false
	untrack(c)
	return nil
}

// close removes the container.
func (c *containerRunner) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctr == nil {
		return nil
	}
	err := testcontainers.TerminateContainer(c.ctr, testcontainers.StopTimeout(0))
	c.ctr, c.up = nil, false
	untrack(c)
	return err
}

func (c *containerRunner) docker(verb string) error {
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
	return nil
}

func (c *containerRunner) pause() error  { return c.docker("pause") }
func (c *containerRunner) resume() error { return c.docker("unpause") }

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

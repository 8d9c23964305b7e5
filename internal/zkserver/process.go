package zkserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// processRunner runs one server as a java QuorumPeerMain child process.
type processRunner struct {
	b     Backend
	dir   string
	cfg   string
	level string
	out   io.Writer
	name  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

func newProcess(b Backend, dir string, id, n int, cfg, level string, out io.Writer) (*processRunner, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	if n > 1 {
		if err := os.WriteFile(filepath.Join(dir, "data", "myid"), []byte(strconv.Itoa(id)+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return &processRunner{b: b, dir: dir, cfg: filepath.Join(dir, "zoo.cfg"), level: level, out: out, name: fmt.Sprintf("process server %d (%s)", id, dir)}, nil
}

// jvmFlags keep a test server small and quick to start.
func jvmFlags(level string) []string {
	return []string{
		"-Xmx256m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"-Dzookeeper.admin.enableServer=false",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=" + level,
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-Dorg.slf4j.simpleLogger.showShortLogName=true",
		// Election connections are dropped and re-dialled by design (the
		// smaller id's dial is replaced by the larger id's): that chatter
		// is not evidence. The nemesis logs the faults it injects.
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.quorum.QuorumCnxManager=" + quieter(level),
		// Start-up notes and the per-connection "old client" warning (the Go
		// client sends no read-only flag) repeat in every scenario.
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.quorum.QuorumPeerMain=" + quieter(level),
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.ServerCnxnFactory=" + quieter(level),
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.ZooKeeperServer=" + quieter(level),
	}
}

// quieter returns the level one step above level.
func quieter(level string) string {
	switch level {
	case "debug":
		return "info"
	case "info":
		return "warn"
	default:
		return "error"
	}
}

func (p *processRunner) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s already runs", p.name)
	}
	args := append(jvmFlags(p.level), "-cp", p.b.Classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", p.cfg)
	cmd := exec.Command(p.b.Java, args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// The server dies with the test binary, even on SIGKILL of the binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	track(p, p.name)
	return nil
}

func (p *processRunner) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stopGrace bounds a graceful stop before SIGKILL.
const stopGrace = 10 * time.Second

func (p *processRunner) stop(kill bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	defer func() { p.cmd = nil; untrack(p) }()
	proc := p.cmd.Process
	_ = proc.Signal(syscall.SIGCONT) // a paused server cannot handle SIGTERM
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := proc.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
		_ = proc.Kill()
		<-p.done
		return nil
	}
}

func (p *processRunner) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s is not running", p.name)
	}
	return p.cmd.Process.Signal(sig)
}

// close kills the server: its data dies with the test, so a graceful
// shutdown would only cost time.
func (p *processRunner) close() error { return p.stop(true) }

func (p *processRunner) pause() error  { return p.signal(syscall.SIGSTOP) }
func (p *processRunner) resume() error { return p.signal(syscall.SIGCONT) }

func (p *processRunner) pid() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0, fmt.Errorf("%s is not running", p.name)
	}
	return p.cmd.Process.Pid, nil
}

package zkserver

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// processRunner runs one server as a java QuorumPeerMain child process.
type processRunner struct {
	b     Backend
	dir   string
	id, n int
	cfg   string   // zoo.cfg's content
	flags []string // the JVM's flags (see jvmFlags)
	out   io.Writer
	name  string
	// archive: this server makes the class archive (archive.go): no test's
	// server, so no interrupt point, and no archive to map yet.
	archive bool

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// newProcess registers a server process to be run from dir; start makes
// dir and writes its files, so that nothing exists before it is registered.
func newProcess(b Backend, dir string, id, n int, cfg string, flags []string, out io.Writer) (*processRunner, error) {
	p := &processRunner{b: b, dir: dir, id: id, n: n, cfg: cfg, flags: flags, out: out, name: fmt.Sprintf("process server %d (%s)", id, dir)}
	if err := register(p, p.name); err != nil {
		return nil, err
	}
	return p, nil
}

// writeFiles writes zoo.cfg and (ensembles) data/myid into p.dir.
func (p *processRunner) writeFiles() error {
	if err := os.MkdirAll(filepath.Join(p.dir, "data"), 0o755); err != nil {
		return err
	}
	if p.n > 1 {
		if err := os.WriteFile(filepath.Join(p.dir, "data", "myid"), []byte(strconv.Itoa(p.id)+"\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(p.dir, "zoo.cfg"), []byte(p.cfg), 0o644)
}

// jvmFlags keep a test server small and quick to start.
func jvmFlags(level string, loggers map[string]string) []string {
	flags := []string{
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
	for _, name := range slices.Sorted(maps.Keys(loggers)) {
		flags = append(flags, "-Dorg.slf4j.simpleLogger.log."+name+"="+loggers[name])
	}
	return flags
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
	// Checked under p.mu: KillAll, which sets it, waits for p.mu before it
	// kills this server and removes its dir.
	if isStopping() {
		return errStopping
	}
	if err := p.writeFiles(); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	args := slices.Clone(p.flags)
	if !p.archive {
		args = append(args, archiveFlags(p.b, p.flags)...)
	}
	args = append(args, "-cp", p.b.Classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(p.dir, "zoo.cfg"))
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
	if !p.archive {
		interruptAt(atProcessStart)
	}
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
	defer func() { p.cmd = nil }()
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
// shutdown would only cost time. The ensemble removes the dir.
func (p *processRunner) close() error {
	err := p.stop(true)
	unregister(p)
	return err
}

// wipe removes the data dir; start writes it (and myid) again.
func (p *processRunner) wipe() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("wipe %s: it still runs", p.name)
	}
	return os.RemoveAll(filepath.Join(p.dir, "data"))
}

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

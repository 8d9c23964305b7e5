// Package peer drives another client library's lock recipe in a subprocess,
// so the suite can put a recipe it did not write through the same faults as
// its own: kazoo's Lock (Python, testdata/peers/kazoo_lock.py), Apache
// Curator's InterProcessMutex (Java, testdata/peers/CuratorLock.java), or
// anyone's driver that speaks the line protocol of
// testdata/peers/PROTOCOL.md: JSON lines over stdin and stdout, one reply
// per request, matched by id, with the recipe's events in between.
//
// A Driver is one driver process holding one client, hence one session.
// Every request is logged as an invoke line when sent and as an ok or fail
// line when its reply arrives (also when nobody waits for it any more), and
// every event (state change, each ZooKeeper call the recipe makes, each
// watch that fires) as it arrives, so a test's log reads as a history.
package peer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zk19/zk19/internal/proof/claims"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/tb"
)

// ErrMissing is returned when a driver cannot run because its recipe's
// library (or the runtime or compiler it needs) is not installed: the
// driver said so in its hello line, or the command that starts it could not
// be built. Tests skip on it with one line that says how to get it.
var ErrMissing = errors.New("recipe not installed")

// Config says how to start a driver.
type Config struct {
	// Command is the driver's program and arguments (KazooCommand,
	// CuratorCommand, or a command of ZK19_PEERS), run from the caller's
	// working directory.
	Command []string
	// Env is added to the test's environment.
	Env []string
	// Install says how to get what a driver reports missing, for the
	// error (and a test's skip line), e.g. "run scripts/setup (python3-kazoo)".
	Install string
	// Name labels every log line, e.g. "kazoo-B".
	Name string
	// Logf receives the driver's history and standard error; nil drops them.
	Logf func(format string, args ...any)
	// Exited, if set, is called once the driver's process has exited, by
	// Close before it returns (CuratorConfig's first driver of a process
	// makes the class archive then).
	Exited func()
}

// Hello is what the driver reported when it started.
type Hello struct {
	Recipe     string        // the recipe's name, e.g. kazoo or curator
	Version    string        // the library's version, e.g. 2.8.0 or 5.4.0
	Library    string        // where the library was loaded from
	LockObject string        // the recipe's lock class, e.g. Lock or InterProcessMutex
	Runtime    string        // the interpreter or JVM, e.g. "python 3.11.2"
	Executable string        // the runtime's path
	PID        int           // the driver's process id
	NodeName   string        // its lock nodes' names before the server's suffix, with {guid} or {uuid}
	Timeout    bool          // acquire takes a timeout
	Cancel     bool          // a pending acquire can be cancelled
	Startup    time.Duration // from exec to the hello line, measured here
}

// Driver is one running driver: one client, one session.
type Driver struct {
	Hello Hello

	name    string
	logf    func(format string, args ...any)
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	writeMu sync.Mutex

	mu      sync.Mutex
	nextID  int
	pending map[int]*pending
	events  []Event
	changed chan struct{} // closed and replaced on every event
	dead    error         // why no more replies will come; nil while running
	stderr  []string      // the last lines, for failure messages

	hello     chan helloLine
	exited    chan struct{} // closed once the process was waited for
	errDone   chan struct{} // closed once standard error was read to its end
	exitErr   error
	readers   sync.WaitGroup
	closeOnce sync.Once
	onExit    func() // Config.Exited
}

// Start runs the driver and waits, within ctx, for its hello line. A driver
// that reports its recipe missing yields an error wrapping ErrMissing; the
// process is gone by then.
func Start(ctx context.Context, cfg Config) (*Driver, error) {
	if len(cfg.Command) == 0 {
		return nil, fmt.Errorf("%s: no driver command", cfg.Name)
	}
	k := &Driver{
		name: cfg.Name, logf: cfg.Logf, pending: map[int]*pending{},
		changed: make(chan struct{}), hello: make(chan helloLine, 1), exited: make(chan struct{}),
		errDone: make(chan struct{}), onExit: cfg.Exited,
	}
	if k.logf == nil {
		k.logf = func(string, ...any) {}
	}
	began := time.Now()
	if err := k.spawn(cfg.Command, cfg.Env); err != nil {
		if k.onExit != nil {
			k.onExit()
		}
		return nil, err
	}
	if err := k.awaitHello(ctx, cfg, began); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

func (k *Driver) spawn(command, env []string) error {
	k.cmd = exec.Command(command[0], command[1:]...)
	k.cmd.Env = append(os.Environ(), env...)
	stdin, err := k.cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", k.name, err)
	}
	k.stdin = stdin
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	k.cmd.Stdout, k.cmd.Stderr = outW, errW
	if err := k.cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s: %w", k.name, strings.Join(command, " "), err)
	}
	k.readers.Add(2)
	go k.readStdout(outR)
	go k.readStderr(errR)
	go func() {
		// Wait returns once the process ended and its output was copied;
		// closing the pipes then ends both readers.
		k.exitErr = k.cmd.Wait()
		_ = outW.Close()
		_ = errW.Close()
		close(k.exited)
	}()
	return nil
}

// MustStart is Start for tests: it skips t with one line when the recipe
// is missing, fails t on any other error, logs to t unless cfg.Logf is set,
// and closes the driver in t's cleanup.
func MustStart(t tb.TB, cfg Config) *Driver {
	t.Helper()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k, err := Start(ctx, cfg)
	if errors.Is(err, ErrMissing) {
		claims.Skip(t, "skipped: %v", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(k.Close)
	return k
}

type helloLine struct {
	Event
	Missing    bool   `json:"missing"`
	Recipe     string `json:"recipe"`
	Version    string `json:"version"`
	Library    string `json:"library"`
	LockObject string `json:"lock_object"`
	Runtime    string `json:"runtime"`
	Executable string `json:"executable"`
	PID        int    `json:"pid"`
	NodeName   string `json:"node_name"`
	Timeout    bool   `json:"timeout"`
	Cancel     bool   `json:"cancel"`
}

func (k *Driver) awaitHello(ctx context.Context, cfg Config, began time.Time) error {
	select {
	case h := <-k.hello:
		if h.Missing {
			<-k.exited
			why := "the driver says so"
			if h.Error != nil {
				why = h.Error.Message
			}
			return fmt.Errorf("%w: %s (%s: %s); %s", ErrMissing, cfg.Name, h.Executable, why, cfg.Install)
		}
		k.Hello = Hello{Recipe: h.Recipe, Version: h.Version, Library: h.Library, LockObject: h.LockObject,
			Runtime: h.Runtime, Executable: h.Executable, PID: h.PID, NodeName: h.NodeName,
			Timeout: h.Timeout, Cancel: h.Cancel, Startup: time.Since(began)}
		k.logf("%s started: %s %s %s (%s), %s (%s), pid %d, in %v", k.name, h.Recipe, h.Version, h.LockObject,
			h.Library, h.Runtime, h.Executable, h.PID, k.Hello.Startup.Round(time.Millisecond))
		return nil
	case <-k.exited:
		<-k.errDone
		return fmt.Errorf("%s: %s exited before its hello line: %v%s", k.name, cfg.Command[0], k.exitErr, k.stderrTail())
	case <-ctx.Done():
		return fmt.Errorf("%s: no hello line from %s: %w%s", k.name, cfg.Command[0], ctx.Err(), k.stderrTail())
	}
}

// Close kills the driver and waits for it and for its output: nothing is
// left running and nothing is logged after Close returns. Safe to call twice.
func (k *Driver) Close() {
	k.closeOnce.Do(func() {
		_ = k.stdin.Close()
		_ = k.cmd.Process.Kill()
		<-k.exited
		k.readers.Wait()
		if k.onExit != nil {
			k.onExit()
		}
	})
}

func (k *Driver) readStderr(r io.Reader) {
	defer k.readers.Done()
	defer close(k.errDone)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		k.mu.Lock()
		k.stderr = append(k.stderr, line)
		if len(k.stderr) > 20 {
			k.stderr = k.stderr[1:]
		}
		k.mu.Unlock()
		k.logf("%s stderr| %s", k.name, line)
	}
}

func (k *Driver) stderrTail() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.stderr) == 0 {
		return ""
	}
	return "\nlast driver stderr:\n  " + strings.Join(k.stderr, "\n  ")
}

func (k *Driver) readStdout(r io.Reader) {
	defer k.readers.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		k.line(sc.Bytes())
	}
	<-k.exited
	<-k.errDone
	why := fmt.Errorf("%s: the driver exited (%v)%s", k.name, k.exitErr, k.stderrTail())
	if err := sc.Err(); err != nil {
		why = fmt.Errorf("%s: reading the driver's output: %w", k.name, err)
	}
	k.mu.Lock()
	k.dead = why
	for id, p := range k.pending {
		delete(k.pending, id)
		p.deliver(nil, why)
	}
	k.mu.Unlock()
}

// line handles one line of the driver's standard output: a hello, another
// event, or the reply to a request.
func (k *Driver) line(b []byte) {
	var head struct {
		Event string `json:"event"`
		ID    *int   `json:"id"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		k.logf("%s unparsable line (%v): %s", k.name, err, b)
		return
	}
	switch {
	case head.Event == "hello":
		var h helloLine
		if err := json.Unmarshal(b, &h); err != nil {
			k.logf("%s unparsable hello (%v): %s", k.name, err, b)
			return
		}
		select {
		case k.hello <- h:
		default:
			k.logf("%s second hello line ignored: %s", k.name, b)
		}
	case head.Event != "":
		k.event(b)
	case head.ID != nil:
		k.reply(*head.ID, b)
	default:
		k.logf("%s reply without a request id: %s", k.name, b)
	}
}

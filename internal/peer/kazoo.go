// Package peer drives another client library's lock recipe in a subprocess,
// so the suite can put a recipe it did not write through the same faults as
// its own. Today that is kazoo's Lock (Python), run by the driver program
// testdata/peers/kazoo_lock.py: JSON lines over stdin and stdout, one reply
// per request, matched by id, with kazoo's events in between.
//
// A Kazoo is one driver process holding one KazooClient, hence one session.
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
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/tb"
)

// ErrKazooMissing is returned by Start when the interpreter cannot import
// kazoo (or there is no interpreter). Tests skip on it with one line.
var ErrKazooMissing = errors.New("kazoo not installed: run scripts/setup (python3-kazoo)")

// envPython names the interpreter to run the driver with, overriding the
// default choice (see Config.Python).
const envPython = "ZK19_PYTHON"

// debianPython is the interpreter python3-kazoo installs for; a python3 found
// first on PATH (pyenv, a virtualenv) usually lacks Debian's dist-packages.
const debianPython = "/usr/bin/python3"

// Config says how to start a driver.
type Config struct {
	// Script is the driver program, testdata/peers/kazoo_lock.py, as a path
	// from the caller's working directory (the module root for root tests).
	Script string
	// Python is the interpreter. Empty: $ZK19_PYTHON, else /usr/bin/python3
	// where it exists, else python3 on PATH.
	Python string
	// Name labels every log line, e.g. "kazoo-B".
	Name string
	// Logf receives the driver's history and standard error; nil drops them.
	Logf func(format string, args ...any)
}

// Hello is what the driver reported when it started.
type Hello struct {
	Kazoo      string        // kazoo's version, e.g. 2.8.0
	KazooFile  string        // where kazoo was imported from
	Python     string        // the interpreter's version
	Executable string        // the interpreter's path
	PID        int           // the driver's process id
	Startup    time.Duration // from exec to the hello line, measured here
}

// Kazoo is one running driver: one kazoo client, one session.
type Kazoo struct {
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
}

// Start runs the driver and waits, within ctx, for its hello line. A driver
// whose interpreter cannot import kazoo yields an error wrapping
// ErrKazooMissing; the process is gone by then.
func Start(ctx context.Context, cfg Config) (*Kazoo, error) {
	python, err := interpreter(cfg.Python)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.Script); err != nil {
		return nil, fmt.Errorf("%s: driver program: %w", cfg.Name, err)
	}
	k := &Kazoo{
		name: cfg.Name, logf: cfg.Logf, pending: map[int]*pending{},
		changed: make(chan struct{}), hello: make(chan helloLine, 1), exited: make(chan struct{}),
		errDone: make(chan struct{}),
	}
	if k.logf == nil {
		k.logf = func(string, ...any) {}
	}
	began := time.Now()
	if err := k.spawn(python, cfg.Script); err != nil {
		return nil, err
	}
	if err := k.awaitHello(ctx, python, began); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

func (k *Kazoo) spawn(python, script string) error {
	// -u: every reply must reach the test the moment it is printed.
	k.cmd = exec.Command(python, "-u", script)
	k.cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	stdin, err := k.cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", k.name, err)
	}
	k.stdin = stdin
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	k.cmd.Stdout, k.cmd.Stderr = outW, errW
	if err := k.cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s %s: %w", k.name, python, script, err)
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

// MustStart is Start for tests: it skips t with one line when kazoo is
// missing, fails t on any other error, logs to t unless cfg.Logf is set,
// and closes the driver in t's cleanup.
func MustStart(t tb.TB, cfg Config) *Kazoo {
	t.Helper()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k, err := Start(ctx, cfg)
	if errors.Is(err, ErrKazooMissing) {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(k.Close)
	return k
}

func interpreter(configured string) (string, error) {
	if configured == "" {
		configured = os.Getenv(envPython)
	}
	if configured != "" {
		return configured, nil
	}
	if _, err := os.Stat(debianPython); err == nil {
		return debianPython, nil
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", fmt.Errorf("%w (no %s and no python3 on PATH; or set %s)", ErrKazooMissing, debianPython, envPython)
	}
	return p, nil
}

type helloLine struct {
	Event
	KazooMissing bool   `json:"kazoo_missing"`
	Kazoo        string `json:"kazoo"`
	KazooFile    string `json:"kazoo_file"`
	Python       string `json:"python"`
	Executable   string `json:"executable"`
	PID          int    `json:"pid"`
}

func (k *Kazoo) awaitHello(ctx context.Context, python string, began time.Time) error {
	select {
	case h := <-k.hello:
		if h.KazooMissing {
			<-k.exited
			return fmt.Errorf("%w (%s: %s; or set %s)", ErrKazooMissing, h.Executable, h.Error.Message, envPython)
		}
		k.Hello = Hello{Kazoo: h.Kazoo, KazooFile: h.KazooFile, Python: h.Python, Executable: h.Executable,
			PID: h.PID, Startup: time.Since(began)}
		k.logf("%s started: kazoo %s (%s), python %s (%s), pid %d, in %v",
			k.name, h.Kazoo, h.KazooFile, h.Python, h.Executable, h.PID, k.Hello.Startup.Round(time.Millisecond))
		return nil
	case <-k.exited:
		<-k.errDone
		return fmt.Errorf("%s: %s exited before its hello line: %v%s", k.name, python, k.exitErr, k.stderrTail())
	case <-ctx.Done():
		return fmt.Errorf("%s: no hello line from %s: %w%s", k.name, python, ctx.Err(), k.stderrTail())
	}
}

// Close kills the driver and waits for it and for its output: nothing is
// left running and nothing is logged after Close returns. Safe to call twice.
func (k *Kazoo) Close() {
	k.closeOnce.Do(func() {
		_ = k.stdin.Close()
		_ = k.cmd.Process.Kill()
		<-k.exited
		k.readers.Wait()
	})
}

func (k *Kazoo) readStderr(r io.Reader) {
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

func (k *Kazoo) stderrTail() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.stderr) == 0 {
		return ""
	}
	return "\nlast driver stderr:\n  " + strings.Join(k.stderr, "\n  ")
}

func (k *Kazoo) readStdout(r io.Reader) {
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
func (k *Kazoo) line(b []byte) {
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

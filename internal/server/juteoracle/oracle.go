// Package juteoracle runs ZooKeeper's own Jute classes, from the server's jar,
// beside the Go codec in internal/server/jute, and compares the two record by
// record in both directions (claim E5). The Java side is JuteOracle.java,
// compiled at test time with the JDK's javac against that jar; one JVM
// answers every record of a test over a pipe, since a JVM start costs
// seconds on a small machine.
package juteoracle

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkserver"
)

//go:embed JuteOracle.java
var oracleSource []byte

// Oracle is one running JVM that answers with the official Jute classes.
type Oracle struct {
	Jar   Jar
	About About
	// How long finding the jar, javac, and the JVM's first answer took.
	JarTime, JavacTime, JVMTime time.Duration

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr lockedBuffer
	done   chan struct{}
}

// About is what the JVM reports of the classes it loaded.
type About struct {
	Version string            // org.apache.zookeeper.Version.getFullVersion()
	Java    string            // the JVM's java.version
	Sources map[string]string // class name -> the jar it was loaded from
}

// Start finds the jar of the server backend b runs (serverJar), compiles
// the oracle against it, starts it, and stops it at cleanup. It skips tb,
// where no javac is installed.
func Start(tb zkserver.TB, b zkserver.Backend) *Oracle {
	tb.Helper()
	javac, java, ok := zkserver.FindJDK()
	if !ok {
		zkserver.SkipFor(tb, &zkserver.Unavailable{Reason: zkserver.NoJDK})
	}
	t0 := time.Now()
	jar := serverJar(tb, b)
	jarTime := time.Since(t0)
	dir := tb.TempDir()
	src := filepath.Join(dir, "JuteOracle.java")
	if err := os.WriteFile(src, oracleSource, 0o644); err != nil {
		tb.Fatalf("E5: writing the oracle source: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// --release 11: the oracle needs nothing newer, so a JDK 11 is enough.
	// javac on C1 and a serial GC starts faster on a small shared machine.
	out, err := exec.CommandContext(ctx, javac, "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC",
		"--release", "11", "-nowarn", "-cp", jar.Classpath, "-d", dir, src).CombinedOutput()
	if err != nil {
		tb.Fatalf("E5: javac against %s: %v\n%s", jar.Classpath, err, out)
	}
	o := &Oracle{Jar: jar, JarTime: jarTime, JavacTime: time.Since(t0) - jarTime, done: make(chan struct{})}
	if err := o.run(java, dir+string(os.PathListSeparator)+jar.Classpath); err != nil {
		tb.Fatalf("E5: starting the oracle JVM: %v", err)
	}
	tb.Cleanup(o.stop)
	if o.About, err = o.about(); err != nil {
		tb.Fatalf("E5: asking the oracle which jar it loaded: %v", err)
	}
	o.JVMTime = time.Since(t0) - jarTime - o.JavacTime
	return o
}

// StartResolved is Start with the backend zkserver.Resolve picks, for a
// test that starts no server of its own; it skips tb where none resolves.
func StartResolved(tb zkserver.TB) *Oracle {
	tb.Helper()
	b, err := zkserver.Resolve()
	if err != nil {
		zkserver.SkipFor(tb, &zkserver.Unavailable{Reason: zkserver.NoBackend, Err: err})
	}
	return Start(tb, b)
}

func (o *Oracle) run(java, classpath string) error {
	// C1 only and a small serial heap: the oracle is short-lived and the
	// machine is shared.
	o.cmd = exec.Command(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
		"-cp", classpath, "JuteOracle")
	o.cmd.Stderr = &o.stderr
	stdin, err := o.cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := o.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := o.cmd.Start(); err != nil {
		return err
	}
	o.stdin, o.out = stdin, bufio.NewReaderSize(stdout, 1<<16)
	go func() { _ = o.cmd.Wait(); close(o.done) }()
	return nil
}

// stop closes the oracle's stdin, on which it exits, and kills it if it
// has not exited within a bound.
func (o *Oracle) stop() {
	_ = o.stdin.Close()
	err := tb.WaitUntil(30*time.Second, "the oracle JVM to exit after its stdin closed", func() (bool, string) {
		select {
		case <-o.done:
			return true, "exited"
		default:
			return false, "still running"
		}
	})
	if err != nil {
		_ = o.cmd.Process.Kill()
		<-o.done
	}
}

// officialError is a failure the official classes reported, such as an
// IOException from BinaryInputArchive on malformed input.
type officialError struct{ Msg string }

func (e *officialError) Error() string { return "official Jute: " + e.Msg }

// call sends one request line and returns the reply after "ok ".
func (o *Oracle) call(req string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := io.WriteString(o.stdin, req+"\n"); err != nil {
		return "", fmt.Errorf("oracle JVM: %v; its stderr: %s", err, o.stderr.String())
	}
	line, err := o.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("oracle JVM: reading its answer: %v; its stderr: %s", err, o.stderr.String())
	}
	line = strings.TrimSuffix(line, "\n")
	if rest, ok := strings.CutPrefix(line, "ok "); ok {
		return rest, nil
	}
	if rest, ok := strings.CutPrefix(line, "err "); ok {
		return "", &officialError{Msg: rest}
	}
	return "", fmt.Errorf("oracle JVM: unexpected answer %q", line)
}

func (o *Oracle) about() (About, error) {
	classes := []string{"org.apache.jute.BinaryInputArchive", "org.apache.jute.BinaryOutputArchive"}
	for _, k := range Kinds {
		classes = append(classes, k.Class)
	}
	classes = append(classes, handshakeClasses...)
	classes = append(classes, "org.apache.zookeeper.ZooDefs$OpCode", "org.apache.zookeeper.ClientCnxn") // read by consts
	rest, err := o.call("about " + strings.Join(classes, " "))
	if err != nil {
		return About{}, err
	}
	var raw struct {
		Version, Java hexString
		Sources       map[string]hexString
	}
	if err := json.Unmarshal([]byte(rest), &raw); err != nil {
		return About{}, fmt.Errorf("about: %v in %q", err, rest)
	}
	a := About{Version: string(raw.Version), Java: string(raw.Java), Sources: map[string]string{}}
	for c, s := range raw.Sources {
		a.Sources[c] = string(s)
	}
	return a, o.Jar.checkSources(a.Sources)
}

// hexString is a string the oracle sends as hex.
type hexString string

func (h *hexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	raw, err := hex.DecodeString(s)
	*h = hexString(raw)
	return err
}

// lockedBuffer collects the JVM's stderr, which os/exec writes from its own
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() == 0 {
		return "(empty)"
	}
	return l.b.String()
}

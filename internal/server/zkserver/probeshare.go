package zkserver

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zk19/zk19/internal/server/reaper"
)

// The host-network probe costs a container and a JVM (2–4 s, and more on a
// loaded machine), and every test binary that picks the container backend
// ran one: eighteen of the ninety-five containers of one go test ./... on
// that backend were probes, counting the binaries that E3's and the
// interrupt tests start. What the probe finds is a property of the Docker
// engine and the image, which one go test command does not change, so the
// binaries of one command share it: the first that probes writes the
// answer into a file named after the go command's process (its pid and
// start time, so that a later command with the same pid is another run),
// under a lock that a sibling starting at the same moment waits on; a
// binary that a test starts inherits the answer in envProbed. Only a pass
// is shared: a failure is probed, and told, by each binary. A binary not
// started by go test (run by hand, or by go test -exec) probes for itself.
const envProbed = "ZK19_HOSTNET_PROBED" // the image the parent binary's probe passed for

// shareProbes is off in the tests of Resolve's choices, which replace the
// probe.
var shareProbes = true

// sharedProbe returns how an earlier probe of this run passed for img, or
// "" and done, which the caller calls with its own probe's outcome. Until
// then it holds the run's lock, so a sibling that looks meanwhile waits for
// this binary's answer instead of probing too.
func sharedProbe(img string) (earlier string, done func(passed bool, took time.Duration)) {
	noop := func(bool, time.Duration) {}
	if !shareProbes {
		return "", noop
	}
	if os.Getenv(envProbed) == img {
		return "probed by the test binary that started this one", noop
	}
	run, ok := probeRun()
	if !ok {
		return "", noop
	}
	dir, err := JDKCache("hostnet")
	if err != nil {
		return "", noop
	}
	f, err := os.OpenFile(filepath.Join(dir, run), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", noop
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return "", noop
	}
	release := func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// image, pid, how long its probe took
		if fs := strings.Split(sc.Text(), "\t"); len(fs) == 3 && fs[0] == img {
			release()
			os.Setenv(envProbed, img)
			return fmt.Sprintf("probed by pid %s of this go test in %s", fs[1], fs[2]), noop
		}
	}
	return "", func(passed bool, took time.Duration) {
		defer release()
		if !passed {
			return
		}
		fmt.Fprintf(f, "%s\t%d\t%v\n", img, os.Getpid(), took.Round(100*time.Millisecond))
		os.Setenv(envProbed, img)
		removeEndedRuns(dir, run)
	}
}

// probeRun is goTestRun; the test of sharing names a run of its own.
var probeRun = goTestRun

// goTestRun names the go command that started this binary, "go-<pid>-<start
// time>" (owner), if its parent is one.
func goTestRun() (string, bool) {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return "", false
	}
	start, err := reaper.StartTicks(ppid)
	if err != nil {
		return "", false
	}
	return "go-" + reaper.Owner{PID: ppid, Start: start}.String(), true
}

// removeEndedRuns removes the files of go commands that have ended.
func removeEndedRuns(dir, current string) {
	names, _ := filepath.Glob(filepath.Join(dir, "go-*"))
	for _, p := range names {
		name := filepath.Base(p)
		if o, ok := reaper.ParseOwner(strings.TrimPrefix(name, "go-")); ok && name != current && o.Gone() {
			_ = os.Remove(p)
		}
	}
}

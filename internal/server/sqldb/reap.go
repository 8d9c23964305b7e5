package sqldb

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/zk19/zk19/internal/server/reaper"
)

// runDirOwner reads the owner from a run dir's name
// (zk19-pg-<pid>-<start>-<random>).
func runDirOwner(dir string) (reaper.Owner, bool) {
	f := strings.SplitN(strings.TrimPrefix(filepath.Base(dir), DirPrefix), "-", 3)
	if len(f) < 2 {
		return reaper.Owner{}, false
	}
	return reaper.ParseOwner(f[0] + "-" + f[1])
}

// postmasters lists the postgres processes whose command line names a run
// dir of this package, with that dir.
func postmasters() map[int]string {
	ents, _ := os.ReadDir("/proc")
	out := map[int]string{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(string(filepath.Separator)+DirPrefix)) {
			continue
		}
		for _, arg := range strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00") {
			if _, rest, ok := strings.Cut(arg, string(filepath.Separator)+DirPrefix); ok {
				name, _, _ := strings.Cut(rest, string(filepath.Separator))
				out[pid] = filepath.Join(os.TempDir(), DirPrefix+name)
				break
			}
		}
	}
	return out
}

var reapOnce sync.Mutex

// Reap kills the postmasters and removes the run dirs of test binaries
// that are gone (killed before their cleanup ran). Another live binary's
// servers are never touched. It returns one line for the record, or "".
func Reap() (string, error) {
	reapOnce.Lock()
	defer reapOnce.Unlock()
	var procs, dirs int
	for pid, dir := range postmasters() {
		if o, ok := runDirOwner(dir); ok && o.Gone() && syscall.Kill(pid, syscall.SIGKILL) == nil {
			procs++
		}
	}
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), DirPrefix+"*"))
	var err error
	for _, p := range paths {
		if o, ok := runDirOwner(p); ok && o.Gone() {
			if rmErr := os.RemoveAll(p); rmErr != nil && err == nil {
				err = rmErr
			}
			dirs++
		}
	}
	if procs+dirs == 0 {
		return "", err
	}
	return fmt.Sprintf("# zk19: pgserver removed %d PostgreSQL process(es) and %d run dir(s) left by gone test binaries", procs, dirs), err
}

// Leftovers lists what the test binary with pid left: its PostgreSQL
// processes and its run dirs.
func Leftovers(pid int) []string {
	var out []string
	for p, dir := range postmasters() {
		if o, ok := runDirOwner(dir); ok && o.PID == pid {
			out = append(out, fmt.Sprintf("process %d (run dir %s)", p, dir))
		}
	}
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), DirPrefix+strconv.Itoa(pid)+"-*"))
	for _, p := range paths {
		out = append(out, "dir "+p)
	}
	return out
}

// EnvInterruptAt makes this package send SIGINT to its own process at a
// named point, so that a test of the interrupt path lands the signal where
// a server is being made, with no sleep: "started" fires once the
// postmaster was started and before it is ready.
const EnvInterruptAt = "ZK19_PG_INTERRUPT_AT"

const atStarted = "started"

var interrupted sync.Once

// interruptAt signals this process if EnvInterruptAt names point, once.
func interruptAt(point string) {
	if os.Getenv(EnvInterruptAt) != point {
		return
	}
	interrupted.Do(func() { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) })
}

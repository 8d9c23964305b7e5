// Package reaper does the part of Ryuk's job that outlives a test binary.
// Each binary is named by its Owner (pid and start time), which its run dir
// and the labels of its containers carry; Reap, at the start of a run,
// removes the containers, server processes and run dirs whose owner is
// gone, and Leftovers lists what one owner left.
package reaper

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Owner identifies a test process by its pid and its start time (clock
// ticks since boot, /proc/<pid>/stat field 22), so that a pid the kernel has
// since given to another process is not taken for the owner.
type Owner struct {
	PID   int
	Start uint64
}

func (o Owner) String() string { return fmt.Sprintf("%d-%d", o.PID, o.Start) }

// ParseOwner reads what String wrote.
func ParseOwner(s string) (Owner, bool) {
	p, st, ok := strings.Cut(s, "-")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(st, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return Owner{}, false
	}
	return Owner{pid, start}, true
}

// Gone reports whether the owner process no longer runs.
func (o Owner) Gone() bool {
	start, err := StartTicks(o.PID)
	return err != nil || start != o.Start
}

// StartTicks reads a process's start time from /proc.
func StartTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// fields from the last ')'. starttime is field 22, the 20th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name; want 20 or more", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Self is this test process.
var Self = sync.OnceValue(func() Owner {
	start, _ := StartTicks(os.Getpid())
	return Owner{os.Getpid(), start}
})

// OwnerLabel carries the owner (pid-start) of every harness container.
const OwnerLabel = "org.zk19.owner"

// leftContainer is one harness container as docker ps lists it.
type leftContainer struct {
	id, name, status string
	owner            Owner
	owned            bool // the owner label parsed
}

// DockerCLI runs docker with args, bounded by 30 s, and returns its output.
func DockerCLI(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// harnessContainers lists every container carrying ContainerLabel, or none
// when there is no docker CLI.
func harnessContainers() ([]leftContainer, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, nil
	}
	out, err := DockerCLI("ps", "-a", "--filter", "label="+ContainerLabel,
		"--format", `{{.ID}}|{{.Names}}|{{.Status}}|{{.Label "`+OwnerLabel+`"}}`)
	if err != nil {
		return nil, err
	}
	var cs []leftContainer
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			continue
		}
		o, ok := ParseOwner(f[3])
		cs = append(cs, leftContainer{id: f[0], name: f[1], status: f[2], owner: o, owned: ok})
	}
	return cs, nil
}

// RemoveContainers force-removes the harness containers whose owner matches,
// and returns how many it removed. Containers without an owner label (made
// by an older harness) are left alone: nothing tells whose they are.
func RemoveContainers(match func(Owner) bool) (int, error) {
	cs, err := harnessContainers()
	if err != nil {
		return 0, err
	}
	args := []string{"rm", "-f"}
	for _, c := range cs {
		if c.owned && match(c.owner) {
			args = append(args, c.id)
		}
	}
	if len(args) == 2 {
		return 0, nil
	}
	_, err = DockerCLI(args...)
	return len(args) - 2, err
}

// serverProcess is a QuorumPeerMain process whose zoo.cfg lies in a run dir.
type serverProcess struct {
	pid   int
	owner Owner
	args  string
}

// serverProcesses scans /proc for QuorumPeerMain processes started from a
// run dir: their zoo.cfg argument names the owner.
func serverProcesses() []serverProcess {
	ents, _ := os.ReadDir("/proc")
	var out []serverProcess
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte("QuorumPeerMain")) {
			continue
		}
		args := strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " ")
		_, rest, ok := strings.Cut(args, string(filepath.Separator)+RunDirPrefix)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, string(filepath.Separator))
		if o, ok := ParseOwner(name); ok {
			out = append(out, serverProcess{pid: pid, owner: o, args: args})
		}
	}
	return out
}

// runDirs lists the run dirs in the temp dir with their owners.
func runDirs() map[string]Owner {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), RunDirPrefix+"*"))
	out := map[string]Owner{}
	for _, p := range paths {
		if o, ok := ParseOwner(strings.TrimPrefix(filepath.Base(p), RunDirPrefix)); ok {
			out[p] = o
		}
	}
	return out
}

// serverDirs counts the server dirs (those holding a zoo.cfg) under dir.
func serverDirs(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "zoo.cfg" {
			n++
		}
		return nil
	})
	return n
}

// Reap removes what earlier test processes left when they died without
// cleaning up (SIGKILL, a crash, an interrupt the harness did not see): the
// harness containers, server processes and run dirs whose owner process is
// gone. Another live test binary's servers are never touched. It returns
// one line for the record, or "" when nothing was left.
func Reap() (string, error) {
	cs, err := harnessContainers()
	var r reaped
	for _, c := range cs {
		if c.owned && c.owner.Gone() {
			r.containers = append(r.containers, c.id)
			r.by(c.owner.PID)
		}
	}
	if len(r.containers) > 0 {
		if _, rmErr := DockerCLI(append([]string{"rm", "-f"}, r.containers...)...); rmErr != nil && err == nil {
			err = rmErr
		}
	}
	for _, p := range serverProcesses() {
		if p.owner.Gone() && syscall.Kill(p.pid, syscall.SIGKILL) == nil {
			r.procs++
			r.by(p.owner.PID)
		}
	}
	for dir, o := range runDirs() {
		if !o.Gone() {
			continue
		}
		n := serverDirs(dir)
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = rmErr
		}
		r.dirs, r.serverDirs = r.dirs+1, r.serverDirs+n
		r.by(o.PID)
	}
	return r.String(), err
}

// reaped counts what Reap removed.
type reaped struct {
	containers  []string
	procs, dirs int
	serverDirs  int
	pids        []int
	seen        map[int]bool
}

func (r *reaped) by(pid int) {
	if r.seen == nil {
		r.seen = map[int]bool{}
	}
	if !r.seen[pid] {
		r.seen[pid] = true
		r.pids = append(r.pids, pid)
	}
}

func (r reaped) String() string {
	if len(r.pids) == 0 {
		return ""
	}
	var parts []string
	add := func(n int, one, many string) {
		if n == 1 {
			parts = append(parts, "1 "+one)
		} else if n > 1 {
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(len(r.containers), "container", "containers")
	add(r.procs, "server process", "server processes")
	add(r.serverDirs, "server dir", "server dirs")
	if r.serverDirs == 0 {
		add(r.dirs, "run dir", "run dirs")
	}
	var pids []string
	for _, p := range r.pids {
		pids = append(pids, strconv.Itoa(p))
	}
	who := "pid " + pids[0]
	if len(pids) > 1 {
		who = "pids " + strings.Join(pids, ", ")
	}
	what := parts[len(parts)-1]
	if len(parts) > 1 {
		what = strings.Join(parts[:len(parts)-1], ", ") + " and " + what
	}
	return fmt.Sprintf("# zk19: removed %s left by %s (gone)", what, who)
}

// Leftovers lists what a test process with the given pid left behind: its
// harness containers, its QuorumPeerMain processes and its run dirs. A test
// that interrupts a child test binary asserts it is empty once the child
// has exited; it is empty for a process still cleaning up only by luck.
func Leftovers(pid int) ([]string, error) { return LeftoversOf(pid, "") }

// LeftoversOf lists, of what Leftovers lists, what the test whose safe
// name begins with mark made: the containers whose names carry it, the
// server processes whose config paths do, and its dirs in the run dir
// (named after it), each with the server dirs in it. A test that runs
// beside others checks its own leftovers this way. An empty mark lists
// everything, the run dirs themselves in place of a test's dirs.
func LeftoversOf(pid int, mark string) ([]string, error) {
	cs, err := harnessContainers()
	var out []string
	for _, c := range cs {
		if c.owned && c.owner.PID == pid && strings.Contains(c.name, mark) {
			out = append(out, fmt.Sprintf("container %s (%s)", c.name, c.status))
		}
	}
	for _, p := range serverProcesses() {
		if p.owner.PID == pid && strings.Contains(p.args, mark) {
			out = append(out, fmt.Sprintf("process %d: %s", p.pid, p.args))
		}
	}
	for dir, o := range runDirs() {
		if o.PID != pid {
			continue
		}
		dirs := []string{dir}
		if mark != "" {
			dirs, _ = filepath.Glob(filepath.Join(dir, mark+"*"))
		}
		for _, d := range dirs {
			out = append(out, fmt.Sprintf("dir %s (server dirs in it: %d)", d, serverDirs(d)))
		}
	}
	return out, err
}

// ContainerLabel marks every container the harness starts, so that a leak
// is easy to find: docker ps -a --filter label=org.zk19.harness
const ContainerLabel = "org.zk19.harness"

// RunDirPrefix begins the name of each test process's run dir (see Owner).
const RunDirPrefix = "zk19-run-"

// LabelArgs are the `docker run` flags that mark a container started outside
// the harness's runners (for example to copy a jar out of the image) as the
// harness's and this process's, so a run interrupted while it exists, or
// the next run's Reap, removes it.
func LabelArgs() []string {
	return []string{"--label", ContainerLabel + "=1", "--label", OwnerLabel + "=" + Self().String()}
}

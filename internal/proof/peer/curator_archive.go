package peer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zk19/zk19/internal/server/zkserver"
)

// A class archive (the JVM's class data sharing) holds the classes a
// Curator driver loads, parsed and verified, so that each later driver maps
// them instead: a driver that connects, acquires, releases and closes then
// costs about 0.75 CPU s instead of 1.2 (measured on 2 cores with Curator
// 5.4.0 on JDK 17), and a run starts some fifty drivers.
//
// What to archive is learnt from a real driver, not guessed: the first
// driver of a process that finds no archive writes the list of classes it
// loads (-XX:DumpLoadedClassList, one line per class as it loads), and once
// it has exited, the list becomes the archive (-Xshare:dump), kept in the
// suite's cache under a key of the java binary, the class path and the
// flags. No driver is started for it, and no server: the first driver is
// one a test needed anyway. The archive only changes how fast classes load;
// a driver without it, where it cannot be made, behaves the same.
type curatorArchive struct {
	dir   string // where it is kept: the cache (cacheRoot) if ""
	mu    sync.Mutex
	state archiveState
	path  string // the archive, once state is archiveReady
	list  string // the class list the training driver writes
	note  string // what became of it, for the log
}

type archiveState int

const (
	archiveUnknown  archiveState = iota // not looked for yet
	archiveTraining                     // a driver writes the class list
	archiveReady                        // path is the archive
	archiveNone                         // none this process: note says why
)

// dumpWithin bounds -Xshare:dump (about 2 s on 2 cores).
const dumpWithin = 2 * time.Minute

// flags returns what the next driver adds to its command: the flag that
// maps the archive once there is one; for the first driver where there is
// none, the flag that writes the class list, and the func to call once
// that driver has exited; else nothing. base is the command before the
// class path (java and its flags); classpath is the driver's.
func (a *curatorArchive) flags(b *curatorBuild, base []string) (extra []string, exited func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == archiveUnknown {
		a.look(b, base)
	}
	switch a.state {
	case archiveReady:
		return []string{"-XX:SharedArchiveFile=" + a.path}, nil
	case archiveTraining:
		if a.list == "" {
			return nil, nil // the training driver is out already
		}
		list := a.list
		a.list = ""
		a.note = "class archive being made from this process's first driver"
		return []string{"-XX:DumpLoadedClassList=" + list}, func() { a.dump(b, base, list) }
	}
	return nil, nil
}

// look finds the archive in the cache, or arranges for a driver to train
// one.
func (a *curatorArchive) look(b *curatorBuild, base []string) {
	key, err := curatorArchiveKey(b, base)
	root := a.dir
	if err == nil && root == "" {
		root, err = cacheRoot()
	}
	if err == nil {
		a.path = filepath.Join(root, "CuratorLock-"+key[:16]+".jsa")
	}
	if err != nil {
		a.state, a.note = archiveNone, fmt.Sprintf("no class archive: %v", err)
		return
	}
	removeStale(filepath.Join(root, "CuratorLock-*.jsa.classlist-*"))
	removeStale(filepath.Join(root, "CuratorLock-*.jsa.tmp-*"))
	if _, err := os.Stat(a.path); err == nil {
		a.state, a.note = archiveReady, "class archive "+a.path
		return
	}
	// Named, not made: the training driver's JVM makes it, so a Config
	// that is never started leaves nothing.
	a.state, a.list = archiveTraining, fmt.Sprintf("%s.classlist-%d", a.path, os.Getpid())
}

// dump turns the training driver's class list into the archive: into a
// file beside it, renamed into place once the JVM wrote it whole, so that
// a dump that died half-way is never taken for an archive.
func (a *curatorArchive) dump(b *curatorBuild, base []string, list string) {
	defer os.Remove(list)
	began := time.Now()
	err := dumpArchive(b, base, list, a.path)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.state, a.note = archiveNone, fmt.Sprintf("no class archive: %v", err)
		fmt.Fprintf(os.Stderr, "# zk19: Curator drivers start without a class archive: %v\n", err)
		return
	}
	a.state, a.note = archiveReady, fmt.Sprintf("class archive %s (made in %v)", a.path, time.Since(began).Round(time.Millisecond))
}

func dumpArchive(b *curatorBuild, base []string, list, path string) error {
	classes, err := os.ReadFile(list)
	if err != nil {
		return err
	}
	// A driver killed while it loaded a class may have left half a line.
	if i := bytes.LastIndexByte(classes, '\n'); i+1 != len(classes) {
		classes = classes[:i+1]
		if err := os.WriteFile(list, classes, 0o644); err != nil {
			return err
		}
	}
	if len(classes) == 0 {
		return fmt.Errorf("the training driver wrote no class list to %s", list)
	}
	tmp := path + fmt.Sprintf(".tmp-%d", os.Getpid())
	defer os.Remove(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), dumpWithin)
	defer cancel()
	args := append(zkserver.JDKArchiveFlags(base[1:]), "-Xshare:dump", "-XX:SharedClassListFile="+list, "-XX:SharedArchiveFile="+tmp, "-cp", b.classpathOf())
	cmd := exec.CommandContext(ctx, base[0], args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // gone with the test binary
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -Xshare:dump: %v\n%s", base[0], err, lastLines(out, 10))
	}
	return os.Rename(tmp, path)
}

// staleAfter is how old a class list or a half-written archive must be
// before another process takes it for one whose maker died: a test binary
// beside this one may be training or dumping its own.
const staleAfter = 10 * time.Minute

// removeStale removes the files of pattern older than staleAfter.
func removeStale(pattern string) {
	paths, _ := filepath.Glob(pattern)
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > staleAfter {
			_ = os.Remove(p)
		}
	}
}

// curatorArchiveKey is zkserver.JDKArchiveKey of the driver's JVM, class path and
// flags (the JVM checks the class path too, and maps no archive whose jars
// have changed).
func curatorArchiveKey(b *curatorBuild, base []string) (string, error) {
	return zkserver.JDKArchiveKey(base[0], filepath.SplitList(b.classpathOf()), base[1:])
}

// lastLines is the end of a command's output, for an error.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

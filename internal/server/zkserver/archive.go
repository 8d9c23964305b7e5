package zkserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/tb"
)

// A class archive (the JVM's class data sharing) holds ZooKeeper's classes
// as a server of the process backend loads them, parsed and verified, so
// that each later server maps them instead: a standalone server's start
// then costs about 0.65 CPU s instead of 0.85 (measured on 2 cores with
// 3.8.0 on JDK 17), and the process backend starts some fifty servers a
// run. The archive is made once per JVM and class path, by a server that
// starts, answers srvr and stops cleanly (the JVM writes it at exit), and
// is kept in the suite's cache under a key of the java binary, the jars
// and the flags, so an upgraded JDK or ZooKeeper makes a new one. It only
// changes how fast classes load: a server without it, where it cannot be
// made, behaves the same.
var archives sync.Map // key -> *classArchive

type classArchive struct {
	once  sync.Once
	flags []string // the flag that maps it, or none
}

// archiveFlags returns the flags that let a server of b map its classes
// from the archive, making the archive first if there is none.
func archiveFlags(b Backend, flags []string) []string {
	key, err := archiveKey(b, flags)
	if err != nil {
		return nil
	}
	v, _ := archives.LoadOrStore(key, &classArchive{})
	a := v.(*classArchive)
	a.once.Do(func() {
		path, err := archivePath(b, flags, key)
		if err != nil {
			fmt.Fprintf(os.Stderr, "# zk19: servers start without a class archive: %v\n", err)
			return
		}
		a.flags = []string{"-XX:SharedArchiveFile=" + path}
	})
	return a.flags
}

// archivePath returns the cached archive of key, made first if need be.
func archivePath(b Backend, flags []string, key string) (string, error) {
	dir, err := JDKCache("cds")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "zookeeper-"+key+".jsa")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	return path, makeArchive(b, flags, path)
}

// archiveKey is JDKArchiveKey of b's JVM, class path and flags, short.
func archiveKey(b Backend, flags []string) (string, error) {
	key, err := JDKArchiveKey(b.Java, filepath.SplitList(b.Classpath), flags)
	if err != nil {
		return "", err
	}
	return key[:16], nil
}

// archiveWithin bounds the start of the server that makes the archive.
const archiveWithin = 60 * time.Second

// makeArchive runs a standalone server of b, in a dir of the run dir, with
// the JVM asked to write its classes at exit; once it answers srvr it is
// stopped with SIGTERM (stop's grace, as any server's), and the archive is
// moved to path. The server is registered like a test's, so an interrupt
// stops it and removes its dir; it is no test's server, so it is no
// interrupt point.
func makeArchive(b Backend, flags []string, path string) error {
	dir, err := newDir("class-archive")
	if err != nil {
		return err
	}
	defer func() { _ = removeDir(dir) }()
	all, err := allocatePorts(1)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	defer func() { _ = os.Remove(tmp) }()
	log := NewLogWriter("", nil)
	p, err := newProcess(b, dir, 1, 1, renderConfig(1, all, filepath.Join(dir, "data"), buildOptions(nil)),
		append(slices.Clone(flags), "-XX:ArchiveClassesAtExit="+tmp), log)
	if err != nil {
		return err
	}
	p.archive = true
	defer func() { _ = p.close() }()
	if err := p.start(); err != nil {
		return err
	}
	err = tb.WaitUntil(archiveWithin, "the archive's server to answer srvr", func() (bool, string) {
		if !p.alive() {
			return true, ""
		}
		_, err := FourLetter(addr(all[0].client), "srvr", time.Second)
		return err == nil, fmt.Sprint(err)
	})
	if err == nil && !p.alive() {
		// An archive of a server that never served would hold too little.
		err = errors.New("the archive's server exited before it answered srvr")
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.Join(log.Tail(), " / "))
	}
	if err := p.stop(false); err != nil {
		return err
	}
	if st, err := os.Stat(tmp); err != nil || st.Size() == 0 {
		return fmt.Errorf("the JVM wrote no archive (%v): %s", err, strings.Join(log.Tail(), " / "))
	}
	return os.Rename(tmp, path)
}

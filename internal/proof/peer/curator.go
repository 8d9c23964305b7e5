package peer

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/zkserver"
)

// CuratorInstall says how to get Curator and the JDK that compiles its
// driver.
const CuratorInstall = "run scripts/setup (libcurator-recipes-java libcurator-framework-java libcurator-client-java, " +
	"openjdk-17-jdk-headless), or set " + envCuratorClasspath + " to a class path with Curator 5, ZooKeeper, guava, slf4j and jackson"

// envCuratorClasspath overrides the class path the Curator driver is
// compiled against and run with.
const envCuratorClasspath = "ZK19_CURATOR_CLASSPATH"

// javaLib is where Debian installs jars (a variable for the test of a
// machine without them).
var javaLib = "/usr/share/java"

// curatorJars are the jars the driver needs, in Debian's names: Curator's
// three (libcurator-*-java), the ZooKeeper client and its Jute classes
// (libzookeeper-java), and what Curator and the driver use beside them.
var curatorJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar",
	"jackson-databind.jar", "jackson-core.jar", "jackson-annotations.jar",
}

// curatorLogging is added to the class path at run time: warnings of
// Curator and of the ZooKeeper client reach the driver's standard error,
// which the test logs.
const curatorLogging = "slf4j-simple.jar"

// built is the driver compiled once per process and source; the class files
// are cached on disk by content (see CuratorConfig).
var built sync.Map // source path -> *curatorBuild

type curatorBuild struct {
	once      sync.Once
	jar       string // the class files
	classpath string // the jars they run with
	java      string
	err       error
	note      string // how it was obtained, for the log
	archive   curatorArchive
}

// classpathOf is the driver's class path: its jar, then Curator's. Jars
// only: the JVM archives no classes from a directory.
func (b *curatorBuild) classpathOf() string {
	return b.jar + string(os.PathListSeparator) + b.classpath
}

// CuratorConfig is the Config of Curator's driver, source
// (testdata/peers/CuratorLock.java, as a path from the caller's working
// directory), compiled with the JDK's javac against Debian's jars in
// /usr/share/java, or $ZK19_CURATOR_CLASSPATH. The class files are cached
// by content under the user's cache directory: a key is the SHA-256 of the
// source, of every jar on the class path and of javac's path, so a changed
// source or an upgraded jar builds anew and nothing else does. Missing jars
// or a missing javac are an error wrapping ErrMissing.
func CuratorConfig(source, name string) (Config, error) {
	return buildOf(source).config(name)
}

// buildOf is the driver of source, built once per process.
func buildOf(source string) *curatorBuild {
	v, _ := built.LoadOrStore(source, &curatorBuild{})
	b := v.(*curatorBuild)
	b.once.Do(func() { b.build(source) })
	return b
}

// config is the Config of one driver of b.
func (b *curatorBuild) config(name string) (Config, error) {
	if b.err != nil {
		return Config{}, b.err
	}
	// C1 only, a serial GC and a small heap: one JVM per contender on a
	// small shared machine. The JVM's own warnings go to standard error,
	// not into the protocol's standard output.
	base := []string{b.java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-Xss512k",
		"-Xlog:disable", "-Xlog:all=warning:stderr",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err"}
	extra, exited := b.archive.flags(b, base)
	command := append(append(slices.Clone(base), extra...), "-cp", b.classpathOf(), "CuratorLock")
	return Config{Command: command, Install: CuratorInstall, Name: name, Exited: exited}, nil
}

// CuratorBuildNote says how the driver's classes were obtained (compiled
// now, or found in the cache), once CuratorConfig ran for source.
func CuratorBuildNote(source string) string {
	if v, ok := built.Load(source); ok {
		b := v.(*curatorBuild)
		b.archive.mu.Lock()
		defer b.archive.mu.Unlock()
		if b.archive.note == "" {
			return b.note
		}
		return b.note + "; " + b.archive.note
	}
	return ""
}

func (b *curatorBuild) build(source string) {
	javac, java, ok := zkserver.FindJDK()
	if !ok {
		b.err = fmt.Errorf("%w: Curator's driver is compiled with javac and found none (JAVA_HOME/bin or PATH); %s", ErrMissing, CuratorInstall)
		return
	}
	b.java = java
	cp, err := curatorClasspath()
	if err != nil {
		b.err = err
		return
	}
	b.classpath = cp
	src, err := os.ReadFile(source)
	if err != nil {
		b.err = fmt.Errorf("curator driver source: %w", err)
		return
	}
	key, err := buildKey(src, cp, javac)
	if err != nil {
		b.err = err
		return
	}
	root, err := cacheRoot()
	if err != nil {
		b.err = err
		return
	}
	b.jar = filepath.Join(root, "CuratorLock-"+key[:16]+".jar")
	if _, err := os.Stat(b.jar); err == nil {
		b.note = "classes cached by content in " + b.jar
		return
	}
	began := time.Now()
	if err := compileInto(b.jar, javac, cp, source); err != nil {
		b.err = err
		return
	}
	b.note = fmt.Sprintf("compiled with %s in %v into %s", javac, time.Since(began).Round(time.Millisecond), b.jar)
}

// curatorClasspath is $ZK19_CURATOR_CLASSPATH, or Debian's jars, each
// checked to be there.
func curatorClasspath() (string, error) {
	if cp := os.Getenv(envCuratorClasspath); cp != "" {
		return cp, nil
	}
	var paths, missing []string
	for _, j := range append(append([]string(nil), curatorJars...), curatorLogging) {
		p := filepath.Join(javaLib, j)
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
			continue
		}
		paths = append(paths, p)
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: Curator's driver needs %s; %s", ErrMissing, strings.Join(missing, ", "), CuratorInstall)
	}
	return strings.Join(paths, string(os.PathListSeparator)), nil
}

// buildKey hashes what the class files depend on.
func buildKey(src []byte, classpath, javac string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "source %d\n", len(src))
	h.Write(src)
	fmt.Fprintf(h, "javac %s\n", javac)
	for _, p := range filepath.SplitList(classpath) {
		fmt.Fprintf(h, "jar %s\n", filepath.Base(p))
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("curator driver class path: %w", err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("curator driver class path: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cacheRoot is the cache's peers directory (zkserver.JDKCache).
func cacheRoot() (string, error) { return zkserver.JDKCache("peers") }

// compileInto compiles source into the jar: into a fresh directory beside
// it first, then into a jar file beside it, renamed into place once whole,
// so that a build that died half-way is never taken for a cached one, and
// two test binaries building at once both end up with a complete jar.
func compileInto(jar, javac, classpath, source string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(jar), filepath.Base(jar)+".tmp-")
	if err != nil {
		return fmt.Errorf("curator driver cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// --release 11: the driver needs nothing newer. -implicit:none and
	// -proc:none: compile the driver alone, not sources or annotation
	// processors found in the jars.
	classes := filepath.Join(tmp, "classes")
	out, err := exec.CommandContext(ctx, javac, "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC",
		"--release", "11", "-nowarn", "-proc:none", "-implicit:none", "-cp", classpath, "-d", classes, source).CombinedOutput()
	if err != nil {
		return fmt.Errorf("curator driver: javac against %s: %v\n%s", classpath, err, out)
	}
	built := filepath.Join(tmp, "driver.jar")
	if err := writeJar(built, classes); err != nil {
		return fmt.Errorf("curator driver cache: %w", err)
	}
	if err := os.Rename(built, jar); err != nil {
		return fmt.Errorf("curator driver cache: %w", err)
	}
	return nil
}

// writeJar writes the class files of dir (the driver's classes, in the
// default package) into a jar: a zip file, which is all the class path
// needs.
func writeJar(path, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".class") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Close()
			return err
		}
		w, err := zw.Create(e.Name())
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

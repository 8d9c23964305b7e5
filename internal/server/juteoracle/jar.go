package juteoracle

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zk19/zk19/internal/server/reaper"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Jar is where the server's own Jute classes are: a class path, and the
// directories every official class must have been loaded from.
type Jar struct {
	Classpath string
	Dirs      []string
	From      string // how the jar was found, for the record
}

// serverJar finds the jar of the server the backend runs: on the process
// backend the class path the backend resolved; on the container backend the
// jars inside the image, copied out. The external backend's servers keep
// theirs elsewhere: it takes a local install (zkserver.LocalInstall), whose
// version the caller compares with the one the server reports, and skips
// tb when there is none.
func serverJar(tb zkserver.TB, b zkserver.Backend) Jar {
	tb.Helper()
	switch b.Kind {
	case zkserver.Process:
		return Jar{Classpath: b.Classpath, Dirs: classpathDirs(b.Classpath), From: "process backend class path " + b.Classpath}
	case zkserver.Container:
		dir := tb.TempDir()
		cp, err := copyJarsOut(b.Image, dir)
		if err != nil {
			tb.Fatalf("E5: copying the ZooKeeper jars out of %s: %v", b.Image, err)
		}
		return Jar{Classpath: cp, Dirs: []string{dir}, From: "image " + b.Image + ", copied out"}
	case zkserver.External:
		l, err := zkserver.LocalInstall()
		if err != nil {
			zkserver.SkipFor(tb, &zkserver.Unavailable{Reason: zkserver.NoLocalJar, Err: err})
		}
		return Jar{Classpath: l.Classpath, Dirs: classpathDirs(l.Classpath), From: "a local install standing in for the external server's jar (" + l.Why + "), class path " + l.Classpath}
	}
	zkserver.SkipFor(tb, &zkserver.Unavailable{Reason: zkserver.NoJar, Kind: b.Kind})
	return Jar{}
}

// classpathDirs returns the directory of every class path entry ("lib/*"
// gives lib). Debian's zookeeper.jar names zookeeper-jute.jar, beside it, in
// its manifest: that directory is already among them.
func classpathDirs(cp string) []string {
	var dirs []string
	for _, e := range filepath.SplitList(cp) {
		d := filepath.Dir(e)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// checkSources fails unless every class came from one of the jar's
// directories. On the container backend this catches a copied zookeeper.jar
// whose manifest would pull in the host's own zookeeper-jute.jar.
func (j Jar) checkSources(sources map[string]string) error {
	classes := make([]string, 0, len(sources))
	for c := range sources {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		path := strings.TrimPrefix(sources[c], "file:")
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		ok := false
		for _, d := range j.Dirs {
			ok = ok || strings.HasPrefix(path, d+string(filepath.Separator))
		}
		if !ok {
			return fmt.Errorf("%s was loaded from %q, outside the server's jar directories %v", c, sources[c], j.Dirs)
		}
	}
	return nil
}

// jarsInImage lists, inside an image, ZooKeeper's jar, its Jute jar and
// slf4j-api (ClientCnxn, read for its xids, logs through it): Debian's
// layout (the local image) and the official image's distribution lib/.
const jarsInImage = `cd / && set -- && for f in usr/share/java/zookeeper.jar usr/share/java/zookeeper-jute.jar usr/share/java/slf4j-api.jar ` +
	`apache-zookeeper-*/lib/zookeeper-[0-9]*.jar apache-zookeeper-*/lib/zookeeper-jute-*.jar apache-zookeeper-*/lib/slf4j-api-*.jar; ` +
	`do [ -f "$f" ] && set -- "$@" "$f"; done; [ $# -gt 0 ] || { echo "no zookeeper jar in the image" >&2; exit 1; }; exec tar -chf - "$@"`

// copyJarsOut copies the jars out of image into dir and returns a class path
// with the Jute jar first, so that no manifest Class-Path entry can shadow
// it. Copying them out, rather than running the oracle in a container,
// keeps the JDK needed to compile it on the host and leaves no container
// behind between records; the classes are the image's, byte for byte.
func copyJarsOut(image, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", append(append([]string{"run", "--rm"}, reaper.LabelArgs()...),
		"--network", "none", "--entrypoint", "sh", image, "-c", jarsInImage)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var jute, zk, rest []string
	tr := tar.NewReader(&stdout)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		name := filepath.Join(dir, filepath.Base(h.Name))
		if err := writeFile(name, tr); err != nil {
			return "", err
		}
		switch base := filepath.Base(h.Name); {
		case strings.Contains(base, "jute"):
			jute = append(jute, name)
		case strings.HasPrefix(base, "zookeeper"):
			zk = append(zk, name)
		default:
			rest = append(rest, name)
		}
	}
	if len(jute) == 0 || len(zk) == 0 {
		return "", fmt.Errorf("found jute %v and zookeeper %v jars; want both", jute, zk)
	}
	return strings.Join(append(append(jute, zk...), rest...), string(os.PathListSeparator)), nil
}

func writeFile(name string, r io.Reader) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

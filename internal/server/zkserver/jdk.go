// This file finds the Java compiler and runtime the suite's Java helpers
// are built and run with: E5's Jute oracle (internal/server/juteoracle) and the
// Curator peer driver (internal/proof/peer); and the cache where what is built
// for a JVM is kept between runs (the driver's classes, the servers' class
// archive).

package zkserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// JDKCache returns the directory sub of the suite's cache, made if needed:
// $ZK19_CACHE/sub, or zk19/sub under the user's cache directory, or under
// the temp dir where there is none (named so that the check for run dirs
// left behind, zk19-*, does not take it for one: a cache is meant to stay).
func JDKCache(sub string) (string, error) {
	base := os.Getenv("ZK19_CACHE")
	if base == "" {
		if d, err := os.UserCacheDir(); err == nil {
			base = filepath.Join(d, "zk19")
		} else {
			base = filepath.Join(os.TempDir(), fmt.Sprintf("cache-zk19-%d", os.Getuid()))
		}
	}
	dir := filepath.Join(base, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("zk19 cache: %w", err)
	}
	return dir, nil
}

// FindJDK returns javac and the java beside it, from JAVA_HOME or PATH.
func FindJDK() (javac, java string, ok bool) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		javac = filepath.Join(h, "bin", "javac")
		if _, err := os.Stat(javac); err == nil {
			return javac, filepath.Join(h, "bin", "java"), true
		}
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", "", false
	}
	if real, err := filepath.EvalSymlinks(javac); err == nil {
		javac = real
	}
	return javac, filepath.Join(filepath.Dir(javac), "java"), true
}

// JDKArchiveKey hashes what a class archive (the JVM's class data sharing)
// depends on, so that one made for another JVM, class path or flags is
// never mapped: the java binary (its real path, size and time), the JVM's
// libjvm.so beside it, every class path entry likewise, and the flags
// other than system properties. It is hex, 64 digits.
func JDKArchiveKey(java string, classpath, flags []string) (string, error) {
	h := sha256.New()
	java, err := exec.LookPath(java)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(java); err == nil {
		java = real
	}
	libjvm := filepath.Join(filepath.Dir(filepath.Dir(java)), "lib", "server", "libjvm.so")
	if _, err := os.Stat(libjvm); err != nil {
		libjvm = java // a JDK laid out otherwise: its java binary stands for it
	}
	for _, p := range append([]string{java, libjvm}, classpath...) {
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	for _, f := range JDKArchiveFlags(flags) {
		fmt.Fprintf(h, "flag %s\n", f)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// JDKArchiveFlags are the flags a class archive depends on: all but system
// properties.
func JDKArchiveFlags(flags []string) []string {
	var out []string
	for _, f := range flags {
		if !strings.HasPrefix(f, "-D") {
			out = append(out, f)
		}
	}
	return out
}

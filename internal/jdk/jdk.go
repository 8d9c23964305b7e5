// Package jdk finds the Java compiler and runtime the suite's Java helpers
// are built and run with: E5's Jute oracle (internal/jute/official) and the
// Curator peer driver (internal/peer).
package jdk

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Find returns javac and the java beside it, from JAVA_HOME or PATH.
func Find() (javac, java string, ok bool) {
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

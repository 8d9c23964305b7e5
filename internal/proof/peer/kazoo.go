package peer

import (
	"fmt"
	"os"
	"os/exec"
)

// KazooInstall says how to get kazoo.
const KazooInstall = "run scripts/setup (python3-kazoo), or set " + envPython + " to an interpreter that imports kazoo"

// envPython names the interpreter to run kazoo's driver with, overriding
// the default choice (see KazooConfig).
const envPython = "ZK19_PYTHON"

// debianPython is the interpreter python3-kazoo installs for; a python3 found
// first on PATH (pyenv, a virtualenv) usually lacks Debian's dist-packages.
const debianPython = "/usr/bin/python3"

// KazooConfig is the Config of kazoo's driver program, testdata/peers/kazoo_lock.py
// (script, as a path from the caller's working directory), run by python:
// empty is $ZK19_PYTHON, else /usr/bin/python3 where it exists, else
// python3 on PATH. A missing interpreter is an error wrapping ErrMissing.
func KazooConfig(script, python, name string) (Config, error) {
	py, err := interpreter(python)
	if err != nil {
		return Config{}, err
	}
	if _, err := os.Stat(script); err != nil {
		return Config{}, fmt.Errorf("%s: driver program: %w", name, err)
	}
	// -u: every reply must reach the test the moment it is printed.
	return Config{Command: []string{py, "-u", script}, Env: []string{"PYTHONDONTWRITEBYTECODE=1"},
		Install: KazooInstall, Name: name}, nil
}

func interpreter(configured string) (string, error) {
	if configured == "" {
		configured = os.Getenv(envPython)
	}
	if configured != "" {
		return configured, nil
	}
	if _, err := os.Stat(debianPython); err == nil {
		return debianPython, nil
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", fmt.Errorf("%w: kazoo's driver needs python3 (no %s and no python3 on PATH); %s", ErrMissing, debianPython, KazooInstall)
	}
	return p, nil
}

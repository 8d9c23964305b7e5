package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

// runSuite runs the root package's tests, then, in each other package that
// a proof names, exactly the tests named, then the peer table (./peers). It returns their "go test -json"
// streams, one after the other, and the commands as a reader would type
// them. A failing test is no error: the verdicts say why.
func runSuite(o options, ix *claims.Index, backend string, stderr io.Writer) ([]byte, []string, error) {
	steps := [][]string{{"test", "-count=1", "-json", "-timeout", o.timeout, "."}}
	for _, p := range otherPackages(ix) {
		steps = append(steps, []string{"test", "-count=1", "-json", "-timeout", o.timeout, "-run", p.pattern(), "./" + p.dir})
	}
	steps = append(steps, []string{"test", "-count=1", "-json", "-timeout", o.timeout, "./" + peerDir})
	viz, err := visualizeEnv(o)
	if err != nil {
		return nil, nil, err
	}
	var all bytes.Buffer
	var cmds []string
	for _, args := range steps {
		shown := "go " + shellJoin(args)
		if backend != "" {
			shown = "ZK19_BACKEND=" + backend + " " + shown
		}
		fmt.Fprintf(stderr, "evidence: running %s\n", shown)
		cmd := exec.Command("go", args...)
		cmd.Dir = o.dir
		cmd.Env = append(os.Environ(), viz)
		if o.backend != "" {
			cmd.Env = append(cmd.Env, "ZK19_BACKEND="+o.backend)
		}
		cmd.Stdout = io.MultiWriter(&all, &progress{w: stderr})
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			if _, ok := err.(*exec.ExitError); !ok {
				return nil, nil, err
			}
		}
		cmds = append(cmds, shown)
	}
	return all.Bytes(), cmds, nil
}

// pkgTests are the tests of one package other than the root that proofs
// name.
type pkgTests struct {
	dir   string
	tests []string
}

// pattern is the -run pattern that matches exactly the tests.
func (p pkgTests) pattern() string { return "^(" + strings.Join(p.tests, "|") + ")$" }

// otherPackages lists, by directory, the tests of other packages that the
// index's proofs name.
func otherPackages(ix *claims.Index) []pkgTests {
	byDir := map[string][]string{}
	var dirs []string
	for _, c := range ix.Claims {
		for _, name := range c.Proof {
			dir, test := claims.SplitProof(name)
			if dir == "" || slices.Contains(byDir[dir], test) {
				continue
			}
			if byDir[dir] == nil {
				dirs = append(dirs, dir)
			}
			byDir[dir] = append(byDir[dir], test)
		}
	}
	slices.Sort(dirs)
	var out []pkgTests
	for _, d := range dirs {
		slices.Sort(byDir[d])
		out = append(out, pkgTests{d, byDir[d]})
	}
	return out
}

// progress prints one line per finished top-level test while the suite
// runs, so a long run shows where it is.
type progress struct {
	w       io.Writer
	partial []byte
}

func (p *progress) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		line := p.partial[:i]
		p.partial = p.partial[i+1:]
		rn, err := parseRun(bytes.NewReader(line), "")
		if err != nil {
			continue
		}
		for _, name := range rn.Order {
			if r := rn.Results[name]; r.Action != "" {
				fmt.Fprintf(p.w, "evidence: %-4s %s (%.1fs)\n", r.Action, name, r.Elapsed)
			}
		}
	}
	return len(b), nil
}

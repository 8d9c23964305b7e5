// Command evidence turns the zk19 suite's run into EVIDENCE.md, and keeps
// the claim index and the table of contents in doc.go in step with the
// root package's tests.
//
// Usage, from the module root:
//
//	go run ./cmd/evidence [-backend process|container|external] [-o EVIDENCE.md] [-save run.json]
//	go run ./cmd/evidence -json run.json [-cmd 'the command that wrote it'] [-o EVIDENCE.md]
//	go run ./cmd/evidence -doc
//	go run ./cmd/evidence -sync
//
// The first form runs "go test -count=1 -json ." for the root package
// (ZK19_BACKEND is passed through, or set by -backend), the second reads
// such a stream from a file. Both write EVIDENCE.md: a header (date, backend
// and server version from the record header, Go version, the command), a
// row per claim with its verdict (holds, refuted on <version>: <line>, not
// run: <reason>, failed: <first error line>) and the most telling log lines
// of its tests. The command exits 1 when any claim failed, and still writes
// the file.
//
// -doc regenerates doc.go from testdata/claims.json. -sync first sets every
// claim's proof list to the root-package Tests and Examples that cite it,
// then regenerates doc.go.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/zk19/zk19/internal/claims"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("evidence", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dir      = fs.String("C", ".", "the module root")
		index    = fs.String("index", "testdata/claims.json", "the claim index, relative to -C")
		out      = fs.String("o", "EVIDENCE.md", "the evidence file to write, relative to -C")
		jsonIn   = fs.String("json", "", "read this \"go test -json\" stream instead of running the suite")
		save     = fs.String("save", "", "also keep the raw \"go test -json\" stream of the run in this file")
		backend  = fs.String("backend", "", "ZK19_BACKEND for the run: process, container, external or auto (default: the environment's)")
		timeout  = fs.String("timeout", "30m", "go test -timeout")
		command  = fs.String("cmd", "", "with -json: the command that produced the stream, for the header")
		docMode  = fs.Bool("doc", false, "regenerate doc.go from the index and exit")
		syncMode = fs.Bool("sync", false, "set the index's proof lists from the root package's tests, regenerate doc.go and exit")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/evidence [-backend process|container] [-o EVIDENCE.md] [-json file] [-save file]\n"+
			"       go run ./cmd/evidence -doc | -sync\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(*dir, p)
	}
	ix, err := claims.Load(at(*index))
	if err != nil {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}

	if *syncMode {
		proofs, err := claims.ScanProofs(*dir)
		for _, p := range proofs {
			if p.Err != nil {
				err = fmt.Errorf("%s: %s: %w", p.Pos, p.Name, p.Err)
				break
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "evidence: %v\n", err)
			return 1
		}
		for _, w := range syncProofs(ix, proofs) {
			fmt.Fprintf(stderr, "evidence: %s\n", w)
		}
		b, err := ix.Marshal()
		if err == nil {
			err = os.WriteFile(at(*index), b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "evidence: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "evidence: wrote %s\n", at(*index))
		*docMode = true
	}
	if *docMode {
		b, err := renderDoc(ix)
		if err == nil {
			err = os.WriteFile(at("doc.go"), b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "evidence: doc.go: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "evidence: wrote %s\n", at("doc.go"))
		return 0
	}

	meta := Meta{
		Generator: strings.TrimSpace("go run ./cmd/evidence " + shellJoin(args)),
		GoVersion: goVersion(*dir),
		Backend:   *backend,
		Index:     *index,
	}
	if meta.Backend == "" {
		meta.Backend = os.Getenv("ZK19_BACKEND")
	}
	var stream []byte
	status := 0
	if *jsonIn != "" {
		meta.Source = *jsonIn
		meta.Command = *command
		stream, err = os.ReadFile(*jsonIn)
		if err != nil {
			fmt.Fprintf(stderr, "evidence: %v\n", err)
			return 1
		}
	} else {
		goArgs := []string{"test", "-count=1", "-json", "-timeout", *timeout, "."}
		meta.Command = "go " + strings.Join(goArgs, " ")
		if meta.Backend != "" {
			meta.Command = "ZK19_BACKEND=" + meta.Backend + " " + meta.Command
		}
		fmt.Fprintf(stderr, "evidence: running %s\n", meta.Command)
		cmd := exec.Command("go", goArgs...)
		cmd.Dir = *dir
		cmd.Env = os.Environ()
		if *backend != "" {
			cmd.Env = append(cmd.Env, "ZK19_BACKEND="+*backend)
		}
		var buf bytes.Buffer
		cmd.Stdout = io.MultiWriter(&buf, &progress{w: stderr})
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			// A failing test makes go test exit 1; the verdicts say why.
			if _, ok := err.(*exec.ExitError); !ok {
				fmt.Fprintf(stderr, "evidence: %v\n", err)
				return 1
			}
		}
		stream = buf.Bytes()
		if *save != "" {
			if err := os.WriteFile(*save, stream, 0o644); err != nil {
				fmt.Fprintf(stderr, "evidence: %v\n", err)
				status = 1
			}
		}
	}
	rn, err := parseRun(bytes.NewReader(stream))
	if err != nil {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}
	h := rn.header()
	vs := verdicts(ix, rn, h)
	var md bytes.Buffer
	renderMarkdown(&md, ix, rn, h, vs, meta)
	if err := os.WriteFile(at(*out), md.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}
	counts := map[string]int{}
	for _, v := range vs {
		counts[v.Kind]++
		if v.Kind == Failed {
			fmt.Fprintf(stderr, "evidence: %s %s\n", v.Claim.ID, v.Text)
			status = 1
		}
	}
	fmt.Fprintf(stderr, "evidence: wrote %s: %d holds, %d refuted, %d not run, %d failed\n",
		at(*out), counts[Holds], counts[Refuted], counts[NotRun], counts[Failed])
	return status
}

// goVersion asks the go command that runs the suite; the generator's own
// runtime version is the fallback.
func goVersion(dir string) string {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = dir
	if b, err := cmd.Output(); err == nil {
		if v := strings.TrimSpace(string(b)); v != "" {
			return v
		}
	}
	return runtime.Version()
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
		rn, err := parseRun(bytes.NewReader(line))
		if err != nil {
			continue
		}
		for _, name := range rn.Order {
			if r := rn.Results[name]; r.Action != "" && !strings.Contains(name, "/") {
				fmt.Fprintf(p.w, "evidence: %-4s %s (%.1fs)\n", r.Action, name, r.Elapsed)
			}
		}
	}
	return len(b), nil
}

// shellJoin quotes the arguments that need it, for the header.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$`\\|&;<>()*?[]{}!#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

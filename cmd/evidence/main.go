package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// options are the command line's flags.
type options struct {
	dir, index, out, jsonIn, save, backend, timeout, command, lang, zh string
	doc, sync, reorder                                                 bool
	args                                                               []string
}

// at resolves a path given on the command line against -C.
func (o options) at(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(o.dir, p)
}

func parseFlags(args []string, stderr io.Writer) (options, bool) {
	o := options{args: args}
	fs := flag.NewFlagSet("evidence", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dir, "C", ".", "the module root")
	fs.StringVar(&o.index, "index", "testdata/claims.json", "the claim index, relative to -C")
	fs.StringVar(&o.out, "o", "EVIDENCE.md", "the evidence file to write, relative to -C")
	fs.StringVar(&o.jsonIn, "json", "", "read this \"go test -json\" stream instead of running the suite")
	fs.StringVar(&o.save, "save", "", "also keep the raw \"go test -json\" stream of the run in this file")
	fs.StringVar(&o.backend, "backend", "", "ZK19_BACKEND for the run: process, container, external or auto (default: the environment's)")
	fs.StringVar(&o.timeout, "timeout", "30m", "go test -timeout")
	fs.StringVar(&o.command, "cmd", "", "with -json: the command that produced the stream, for the header")
	fs.StringVar(&o.lang, "lang", "en", "the language of the evidence file: en, or zh for the article's two attachments in Chinese (论断证据表, 验证记录)")
	fs.StringVar(&o.zh, "zh", "", "also write, from the same run, the article's attachments in Chinese to this file (with -lang en), next to -o: it links the same pictures")
	fs.BoolVar(&o.doc, "doc", false, "regenerate doc.go from the index and exit")
	fs.BoolVar(&o.sync, "sync", false, "set the index's proof lists from the root package's tests, regenerate doc.go and exit")
	fs.BoolVar(&o.reorder, "reorder", false, "put the Tests of each root test file in the order of their claims' sentences in the article (whole functions, bodies untouched), then as -sync")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/evidence [-backend process|container] [-lang en|zh] [-o EVIDENCE.md] [-zh EVIDENCE.zh.md] [-json file] [-save file]\n"+
			"       go run ./cmd/evidence -doc | -sync | -reorder\n")
		fs.PrintDefaults()
	}
	if fs.Parse(args) != nil {
		return o, false
	}
	if o.lang != "en" && o.lang != "zh" {
		fmt.Fprintf(stderr, "evidence: -lang %q; want en or zh\n", o.lang)
		return o, false
	}
	if o.zh != "" && (o.lang != "en" || filepath.Dir(o.zh) != filepath.Dir(o.out)) {
		fmt.Fprintf(stderr, "evidence: -zh %q goes with -lang en and next to -o %q (it links the same pictures)\n", o.zh, o.out)
		return o, false
	}
	return o, true
}

func run(args []string, stderr io.Writer) int {
	o, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}
	ix, err := claims.Load(o.at(o.index))
	if err != nil {
		return fail(err)
	}
	if o.reorder {
		if err := reorderTests(o, ix, stderr); err != nil {
			return fail(err)
		}
		o.sync = true
	}
	if o.sync {
		if err := syncIndex(o, ix, stderr); err != nil {
			return fail(err)
		}
		o.doc = true
	}
	if o.doc {
		at, err := ix.ProofPositions(o.dir)
		var b []byte
		if err == nil {
			b, err = ix.TableOfContents(at)
		}
		if err == nil {
			err = os.WriteFile(o.at(claims.DocFile), b, 0o644)
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", claims.DocFile, err))
		}
		fmt.Fprintf(stderr, "evidence: wrote %s\n", o.at(claims.DocFile))
		return 0
	}
	return writeEvidence(o, ix, stderr)
}

// syncIndex sets the index's proof lists from the root package's tests and
// writes it back.
func syncIndex(o options, ix *claims.Index, stderr io.Writer) error {
	proofs, err := claims.ScanProofs(o.dir)
	if err != nil {
		return err
	}
	for _, p := range proofs {
		if p.Err != nil {
			return fmt.Errorf("%s: %s: %w", p.Pos, p.Name, p.Err)
		}
	}
	for _, w := range syncProofs(ix, proofs) {
		fmt.Fprintf(stderr, "evidence: %s\n", w)
	}
	b, err := ix.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.at(o.index), b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "evidence: wrote %s\n", o.at(o.index))
	return nil
}

// writeEvidence runs the suite (or reads its stream) and writes the
// evidence file. It returns 1 when a claim was not shown or was refuted.
func writeEvidence(o options, ix *claims.Index, stderr io.Writer) int {
	meta := Meta{
		Generator: strings.TrimSpace("go run ./cmd/evidence " + shellJoin(o.args)),
		GoVersion: goVersion(o.dir),
		Backend:   o.backend,
		Index:     o.index,
		Tree:      gitTree(o.dir),
	}
	if meta.Backend == "" {
		meta.Backend = os.Getenv("ZK19_BACKEND")
	}
	stream, status, err := readStream(o, ix, &meta, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}
	rn, err := parseRun(bytes.NewReader(stream), modulePath(o.dir))
	if err != nil {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}
	h := rn.header()
	r := report{ix: ix, run: rn, h: h, vs: verdicts(ix, rn, h), peers: peers(rn), peerSrc: peerSources(o.dir), m: meta}
	if at, err := ix.ProofPositions(o.dir); err == nil {
		r.at = at
	} else {
		fmt.Fprintf(stderr, "evidence: the proofs' positions, for the Chinese table's links: %v\n", err)
	}
	r.pics = drawPictures(o, r, stderr)
	r.viz = visualizations(o, r)
	if err := shareViewer(o, r.viz); err != nil {
		fmt.Fprintf(stderr, "evidence: porcupine's pages: %v\n", err)
		return 1
	}
	if err := writeMarkdowns(o, r, stderr); err != nil {
		fmt.Fprintf(stderr, "evidence: %v\n", err)
		return 1
	}
	for _, v := range r.vs {
		if v.Kind == NotShown || v.Kind == Refuted {
			fmt.Fprintf(stderr, "evidence: %s %s\n", v.Claim.ID, v.Text)
			status = 1
		}
	}
	fmt.Fprintf(stderr, "evidence: wrote %s: %s\n", o.at(o.out), countVerdicts(r.vs, english))
	return status
}

// writeMarkdowns writes the evidence file in -lang's language and, with
// -zh, the Chinese one beside it, both from the one report.
func writeMarkdowns(o options, r report, stderr io.Writer) error {
	var md bytes.Buffer
	l := english
	if o.lang == "zh" {
		l = chinese
	}
	renderMarkdown(&md, r, l)
	if err := os.WriteFile(o.at(o.out), md.Bytes(), 0o644); err != nil {
		return err
	}
	if o.zh == "" {
		return nil
	}
	var zh bytes.Buffer
	renderMarkdown(&zh, r, chinese)
	if err := os.WriteFile(o.at(o.zh), zh.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "evidence: wrote %s\n", o.at(o.zh))
	return nil
}

// readStream returns the "go test -json" stream: read from -json, or run
// (and kept in -save). A -save that cannot be written makes status 1.
func readStream(o options, ix *claims.Index, meta *Meta, stderr io.Writer) (stream []byte, status int, err error) {
	if o.jsonIn != "" {
		meta.Source = o.jsonIn
		if o.command != "" {
			meta.Commands = []string{o.command}
		}
		stream, err = os.ReadFile(o.jsonIn)
		return stream, 0, err
	}
	stream, meta.Commands, err = runSuite(o, ix, meta.Backend, stderr)
	if err != nil {
		return nil, 1, err
	}
	if o.save != "" {
		if err := os.WriteFile(o.at(o.save), stream, 0o644); err != nil {
			fmt.Fprintf(stderr, "evidence: %v\n", err)
			status = 1
		}
	}
	return stream, status, nil
}

// modulePath reads the module path from dir's go.mod; "" when it cannot,
// and every test then counts as the root package's.
func modulePath(dir string) string {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
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

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zk19/zk19/internal/proof/history"
	"github.com/zk19/zk19/internal/record/diagram"
)

// picture is one diagram drawn from the recorded trace of a proof.
type picture struct {
	Test    string   // the proof drawn
	Claims  []string // the claims that name it as their diagram
	Mermaid string
	D2, SVG string // paths relative to -C; SVG is "" when it was not rendered
	Err     string // why the SVG is missing
}

// picturesDir is where the pictures of the evidence file out go, relative
// to the file's own directory (so its links work wherever it is written):
// docs/<kind>/<out's name without .md>.
func picturesDir(kind, out string) string {
	return filepath.Join("docs", kind, strings.TrimSuffix(filepath.Base(out), ".md"))
}

// home resolves p, a path relative to the evidence file's directory.
func (o options) home(p string) string { return filepath.Join(filepath.Dir(o.at(o.out)), p) }

// drawPictures draws the diagram of every claim that names one, writes the
// D2 sources and renders them to SVG with tools/d2svg, a module of its own
// so that the root module never builds d2.
func drawPictures(o options, r report, stderr io.Writer) []picture {
	dir := picturesDir("diagrams", o.out)
	if err := resetDir(o.home(dir)); err != nil {
		fmt.Fprintf(stderr, "evidence: diagrams: %v\n", err)
		return nil
	}
	var pics []picture
	for _, v := range r.vs {
		name := v.Claim.Diagram
		res := r.run.Results[name]
		if name == "" || res == nil || res.Action != "pass" {
			continue
		}
		if i := slices.IndexFunc(pics, func(p picture) bool { return p.Test == name }); i >= 0 {
			pics[i].Claims = append(pics[i].Claims, v.Claim.ID)
			continue
		}
		mermaid, d2 := diagram.FromLog("", res.Lines)
		p := picture{Test: name, Claims: []string{v.Claim.ID}, Mermaid: mermaid, D2: filepath.Join(dir, name+".d2")}
		if err := os.WriteFile(o.home(p.D2), []byte(d2), 0o644); err != nil {
			p.Err = err.Error()
		}
		pics = append(pics, p)
	}
	renderSVGs(o, dir, pics, stderr)
	return pics
}

// renderSVGs runs tools/d2svg on every D2 source written, bounded in time
// (a cold build of d2 takes minutes on a small machine). A picture without
// its SVG keeps its Mermaid text and says why.
func renderSVGs(o options, dir string, pics []picture, stderr io.Writer) {
	absDir, err := filepath.Abs(o.home(dir))
	var files []string
	for _, p := range pics {
		if p.Err == "" {
			files = append(files, filepath.Join(absDir, filepath.Base(p.D2)))
		}
	}
	if err != nil || len(files) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"-C", o.at("tools/d2svg"), "run", ".", "-o", absDir}, files...)...)
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(stderr, "evidence: rendered %d diagrams with tools/d2svg (%v)\n", len(files), errOr(err, "ok"))
	for i, p := range pics {
		svg := strings.TrimSuffix(p.D2, ".d2") + ".svg"
		if _, serr := os.Stat(o.home(svg)); serr == nil && p.Err == "" {
			pics[i].SVG = svg
		} else if pics[i].Err == "" {
			pics[i].Err = strings.TrimSpace(fmt.Sprintf("tools/d2svg: %v %s", err, lastLine(strings.Split(strings.TrimSpace(string(out)), "\n"))))
		}
	}
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// visualization is porcupine's picture of one linearizability verdict.
type visualization struct {
	Claim, Verdict, Path string
}

// porcupine is a porcupine verdict as the record logged it, in l.
func (l *lang) porcupine(verdict string) string {
	for _, v := range []history.Verdict{history.Linearizable, history.NotLinearizable, history.Unknown} {
		if l.zh && v.String() == verdict {
			return v.Chinese()
		}
	}
	return verdict
}

var visualized = regexp.MustCompile(`^(\S+): porcupine visualization of the verdict (.+): (\S+\.html)$`)

// visualizations lists the pictures the run's Require helpers kept (see
// history.EnvVisualize), by claim, with paths relative to the evidence
// file's directory.
func visualizations(o options, r report) []visualization {
	abs, _ := filepath.Abs(o.home("."))
	var out []visualization
	for _, name := range r.run.Order {
		for _, l := range r.run.Results[name].Lines {
			m := visualized.FindStringSubmatch(clean(l))
			if m == nil {
				continue
			}
			path := m[3]
			if rel, err := filepath.Rel(abs, path); err == nil && !strings.HasPrefix(rel, "..") {
				path = rel
			}
			out = append(out, visualization{Claim: m[1], Verdict: m[2], Path: path})
		}
	}
	return out
}

// visualizeEnv is the environment entry that makes the suite keep every
// verdict's picture in the evidence file's porcupine directory.
func visualizeEnv(o options) (string, error) {
	dir, err := filepath.Abs(o.home(picturesDir("porcupine", o.out)))
	if err != nil {
		return "", err
	}
	if err := resetDir(dir); err != nil {
		return "", err
	}
	return history.EnvVisualize + "=" + dir, nil
}

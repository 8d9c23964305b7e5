package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

// recordClaim is the claim that the record starts with what it ran
// against. Its Test sees only a header it builds again; the generator
// checks the record it reads, so the verdict rests on what was printed.
const recordClaim = "E4"

const recordTitle = "# zk19 verification record"

var (
	serverVersion = regexp.MustCompile(`^3\.\d+\.\d+$`)
	ensembleNeed  = regexp.MustCompile(`^ensemble-(\d+)$`)
)

// recordStart checks the root package's record as printed: a header block
// opened by recordTitle before its first test started, naming the backend,
// a server version 3.x.y, and among the ensembles "standalone" and "N
// servers" for every size a claim of the index needs. It returns what it
// saw (the values of lang.recordOpens), or the problem; both are empty for a run without a server (-short),
// which prints no header.
func recordStart(run *Run, ix *claims.Index) (seen []any, problem string) {
	if run.header().NoServer != "" {
		return nil, ""
	}
	block := headerBlock(run.Preamble)
	if block == nil {
		if headerBlock(run.PkgLines) != nil {
			return nil, "the record header was printed after the first test started"
		}
		return nil, fmt.Sprintf("the record has no header (no %q line)", recordTitle)
	}
	h := readHeader(block)
	var lacks []string
	if h.Backend == "" {
		lacks = append(lacks, "the backend")
	}
	if !serverVersion.MatchString(h.Version) {
		lacks = append(lacks, fmt.Sprintf("a server version 3.x.y (got %q)", h.Version))
	}
	for _, size := range ensembleSizes(ix) {
		if !strings.Contains(h.Ensembles, size) {
			lacks = append(lacks, fmt.Sprintf("%q among the ensembles (got %q)", size, h.Ensembles))
		}
	}
	if len(lacks) > 0 {
		return nil, "the record header lacks " + strings.Join(lacks, ", ")
	}
	return []any{h.BackendKind, h.Version, h.Ensembles}, "" // lang.recordOpens
}

// headerBlock returns the "# " lines from recordTitle on, or nil.
func headerBlock(ls []string) []string {
	for i, l := range ls {
		if strings.TrimSpace(l) != recordTitle {
			continue
		}
		j := i + 1
		for j < len(ls) && strings.HasPrefix(strings.TrimSpace(ls[j]), "# ") {
			j++
		}
		return ls[i:j]
	}
	return nil
}

// ensembleSizes names the ensembles the claims run on, as the header
// writes them: "standalone", then "N servers" per size in the claims'
// needs.
func ensembleSizes(ix *claims.Index) []string {
	var sizes []string
	for _, c := range ix.Claims {
		for _, n := range c.Needs {
			if m := ensembleNeed.FindStringSubmatch(n); m != nil && !slices.Contains(sizes, m[1]+" servers") {
				sizes = append(sizes, m[1]+" servers")
			}
		}
	}
	slices.Sort(sizes)
	return append([]string{"standalone"}, sizes...)
}

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/zk19/zk19/internal/proof/claims"
)

// syncProofs sets every claim's proof list to the root package's Tests and
// Examples that cite it: Tests before Examples, a test of fewer claims
// before one of more, then in file and line order. Entries naming a test of
// another package (claims.SplitProof) cite by the index alone and are kept,
// after the root package's. Peer tests cite nothing. It returns what a
// reader should know: claims without proof, citations of IDs that are not
// in the index.
func syncProofs(ix *claims.Index, proofs []claims.Proof) (warnings []string) {
	proofs = append([]claims.Proof(nil), proofs...)
	sort.SliceStable(proofs, func(i, j int) bool {
		a, b := proofs[i], proofs[j]
		if a.Example != b.Example {
			return !a.Example
		}
		return len(a.Cites) < len(b.Cites)
	})
	byID := map[string][]string{}
	for _, p := range proofs {
		for _, id := range p.Cites {
			if ix.Claim(id) == nil {
				warnings = append(warnings, fmt.Sprintf("%s:%d: %s cites %s, which is not in the index", filepath.Base(p.Pos.Filename), p.Pos.Line, p.Name, id))
				continue
			}
			if !slices.Contains(byID[id], p.Name) {
				byID[id] = append(byID[id], p.Name)
			}
		}
	}
	for i := range ix.Claims {
		c := &ix.Claims[i]
		proof := byID[c.ID]
		for _, name := range c.Proof {
			if dir, _ := claims.SplitProof(name); dir != "" {
				proof = append(proof, name)
			}
		}
		c.Proof = proof
		if c.Proof == nil {
			c.Proof = []string{}
			warnings = append(warnings, fmt.Sprintf("claim %s has no Test or Example yet", c.ID))
		}
	}
	return warnings
}

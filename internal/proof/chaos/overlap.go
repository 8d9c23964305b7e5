package chaos

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/zk19/zk19/fence"
)

// Seen is what one listing of the lock parent, read on the server after a
// hold began, shows of that hold and of the holds it overlapped.
//
// Why one listing after the hold began can judge the moment it began:
// candidate names are never reused (the GUID and the sequence are in
// them), so a node exists over one interval, from its create to its
// delete. Every node in question was created before the hold began (an
// overlapped hold's node before that hold, the hold's own before its
// acquisition returned). A node listed after the hold began was therefore
// on the server when it began; a node not listed may have gone since,
// which the caller rules out by pinning the overlapped holds (Holders.Begin)
// so that their workers cannot delete them meanwhile. The listing must be
// at least as new as the moment the hold began: read after a sync, and
// trust a node listed only after a write of the reader's own (a sync
// answered by a leader that does not know it was deposed, ZOOKEEPER-1675,
// can show a node the quorum already deleted).
type Seen struct {
	Own bool // the hold's own node is listed
	// Lowest: the own node is listed and no candidate below it, an
	// overlapped hold's or any other.
	Lowest bool
	// Present says, per overlapped hold in the order given, whether its
	// node is listed.
	Present []bool
	// Ahead are the candidates listed below the hold's own node that are
	// no overlapped hold's, by name in sequence order. The lock holds
	// only when its node is the lowest, and a lower node it did not list
	// cannot appear later (it would have been created before its own):
	// after a correct hold none is ever listed.
	Ahead []string
}

// Overlap is what the server says of a hold that began while another was
// held (from the lock's view).
type Overlap int

// How an overlap looks on the server.
const (
	// EarlierGone: the earlier hold's node was gone. The lock passed on
	// because the server removed it (its session expired), while its
	// worker does not know yet: the overlap the article expects, and the
	// one fencing is for.
	EarlierGone Overlap = iota + 1
	// LaterGone: the later hold's own node was gone already (its session
	// ended right after it took the hold); the earlier one's is there.
	// The later holder is the one not holding.
	LaterGone
	// BothThere: both nodes were on the server, each owned by a session
	// that had not ended: two holders at once, a bug of the recipe.
	BothThere
)

func (o Overlap) String() string {
	switch o {
	case EarlierGone:
		return "the earlier holder's node gone"
	case LaterGone:
		return "the later holder's own node gone"
	case BothThere:
		return "both nodes on the server (two holders at once)"
	}
	return "overlap ?"
}

// Read reads a listing of the lock parent (its children's names) for
// hold, which began while others held.
func Read(children []string, hold Hold, others []Hold) (Seen, error) {
	own := path.Base(hold.Node)
	ownSeq, err := fence.ParseSeq(own)
	if err != nil {
		return Seen{}, fmt.Errorf("the hold's node %s: %w", own, err)
	}
	s := Seen{Own: slices.Contains(children, own), Present: make([]bool, len(others))}
	theirs := map[string]bool{}
	for i, o := range others {
		name := path.Base(o.Node)
		theirs[name] = true
		s.Present[i] = slices.Contains(children, name)
	}
	below := 0
	seqs := map[string]int64{}
	for _, c := range children {
		if !isCandidate(c) {
			continue
		}
		seq, err := fence.ParseSeq(c)
		if err != nil {
			return Seen{}, fmt.Errorf("child %s: %w", c, err)
		}
		seqs[c] = seq
		if seq < ownSeq {
			below++
			if !theirs[c] {
				s.Ahead = append(s.Ahead, c)
			}
		}
	}
	slices.SortFunc(s.Ahead, func(a, b string) int { return cmp.Compare(seqs[a], seqs[b]) })
	s.Lowest = s.Own && below == 0
	return s, nil
}

// Overlap says how the overlap with the i-th overlapped hold looks.
func (s Seen) Overlap(i int) Overlap {
	switch {
	case !s.Present[i]:
		return EarlierGone
	case !s.Own:
		return LaterGone
	}
	return BothThere
}

// Broken reports whether the listing shows a hold the lock must not have
// given: two holders at once, or a candidate ahead of the hold's own node.
func (s Seen) Broken() bool {
	if s.Own && len(s.Ahead) > 0 {
		return true
	}
	for i := range s.Present {
		if s.Overlap(i) == BothThere {
			return true
		}
	}
	return false
}

// isCandidate reports whether a child of the lock parent takes part in the
// lock (package lock's rule): it carries fence.LockInfix.
func isCandidate(name string) bool { return strings.Contains(name, fence.LockInfix) }

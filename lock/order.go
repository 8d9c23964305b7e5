package lock

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zk19/zk19/fence"
)

// errMalformed reports a child of the lock parent that carries
// fence.LockInfix but whose sequence suffix cannot be parsed, or two
// candidates that share one sequence number. Either means something other
// than this recipe wrote under the parent; guessing an order would be
// unsafe. It wraps the fence parse error, which callers can test for.
var errMalformed = errors.New("lock: malformed candidate")

// entry is one candidate of a lock parent: its node name (not a path) and
// the sequence number the server appended to it.
type entry struct {
	name string
	seq  int64
}

// isCandidate reports whether a child name takes part in the lock: it
// carries fence.LockInfix. Other children (for example a "ready" marker or
// a configuration node) are not candidates.
func isCandidate(name string) bool { return strings.Contains(name, fence.LockInfix) }

// order returns the candidates among children sorted by their parsed
// sequence number (claim L2). Children without fence.LockInfix are skipped;
// a child with the infix but a malformed suffix (negative, overflowing,
// non-numeric, missing, short), or a sequence number shared by two
// candidates, is an error wrapping errMalformed and the fence parse error.
//
// Names are never compared as strings: the GUID in front of the suffix is
// random, so whole-name order says nothing about creation order.
func order(children []string) ([]entry, error) {
	out := make([]entry, 0, len(children))
	for _, name := range children {
		if !isCandidate(name) {
			continue
		}
		seq, err := fence.ParseSeq(name)
		if err != nil {
			return nil, fmt.Errorf("%w: child %q has %s but no valid sequence suffix: %w", errMalformed, name, fence.LockInfix, err)
		}
		out = append(out, entry{name: name, seq: seq})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	for i := 1; i < len(out); i++ {
		if out[i].seq == out[i-1].seq {
			return nil, fmt.Errorf("%w: children %q and %q share sequence number %d", errMalformed, out[i-1].name, out[i].name, out[i].seq)
		}
	}
	return out, nil
}

// position returns the index of own in ordered, or -1 if own is not there.
func position(ordered []entry, own string) int {
	for i, e := range ordered {
		if e.name == own {
			return i
		}
	}
	return -1
}

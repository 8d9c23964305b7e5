package lock

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zk19/zk19/internal/fence"
)

// ErrMalformed reports a child of the lock parent that carries
// fence.LockInfix but whose sequence suffix cannot be parsed, or two
// candidates that share one sequence number. Either means something other
// than this recipe wrote under the parent; guessing an order would be unsafe.
var ErrMalformed = errors.New("lock: malformed candidate")

// Entry is one candidate of a lock parent: its node name (not a path) and
// the sequence number the server appended to it.
type Entry struct {
	Name string
	Seq  int64
}

// IsCandidate reports whether a child name takes part in the lock: it
// carries fence.LockInfix. Other children (for example a "ready" marker or
// a configuration node) are ignored by Order.
func IsCandidate(name string) bool { return strings.Contains(name, fence.LockInfix) }

// Order returns the candidates among children sorted by their parsed
// sequence number (claim L2). Children without fence.LockInfix are skipped;
// a child with the infix but a malformed suffix (negative, overflowing,
// non-numeric, missing, short), or a sequence number shared by two
// candidates, is an error wrapping ErrMalformed and the fence parse error.
//
// Names are never compared as strings: the GUID in front of the suffix is
// random, so whole-name order says nothing about creation order.
func Order(children []string) ([]Entry, error) {
	out := make([]Entry, 0, len(children))
	for _, name := range children {
		if !IsCandidate(name) {
			continue
		}
		seq, err := fence.ParseSeq(name)
		if err != nil {
			return nil, fmt.Errorf("%w: child %q has %s but no valid sequence suffix: %w", ErrMalformed, name, fence.LockInfix, err)
		}
		out = append(out, Entry{Name: name, Seq: seq})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	for i := 1; i < len(out); i++ {
		if out[i].Seq == out[i-1].Seq {
			return nil, fmt.Errorf("%w: children %q and %q share sequence number %d", ErrMalformed, out[i-1].Name, out[i].Name, out[i].Seq)
		}
	}
	return out, nil
}

// Position returns the index of own in ordered, or -1 if own is not there.
func Position(ordered []Entry, own string) int {
	for i, e := range ordered {
		if e.Name == own {
			return i
		}
	}
	return -1
}

// Predecessor returns the candidate immediately before own in children
// (by sequence number), "" when own is the lowest, and ok=false when own is
// not among the children at all.
func Predecessor(children []string, own string) (pred string, ok bool, err error) {
	ord, err := Order(children)
	if err != nil {
		return "", false, err
	}
	i := Position(ord, own)
	switch {
	case i < 0:
		return "", false, nil
	case i == 0:
		return "", true, nil
	default:
		return ord[i-1].Name, true, nil
	}
}

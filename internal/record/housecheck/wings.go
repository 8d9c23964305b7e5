package housecheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Wing is the part of the house a package stands in, by its directory,
// from the foot up: a package imports only from its own wing and the
// wings below it.
type Wing int

// The wings, from the foot up.
const (
	Public  Wing = iota // lock, fence and their subpackages
	Server              // internal/server: the servers and the wire
	Fixture             // zktest: the server wing as a public fixture for any Go test
	Proof               // internal/proof: the proof's machinery
	Kit                 // locktest: the peer scenarios as a public kit for any Go recipe
	Record              // internal/record: the record's tools
	Command             // cmd/: the commands
	Proofs              // the root, peers and bench: the proofs
)

var wingNames = [...]string{"the public packages", "the server wing", "the public fixture", "the proof wing", "the public kit", "the record wing", "the commands", "the proofs"}

// String names w.
func (w Wing) String() string { return wingNames[w] }

// WingOf is the wing of the package in dir.
func WingOf(dir string) Wing {
	switch top, rest, _ := strings.Cut(dir, "/"); {
	case top == "internal" && strings.HasPrefix(rest, "server/"):
		return Server
	case top == "internal" && strings.HasPrefix(rest, "proof/"):
		return Proof
	case top == "internal" && strings.HasPrefix(rest, "record/"):
		return Record
	case top == "cmd":
		return Command
	case top == "lock" || top == "fence":
		return Public
	case top == "zktest":
		return Fixture
	case top == "locktest":
		return Kit
	}
	return Proofs
}

// RoomOf is the folder that holds the package in dir within its wing:
// internal/<wing>/<room>, cmd/<command>, or the top folder (lock, fence).
func RoomOf(dir string) string {
	parts := strings.Split(dir, "/")
	n := 1
	switch parts[0] {
	case "internal":
		n = 3
	case "cmd":
		n = 2
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

// WingBreaches lists what breaks the house's order in ix, one sentence
// each: an import into a higher wing (for the server wing, from its tests
// as well: it imports nothing of the proof's or the record's), imports
// that run round between rooms (a folder whose packages import a room that
// imports them back), and a package of internal/ under minLines lines of
// non-test code, unless it is a command (package main).
func (ix *Index) WingBreaches(minLines int) []string {
	var out []string
	for _, dir := range slices.Sorted(maps.Keys(ix.ByDir)) {
		p := ix.ByDir[dir]
		uses := p.Uses()
		if WingOf(dir) == Server {
			uses = union(p.Code, p.Tests)
		}
		for _, q := range slices.Sorted(maps.Keys(uses)) {
			if WingOf(q) > WingOf(dir) {
				out = append(out, fmt.Sprintf("%s (%v) imports %s (%v): got an import into a higher wing; want imports from its own wing or below", dir, WingOf(dir), q, WingOf(q)))
			}
		}
		if strings.HasPrefix(dir, "internal/") && !p.Command && p.CodeLines < minLines {
			out = append(out, fmt.Sprintf("%s: got %d lines of non-test code; want at least %d (fold it into its user)", dir, p.CodeLines, minLines))
		}
	}
	return append(out, ix.roomCycles()...)
}

func union(a, b map[string]bool) map[string]bool {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// roomCycles lists each room that its own imports reach again through
// another room, with the path they take.
func (ix *Index) roomCycles() []string {
	next := map[string]map[string]bool{}
	for dir, p := range ix.ByDir {
		from := RoomOf(dir)
		for q := range p.Uses() {
			if to := RoomOf(q); to != from {
				if next[from] == nil {
					next[from] = map[string]bool{}
				}
				next[from][to] = true
			}
		}
	}
	var out []string
	for _, room := range slices.Sorted(maps.Keys(next)) {
		if path := roomPath(next, room, room, map[string]bool{}); path != nil {
			out = append(out, fmt.Sprintf("%s → %s: got imports that run round between rooms; want them to run one way, down", room, strings.Join(path, " → ")))
		}
	}
	return out
}

// roomPath is a path of rooms from room to goal, nil when there is none.
func roomPath(next map[string]map[string]bool, room, goal string, seen map[string]bool) []string {
	for _, to := range slices.Sorted(maps.Keys(next[room])) {
		if to == goal {
			return []string{to}
		}
		if seen[to] {
			continue
		}
		seen[to] = true
		if path := roomPath(next, to, goal, seen); path != nil {
			return append([]string{to}, path...)
		}
	}
	return nil
}

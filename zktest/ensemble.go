package zktest

import (
	"fmt"
	"strings"
	"time"

	"github.com/zk19/zk19/internal/server/tb"
)

// ElectWithin bounds the verbs' waits for an ensemble to elect a leader
// and for a server to come back.
const ElectWithin = 60 * time.Second

// Leader waits up to ElectWithin until one server reports that it leads,
// and returns it; it fails the test otherwise, naming every server's mode.
func (e *Ensemble) Leader() *Server {
	e.t.Helper()
	var l *Server
	tb.WaitFor(e.t, ElectWithin, "a leader", func() (bool, string) {
		l = e.leaderNow()
		return l != nil, e.modes()
	})
	return l
}

// Followers returns the servers that report that they follow, now.
func (e *Ensemble) Followers() []*Server {
	var out []*Server
	for _, s := range e.Servers {
		if m, _ := s.s.Mode(); m == "follower" {
			out = append(out, s)
		}
	}
	return out
}

// Mode asks the server for its mode now: "leader", "follower",
// "standalone", or "" with the error when it does not answer.
func (s *Server) Mode() (string, error) { return s.s.Mode() }

func (e *Ensemble) leaderNow() *Server {
	for _, s := range e.Servers {
		if m, _ := s.s.Mode(); m == "leader" || m == "standalone" {
			return s
		}
	}
	return nil
}

func (e *Ensemble) modes() string {
	var ms []string
	for _, s := range e.Servers {
		m, err := s.s.Mode()
		if err != nil {
			m = err.Error()
		}
		ms = append(ms, fmt.Sprintf("%s: %s", s, m))
	}
	return strings.Join(ms, "; ")
}

// Hold is a HoldFollower in force.
type Hold struct {
	e      *Ensemble
	leader *Server
	f      *Server
}

// HoldFollower makes follower f lag: what the leader sends f (proposals,
// commits, pings) is kept by the link's proxy, in memory and in order,
// until Release, while f stays connected and keeps serving its clients
// from what it had. f drops the leader if the hold outlasts syncLimit ticks
// (5 s by default). It fails the test when f is not a follower now.
func (e *Ensemble) HoldFollower(f *Server) *Hold {
	e.t.Helper()
	e.owned(e.t, "HoldFollower")
	l := e.Leader()
	if e.links == nil || l == f {
		e.t.Fatalf("zktest: HoldFollower(%s): got a server that leads (%s); want a follower", f, l)
	}
	e.links.Hold(l.ID, f.ID)
	return &Hold{e: e, leader: l, f: f}
}

// Held is how many bytes of the leader's stream the hold keeps now: more
// than 0 once the leader sent f anything since the hold began.
func (h *Hold) Held() int64 { return h.e.links.Held(h.leader.ID, h.f.ID) }

// Release delivers, in order, what the leader sent while held, and lets
// its stream pass again. It returns how many bytes it delivered.
func (h *Hold) Release() int64 {
	n := h.Held()
	h.e.links.Release(h.leader.ID, h.f.ID)
	return n
}

// Partition is a PartitionLeader in force.
type Partition struct {
	e   *Ensemble
	Old *Server // the leader that was cut off
	New *Server // the leader the others elected without it
}

// PartitionLeader cuts the leader off from every other server (their
// links discard every byte, both ways; client links are not touched) and
// waits up to ElectWithin until the others elect a new leader, which it
// returns in Partition.New. The old leader goes on believing it leads until
// it misses a quorum for syncLimit ticks. It fails the test if no new leader
// is elected.
func (e *Ensemble) PartitionLeader() *Partition {
	e.t.Helper()
	e.owned(e.t, "PartitionLeader")
	old := e.Leader()
	if e.links == nil {
		e.t.Fatalf("zktest: PartitionLeader: a standalone server has no leader to cut off")
	}
	for _, s := range e.Servers {
		if s != old {
			e.links.Blackhole(old.ID, s.ID)
			e.links.Blackhole(s.ID, old.ID)
		}
	}
	pt := &Partition{e: e, Old: old}
	tb.WaitFor(e.t, ElectWithin, "a new leader among the servers cut off from "+old.String(), func() (bool, string) {
		for _, s := range e.Servers {
			if m, _ := s.s.Mode(); s != old && m == "leader" {
				pt.New = s
				return true, ""
			}
		}
		return false, e.modes()
	})
	return pt
}

// Heal ends the partition (every link passes again, and the connections
// that lost bytes are reset) and waits up to ElectWithin until the old
// leader has rejoined as a follower.
func (pt *Partition) Heal() {
	pt.e.t.Helper()
	pt.e.links.Heal()
	if err := pt.Old.s.WaitMode(ElectWithin, "follower"); err != nil {
		pt.e.t.Fatalf("zktest: after the heal %s did not rejoin as a follower: %v", pt.Old, err)
	}
}

// Restart stops server s (SIGTERM to its process, or its container),
// starts it again with the same data and ports, and waits until it reports
// a mode. Its clients see their connections end and reconnect; sessions
// survive if they reconnect within their timeout. It fails the test if
// the server still runs in the same process (or container) afterwards.
func (s *Server) Restart() {
	t := s.e.t
	t.Helper()
	s.e.owned(t, "Restart")
	before, err := s.s.PID()
	if err != nil {
		t.Fatalf("zktest: restart %s: %v", s, err)
	}
	s.s.Restart(t)
	if after, err := s.s.PID(); err != nil || after == before {
		t.Fatalf("zktest: restart %s: got process %d (%v) after it; want another than %d", s, after, err, before)
	}
}

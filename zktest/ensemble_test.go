package zktest_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/zktest"
)

// TestEnsembleVerbs runs the server verbs on one 3-server ensemble, in
// turn: a held follower serves a stale read until the release; a
// partitioned leader is replaced and rejoins as a follower on the heal.
func TestEnsembleVerbs(t *testing.T) {
	e := zktest.StartEnsemble(t, 3)
	leader := e.Leader()
	f := e.Followers()[0]
	w := e.Connect(t, "W", zktest.To(leader))
	r := e.Connect(t, "R", zktest.To(f), zktest.SessionTimeout(4*time.Second))

	t.Run("HoldFollower", func(t *testing.T) {
		h := e.HoldFollower(f)
		if _, err := w.Create("/held", nil, 0, acl); err != nil {
			t.Fatalf("create through the leader: %v", err)
		}
		ok, _, err := r.Exists("/held")
		if err != nil || ok {
			t.Fatalf("exists on the held follower: got %v, %v; want false (a stale read)", ok, err)
		}
		if n := h.Release(); n == 0 {
			t.Fatalf("Release delivered %d bytes; want the held stream", n)
		}
		if _, err := r.Sync("/held"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		if ok, _, err := r.Exists("/held"); err != nil || !ok {
			t.Fatalf("exists after the release: got %v, %v; want true", ok, err)
		}
	})
	t.Run("PartitionLeader", func(t *testing.T) {
		pt := e.PartitionLeader()
		if pt.New == nil || pt.New == pt.Old {
			t.Fatalf("new leader: got %v; want a server other than %v", pt.New, pt.Old)
		}
		pt.Heal()
		if m, err := pt.Old.Mode(); m != "follower" {
			t.Fatalf("old leader after the heal: got %q (%v); want follower", m, err)
		}
	})
}

// restartTick lets a session last up to 20 s (20 ticks), far longer than
// a server takes to stop and start again (1.4 s for a container here, 2.4 s
// for a process), so that a client whose only server restarts reconnects
// within its timeout even on a loaded machine. At the default 200 ms tick a
// session lasts at most 4 s, which a restarted ensemble member took twice
// over in CI.
const restartTick = time.Second

// TestRestartKeepsTheSession: a restarted server comes back in another
// process (or container) on its data: its client reconnects within the
// session timeout and keeps its session, and the session's ephemeral node
// is still there.
func TestRestartKeepsTheSession(t *testing.T) {
	t.Parallel()
	e := zktest.Start(t, zktest.WithTickTime(restartTick))
	r := e.Connect(t, "R", zktest.SessionTimeout(20*restartTick))
	if _, err := r.Create("/mine", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatalf("create /mine: %v", err)
	}
	id, mark := r.SessionID(), r.Mark()
	began := time.Now()
	e.Servers[0].Restart()
	for _, st := range []zk.State{zk.StateDisconnected, zk.StateHasSession} {
		if err := r.WaitStateSince(mark, st, within); err != nil {
			t.Fatalf("R after the restart: %v", err)
		}
	}
	t.Logf("R has a session again %v after the restart began", time.Since(began).Round(time.Millisecond))
	if r.SessionID() != id {
		t.Fatalf("R's session after the restart: got 0x%x; want 0x%x", r.SessionID(), id)
	}
	if ok, st, err := r.Exists("/mine"); err != nil || !ok || st.EphemeralOwner != id {
		t.Fatalf("/mine after the restart: got exists=%v %v; want R's ephemeral node", ok, err)
	}
}

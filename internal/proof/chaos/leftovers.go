package chaos

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/server/reaper"
	"github.com/zk19/zk19/internal/server/tb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// NothingLeft checks, after both setups, that no server, process,
// container, dir or goroutine of t's is left (those named after t, and the
// goroutines started under zkserver.Own(t.Name())), and says so for the
// record.
func NothingLeft(t *testing.T) zh.Text {
	t.Helper()
	failed := false
	if l := zkserver.LiveOf(t.Name()); len(l) > 0 {
		failed = true
		claims.BrokenCheck(t, "C1", "servers of the chaos still tracked as running after it: %v; want none", l)
	}
	left, err := reaper.LeftoversOf(os.Getpid(), zkserver.SafeName(t.Name()))
	if err != nil {
		claims.NotShown(t, "C1", "leftovers of this process: %v", err)
	}
	if len(left) > 0 {
		failed = true
		claims.BrokenCheck(t, "C1", "the chaos left %v; want nothing", left)
	}
	if g := zkserver.OwnGoroutines(t.Name(), harness.Within); g != "" {
		failed = true
		claims.BrokenCheck(t, "C1", "goroutines of the chaos left after it:\n%s", g)
	}
	if failed {
		return zh.Say("something was left after the run (see the failures)")
	}
	return zh.Say("after the run no server process, container, server dir or goroutine of it was left")
}

// leftWithin bounds the wait for what the workers' sessions leave on the
// server once they are closed. A worker closed while the nemesis has just
// cut it off cannot send its closeSession: the server expires that session,
// and its nodes with it, after the negotiated timeout, up to a tick later.
// On a server with the default tickTime (2 s), a user's own among them, the
// shortest timeout is 4 s, so that is 6 s; a node or session still there
// after leftWithin has outlived any session timeout C1's workers can get.
const leftWithin = 10 * harness.ExpirySessionTimeout

// leftOnServer looks, with every worker's session closed, for lock nodes
// left under the root and then, when there is none, for sessions but the
// observer's left on the server that tracks them all (the leader, or the
// one server). It returns each wait's last state, "" when nothing was
// left; it judges nothing (the Checker does).
func (run *chaosRun) leftOnServer() (nodes, sessions string) {
	t := run.t
	if err := run.O.WaitConnected(zkclient.ConnectWithin); err != nil {
		run.judgeSoFar()
		claims.NotShown(t, "C1", "the observer has no session to check with: %v", err)
	}
	err := tb.WaitUntil(leftWithin, "no lock node under "+run.root, func() (bool, string) {
		kids, _, err := run.O.Children(run.root)
		return err == nil && len(kids) == 0, fmt.Sprintf("%v %v", kids, err)
	})
	if err != nil {
		return err.Error(), ""
	}
	tracker := run.servers[0]
	if run.cluster != nil {
		tracker = run.cluster.Leader()
	}
	what, left := run.leftSessions()
	err = tb.WaitUntil(leftWithin, what+" in "+tracker.Label+"'s dump", func() (bool, string) {
		all, err := dumpSessions(tracker)
		all = slices.DeleteFunc(all, func(s string) bool { return !left(s) })
		return err == nil && len(all) == 0, fmt.Sprint(all, err)
	})
	if err != nil {
		return "", err.Error()
	}
	t.Logf("after the workers closed: no lock node under the root and %s in %s's dump", what, tracker.Label)
	return "", ""
}

// leftSessions says which sessions of the server's dump the run would have
// left: every one but O's on servers of the harness's own; on the user's
// server, which others' sessions share, those the workers had.
func (run *chaosRun) leftSessions() (what string, left func(string) bool) {
	own := fmt.Sprintf("0x%x", run.O.SessionID())
	if !run.shared {
		return "no session but O's (" + own + ")", func(s string) bool { return s != own }
	}
	var ids []string
	for _, w := range run.workers {
		ids = append(ids, w.ids...)
	}
	return fmt.Sprintf("none of the workers' %d sessions", len(ids)), func(s string) bool { return slices.Contains(ids, s) }
}

var sessionID = regexp.MustCompile(`^\s*(0x[0-9a-f]+)\s*$`)

// dumpSessions lists the sessions the server's dump names in its session
// sets (a leader's, or a standalone server's, are every session).
func dumpSessions(s *zkserver.Server) ([]string, error) {
	answer, err := zkserver.FourLetter(s.Client, "dump", harness.Within)
	if err != nil {
		return nil, err
	}
	dump, _, _ := strings.Cut(answer, "ephemeral nodes dump")
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if m := sessionID.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out, nil
}

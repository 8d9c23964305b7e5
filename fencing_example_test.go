package zk19_test

// §5 of the article (资源接受新 token 后拒绝旧写): the resource, not the lock,
// refuses a late holder. The fencing sequence and the critical section come
// first, as Examples; then F1 to F12 (F10 is in §7's file) and C1, in the
// order the article states them. F1 to F12 each run on both fenced
// resources, the one in memory and the durable one in SQLite, in subtests
// named for what the claim says of them; C1 is the seeded chaos run:
// workers take the lock and write with their tokens while a nemesis
// loses replies, freezes holders until their sessions expire, cuts
// connections, restarts servers and fails the leader over, and the fenced
// resources must refuse every stale write the unfenced control takes.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
	"github.com/zk19/zk19/internal/proof/chaos"
	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/fencescene"
	"github.com/zk19/zk19/internal/proof/harness"
	"github.com/zk19/zk19/internal/proof/scene"
	"github.com/zk19/zk19/internal/proof/srcread"
	"github.com/zk19/zk19/internal/server/sqldb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/internal/server/zkserver"
	"github.com/zk19/zk19/lock"
)

// Example_s5aFencingSequence is the article's fencing sequence diagram (§5
// ¶3); it proves claims F1, F2, F3, F4, F8 and F10: F1 (§5 ¶1, sentence
// 2), F3 (¶2, sentence 3), F4 (¶4, sentence 2) and F2 (¶6, sentence 1) on
// each fenced resource, with an unfenced one beside them, then F8 (¶5,
// sentence 2) on the durable ones and F10 (§7 ¶2, sentence 3) on A's own
// client.
//
// The steps: A holds token 0 and writes with it to every resource; its
// worker keeps the token and pauses on a gate. A's traffic is blackholed,
// never closed: the server expires A's session on its own clock and
// deletes A's node; B, waiting on that node, is told, lists again and
// holds token 1, while A's own client has seen nothing (F1, F10). Until
// token 1 reaches a resource, its mark is A's own token, and token 0 still
// writes (F2). B writes "new-owner"; A's worker resumes and writes
// "stale-late" with token 0: each fenced resource refuses it and keeps
// "new-owner" (F3), the unfenced one takes it (F4). The durable resources
// (SQLite, and PostgreSQL with connections of their own), closed and
// opened again, still hold "new-owner" and still refuse token 0 (F8).
// Healed, A's client sees Expired and its hold says the session changed
// (F10).
//
// The Example judges its claims itself, resource by resource: refuted
// when an answer of a resource, the tokens or A's own view says
// otherwise; not shown when a step of the setup did not take. Every
// printed line is what the run observed.
func Example_s5aFencingSequence() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	for _, id := range []string{"F1", "F2", "F3", "F4", "F8", "F10"} {
		claims.Open(sc, id)
	}
	cast := fencescene.NewFencingCast(sc) // O observes; A reaches the server through a proxy that can cut it off; B directly
	A, B := cast.A, cast.B
	fenced := fencescene.OpenEach(sc) // one fenced resource of each kind: in memory, durable in SQLite, durable in PostgreSQL
	kinds := fencescene.ResourceKinds
	all, names := append(slices.Clip(fenced), fencetest.NewUnfenced()), append(slices.Clip(kinds), "unfenced")

	claims.Phase(sc, "A holds and writes once with its token; its worker keeps the token and parks on a gate")
	heldA := A.Acquire()
	first := fencescene.WriteEach(sc, A.Log, heldA.Token, "A-first", all...)
	for i, r := range first {
		if !r.Accepted {
			claims.NotShown(sc, "F2", "got A's first write refused by the %s resource; want it accepted: the holder's own write", fencescene.KindText(names[i]))
		}
	}
	fmt.Printf("A holds token %v; A-first accepted: %s\n", heldA.Token, accepted(names, first))
	lostA := heldA.Lost() // A's hold watches its own node
	cast.WaitHoldWatching(sc, heldA)
	worker := fencescene.ParkWorker(sc, heldA.Token, "stale-late", all...)

	claims.Phase(sc, "B waits on A's node")
	waitingB := B.AcquireInBackground().WaitsOn(scene.NodeOf(heldA))

	claims.Phase(sc, "A's connection is blackholed: no forced expiry, no close; the session runs out")
	since := A.Session.Mark()
	heldB := cast.HeldOnceAExpires(sc, "F1", waitingB)
	sawExpired, lost := A.Session.Seen(zk.StateExpired), fencescene.Fired(lostA)
	A.Log.Info("A's own view when B acquired: session states %v; hold lost: %v", A.Session.States()[since:], lost)
	nodeA, _, err := cast.O.Exists(heldA.Path)
	if err != nil {
		claims.NotShown(sc, "F1", "O: exists %s: %v", heldA.Path, err)
	}
	claims.Evidence(sc, "A's token %v, B's %v; A's node exists when B holds: %v; A's client had seen Expired: %v, its hold lost: %v", heldA.Token, heldB.Token, nodeA, sawExpired, lost)
	if heldA.Token.Seq != 0 || heldB.Token.Seq != 1 || nodeA {
		claims.RefutedNow(sc, "F1", "got tokens A=%v B=%v and A's node exists=%v when B holds; want sequence 0 and 1, the node deleted by the server while A was cut off", heldA.Token, heldB.Token, nodeA)
	}
	if sawExpired || lost {
		claims.RefutedNow(sc, "F10", "when B held, A's client had seen Expired: %v, its hold lost: %v; want neither while A cannot reach the server", sawExpired, lost)
	}
	fmt.Printf("A blackholed: A's node exists %v; A's client saw Expired %v, its hold lost %v; B holds token %v\n", nodeA, sawExpired, lost, heldB.Token)

	claims.Phase(sc, "the window: A has expired and B has not written yet")
	window := make([]fence.Result, len(fenced))
	for i, res := range fenced {
		_, mark, marked := fencescene.ReadResource(sc, res)
		if !marked || mark != heldA.Token {
			claims.NotShown(sc, "F2", "got the %s resource's mark %v (set: %v) before the window; want A's token %v from A's first write", fencescene.KindText(kinds[i]), mark, marked, heldA.Token)
		}
		window[i] = fencescene.WriteAs(sc, A.Log, res, heldA.Token, "A-in-window")
		claims.Evidence(sc, "the %s resource: the mark before the window was %v; A's token %v in the window accepted=%v over %q", fencescene.KindText(kinds[i]), mark, heldA.Token, window[i].Accepted, window[i].Prev)
		if !window[i].Accepted || window[i].Prev != "A-first" {
			claims.RefutedNow(sc, "F2", "the %s resource: in the window A's token %v got accepted=%v over %q (mark %v); want accepted over \"A-first\": the mark is A's own token and cannot know of B yet", fencescene.KindText(kinds[i]), heldA.Token, window[i].Accepted, window[i].Prev, window[i].Mark)
		}
	}
	fmt.Printf("marks before B writes are A's %v; A's token accepted: %s\n", heldA.Token, accepted(kinds, window))

	claims.Phase(sc, "B writes with its token")
	byB := fencescene.WriteEach(sc, B.Log, heldB.Token, "new-owner", all...)
	for i, r := range byB {
		if !r.Accepted {
			claims.RefutedNow(sc, "F3", "B's write with token %v was rejected by the %s resource (mark %v); want accepted: the holder's token, and no resource refuses it", heldB.Token, fencescene.KindText(names[i]), r.Mark)
		}
	}
	fmt.Printf("B writes new-owner with %v: accepted: %s\n", heldB.Token, accepted(names, byB))

	claims.Phase(sc, "the gate opens: A's worker writes with its old token")
	late := worker.Resume(sc)
	values := make([]string, len(all))
	for i, res := range all {
		value, mark, _ := fencescene.ReadResource(sc, res)
		values[i] = fmt.Sprintf("%s %q", names[i], value)
		claims.Evidence(sc, "the %s resource: A's late write with %v accepted=%v over %q; then value %q, mark %v", fencescene.KindText(names[i]), heldA.Token, late[i].Accepted, late[i].Prev, value, mark)
		if i < len(fenced) && (late[i].Accepted || value != "new-owner" || mark != heldB.Token) {
			claims.RefutedNow(sc, "F3", "the %s resource: A's late write with %v got accepted=%v, then value %q and mark %v; want rejected, \"new-owner\" and B's %v kept", fencescene.KindText(names[i]), heldA.Token, late[i].Accepted, value, mark, heldB.Token)
		}
		if i == len(fenced) && (!late[i].Accepted || late[i].Prev != "new-owner" || value != "stale-late") {
			claims.RefutedNow(sc, "F4", "unfenced: A's late write got accepted=%v over %q, value %q; want \"stale-late\" accepted over \"new-owner\"", late[i].Accepted, late[i].Prev, value)
		}
	}
	fmt.Printf("A's worker resumes, stale-late with %v: accepted: %s\n", heldA.Token, accepted(names, late))
	fmt.Printf("values: %s\n", strings.Join(values, ", "))

	claims.Phase(sc, "the durable resource restarts: closed, then opened again from its file")
	for i, res := range fenced {
		again, keeps := fencescene.Reopen(sc, res) // false for the one in memory, which keeps nothing
		if !keeps {
			continue
		}
		value, mark, _ := fencescene.ReadResource(sc, again)
		r := fencescene.WriteAs(sc, A.Log, again, heldA.Token, "stale-after-restart")
		claims.Evidence(sc, "the %s resource after a restart: value %q, mark %v; A's token %v accepted=%v", fencescene.KindText(kinds[i]), value, mark, heldA.Token, r.Accepted)
		if value != "new-owner" || mark != heldB.Token || r.Accepted {
			claims.RefutedNow(sc, "F8", "the %s resource after a restart: value %q, mark %v, A's token %v accepted=%v; want \"new-owner\", B's %v, rejected", fencescene.KindText(kinds[i]), value, mark, heldA.Token, r.Accepted, heldB.Token)
		}
		fmt.Printf("%s restarted: value %q, mark %v; A's token accepted %v\n", kinds[i], value, mark, r.Accepted)
	}

	claims.Phase(sc, "heal A's connection: only now can A learn that its session expired")
	cast.HealA()
	expired := A.Session.WaitStateSince(since, zk.StateExpired, zkclient.ConnectWithin) == nil
	why := fencescene.ReleaseOnceLost(sc, A, heldA)
	claims.Evidence(sc, "after the heal A saw Expired: %v, and its hold's Release returned %v", expired, why)
	if !expired || !errors.Is(why, lock.ErrSessionChanged) {
		claims.RefutedNow(sc, "F10", "after the heal A saw Expired: %v, its hold gave %v; want Expired and a hold lost because the session changed (lock.ErrSessionChanged)", expired, why)
	}
	fmt.Printf("healed: A's client saw Expired %v; A's hold lost, session changed: %v\n", expired, errors.Is(why, lock.ErrSessionChanged))
	// Output:
	// A holds token g0/0; A-first accepted: memory true, durable true, postgres true, unfenced true
	// A blackholed: A's node exists false; A's client saw Expired false, its hold lost false; B holds token g0/1
	// marks before B writes are A's g0/0; A's token accepted: memory true, durable true, postgres true
	// B writes new-owner with g0/1: accepted: memory true, durable true, postgres true, unfenced true
	// A's worker resumes, stale-late with g0/0: accepted: memory false, durable false, postgres false, unfenced true
	// values: memory "new-owner", durable "new-owner", postgres "new-owner", unfenced "stale-late"
	// durable restarted: value "new-owner", mark g0/1; A's token accepted false
	// postgres restarted: value "new-owner", mark g0/1; A's token accepted false
	// healed: A's client saw Expired true; A's hold lost, session changed: true
}

// accepted says, resource by resource, whether each write was accepted:
// "memory true, durable false".
func accepted(names []string, rs []fence.Result) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s %v", names[i], r.Accepted)
	}
	return strings.Join(out, ", ")
}

// Example_s5bCriticalSection walks the article's critical-section
// flowchart (§5 ¶5's diagram); it proves claims F6 and F11 (§5 ¶2,
// sentence 2; ¶3, sentence 3) on each fenced resource: a write with a token of the lock
// domain enters the resource's critical section; there its token is
// compared with the mark; a token below it is refused and changes nothing;
// any other is written and raises the mark; then the section ends.
//
// The steps: A and B take their tokens from the lock: A holds first (token
// 0), writes and releases; B holds (token 1). On each resource in turn,
// B's write is held inside the section at its decision
// (fence.Trace.Decided) while A's late write with token 0 arrives. A fenced
// resource keeps A parked outside (its goroutine, read from the Go
// runtime, waits for the section; on PostgreSQL, the server itself lists
// A's session waiting for the register's row lock); B's write ends the
// section; A's compare
// then finds B's token and refuses (F6). The control that compares and
// writes in two steps lets A's compare in beside B's, and A's stale write
// lands over B's (F11).
//
// The Example judges its claims itself, from what each run observed
// (outsideWhileInside): F6 refuted when a fenced resource lets A in beside
// B or takes A's write, not shown when the same comparison finds nothing
// wrong with the control; F11 refuted when the control keeps A out.
func Example_s5bCriticalSection() {
	sc := harness.ExampleScope()
	defer harness.EndExample(sc)
	claims.Open(sc, "F6")
	claims.Open(sc, "F11")
	cast := scene.ExampleScene(sc) // the shared server, a lock parent, an observer
	A, B := cast.Join("A", scene.JoinOpts{}), cast.Join("B", scene.JoinOpts{})
	heldA := A.Acquire()
	if err := heldA.Release(cast.Ctx); err != nil {
		sc.Fatalf("A: release: %v", err)
	}
	heldB := B.Acquire()
	fmt.Printf("A held token %v and released; B holds token %v\n", heldA.Token, heldB.Token)

	interleave := func(name string, res fence.Resource, section *fencescene.CriticalSection) fencescene.Interleaving {
		il := fencescene.Interleaving{TokA: heldA.Token, TokB: heldB.Token}
		fencescene.WriteAs(sc, A.Log, res, heldA.Token, "A-first")
		byB := section.Write(res, B.Log, heldB.Token, "new-owner")
		il.BInside = byB.Entered()
		fmt.Printf("%s: B inside; token %v below mark %v? %v\n", name, il.BInside.Token, il.BInside.Mark, !il.BInside.Admitted)
		lateA := section.Write(res, A.Log, heldA.Token, "stale-late")
		il.A = lateA.Whereabouts(byB)
		A.Log.Info("while B's write is inside: %v", il.A)
		fmt.Printf("%s: A's write meanwhile: %s\n", name, il.A.Brief())
		il.B = byB.Finish(lateA)
		fmt.Printf("%s: B's section ends; accepted %v, mark %v\n", name, il.B.Accepted, il.B.Mark)
		il.Late, il.ADecision = lateA.Finish(nil), lateA.Decision
		il.Value, il.Mark, _ = fencescene.ReadResource(sc, res)
		fmt.Printf("%s: A's token %v below mark %v? %v; accepted %v; value %q\n", name, il.ADecision.Token, il.ADecision.Mark, !il.ADecision.Admitted, il.Late.Accepted, il.Value)
		return il
	}
	for _, kind := range fencescene.ResourceKinds {
		section := fencescene.NewCriticalSection(sc, "F6")
		fenced := interleave(kind, fencescene.OpenResource(sc, kind, fence.WithTrace(section.Trace())), section)
		claims.Evidence(sc, "the %s resource: while B's write with %v was held at its decision, A's with %v was %v; A's compare then found mark %v, admitted: %v; value %q", fencescene.KindText(kind), fenced.TokB, fenced.TokA, fenced.A, fenced.ADecision.Mark, fenced.ADecision.Admitted, fenced.Value)
		if why := outsideWhileInside(fenced); why.En != "" {
			claims.RefutedNow(sc, "F6", "the %s resource: %s", fencescene.KindText(kind), why)
		}
	}
	section := fencescene.NewCriticalSection(sc, "F6")
	control := interleave("control", fencetest.NewCheckThenWrite(section.Trace()), section)
	caught := outsideWhileInside(control)
	claims.Evidence(sc, "compare-then-write control: while B's write was held between its compare and its write, A's was %v; A's stale write then accepted=%v over %q; the comparison that passed the fenced resources finds: %s", control.A, control.Late.Accepted, control.Late.Prev, caught)
	if !control.A.Inside || !control.Late.Accepted || control.Value != "stale-late" {
		claims.RefutedNow(sc, "F11", "the control that compares, then writes in a second step: A's write was %v, then accepted=%v, value %q; want A inside beside B and its stale write accepted over B's", control.A, control.Late.Accepted, control.Value)
	}
	if caught.En == "" {
		claims.NotShown(sc, "F6", "the comparison that passed the fenced resources finds nothing wrong with the control, in which A's write was %v: it could not have failed", control.A)
	}
	// Output:
	// A held token g0/0 and released; B holds token g0/1
	// memory: B inside; token g0/1 below mark g0/0? false
	// memory: A's write meanwhile: parked outside the section
	// memory: B's section ends; accepted true, mark g0/1
	// memory: A's token g0/0 below mark g0/1? true; accepted false; value "new-owner"
	// durable: B inside; token g0/1 below mark g0/0? false
	// durable: A's write meanwhile: parked outside the section
	// durable: B's section ends; accepted true, mark g0/1
	// durable: A's token g0/0 below mark g0/1? true; accepted false; value "new-owner"
	// postgres: B inside; token g0/1 below mark g0/0? false
	// postgres: A's write meanwhile: parked outside the section
	// postgres: B's section ends; accepted true, mark g0/1
	// postgres: A's token g0/0 below mark g0/1? true; accepted false; value "new-owner"
	// control: B inside; token g0/1 below mark g0/0? false
	// control: A's write meanwhile: inside too: token g0/0 against mark g0/0, admitted: true
	// control: B's section ends; accepted true, mark g0/1
	// control: A's token g0/0 below mark g0/0? false; accepted true; value "stale-late"
}

// outsideWhileInside is F6's decisive comparison of one interleaving: it
// returns why the run shows that the compare and the write are not one
// step, or an empty Text when A's write was kept out while B's was inside, A's
// compare then found B's token as the mark, and A's stale write was
// refused, B's kept.
func outsideWhileInside(il fencescene.Interleaving) zh.Text {
	switch {
	case il.A.Inside:
		return zh.Say("A's write with token %v reached its decision (against mark %v, admitted: %v) while B's with token %v was held between its compare and its write: two writers inside at once", il.TokA, il.A.Decision.Mark, il.A.Decision.Admitted, il.TokB)
	case il.ADecision.Mark != il.TokB || il.ADecision.Admitted:
		return zh.Say("A's compare, once B was let go, found mark %v and admitted: %v; want B's token %v, refused: B's compare and its write were not one step", il.ADecision.Mark, il.ADecision.Admitted, il.TokB)
	case !il.B.Accepted || il.Late.Accepted || il.Value != "new-owner":
		return zh.Say("B accepted: %v, then A's stale write accepted: %v; value %q; want B's accepted, A's refused, \"new-owner\"", il.B.Accepted, il.Late.Accepted, il.Value)
	}
	return zh.Text{}
}

// TestC1_ChaosLeavesNoStaleWriteInAFencedResource runs the seeded chaos of
// claim C1 (section §5 ¶2, beyond the article) on one server and on three:
// five workers, each with its own session through its own proxies, acquire
// the lock, take the token, pause, write to a fenced memory resource, a
// fenced durable (SQLite) resource and an unfenced control, and release,
// while a nemesis draws faults from a printed seed (ZK19_CHAOS_SEED replays
// the schedule; ZK19_CHAOS=10m or =500 makes a soak). The fenced resources
// accept no token below one they accepted and refuse every stale-late
// write (a frozen holder's, whose node is gone while a higher token was
// accepted, as the holder saw just before it wrote: a write before that
// moment is the schedule's, and makes C1 not shown, naming the schedule);
// the control takes them, or the run proved nothing; porcupine
// finds both fenced histories linearizable as a register; no lock node,
// session, goroutine, server process or container is left. Every hold is
// read back on the server (readBack): its node must be the lowest
// candidate, and a hold that overlaps another from the lock's view is
// counted as the article's point only when the earlier holder's node was
// gone (its session expired); both nodes on the server is two holders at
// once, and refutes the claim. It runs
// beside the other tests, and so counts only what is left of its own: the
// servers, containers, server processes and dirs named after it
// (zkserver.LiveOf, reaper.LeftoversOf) and the goroutines its setups
// started (zkserver.Own). TestMain counts for the whole process at the end.
//
// On the external backend the one-server setup runs on the user's server,
// where the harness owns the workers' proxies and not the server: the
// schedule draws no server restart, and what is left is checked among the
// workers' own sessions; the three-server setup skips, and so does the
// Test if no setup ran.
func TestC1_ChaosLeavesNoStaleWriteInAFencedResource(t *testing.T) {
	claims.Open(t, "C1")
	plan, err := chaos.PlanFromEnv()
	if err != nil {
		claims.NotShown(t, "C1", "%v", err)
	}
	from := "drawn from the clock"
	if plan.Replay {
		from = "from " + chaos.EnvSeed
	}
	t.Logf("chaos seed %d (%s; replay the schedule with %s=%d), %d workers, %s", plan.Seed, from, chaos.EnvSeed, plan.Seed, chaos.ChaosWorkers, plan.Size)
	harness.Parallel(t) // before the wait for PostgreSQL: the sequential tests need not wait for it
	sqldb.Shared(t)     // the fenced resources' PostgreSQL outlives the chaos: started outside zkserver.Own, not C1's to count
	// A setup that fails keeps what it counted until then; one that -run
	// left out, or that skipped, has no summary and no column.
	// The setups run side by side (t.Run from a goroutine each; what they
	// left is counted once both have ended), their goroutines marked as C1's.
	sums := make([]*chaos.Summary, len(chaos.ChaosSetups))
	var setups sync.WaitGroup
	zkserver.Own(t.Name(), func() {
		for i, setup := range chaos.ChaosSetups {
			setups.Go(func() {
				t.Run(setup.Name.En, func(t *testing.T) {
					sums[i] = chaos.NewSummary(chaos.ResMemory, chaos.ResDurable, chaos.ResPostgres, chaos.ResControl)
					defer func() {
						if t.Skipped() {
							sums[i] = nil
						}
					}()
					chaos.RunChaos(t, plan, i, setup, sums[i], func(h chaos.History) { judgeC1(t, h, sums[i]) })
				})
			})
		}
	})
	setups.Wait()
	left := chaos.NothingLeft(t)
	var cols []zh.Text
	var ran []*chaos.Summary
	for i, s := range sums {
		if s != nil {
			cols, ran = append(cols, chaos.ChaosSetups[i].Name), append(ran, s)
		}
	}
	if len(ran) == 0 {
		claims.Skip(t, "skipped: no setup of the chaos ran on the %s backend (each subtest says why)", harness.Backend.Kind)
	}
	chaos.ChaosEvidence(t, plan, cols, ran, left)
}

// judgeC1 states C1's verdict on one setup's history (chaos.History, what
// the run recorded): chaos.Checker reads it by its rules, and each finding
// is stated here, in the order the run saw it, so that the first is the
// setup's verdict. The fenced resources must refuse every stale-late write
// and accept no token below one they took, their histories must be
// linearizable registers, no hold may share the lock or sit above another
// candidate, and nothing may be left on the server: each of those refutes
// C1. A frozen holder that wrote before its stale-late moment, a run whose
// control took no stale-late write, and broken bookkeeping make it not
// shown.
func judgeC1(t *testing.T, h chaos.History, sum *chaos.Summary) {
	t.Helper()
	v := chaos.Checker{}.Check(h)
	v.Note(h, sum)
	if h.Ended {
		regs := v.Regressions[chaos.ResControl]
		t.Logf("the control accepted %d writes below a token it had accepted before: %v", len(regs), regs)
	}
	for _, f := range v.Findings {
		switch f.Rule {
		case chaos.RuleTwoHolders:
			rb, o := f.ReadBack, f.ReadBack.Others[f.Other]
			claims.Refuted(t, "C1", "two holders at once: %s holds %s since %v into the run and %s holds %s since %v; O listed the parent %s, %v into the run, with both nodes on the server (%s; %s); got both nodes there while both hold; want the earlier holder's node gone (its session expired) before a later hold begins",
				o.Who, path.Base(o.Node), o.Since, rb.Hold.Who, path.Base(rb.Hold.Node), rb.Hold.Since, rb.How, rb.At, rb.Owners[f.Other][0], rb.Owners[f.Other][1])
		case chaos.RuleNotLowest:
			rb := f.ReadBack
			claims.Refuted(t, "C1", "%s holds %s (session 0x%x) since %v into the run, and O listed the parent %s, %v into the run, with %d candidates below its node: %v; got a hold whose node is not the lowest; want the lowest candidate to hold",
				rb.Hold.Who, path.Base(rb.Hold.Node), rb.Hold.Session, rb.Hold.Since, rb.How, rb.At, len(rb.Seen.Ahead), rb.Seen.Ahead)
		case chaos.RuleStaleLateTaken:
			claims.Refuted(t, "C1", "the fenced %s resource accepted %s's stale-late write with token %v (its node gone, a higher token accepted before); want it refused", fencescene.KindText(f.Resource), f.Write.Worker, f.Write.Token)
		case chaos.RuleNodesLeft:
			claims.Refuted(t, "C1", "lock nodes left after every worker closed: %v", f.What[0])
		case chaos.RuleSessionsLeft:
			claims.Refuted(t, "C1", "sessions left after every worker closed: %v", f.What[0])
		case chaos.RuleBelowMark:
			claims.Refuted(t, "C1", "the fenced %s resource accepted %d writes below a token it had accepted before; want none: %v", fencescene.KindText(f.Resource), len(f.What), f.What)
		case chaos.RuleNotARegister:
			claims.Refuted(t, "C1", "porcupine found the fenced %s resource's history %s as a register; want linearizable", fencescene.KindText(f.Resource), f.What[0])
		case chaos.RuleEarlyWrite:
			fw := f.Write
			claims.BrokenCheck(t, "C1", "the schedule (seed %d, %s, fault %d: %v on %s; replay with %s=%d) let %s write with token %v before the moment it would be stale-late: when it wrote, %s; its write was a holder's (%s), so no resource's answer to it says anything of the fence",
				h.Seed, h.Setup, fw.Fault, fw.Kind, fw.Worker, chaos.EnvSeed, h.Seed, fw.Worker, fw.Token, fw.Moment, fw.Answers())
		case chaos.RuleNotStopped:
			claims.BrokenCheck(t, "C1", "the workers did not end their cycles within %v of the stop", h.StopWithin)
		case chaos.RuleSessionNotClosed:
			claims.BrokenCheck(t, "C1", "%s's session did not close: %v", f.Worker, f.What[0])
		case chaos.RuleNoPorcupineVerdict:
			claims.BrokenCheck(t, "C1", "porcupine gave no verdict on the fenced %s resource's history: %v", fencescene.KindText(f.Resource), f.What[0])
		case chaos.RuleNothingReachedTheControl:
			claims.BrokenCheck(t, "C1", "the run proved nothing: no stale-late write reached the control (%s)", h.Setup)
		case chaos.RuleAnomaly:
			claims.BrokenCheck(t, "C1", "%s", f.What[0])
		default:
			t.Errorf("C1: the checker found a finding of rule %q, which judgeC1 does not state; want every rule stated", f.Rule)
		}
	}
}

// TestF6_CompareAndWriteIsOneAtomicStep: a fenced resource compares the
// token with the mark and writes in one critical section (claim F6, §5 ¶2;
// the critical-section flowchart, walked by Example_s5bCriticalSection).
//
// Shown deterministically first, on the memory and the durable resource,
// by retelling Example_s5bCriticalSection: B's write is held inside at its
// decision (fence.Trace.Decided, after the compare, before the write) and
// A's late write starts. A's write must be found parked in the resource's
// Write (read from the Go runtime's stacks), not at a decision of its own;
// once B is let go, A's compare must find B's token as the mark and
// refuse. The same run against the control that compares and writes in
// two steps finds A inside beside B, every time.
// Then a reader instead of A: parked in the resource's Read while B is
// inside, it must, once B is let go, read B's value with B's token as the
// mark. A resource that moves the mark in one step and stores the value in
// another lets the waiting reader in between (database/sql hands the
// released connection to the request that waits), and it reads the new
// mark beside the old value.
//
// A gap a resource opens after its decision and closes at once (it lets
// its section go and takes it back for the write) lasts nanoseconds, and
// the writer that let go takes the section straight back (Go's mutex
// favours it over a woken waiter; the durable writer keeps its connection):
// no held run sees another writer in it. So the resources' source is read
// as well, following every call the write makes into the package,
// transitively: the memory resource's compare and write sit in one lock
// section, the durable one's decision and UPDATE in one transaction, with
// no statement outside it. The same reading catches the control, a copy of
// the memory resource that lets its section go in a helper, a copy of the
// durable resource split after its decision and one that stores the value
// after its transaction.
//
// Then, as a statistical check (CI runs it under -race): many goroutines
// write with mixed tokens while others read the value and the mark back. In
// commit order the accepted tokens never decrease and each became the
// mark; every read finds the value written with the mark beside it; the
// resource ends with the value of the write with the largest accepted
// token and that token as its mark. The same check catches the control once
// its gap is held open while another writer's larger token goes in. It
// runs beside the other parallel tests: the gates hold each write where
// the steps need it, and the statistical check counts what happened, not
// how long it took.
func TestF6_CompareAndWriteIsOneAtomicStep(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "F6")
	for _, kind := range fencescene.ResourceKinds {
		if kind == "postgres" {
			t.Run("the postgres resource, whose reads never wait for a write (MVCC), gives a reader beside a write inside its transaction the last committed value with its own token, and the new pair once it commits", readBesideAWrite)
			continue
		}
		t.Run("the "+kind+" resource gives a reader that waited while a write was inside that write's value with its token as the mark", func(t *testing.T) {
			cs := fencescene.NewCriticalSection(t, "F6")
			res := fencescene.OpenResource(t, kind, fence.WithTrace(cs.Trace()))
			tokA, tokB := fence.Token{Seq: 1}, fence.Token{Seq: 2} // not Seq 0: the zero Token is refused
			fencescene.WriteAs(t, claims.NewActor(t, "A"), res, tokA, "A-first")
			b := cs.Write(res, claims.NewActor(t, "B"), tokB, "new-owner")
			b.Entered()
			r := cs.Read(res, claims.NewActor(t, "R"), b)
			byB := b.Finish(nil)
			value, mark, marked := r.Result()
			claims.Evidence(t, "%s resource: a read parked while B's write with %v was inside got %q with mark %v once B's write returned accepted=%v", fencescene.KindText(kind), tokB, value, mark, byB.Accepted)
			if !byB.Accepted || value != "new-owner" || mark != tokB || !marked {
				claims.Refuted(t, "F6", "on the %s resource: B's write accepted=%v; the read that waited for it got %q with mark %v (set: %v); want B's \"new-owner\" with B's token %v as the mark: the value and the mark were not stored in one step", fencescene.KindText(kind), byB.Accepted, value, mark, marked, tokB)
			}
		})
	}
	t.Run("the memory resource's source compares and writes in one lock section, following its calls, where the control's does not", func(t *testing.T) {
		control, err := srcread.SectionInSource(filepath.Join("fence", "fencetest"), "CheckThenWrite.Write", nil)
		if err != nil {
			claims.NotShown(t, "F6", "reading the control's source: %v", err)
		}
		src, err := srcread.ReadSource(filepath.Join("fence", "resource.go"))
		if err != nil {
			claims.NotShown(t, "F6", "reading the memory resource's source: %v", err)
		}
		// The second control: a copy whose write stores through a helper
		// that lets the section go and takes it back first, so the gap is
		// not in the body of any method the write names.
		apply := regexp.MustCompile(`(?m)^(\s*)s\.apply\(tok, value\)$`)
		helper := apply.ReplaceAllString(string(src), "${1}s.applyAfterAGap(tok, value)") +
			"\nfunc (s *state) applyAfterAGap(tok Token, value string) {\n\ts.mu.Unlock()\n\ts.mu.Lock()\n\ts.apply(tok, value)\n}\n"
		inHelper, err := srcread.SectionInSource("fence", "Memory.Write", map[string]string{"resource.go": helper})
		if err != nil || !apply.MatchString(string(src)) {
			claims.NotShown(t, "F6", "the copy of the memory resource with a gap in a helper: %v (changed: %v)", err, apply.MatchString(string(src)))
		}
		var found []sourceFinding
		for _, fn := range []string{"Memory.Write", "Memory.WriteOnce"} {
			why, err := srcread.SectionInSource("fence", fn, nil)
			if err != nil {
				claims.NotShown(t, "F6", "reading the memory resource's source: %v", err)
			}
			found = append(found, sourceFinding{Name: zh.Text{En: fn, Zh: fn}, Why: why})
		}
		sourceVerdict(t, "memory", zh.Say("lock section"), found, []sourceFinding{{Name: zh.Say("the compare-then-write control's Write"), Why: control}, {Name: zh.Say("a copy that lets the section go in a helper"), Why: inHelper}})
	})
	t.Run("the durable resource's source compares and writes in one transaction, following its calls, where changed copies do not", func(t *testing.T) {
		durable, err := srcread.ReadSource(filepath.Join("fence", "durable.go"))
		if err != nil {
			claims.NotShown(t, "F6", "reading the durable resource's source: %v", err)
		}
		marks, err := srcread.ReadSource(filepath.Join("fence", "marks.go"))
		if err != nil {
			claims.NotShown(t, "F6", "reading the marks' source: %v", err)
		}
		why, err := srcread.TransactionInSource(nil)
		if err != nil {
			claims.NotShown(t, "F6", "reading the durable resource's source: %v", err)
		}
		// The controls: the same source with its transaction ended and
		// begun again right after the decision, and with the value stored
		// again in a statement of its own once the transaction is over.
		var controls []sourceFinding
		for _, c := range []struct {
			name                  zh.Text
			file, pattern, insert string
		}{
			{zh.Say("a copy split after the decision"), "marks.go", `(?m)^(\s*)trace\.decided\(.*\)$`,
				"$0\n${1}_, _ = q.ExecContext(ctx, \"COMMIT\")\n${1}_, _ = q.ExecContext(ctx, \"BEGIN IMMEDIATE\")"},
			{zh.Say("a copy that stores the value after its transaction"), "durable.go", `(?m)^(\s*)return res, refused$`,
				"${1}_, _ = d.db.ExecContext(ctx, d.sql(upsertValue), d.register, value)\n$0"},
		} {
			src := map[string][]byte{"durable.go": durable, "marks.go": marks}[c.file]
			changed := regexp.MustCompile(c.pattern).ReplaceAllString(string(src), c.insert)
			control, err := srcread.TransactionInSource(map[string]string{c.file: changed})
			if err != nil || changed == string(src) {
				claims.NotShown(t, "F6", "%s of the durable resource's source: %v (changed: %v)", c.name, err, changed != string(src))
			}
			controls = append(controls, sourceFinding{Name: c.name, Why: control})
		}
		sourceVerdict(t, "durable", zh.Say("transaction"), []sourceFinding{{Name: zh.Say("Durable.Write and WriteOnce"), Why: why}}, controls)
	})
	t.Run("fence.AdvanceMark, the fence in a service's own transaction, compares and advances the mark in one statement of that transaction, where changed copies do not", func(t *testing.T) {
		marks, err := srcread.ReadSource(filepath.Join("fence", "marks.go"))
		if err != nil {
			claims.NotShown(t, "F6", "reading the marks' source: %v", err)
		}
		why, err := srcread.AdvanceInSource(nil)
		if err != nil {
			claims.NotShown(t, "F6", "reading fence.AdvanceMark's source: %v", err)
		}
		var controls []sourceFinding
		for _, c := range []struct {
			name            zh.Text
			pattern, insert string
		}{
			{zh.Say("a copy that commits the caller's transaction after the decision"), `(?m)^(\s*)trace\.decided\(.*\)$`,
				"$0\n${1}_, _ = q.ExecContext(ctx, \"COMMIT\")"},
			{zh.Say("a copy whose statement advances the mark without comparing"), `(?m)^WHERE marked = 0 OR [^` + "`" + `\n]*`, "-- no compare"},
		} {
			changed := regexp.MustCompile(c.pattern).ReplaceAllString(string(marks), c.insert)
			control, err := srcread.AdvanceInSource(map[string]string{"marks.go": changed})
			if err != nil || changed == string(marks) {
				claims.NotShown(t, "F6", "%s of fence.AdvanceMark's source: %v (changed: %v)", c.name, err, changed != string(marks))
			}
			controls = append(controls, sourceFinding{Name: c.name, Why: control})
		}
		sourceVerdict(t, "service-table", zh.Say("statement of the caller's transaction"), []sourceFinding{{Name: zh.Text{En: "fence.AdvanceMark", Zh: "fence.AdvanceMark"}, Why: why}}, controls)
	})
	fencescene.OnEachResource(t, "keeps value and mark together among many writers and readers", func(t *testing.T, kind string, res fencescene.FencedResource) {
		writers, per, readers := 16, 100, 2
		switch kind {
		case "durable":
			per = 5 // each durable commit syncs the disk
		case "postgres":
			per = 25 // each write is a transaction on a server, as in fence's own many-writers test there
		}
		run := fencescene.WriteConcurrently(t, "F6", res, writers, per, readers, nil)
		if len(run.Accepted) < run.Writes/10 {
			claims.NotShown(t, "F6", "the %s resource accepted %d of %d writes; want a tenth at least, or the run exercises no race", fencescene.KindText(kind), len(run.Accepted), run.Writes)
		}
		if why := manyWritersBreak(t, run, res); why.En != "" {
			claims.RefutedNow(t, "F6", "the %s resource: %s", fencescene.KindText(kind), why)
		}
		claims.Evidence(t, "%s resource: %d writers × %d writes beside %d readers: %d accepted, tokens non-decreasing in commit order, each the mark after its commit; %d reads each found the value written with the mark; the last value is the largest accepted token's, that token the mark", fencescene.KindText(kind), writers, per, readers, len(run.Accepted), run.Reads)
	})
	t.Run("a service's own table fenced by fence.AdvanceMark in the service's transaction keeps its row and the mark together among many writers and readers", func(t *testing.T) {
		svc, err := sqldb.OpenSQLiteService(context.Background(), filepath.Join(t.TempDir(), "service.db"), "billing")
		if err != nil {
			claims.NotShown(t, "F6", "opening the service's database: %v", err)
		}
		t.Cleanup(func() { _ = svc.Close() })
		writers, per, readers := 16, 5, 2
		run := fencescene.WriteConcurrently(t, "F6", svc, writers, per, readers, nil)
		if len(run.Accepted) < run.Writes/10 {
			claims.NotShown(t, "F6", "the service's table accepted %d of %d writes; want a tenth at least, or the run exercises no race", len(run.Accepted), run.Writes)
		}
		if why := manyWritersBreak(t, run, svc); why.En != "" {
			claims.RefutedNow(t, "F6", "the service's table fenced by fence.AdvanceMark: %s", why)
		}
		claims.Evidence(t, "service's own table, fence.AdvanceMark in its transaction: %d writers × %d writes beside %d readers: %d accepted, tokens non-decreasing in commit order, each the mark after its commit; %d reads each found the value written with the mark", writers, per, readers, len(run.Accepted), run.Reads)
	})
	t.Run("the many-writers check catches the control once its gap is held open", func(t *testing.T) {
		gap := fencescene.NewHeldGap()
		res := fencetest.NewCheckThenWrite(&fence.Trace{Decided: gap.Between})
		stale := fence.Token{Domain: 1, Seq: 0}
		staleValue := fencescene.ValueOf(-1, 0, stale)
		first := make(chan fence.Result, 1)
		go func() {
			r, err := fencescene.Outcome(res.Write(context.Background(), stale, staleValue))
			if err != nil {
				t.Error(err)
			}
			first <- r
		}()
		select {
		case <-gap.Opened:
		case <-time.After(harness.Within):
			claims.NotShown(t, "F6", "the first write did not reach the control's gap within %v", harness.Within)
		}
		run := fencescene.WriteConcurrently(t, "F6", res, 16, 100, 2, gap.Accepted)
		select {
		case r := <-first:
			if r.Accepted {
				run.Add(fencescene.AcceptedWrite{Commit: r.Commit, Tok: stale, Value: staleValue, Mark: r.Mark})
			}
		case <-time.After(harness.Within):
			claims.NotShown(t, "F6", "the write held in the gap did not return within %v", harness.Within)
		}
		why := manyWritersBreak(t, run, res)
		claims.Evidence(t, "compare-then-write control, %d accepted, the first write's gap held open until a larger token went in: the check finds %q", len(run.Accepted), why)
		if why.En == "" {
			claims.BrokenCheck(t, "F6", "the compare-then-write control passed the check; want the write of token %v held in its gap caught below the mark", stale)
		}
	})
}

// readBesideAWrite is F6's reader on PostgreSQL, whose reads take the last
// committed state and never wait for a writer's row lock: while B's write
// is held inside its transaction, at its decision, R reads A's value with
// A's token as the mark; once B's write commits, R reads B's value with
// B's token. Either way the value and the mark are a pair one write
// stored: never the new mark beside the old value.
func readBesideAWrite(t *testing.T) {
	cs := fencescene.NewCriticalSection(t, "F6")
	res := fencescene.OpenResource(t, "postgres", fence.WithTrace(cs.Trace()))
	tokA, tokB := fence.Token{Seq: 1}, fence.Token{Seq: 2} // not Seq 0: the zero Token is refused
	fencescene.WriteAs(t, claims.NewActor(t, "A"), res, tokA, "A-first")
	b := cs.Write(res, claims.NewActor(t, "B"), tokB, "new-owner")
	b.Entered()
	r := claims.NewActor(t, "R")
	during, markDuring, _ := fencescene.ReadAs(t, r, res)
	byB := b.Finish(nil)
	after, markAfter, _ := fencescene.ReadAs(t, r, res)
	claims.Evidence(t, "postgres resource: a read while B's write with %v was inside its transaction got %q with mark %v; once B's write returned accepted=%v, %q with mark %v", tokB, during, markDuring, byB.Accepted, after, markAfter)
	if during != "A-first" || markDuring != tokA || !byB.Accepted || after != "new-owner" || markAfter != tokB {
		claims.Refuted(t, "F6", "on the postgres resource: beside B's write R read %q with mark %v, after it %q with mark %v (B accepted=%v); want \"A-first\" with A's %v, then \"new-owner\" with B's %v: a value beside a mark another write stored", during, markDuring, after, markAfter, byB.Accepted, tokA, tokB)
	}
}

// manyWritersBreak is F6's decisive comparison of a concurrent run (the
// statistical check): it reads the resource's value and mark once the run
// is over and returns why the run shows that the compare and the write are
// not one step, or an empty Text: in commit order the accepted writes are
// numbered 1..n, each token is not below the mark at its commit and became
// the mark; no reader saw a value beside a mark it was not written with;
// and the resource ends with the value of the write with the largest
// accepted token, and that token as its mark.
func manyWritersBreak(t *testing.T, run *fencescene.WriteRun, res fence.Resource) zh.Text {
	t.Helper()
	acc := run.Accepted
	if len(acc) == 0 {
		return zh.Say("got no write accepted; want some, to judge")
	}
	var mark fence.Token
	for i, w := range acc {
		switch {
		case w.Commit != uint64(i+1):
			return zh.Say("got commit %d as the %d-th accepted write; want commits numbered 1..%d, one per accepted write", w.Commit, i+1, len(acc))
		case i > 0 && w.Tok.Compare(mark) < 0:
			return zh.Say("got commit %d accepting token %v after an earlier commit had raised the mark to %v; want no token below the mark accepted", w.Commit, w.Tok, mark)
		case w.Mark != w.Tok:
			return zh.Say("got commit %d accepting token %v and giving back mark %v; want its own token as the mark", w.Commit, w.Tok, w.Mark)
		}
		if i == 0 || w.Tok.Compare(mark) > 0 {
			mark = w.Tok
		}
	}
	if bad := run.FirstBad; bad != nil {
		wrote := zh.Say("written by no write of the run")
		if bad.Written {
			wrote = zh.Say("written with token %v", bad.Tok)
		}
		return zh.Say("a reader got value %q (%v) with mark %v; want the value written with the mark (%d of %d reads so)", bad.Value, wrote, bad.Mark, run.BadReads, run.Reads)
	}
	value, last, marked := fencescene.ReadResource(t, res)
	final := acc[len(acc)-1]
	if !marked || value != final.Value || last != mark {
		return zh.Say("after the run got value %q with mark %v (set: %v); want %q, the value of commit %d, the last write with the largest accepted token %v, and that token as the mark", value, last, marked, final.Value, final.Commit, mark)
	}
	return zh.Text{}
}

// TestF5_CheckThenWriteLosesTheRace: asking ZooKeeper "do I still hold the
// lock?" and then writing is not fencing (claim F5, §5 ¶3). A's worker asks
// (its node exists: yes) and is parked on a gate between the answer and
// its write; A's session expires, B acquires and writes, and only then
// does the gate open: A's checked write lands on the unfenced resource over
// B's accepted write.
func TestF5_CheckThenWriteLosesTheRace(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "F5")
	fc := fencescene.NewFencingCast(t)
	res := fencetest.NewUnfenced()
	claims.Phase(t, "A holds; its worker asks ZooKeeper before it writes and parks after the answer")
	hA := fc.A.Acquire()
	worker := fencescene.StartAskingWorker(t, fc.A, hA.Path, res, hA.Token, "A-after-check")
	if !worker.Asked(t) {
		claims.NotShown(t, "F5", "A's check says it does not hold; want its node to exist: A holds")
	}
	claims.Phase(t, "while A's worker is parked, A's session expires and B acquires and writes")
	fc.ExpireA(t, hA.Path)
	hB := fc.B.Acquire()
	fc.B.Log.Ok("holds with token %v", hB.Token)
	rb := fencescene.WriteAs(t, fc.B.Log, res, hB.Token, "new-owner")
	if !rb.Accepted {
		claims.NotShown(t, "F5", "B's write with token %v was rejected; want accepted", hB.Token)
	}
	claims.Phase(t, "the gate opens: A's worker writes after its check")
	ra := worker.Resume(t)
	v, _, _ := fencescene.ReadResource(t, res)
	claims.Evidence(t, "A's check said its node exists; after A's expiry B's write with %v was accepted; then A's checked write with %v accepted=%v over %q; value %q", hB.Token, hA.Token, ra.Accepted, ra.Prev, v)
	if !ra.Accepted || ra.Prev != "new-owner" || v != "A-after-check" {
		claims.Refuted(t, "F5", "A's checked write accepted=%v over %q, final %q; want it accepted over B's \"new-owner\" and the value \"A-after-check\": the check did not protect B", ra.Accepted, ra.Prev, v)
	}
}

// TestF7_EqualTokenIsAccepted: the current holder may keep writing with its
// token (claim F7, §5 ¶5).
func TestF7_EqualTokenIsAccepted(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "F7")
	fencescene.OnEachResource(t, "accepts a second write with the token of its mark", func(t *testing.T, kind string, res fencescene.FencedResource) {
		a := claims.NewActor(t, "A")
		tok := fence.Token{Seq: 1}
		r1 := fencescene.WriteAs(t, a, res, tok, "first")
		r2 := fencescene.WriteAs(t, a, res, tok, "second")
		claims.Evidence(t, "%s resource: two writes with the same token %v: accepted=%v, %v", fencescene.KindText(kind), tok, r1.Accepted, r2.Accepted)
		if !r1.Accepted || !r2.Accepted {
			claims.Refuted(t, "F7", "the %s resource: writes with the same token accepted=%v,%v; want both", fencescene.KindText(kind), r1.Accepted, r2.Accepted)
		}
	})
}

// TestF12_EqualTokenAppliesARetryTwice: fencing does not deduplicate (claim
// F12, §5 ¶5). A's request r-1 is applied, its answer is lost, and A sends
// it again with the same token: an equal token is accepted, so the request
// is applied a second time, as a second commit.
func TestF12_EqualTokenAppliesARetryTwice(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "F12")
	fencescene.OnEachResource(t, "applies a retried request twice when only the token is checked", func(t *testing.T, kind string, res fencescene.FencedResource) {
		a := claims.NewActor(t, "A")
		tok := fence.Token{Seq: 3}
		first := fencescene.WriteAs(t, a, res, tok, "r-1: debit 10")
		a.Info("the answer to r-1 is lost; A sends r-1 again with the same token")
		retry := fencescene.WriteAs(t, a, res, tok, "r-1: debit 10")
		claims.Evidence(t, "%s resource: request r-1 with token %v sent twice: accepted=%v at commit %d, then accepted=%v at commit %d", fencescene.KindText(kind), tok, first.Accepted, first.Commit, retry.Accepted, retry.Commit)
		if !first.Accepted || !retry.Accepted || retry.Commit != first.Commit+1 {
			claims.Refuted(t, "F12", "the %s resource: r-1 sent twice gave accepted=%v (commit %d), accepted=%v (commit %d); want two commits", fencescene.KindText(kind), first.Accepted, first.Commit, retry.Accepted, retry.Commit)
		}
	})
}

// TestF12_RequestIDInTheSameTransactionAppliesOnce: a request id looked up
// and recorded in the same transaction as the token check and the value
// applies a retried request once (claim F12, §5 ¶5), in memory and in the
// durable resource.
func TestF12_RequestIDInTheSameTransactionAppliesOnce(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "F12")
	fencescene.OnEachResource(t, "applies a retried request once when its id is checked in the same transaction", func(t *testing.T, kind string, res fencescene.FencedResource) {
		a := claims.NewActor(t, "A")
		tok := fence.Token{Seq: 3}
		ctx := context.Background()
		a.Invoke("write r-1 with token %v", tok)
		first, err := res.WriteOnce(ctx, tok, "r-1", "r-1: debit 10")
		if err != nil {
			claims.NotShown(t, "F12", "write r-1: %v", err)
		}
		a.Ok("accepted=%v commit %d", first.Accepted, first.Commit)
		a.Info("the answer to r-1 is lost; A sends r-1 again with the same token")
		a.Invoke("write r-1 with token %v", tok)
		retry, err := res.WriteOnce(ctx, tok, "r-1", "r-1: debit 10")
		if err != nil {
			claims.NotShown(t, "F12", "retry r-1: %v", err)
		}
		a.Ok("accepted=%v duplicate=%v commit %d", retry.Accepted, retry.Duplicate, retry.Commit)
		claims.Evidence(t, "%s resource: request r-1 with token %v sent twice with its id: accepted=%v at commit %d, then duplicate=%v, accepted=%v, still commit %d", fencescene.KindText(kind), tok, first.Accepted, first.Commit, retry.Duplicate, retry.Accepted, retry.Commit)
		if !first.Accepted || retry.Accepted || !retry.Duplicate || retry.Commit != first.Commit {
			claims.Refuted(t, "F12", "the %s resource: r-1 sent twice with its id gave accepted=%v (commit %d), then accepted=%v duplicate=%v (commit %d); want one commit and the retry a duplicate", fencescene.KindText(kind), first.Accepted, first.Commit, retry.Accepted, retry.Duplicate, retry.Commit)
		}
	})
	fencescene.OnEachResource(t, "keeps the request ids of its mark only, and refuses by its token the retry of one it forgot", func(t *testing.T, kind string, res fencescene.FencedResource) {
		a, b := claims.NewActor(t, "A"), claims.NewActor(t, "B")
		ctx := context.Background()
		tokA, tokB := fence.Token{Seq: 3}, fence.Token{Seq: 4}
		a.Invoke("write r-1 with token %v", tokA)
		if _, err := res.WriteOnce(ctx, tokA, "r-1", "r-1: debit 10"); err != nil {
			claims.NotShown(t, "F12", "write r-1: %v", err)
		}
		b.Invoke("write r-2 with token %v", tokB)
		if _, err := res.WriteOnce(ctx, tokB, "r-2", "r-2: credit 5"); err != nil {
			claims.NotShown(t, "F12", "write r-2: %v", err)
		}
		a.Info("A's answer to r-1 was lost; A sends r-1 again with its token, now below the mark")
		retry, err := res.WriteOnce(ctx, tokA, "r-1", "r-1: debit 10")
		value, mark, _ := fencescene.ReadResource(t, res)
		a.Ok("retry: accepted=%v duplicate=%v, %v; value %q, mark %v", retry.Accepted, retry.Duplicate, err, value, mark)
		claims.Evidence(t, "%s resource: r-1 with %v, then r-2 with %v; r-1 again with %v: accepted=%v, duplicate=%v, error %v; value %q under mark %v", fencescene.KindText(kind), tokA, tokB, tokA, retry.Accepted, retry.Duplicate, err, value, mark)
		var stale *fence.StaleError
		if retry.Accepted || !errors.As(err, &stale) || stale.Token != tokA || value != "r-2: credit 5" {
			claims.Refuted(t, "F12", "the %s resource: r-1's retry with %v after r-2 raised the mark to %v gave accepted=%v, error %v, value %q; want it refused by its token (fence.ErrStale) and r-2's value kept: applied once", fencescene.KindText(kind), tokA, tokB, retry.Accepted, err, value)
		}
	})
}

// TestF9_ForgedLargerTokenIsAccepted: fencing orders honest holders; it does
// not authenticate them. Any caller that sends a larger number is accepted
// (claim F9, §5 ¶5). This test documents the limit; it is not a bug to fix
// here.
func TestF9_ForgedLargerTokenIsAccepted(t *testing.T) {
	harness.Parallel(t)
	claims.Open(t, "F9")
	fencescene.OnEachResource(t, "accepts a forged larger token", func(t *testing.T, kind string, res fencescene.FencedResource) {
		fencescene.WriteAs(t, claims.NewActor(t, "B"), res, fence.Token{Seq: 1}, "new-owner")
		r := fencescene.WriteAs(t, claims.NewActor(t, "M"), res, fence.Token{Seq: 999}, "forged")
		claims.Evidence(t, "%s resource: forged token g0/999 accepted=%v after the mark g0/1: fencing is not authentication", fencescene.KindText(kind), r.Accepted)
		if !r.Accepted {
			claims.Refuted(t, "F9", "the %s resource: a forged larger token was rejected; want accepted (the resource cannot tell forgery)", fencescene.KindText(kind))
		}
	})
}

// sourceFinding is what F6's source check found in one write: why its
// compare and its write are not one step, or "".
type sourceFinding struct{ Name, Why zh.Text }

// sourceVerdict records in one observation what F6's source check found
// in the writes of the resource of kind and in its controls, each of which
// must be caught, and states the verdict.
func sourceVerdict(t *testing.T, kind string, section zh.Text, found, controls []sourceFinding) {
	t.Helper()
	var seen []zh.Text
	for _, f := range found {
		why := f.Why
		if why.En == "" {
			why = zh.Say("compare and write in one %v", section)
		}
		seen = append(seen, zh.Say("%v: %v", f.Name, why))
	}
	for _, c := range controls {
		seen = append(seen, zh.Say("%v: %v", c.Name, c.Why))
	}
	claims.Evidence(t, "%s resource's source: %s", fencescene.KindText(kind), zh.Join(seen, zh.Text{En: "; ", Zh: "；"}))
	for _, c := range controls {
		if c.Why.En == "" {
			claims.BrokenCheck(t, "F6", "the source check passed %s; want its gap found", c.Name)
		}
	}
	for _, f := range found {
		if f.Why.En != "" {
			claims.Refuted(t, "F6", "on the %s resource, %s: got %s; want its compare and its write in one %s", fencescene.KindText(kind), f.Name, f.Why, section)
			return // the first write that breaks it is the verdict; the observation names the rest
		}
	}
}

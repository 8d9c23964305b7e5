package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/zk19/zk19/internal/proof/claims"
	"github.com/zk19/zk19/internal/proof/claims/zh"
	"github.com/zk19/zk19/internal/proof/history"
)

// Rule is one of the rules C1's checker reads a history by: each finding
// names the rule that found it.
type Rule int

// The rules. The first ones refute C1 (the observation contradicts it);
// the others make it not shown (the run did not get to the observation,
// or its bookkeeping broke).
const (
	// RuleTwoHolders: a read-back listed an overlapped hold's node and the
	// hold's own: two holders at once.
	RuleTwoHolders Rule = iota + 1
	// RuleNotLowest: a read-back listed the hold's own node with a candidate
	// below it that is no overlapped hold's (not judged again when the
	// same hold was two holders).
	RuleNotLowest
	// RuleStaleLateTaken: a fenced resource accepted a stale-late write.
	RuleStaleLateTaken
	// RuleNodesLeft: lock nodes were left after every worker closed.
	RuleNodesLeft
	// RuleSessionsLeft: sessions were left after every worker closed (looked
	// for only when no node was).
	RuleSessionsLeft
	// RuleBelowMark: a fenced resource accepted a write below a token it had
	// accepted before.
	RuleBelowMark
	// RuleNotARegister: porcupine found a fenced resource's history no
	// linearizable register.
	RuleNotARegister

	// RuleEarlyWrite: a frozen holder wrote before the moment it would be
	// stale-late (the schedule's doing, not the fence's).
	RuleEarlyWrite
	// RuleNotStopped: the workers did not end their cycles in time.
	RuleNotStopped
	// RuleSessionNotClosed: a worker's session did not close.
	RuleSessionNotClosed
	// RuleNoPorcupineVerdict: porcupine gave no verdict on a fenced history.
	RuleNoPorcupineVerdict
	// RuleNothingReachedTheControl: no stale-late write was accepted by the
	// control: the run proved nothing.
	RuleNothingReachedTheControl
	// RuleAnomaly: the run's bookkeeping broke.
	RuleAnomaly
)

var ruleNames = map[Rule]string{
	RuleTwoHolders: "two holders", RuleNotLowest: "not the lowest", RuleStaleLateTaken: "stale-late write taken",
	RuleNodesLeft: "nodes left", RuleSessionsLeft: "sessions left", RuleBelowMark: "below the mark",
	RuleNotARegister: "not a register", RuleEarlyWrite: "early write", RuleNotStopped: "workers not stopped",
	RuleSessionNotClosed: "session not closed", RuleNoPorcupineVerdict: "no porcupine verdict",
	RuleNothingReachedTheControl: "nothing reached the control", RuleAnomaly: "anomaly",
}

func (r Rule) String() string {
	if n, ok := ruleNames[r]; ok {
		return n
	}
	return fmt.Sprintf("rule %d", int(r))
}

// Refutes reports whether a finding of r refutes C1; otherwise it makes
// C1 not shown.
func (r Rule) Refutes() bool { return r < RuleEarlyWrite }

// Finding is one observation of a history that a rule found: the rule,
// and what the root needs to state it.
type Finding struct {
	Rule     Rule
	ReadBack *HoldReadBack // RuleTwoHolders, RuleNotLowest
	Other    int           // RuleTwoHolders: the overlapped hold's index in ReadBack.Others
	Write    *FrozenWrite  // RuleStaleLateTaken, RuleEarlyWrite
	Resource string        // RuleStaleLateTaken, RuleBelowMark, RuleNotARegister, RuleNoPorcupineVerdict
	// What: the list of regressions (BelowMark), the last state of a
	// wait (NodesLeft, SessionsLeft), porcupine's verdict (NotARegister)
	// or error (NoPorcupineVerdict), the anomaly (Anomaly), the close's
	// error (SessionNotClosed).
	What []string
	// Worker: SessionNotClosed.
	Worker string
}

// Register is porcupine's verdict on one fenced resource's history.
type Register struct {
	Resource string
	Verdict  history.Verdict
	Ops      int
}

// Verdict is what the checker found in a history, in the order the run
// saw it: the first finding is C1's verdict on the setup (none: it holds),
// as the first verdict a proof states on a claim is its verdict.
type Verdict struct {
	Findings []Finding
	// Below is, per resource, how many writes it accepted below a token
	// it had accepted before, and Regressions which.
	Below       map[string]int
	Regressions map[string][]string
	Registers   []Register
	// StaleLate counts the stale-late writes; ControlTook those the
	// control accepted.
	StaleLate, ControlTook int
	Ended                  bool
}

// Word is C1's verdict on the setup: "holds", claims.VerdictRefuted
// or VerdictNotShown, from the first finding.
func (v Verdict) Word() string {
	switch {
	case len(v.Findings) == 0:
		return "holds"
	case v.Findings[0].Rule.Refutes():
		return claims.VerdictRefuted
	}
	return claims.VerdictNotShown
}

// Checker judges C1's histories. Its zero value bounds porcupine's search
// by defaultPorcupineWithin.
type Checker struct {
	// PorcupineWithin bounds porcupine's search on one history.
	PorcupineWithin time.Duration
}

// defaultPorcupineWithin bounds porcupine's search when the Checker says
// nothing (history's Require helpers use the same).
const defaultPorcupineWithin = 2 * time.Minute

// Check reads h by every rule and returns what it found. It is a pure
// function of h: no server, no clock but porcupine's bound.
func (c Checker) Check(h History) Verdict {
	v := Verdict{Below: map[string]int{}, Regressions: map[string][]string{}, Ended: h.Ended}
	add := func(f Finding) { v.Findings = append(v.Findings, f) }
	for _, e := range h.Events {
		switch {
		case e.ReadBack != nil:
			readBackFindings(e.ReadBack, add)
		case e.FrozenWrite != nil:
			v.frozenWrite(e.FrozenWrite, add)
		}
	}
	if !h.Ended {
		return v
	}
	if h.NotStopped {
		add(Finding{Rule: RuleNotStopped})
	}
	for _, u := range h.Unclosed {
		add(Finding{Rule: RuleSessionNotClosed, Worker: u.Worker, What: []string{u.Err}})
	}
	switch {
	case h.NodesLeft != "":
		add(Finding{Rule: RuleNodesLeft, What: []string{h.NodesLeft}})
	case h.SessionsLeft != "":
		add(Finding{Rule: RuleSessionsLeft, What: []string{h.SessionsLeft}})
	}
	for _, r := range h.Resources {
		c.resource(&v, r, add)
	}
	if v.ControlTook == 0 {
		add(Finding{Rule: RuleNothingReachedTheControl})
	}
	for _, a := range h.Anomalies {
		add(Finding{Rule: RuleAnomaly, What: []string{a}})
	}
	return v
}

// readBackFindings: both nodes of an overlap listed is two holders at
// once; the hold's own node listed with a candidate below it is a hold
// the lock must not give.
func readBackFindings(rb *HoldReadBack, add func(Finding)) {
	two := false
	for i := range rb.Others {
		if rb.Seen.Overlap(i) == BothThere {
			two = true
			add(Finding{Rule: RuleTwoHolders, ReadBack: rb, Other: i})
		}
	}
	if rb.Seen.Own && len(rb.Seen.Ahead) > 0 && !two {
		add(Finding{Rule: RuleNotLowest, ReadBack: rb})
	}
}

// frozenWrite: a write before its stale-late moment is the schedule's; a
// stale-late one must be refused by every fenced resource, and counts for
// the control when it took it.
func (v *Verdict) frozenWrite(fw *FrozenWrite, add func(Finding)) {
	if !fw.Moment.Stale() {
		add(Finding{Rule: RuleEarlyWrite, Write: fw})
		return
	}
	v.StaleLate++
	for _, w := range fw.Writes {
		if w.Fenced && w.Accepted {
			add(Finding{Rule: RuleStaleLateTaken, Write: fw, Resource: w.Resource})
		}
		if w.Resource == ResControl && w.Accepted {
			v.ControlTook++
		}
	}
}

// resource: a fenced resource accepts no write below a token it accepted
// before, and its history is a linearizable register.
func (c Checker) resource(v *Verdict, r ResourceHistory, add func(Finding)) {
	regs := regressions(r.Accepted)
	v.Below[r.Name], v.Regressions[r.Name] = len(regs), regs
	if !r.Fenced {
		return
	}
	if len(regs) > 0 {
		add(Finding{Rule: RuleBelowMark, Resource: r.Name, What: regs})
	}
	within := c.PorcupineWithin
	if within == 0 {
		within = defaultPorcupineWithin
	}
	got, _, err := history.Check(context.Background(), operations(r.Ops), r.Initial, within)
	v.Registers = append(v.Registers, Register{Resource: r.Name, Verdict: got, Ops: len(r.Ops)})
	switch {
	case err != nil:
		add(Finding{Rule: RuleNoPorcupineVerdict, Resource: r.Name, What: []string{err.Error()}})
	case got != history.Linearizable:
		add(Finding{Rule: RuleNotARegister, Resource: r.Name, What: []string{got.String()}})
	}
}

// Rows the verdict adds to the summary table.
var (
	rowLeft      = zh.Say("left on the servers after the workers closed: lock nodes, sessions")
	rowPorcupine = zh.Say("porcupine on the fenced histories (refused writes as reads)")
)

// Note puts what the checker found of h into the setup's summary: the
// writes below a resource's mark, porcupine's verdicts, what was left.
func (v Verdict) Note(h History, s *Summary) {
	for r, n := range v.Below {
		s.SetBelowMark(r, n)
	}
	if !v.Ended {
		return
	}
	switch {
	case h.NodesLeft != "":
		s.Note(rowLeft, zh.Say("lock nodes (see the failure)"))
	case h.SessionsLeft != "":
		s.Note(rowLeft, zh.Say("sessions (see the failure)"))
	default:
		s.Note(rowLeft, zh.Say("none"))
	}
	var regs []zh.Text
	for _, r := range v.Registers {
		regs = append(regs, zh.Say("%s linearizable=%v (%d ops)", resourceName(r.Resource), r.Verdict == history.Linearizable, r.Ops))
	}
	s.Note(rowPorcupine, zh.Join(regs, zh.Say(", ")))
}

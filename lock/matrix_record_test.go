package lock_test

// What a cell of the matrix (matrix_test.go) records of itself, and how its
// verdict follows from that record (issue 49, item 4): the fault's own
// observation that it took, the checks that ran, by name, against the
// checks its row promises, and the matrix's seam, through which
// TestMatrixChecksItself makes a fault never take and a check never run.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The checks a cell runs, by name (the name its failure lines and its
// table line give).
const (
	chkShown      = "fault took"
	chkKind       = "error kind"
	chkBound      = "bound"
	chkLive       = "at most one live Held"
	chkKept       = "holds kept"
	chkOrphan     = "no node without a Held"
	chkToken      = "token"
	chkRelease    = "release"
	chkTwinHold   = "never holds another session's node"
	chkTwinDelete = "never deletes another session's node"
	chkOutlives   = "Locker outlives its session"
	chkSuspension = "suspension"
)

// The moments at which a check runs more than once.
const (
	atReturn    = "at the return"
	onceGone    = "once Gone closed"
	allReleased = "once every hold of the cell was released"
	newSession  = "after a hold in the new session"
)

// The verdicts a cell's table line can give besides held and returned.
const (
	verdictNotShown = "not shown"
	verdictFail     = "FAIL"
	// seenNone is the table's "fault seen" of a cell whose fault was not
	// seen to take.
	seenNone = "none"
)

// checkKey names a check at a moment, as the record and the promises do.
func checkKey(name, when string) string {
	if when == "" {
		return name
	}
	return name + " (" + when + ")"
}

// record is what a cell notes as it runs. Its fault's goroutines and the
// recipe's trace write to it while the cell's goroutine reads it.
type record struct {
	mu       sync.Mutex
	seen     string          // the fault's own observation that it took; "" until then
	notShown []string        // why the cell shows nothing about its fault
	broken   []string        // the invariants found broken, by name, once each
	ran      map[string]bool // the checks that ran, by checkKey
	held     bool            // the call under test gave a Held
}

func newRecord() *record { return &record{ran: map[string]bool{}} }

// add appends s to the list *to unless it is there.
func (r *record) add(to *[]string, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(*to, s) {
		*to = append(*to, s)
	}
}

// isBroken reports whether the invariant was found broken.
func (r *record) isBroken(invariant string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.broken, invariant)
}

func (r *record) setHeld(held bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held = held
}

// saw records the fault's own observation that it took.
func (r *record) saw(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = what
}

func (r *record) seenFault() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

func (r *record) checked(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran[key] = true
}

// saw records what was seen of c's fault taking, and logs it.
func (c *cell) saw(what, detail string) {
	c.logf("fault seen to take: %s (%s)", what, detail)
	c.rec.saw(what)
}

// check runs the check name at moment when (fn) and records that it ran,
// also when fn stops the cell. The matrix's seam may skip it: it then
// neither runs nor is recorded.
func (c *cell) check(name, when string, fn func()) {
	key := checkKey(name, when)
	if slices.Contains(c.seam.skip, name) {
		c.logf("seam: the check %s does not run", key)
		return
	}
	defer c.rec.checked(key)
	fn()
}

// promises lists the checks a cell must run, from its state and fault
// alone: what the call gave or did not give changes none of them.
func promises(cs cellSpec) []string {
	st, f := cs.st, cs.f
	w := st.want(f)
	p := []string{chkShown, chkKind, chkBound, checkKey(chkLive, atReturn), checkKey(chkOrphan, atReturn), checkKey(chkOrphan, allReleased)}
	if f != expired {
		p = append(p, chkKept)
	}
	if w.held {
		p = append(p, chkToken, chkRelease)
	}
	if w.held || st.call == callRelease || st.call == callHold {
		p = append(p, checkKey(chkLive, onceGone), checkKey(chkOrphan, onceGone))
	}
	if st.twin {
		p = append(p, chkTwinHold, chkTwinDelete)
	}
	if st.call == callHold {
		p = append(p, chkSuspension)
	}
	if f == expired {
		p = append(p, chkOutlives, checkKey(chkOrphan, newSession))
	}
	return p
}

// finishCell ends a cell, however it stopped: a promised check that did
// not run fails it, by name, and its table line takes its verdict.
func finishCell(t *testing.T, cs cellSpec, rec *record, r *row) {
	promised := promises(cs)
	rec.mu.Lock()
	var missing []string
	for _, k := range promised {
		if !rec.ran[k] {
			missing = append(missing, k)
		}
	}
	rec.mu.Unlock()
	if len(missing) > 0 {
		t.Errorf("%s: not run: %s: got %d of the %d checks its row promises; want every one (the cell stopped before these)",
			cs.name(), strings.Join(missing, ", "), len(promised)-len(missing), len(promised))
	}
	r.checks = fmt.Sprintf("%d/%d", len(promised)-len(missing), len(promised))
	r.seen = rec.seenFault()
	r.verdict, r.outcome = verdict(rec, missing, t.Failed())
}

// verdict is a cell's verdict and its table's outcome, from its record:
// not shown when the cell showed nothing about its fault; FAIL when an
// invariant broke, a promised check did not run, or the cell failed
// otherwise; else held or returned, as the call did.
func verdict(rec *record, missing []string, failed bool) (verdict, outcome string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var what []string
	if len(rec.broken) > 0 {
		what = append(what, strings.Join(rec.broken, ", "))
	}
	if len(missing) > 0 {
		what = append(what, "not run: "+strings.Join(missing, ", "))
	}
	switch {
	case len(rec.notShown) > 0:
		verdict = verdictNotShown
	case len(what) > 0:
		verdict = verdictFail
	case failed:
		return verdictFail, verdictFail + ": the cell's log says what"
	case rec.held:
		return "held", "held"
	default:
		return "returned", "returned"
	}
	if len(what) == 0 {
		return verdict, verdict
	}
	return verdict, verdict + ": " + strings.Join(what, "; ")
}

// seamEnv names the matrix's seam, for TestMatrixChecksItself's run of the
// test binary: it lists cells, each with what the seam does to it, as
// cell=what separated by ";". what is "no-fault" (the fault is never
// made: the cell goes on as if it had been) or "skip:<check>" (the check
// of that name never runs).
const seamEnv = "ZK19_MATRIX_SEAM"

// seam is what the matrix's seam does to a cell.
type seam struct {
	noFault bool     // the fault is never made
	skip    []string // the checks, by name, that never run
}

// parseSeam reads seamEnv's value: the seam of each cell it names.
func parseSeam(v string) (map[string]seam, error) {
	out := map[string]seam{}
	for _, e := range strings.Split(v, ";") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		name, what, ok := strings.Cut(e, "=")
		if !ok {
			return nil, fmt.Errorf("got %q; want cell=no-fault or cell=skip:<check>", e)
		}
		s := out[name]
		switch check, isSkip := strings.CutPrefix(what, "skip:"); {
		case what == "no-fault":
			s.noFault = true
		case isSkip && check != "":
			s.skip = append(s.skip, check)
		default:
			return nil, fmt.Errorf("cell %s: got %q; want no-fault or skip:<check>", name, what)
		}
		out[name] = s
	}
	return out, nil
}

// seamStopsFault, at the moment c's fault would be made, reports whether
// the seam makes it never happen; the fault is then over at once.
func (c *cell) seamStopsFault() bool {
	if !c.seam.noFault {
		return false
	}
	c.logf("seam: the fault %s is not made", c.f)
	close(c.faultDone)
	return true
}

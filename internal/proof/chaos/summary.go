package chaos

import (
	"fmt"
	"slices"
	"sync"

	"github.com/zk19/zk19/internal/proof/claims/zh"
)

// Counter is one count of a setup's summary.
type Counter int

// The counts of a summary besides faults and writes.
const (
	Acquisitions       Counter = iota + 1 // holds returned by Acquire
	LostCreates                           // create replies lost, as the recipe's trace saw them (a connection error)
	LostAdopted                           // ... after which the recipe adopted the node in the same session
	LostCreatedAgain                      // ... after which it found none and created again
	LostSessionChanged                    // ... after which the session changed (the worker creates again in the new one)
	LostAmbiguous                         // ... after which it found several nodes of the GUID
	LostUndecided                         // ... after which the acquisition ended otherwise (recovery undecided, context ended)
	SessionsEnded                         // sessions a worker saw end and replaced
	GaveUp                                // acquisitions abandoned at their bound
	Released                              // Release returned nil
	ReleaseLost                           // Release said the hold was over before (node or session gone)
	ReleaseUnknown                        // Release said the outcome is unknown
	StaleLate                             // writes by a frozen holder whose node was gone while a higher token was accepted
	Overlaps                              // holds that began while another was held, from the lock's view
	ReadBack                              // holds whose lock parent was listed on the server after they began
	OwnGone                               // ... whose own node was gone by then (their session had ended)
	NotLowest                             // ... whose own node was listed with a candidate below it
	EarlierNodeGone                       // overlapping pairs of holds: the earlier holder's node gone (expected)
	LaterNodeGone                         // ... the later holder's own node gone
	TwoHolders                            // ... both nodes on the server: two holders at once
)

// Counter returns the count of overlapping pairs that look like o.
func (o Overlap) Counter() Counter {
	switch o {
	case EarlierGone:
		return EarlierNodeGone
	case LaterGone:
		return LaterNodeGone
	}
	return TwoHolders
}

// Summary counts what one setup of a chaos run did. It is safe for
// concurrent use.
type Summary struct {
	mu        sync.Mutex
	injected  map[Kind]int
	effective map[Kind]int
	n         map[Counter]int
	resources []string
	accepted  map[string]int
	rejected  map[string]int
	stale     map[string][2]int  // per resource: stale-late writes accepted, rejected
	below     map[string]int     // per resource: accepted writes below a token it had accepted
	notes     map[string]zh.Text // further rows: row name (English) -> value
	noted     []zh.Text          // their names, in the order first noted
}

// NewSummary returns an empty summary of writes to resources, named in the
// order the table lists them.
func NewSummary(resources ...string) *Summary {
	return &Summary{injected: map[Kind]int{}, effective: map[Kind]int{}, n: map[Counter]int{},
		resources: resources, accepted: map[string]int{}, rejected: map[string]int{},
		stale: map[string][2]int{}, below: map[string]int{}, notes: map[string]zh.Text{}}
}

// Note sets the value of a further row of the table, such as a check's
// verdict; rows are listed in the order first noted by any summary.
func (s *Summary) Note(row, value zh.Text) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.notes[row.En]; !ok {
		s.noted = append(s.noted, row)
	}
	s.notes[row.En] = value
}

// Fault counts a fault injected; effective says whether it did what it is
// for (a reply was lost, a holder's session expired, a leader changed).
func (s *Summary) Fault(k Kind, effective bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.injected[k]++
	if effective {
		s.effective[k]++
	}
}

// Add adds n to c.
func (s *Summary) Add(c Counter, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n[c] += n
}

// Get returns c.
func (s *Summary) Get(c Counter) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[c]
}

// Write counts a write to resource; stale marks a stale-late write.
func (s *Summary) Write(resource string, accepted, stale bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if accepted {
		s.accepted[resource]++
	} else {
		s.rejected[resource]++
	}
	if stale {
		st := s.stale[resource]
		if accepted {
			st[0]++
		} else {
			st[1]++
		}
		s.stale[resource] = st
	}
}

// StaleLate returns how many of resource's stale-late writes it accepted
// and rejected.
func (s *Summary) StaleLate(resource string) (accepted, rejected int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stale[resource][0], s.stale[resource][1]
}

// SetBelowMark sets how many writes resource accepted below a token it had
// accepted before (Ledger.Regressions).
func (s *Summary) SetBelowMark(resource string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.below[resource] = n
}

// BelowMark returns what SetBelowMark set.
func (s *Summary) BelowMark(resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.below[resource]
}

// Table renders summaries side by side, one column per setup, as the
// rows of a Markdown table, in both languages: faults injected by kind,
// acquisitions, writes accepted and rejected per resource, stale-late
// writes caught, overlaps. A nil summary (a setup that did not get to the
// end) shows "—".
func Table(cols []zh.Text, sums []*Summary) []zh.Text {
	rule := make([]zh.Text, len(cols)+1)
	for i := range rule {
		rule[i] = number("---")
	}
	rows := [][]zh.Text{append([]zh.Text{zh.Say("chaos summary")}, cols...), rule}
	add := func(name zh.Text, f func(s *Summary) zh.Text) {
		row := []zh.Text{name}
		for _, s := range sums {
			if s == nil {
				row = append(row, number("—"))
				continue
			}
			s.mu.Lock()
			row = append(row, f(s))
			s.mu.Unlock()
		}
		rows = append(rows, row)
	}
	faultRows(add)
	countRows(add)
	writeRows(add, sums)
	noteRows(add, sums)
	out := make([]zh.Text, len(rows))
	for i, r := range rows {
		out[i] = zh.Join(r, number(" | ")).Map(func(s string) string { return "| " + s + " |" })
	}
	return out
}

// number is a cell with no words (counts, a dash): the same in both
// languages.
func number(s string) zh.Text { return zh.Text{En: s, Zh: s} }

type rowFunc func(name zh.Text, f func(s *Summary) zh.Text)

func faultRows(add rowFunc) {
	for k := LoseCreate; k <= Failover; k++ {
		add(zh.Say("fault: %s", k.Text()), func(s *Summary) zh.Text {
			if s.injected[k] == 0 {
				return number("—")
			}
			return zh.Say("%d injected, %d took effect", s.injected[k], s.effective[k])
		})
	}
}

func countRows(add rowFunc) {
	add(zh.Say("acquisitions"), func(s *Summary) zh.Text {
		return zh.Say("%d (%d given up at their bound)", s.n[Acquisitions], s.n[GaveUp])
	})
	add(zh.Say("lost create replies (the recipe's trace): adopted in the same session / none found, created again / session changed, created again / ambiguous / undecided"), func(s *Summary) zh.Text {
		return number(fmt.Sprintf("%d: %d / %d / %d / %d / %d", s.n[LostCreates], s.n[LostAdopted], s.n[LostCreatedAgain], s.n[LostSessionChanged], s.n[LostAmbiguous], s.n[LostUndecided]))
	})
	add(zh.Say("sessions ended and replaced"), func(s *Summary) zh.Text { return number(fmt.Sprint(s.n[SessionsEnded])) })
	add(zh.Say("releases: ok / hold already over / outcome unknown"), func(s *Summary) zh.Text {
		return number(fmt.Sprintf("%d / %d / %d", s.n[Released], s.n[ReleaseLost], s.n[ReleaseUnknown]))
	})
	add(zh.Say("overlapping holds (lock's view)"), func(s *Summary) zh.Text { return number(fmt.Sprint(s.n[Overlaps])) })
	add(zh.Say("overlapping pairs on the server: earlier holder's node gone (expected) / later holder's node gone / both there (two holders at once)"), func(s *Summary) zh.Text {
		return number(fmt.Sprintf("%d / %d / %d", s.n[EarlierNodeGone], s.n[LaterNodeGone], s.n[TwoHolders]))
	})
	add(zh.Say("holds read back on the server: own node the lowest / own node gone / a candidate below it"), func(s *Summary) zh.Text {
		return number(fmt.Sprintf("%d / %d / %d", s.n[ReadBack]-s.n[OwnGone]-s.n[NotLowest], s.n[OwnGone], s.n[NotLowest]))
	})
}

func writeRows(add rowFunc, sums []*Summary) {
	var resources []string
	for _, s := range sums {
		if s != nil {
			resources = s.resources
			break
		}
	}
	for _, r := range resources {
		add(zh.Say("writes to %s: accepted / rejected (accepted below its mark)", resourceName(r)), func(s *Summary) zh.Text {
			return number(fmt.Sprintf("%d / %d (%d)", s.accepted[r], s.rejected[r], s.below[r]))
		})
	}
	name := zh.Say("stale-late writes caught")
	for _, r := range resources {
		name = zh.Say("%s / %s accepted", name, resourceName(r))
	}
	add(name, func(s *Summary) zh.Text {
		v := fmt.Sprint(s.n[StaleLate])
		for _, r := range resources {
			v += fmt.Sprintf(" / %d", s.stale[r][0])
		}
		return number(v)
	})
}

func noteRows(add rowFunc, sums []*Summary) {
	var rows []zh.Text
	for _, s := range sums {
		if s == nil {
			continue
		}
		s.mu.Lock()
		for _, r := range s.noted {
			if !slices.Contains(rows, r) {
				rows = append(rows, r)
			}
		}
		s.mu.Unlock()
	}
	for _, r := range rows {
		add(r, func(s *Summary) zh.Text {
			if v, ok := s.notes[r.En]; ok {
				return v
			}
			return number("—")
		})
	}
}

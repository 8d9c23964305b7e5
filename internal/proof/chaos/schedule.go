// Package chaos runs claim C1's seeded chaos (issue 13) and keeps its
// parts apart, as Jepsen keeps generator, client, nemesis and checker:
//
//   - the generator, Schedule (schedule.go), draws from the seed which
//     fault comes next and whom it hits, and each worker's pauses; Size
//     and Plan (size.go) say how long the run is;
//   - the workers, chaosWorker (worker.go), acquire, write with their token
//     to the resources (resource.go) and release; lostCreates
//     (lostcreates.go) follows the lock's trace after a lost create reply;
//   - the nemesis (nemesis.go, freeze.go) injects the faults into the
//     run, chaosRun (run.go, setup.go), whose observer reads every hold
//     back on the server (readback.go, overlap.go, holders.go) and looks
//     for what the run left (leftovers.go);
//   - the run records what it saw as a History (history.go, moment.go,
//     ledger.go), plain data that JSON keeps, and the Checker
//     (checker.go) reads it by C1's rules: a pure function, tested offline
//     on the histories in testdata/. The root states the verdict.
//
// summary.go counts and renders the summary table, evidence.go logs it.
//
// A seed fixes everything drawn: the order and targets of the faults and
// every worker's pauses. It cannot fix the interleaving of goroutines and
// servers, so a replayed seed repeats the schedule, not the run.
package chaos

import (
	"math/rand/v2"
	"time"

	"github.com/zk19/zk19/internal/proof/claims/zh"
)

// Kind is a fault the nemesis injects.
type Kind int

// The fault kinds of claim C1.
const (
	LoseCreate   Kind = iota + 1 // the reply to a worker's create is lost; recovery must run
	LoseDelete                   // the reply to the delete of a worker's Release is lost
	LoseChildren                 // the reply to a worker's getChildren is lost
	FrozenExpiry                 // a holder is frozen with its token and partitioned until its session expires
	ShortCut                     // some workers' connections are cut and healed at once
	Restart                      // a server is restarted with its data
	Failover                     // the leader is partitioned from the other servers until they elect another
)

var kindNames = map[Kind]zh.Text{
	LoseCreate:   zh.Say("lost create reply"),
	LoseDelete:   zh.Say("lost delete reply in Release"),
	LoseChildren: zh.Say("lost getChildren reply"),
	FrozenExpiry: zh.Say("frozen holder partitioned until expiry"),
	ShortCut:     zh.Say("short cut"),
	Restart:      zh.Say("server restart"),
	Failover:     zh.Say("leader failover"),
}

func (k Kind) String() string {
	return k.Text().En
}

// Text is k's name in both languages.
func (k Kind) Text() zh.Text {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return zh.Say("fault kind ?")
}

// Kinds are the fault kinds a setup of servers servers can take: a leader
// failover needs an ensemble.
func Kinds(servers int) []Kind {
	ks := []Kind{LoseCreate, LoseDelete, LoseChildren, FrozenExpiry, ShortCut, Restart}
	if servers > 1 {
		ks = append(ks, Failover)
	}
	return ks
}

// Fault is one step of a schedule.
type Fault struct {
	N      int   // its place in the schedule, from 1
	Kind   Kind  //
	Worker int   // the worker a fault on one worker hits, from 0
	Cut    []int // the workers a ShortCut cuts, ascending
	Server int   // the server a Restart restarts, from 0
}

// Schedule draws a setup's faults from its seed. Its first faults are
// every kind once, in a drawn order, so that even the smallest run injects
// each of them; after that each fault is drawn at random among the later
// kinds.
type Schedule struct {
	rng              *rand.Rand
	later            []Kind
	round            []Kind
	workers, servers int
	n                int
	extra            int          // faults drawn after the first round
	again            map[Kind]int // kinds put back into the first round
}

// NewSchedule returns the schedule of setup number setup (setups drawn from
// one seed differ): a first round of kinds, then draws among later, for
// workers workers and servers servers.
func NewSchedule(seed int64, setup int, kinds, later []Kind, workers, servers int) *Schedule {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(setup)))
	round := append([]Kind(nil), kinds...)
	rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
	return &Schedule{rng: rng, later: later, round: round, workers: workers, servers: servers, again: map[Kind]int{}}
}

// maxAgain bounds how often one kind is put back into the first round.
const maxAgain = 2

// Again puts kind k back at the end of the first round after a fault of
// it did not take effect (the worker sent no such request in time, no
// successor wrote while a holder was frozen), so that even the smallest
// run sees every kind act; at most maxAgain times per kind. It reports
// whether k was put back.
func (s *Schedule) Again(k Kind) bool {
	if s.again[k] == maxAgain {
		return false
	}
	s.again[k]++
	s.round = append(s.round, k)
	return true
}

// firstRoundDone reports whether every kind has been drawn once.
func (s *Schedule) firstRoundDone() bool { return len(s.round) == 0 }

// Next draws the next fault.
func (s *Schedule) Next() Fault {
	s.n++
	f := Fault{N: s.n}
	if len(s.round) > 0 {
		f.Kind, s.round = s.round[0], s.round[1:]
	} else {
		f.Kind = s.later[s.rng.IntN(len(s.later))]
		s.extra++
	}
	f.Worker = s.rng.IntN(s.workers)
	f.Server = s.rng.IntN(s.servers)
	for w := range s.workers {
		if w == f.Worker || s.rng.IntN(2) == 0 {
			f.Cut = append(f.Cut, w)
		}
	}
	return f
}

// Pauses returns worker's GC pauses for setup, drawn from the seed:
// uniform in [0, max).
func Pauses(seed int64, setup, worker int, max time.Duration) func() time.Duration {
	rng := rand.New(rand.NewPCG(uint64(seed)^0x9e3779b97f4a7c15, uint64(setup)<<32|uint64(worker)))
	return func() time.Duration { return time.Duration(rng.Int64N(int64(max))) }
}

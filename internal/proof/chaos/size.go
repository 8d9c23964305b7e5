package chaos

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/zk19/zk19/internal/proof/claims/zh"
)

// Environment variables of a chaos run.
const (
	// EnvSeed replays a schedule: the seed a record printed.
	EnvSeed = "ZK19_CHAOS_SEED"
	// EnvSize makes a soak: a duration ("10m") or a number of
	// acquisitions ("500"). Unset, the run is sized for CI.
	EnvSize = "ZK19_CHAOS"
)

// defaultExtra is how many faults the CI-sized run draws after its first
// round (every kind once).
const defaultExtra = 1

// Size says when a setup's schedule ends. The zero Size is the CI run: the
// first round and defaultExtra more faults. A soak goes on drawing faults
// until its Duration has passed or its Acquisitions were made, and always
// completes the first round.
type Size struct {
	Duration     time.Duration
	Acquisitions int
}

// Soak reports whether s is a soak rather than the CI run.
func (s Size) Soak() bool { return s.Duration > 0 || s.Acquisitions > 0 }

// Share is each of n setups' part of a soak; the CI run is not shared.
func (s Size) Share(n int) Size {
	return Size{Duration: s.Duration / time.Duration(n), Acquisitions: (s.Acquisitions + n - 1) / n}
}

// Done reports whether sc is over, elapsed after it began and with
// acquisitions made since.
func (s Size) Done(sc *Schedule, elapsed time.Duration, acquisitions int) bool {
	switch {
	case !sc.firstRoundDone():
		return false
	case s.Duration > 0:
		return elapsed >= s.Duration
	case s.Acquisitions > 0:
		return acquisitions >= s.Acquisitions
	}
	return sc.extra >= defaultExtra
}

// Later returns the kinds a schedule draws after its first round: every
// kind for a soak; for the CI run only those on a worker's connection, since
// a server's restart or a failover costs a server's start (seconds, tens of
// them in a loaded container), which the CI run pays once, in its first
// round.
func (s Size) Later(kinds []Kind) []Kind {
	if s.Soak() {
		return kinds
	}
	var out []Kind
	for _, k := range kinds {
		if k != Restart && k != Failover {
			out = append(out, k)
		}
	}
	return out
}

func (s Size) String() string { return s.Text().En }

// Text is s in both languages.
func (s Size) Text() zh.Text {
	switch {
	case s.Duration > 0:
		return zh.Say("soak of %v (%s=%v)", s.Duration, EnvSize, s.Duration)
	case s.Acquisitions > 0:
		return zh.Say("soak of %d acquisitions (%s=%d)", s.Acquisitions, EnvSize, s.Acquisitions)
	}
	return zh.Say("CI size: every fault kind once, then %d more on a worker's connection (%s unset)", defaultExtra, EnvSize)
}

// parseSize reads EnvSize's value: "" is the CI run.
func parseSize(v string) (Size, error) {
	if v == "" {
		return Size{}, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n <= 0 {
			return Size{}, fmt.Errorf("%s=%s: want a positive number of acquisitions", EnvSize, v)
		}
		return Size{Acquisitions: n}, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return Size{}, fmt.Errorf("%s=%s: want a duration such as 10m or a number of acquisitions such as 500", EnvSize, v)
	}
	return Size{Duration: d}, nil
}

// Plan is a run's seed and size.
type Plan struct {
	Seed   int64
	Replay bool // the seed came from EnvSeed
	Size   Size
}

// PlanFromEnv reads EnvSeed and EnvSize; without EnvSeed the seed is drawn
// from the clock, and the record prints it.
func PlanFromEnv() (Plan, error) {
	size, err := parseSize(os.Getenv(EnvSize))
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Seed: time.Now().UnixNano(), Size: size}
	if v := os.Getenv(EnvSeed); v != "" {
		if p.Seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			return Plan{}, fmt.Errorf("%s=%s: want an integer seed", EnvSeed, v)
		}
		p.Replay = true
	}
	return p, nil
}

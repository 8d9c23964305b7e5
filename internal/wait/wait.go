// Package wait is the harness's one bounded-wait primitive: gotest.tools'
// poll.WaitOn at one interval, failing with what was awaited and the last
// state seen, and its twin for a channel, Receive. Every wait of the suite
// goes through one of them, so a reader learns one rule: a condition is
// checked every Interval (or a channel waited on) until it holds or the
// bound passes, and the failure names what was awaited.
package wait

import (
	"fmt"
	"strings"
	"time"

	"gotest.tools/v3/poll"
)

// Interval is the delay between two checks of a condition.
const Interval = 20 * time.Millisecond

// TB is the part of testing.TB a wait uses.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Cond reports whether the awaited state holds and, in a few words, the
// state it saw (shown when the wait gives up).
type Cond func() (ok bool, last string)

// For checks cond every Interval until it holds, and fails t after within,
// naming what it waited for and the last state seen.
func For(t TB, within time.Duration, what string, cond Cond) {
	t.Helper()
	poll.WaitOn(pollT{t}, check(what, cond), poll.WithTimeout(within), poll.WithDelay(Interval))
}

// Receive waits for a value from ch, or for ch to be closed (then it
// returns the zero value), and fails t after within, naming what did not
// arrive: the one bounded receive of the suite, where a result comes back
// on a channel.
func Receive[T any](t TB, within time.Duration, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s did not arrive within %v", what, within)
	}
	var zero T // Fatalf ends the goroutine; a TB whose Fatalf returns gets the zero value
	return zero
}

// Until is For for code that returns errors instead of failing a test: it
// returns nil once cond holds, or an error naming what it waited for and
// the last state seen.
func Until(within time.Duration, what string, cond Cond) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(stopped)
			if !ok {
				panic(r)
			}
			err = stop.err
		}
	}()
	poll.WaitOn(recorder{}, check(what, cond), poll.WithTimeout(within), poll.WithDelay(Interval))
	return nil
}

func check(what string, cond Cond) poll.Check {
	return func(poll.LogT) poll.Result {
		if ok, last := cond(); !ok {
			return poll.Continue("waiting for %s; last seen: %s", what, last)
		}
		return poll.Success()
	}
}

// pollT gives a TB the Log method poll.WaitOn wants.
type pollT struct{ TB }

func (p pollT) Log(args ...any) { p.TB.Helper(); p.TB.Logf("%s", fmt.Sprint(args...)) }

// recorder is a poll.TestingT whose Fatalf ends the wait with an error
// (a real test's Fatalf ends its goroutine; poll.WaitOn relies on that).
type recorder struct{}

type stopped struct{ err error }

func (recorder) Log(...any)          {}
func (recorder) Logf(string, ...any) {}
func (recorder) Fatalf(format string, args ...any) {
	panic(stopped{fmt.Errorf("%s", strings.TrimSpace(fmt.Sprintf(format, args...)))})
}

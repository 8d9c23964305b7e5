// This file is the harness's one bounded-wait primitive: gotest.tools'
// poll.WaitOn at one interval, failing with what was awaited and the last
// state seen, and its twins for a channel, Receive and ReceiveSeen. Every
// wait of the suite goes through one of them, so a reader learns one rule:
// a condition is checked every WaitInterval (or a channel waited on) until it
// holds or the bound passes, and the failure names what was awaited.

package tb

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"gotest.tools/v3/poll"
)

// WaitInterval is the delay between two checks of a condition.
const WaitInterval = 20 * time.Millisecond

// Waiter is the part of testing.TB a wait uses.
type Waiter interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Cond reports whether the awaited state holds and, in a few words, the
// state it saw (shown when the wait gives up).
type Cond func() (ok bool, last string)

// WaitFor checks cond every WaitInterval until it holds, and fails t after within,
// naming what it waited for and the last state seen. The failure's format
// is the one literal below, whatever ended the wait: a claims.Judged t
// finds it in the catalogue of Chinese formats.
func WaitFor(t Waiter, within time.Duration, what string, cond Cond) {
	t.Helper()
	err := WaitUntil(within, what, cond)
	var gaveUp *timeout
	switch {
	case err == nil:
	case errors.As(err, &gaveUp):
		t.Fatalf("timeout hit after %v: waiting for %s; last seen: %s", gaveUp.within, gaveUp.what, gaveUp.last)
	default: // poll.WaitOn's own timeout (backstop)
		t.Fatalf("%s", err)
	}
}

// backstop is how long past its bound poll.WaitOn itself gives up, when a
// check is still running then. The bound is kept by the check (see check):
// when poll.WaitOn's own timeout fires first, the goroutine running the
// check is left blocked for good on its unbuffered result channel
// (gotest.tools v3.5.2), and the suite's goroutine check (E3) reports it.
const backstop = 5 * time.Second

// Receive waits for a value from ch, or for ch to be closed (then it
// returns the zero value), and fails t after within, naming what did not
// arrive: the one bounded receive of the suite, where a result comes back
// on a channel.
func Receive[T any](t Waiter, within time.Duration, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s did not arrive within %v", what, within)
	}
	var zero T // Fatalf ends the goroutine; a Waiter whose Fatalf returns gets the zero value
	return zero
}

// ReceiveSeen is Receive for a value whose absence needs explaining: when
// the bound passes it fails t as For does, naming what it waited for and
// the last state seen, which seen reports (called once, then).
func ReceiveSeen[T any](t Waiter, within time.Duration, what string, ch <-chan T, seen func() string) T {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timeout hit after %v: waiting for %s; last seen: %s", within, what, seen())
	}
	var zero T // as in Receive
	return zero
}

// WaitUntil is WaitFor for code that returns errors instead of failing a test: it
// returns nil once cond holds, or an error naming what it waited for and
// the last state seen.
func WaitUntil(within time.Duration, what string, cond Cond) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(stopped)
			if !ok {
				panic(r)
			}
			err = stop.err
		}
	}()
	poll.WaitOn(recorder{}, check(what, within, cond), poll.WithTimeout(within+backstop), poll.WithDelay(WaitInterval))
	return nil
}

// check ends the wait itself once within has passed since the wait began,
// with an error that poll.WaitOn returns through the check's own result:
// no goroutine of the wait is left behind.
func check(what string, within time.Duration, cond Cond) poll.Check {
	deadline := time.Now().Add(within)
	return func(poll.LogT) poll.Result {
		ok, last := cond()
		switch {
		case ok:
			return poll.Success()
		case !time.Now().Before(deadline):
			return poll.Error(&timeout{within: within, what: what, last: last})
		}
		return poll.Continue("waiting for %s; last seen: %s", what, last)
	}
}

// timeout is a check's end at its bound: what it waited for and the last
// state seen.
type timeout struct {
	within     time.Duration
	what, last string
}

func (e *timeout) Error() string {
	return fmt.Sprintf("timeout hit after %v: waiting for %s; last seen: %s", e.within, e.what, e.last)
}

// failed is what poll.WaitOn puts before a check's error.
const failed = "polling check failed: "

// recorder is a poll.TestingT whose Fatalf ends the wait with an error
// (a real test's Fatalf ends its goroutine; poll.WaitOn relies on that):
// a check's timeout as it is, anything else as its message without the
// prefix poll.WaitOn puts before a check's error.
type recorder struct{}

type stopped struct{ err error }

func (recorder) Log(...any)          {}
func (recorder) Logf(string, ...any) {}
func (recorder) Fatalf(format string, args ...any) {
	for _, a := range args {
		if e, ok := a.(*timeout); ok {
			panic(stopped{e})
		}
	}
	msg := strings.TrimPrefix(strings.TrimSpace(fmt.Sprintf(format, args...)), failed)
	panic(stopped{errors.New(msg)})
}

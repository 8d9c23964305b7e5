package tb

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	if err := WaitUntil(time.Second, "three checks", func() (bool, string) { n++; return n >= 3, "" }); err != nil {
		t.Fatalf("got %v; want nil", err)
	}
}

func TestUntilNamesWhatItWaitedForAndTheLastState(t *testing.T) {
	err := WaitUntil(3*WaitInterval, "the moon", func() (bool, string) { return false, "still cheese" })
	want := fmt.Sprintf("timeout hit after %v: waiting for the moon; last seen: still cheese", 3*WaitInterval)
	if err == nil || err.Error() != want {
		t.Fatalf("got %v; want %q", err, want)
	}
}

// A wait that gives up leaves no goroutine: poll.WaitOn's own timeout
// would leave the one running the check blocked for good.
func TestAWaitThatGivesUpLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 5 {
		_ = WaitUntil(2*WaitInterval, "nothing", func() (bool, string) { return false, "" })
		f := &fatal{}
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			WaitFor(exiting{f}, 2*WaitInterval, "nothing", func() (bool, string) { return false, "" })
		}()
		<-ended
		if !strings.HasPrefix(f.msg, "timeout hit after ") {
			t.Fatalf("For failed with %q; want it to start with \"timeout hit after \"", f.msg)
		}
	}
	if err := WaitUntil(time.Second, "the waits' goroutines to end", func() (bool, string) {
		n := runtime.NumGoroutine() - 1 // this check runs in a goroutine of its own
		return n <= before, fmt.Sprintf("%d goroutines (%d before the waits)", n, before)
	}); err != nil {
		t.Fatalf("got %v; want none of the waits' goroutines left", err)
	}
}

// fatal is a Waiter whose Fatalf records the message instead of ending the
// goroutine.
type fatal struct{ msg string }

func (*fatal) Helper()                             {}
func (*fatal) Logf(string, ...any)                 {}
func (f *fatal) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

// exiting is a fatal whose Fatalf ends the goroutine, as a test's does
// (poll.WaitOn relies on it).
type exiting struct{ *fatal }

func (e exiting) Fatalf(format string, args ...any) {
	e.fatal.Fatalf(format, args...)
	runtime.Goexit()
}

func TestReceiveReturnsTheValueOrTheZeroOfAClosedChannel(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := Receive(t, time.Second, "seven", ch); got != 7 {
		t.Fatalf("got %d; want 7", got)
	}
	done := make(chan struct{})
	close(done)
	Receive(t, time.Second, "the close", done)
}

func TestReceiveNamesWhatDidNotArrive(t *testing.T) {
	f := &fatal{}
	if got := Receive(f, 3*WaitInterval, "the reply", make(chan string)); got != "" {
		t.Fatalf("got %q; want the zero value", got)
	}
	if !strings.Contains(f.msg, "the reply did not arrive within") {
		t.Fatalf("got %q; want a failure naming the reply", f.msg)
	}
}

func TestReceiveSeenNamesWhatDidNotArriveAndTheLastState(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := ReceiveSeen(t, time.Second, "seven", ch, func() string { return "unused" }); got != 7 {
		t.Fatalf("got %d; want 7", got)
	}
	f := &fatal{}
	ReceiveSeen(f, 3*WaitInterval, "the reply", make(chan string), func() string { return "still pending" })
	want := fmt.Sprintf("timeout hit after %v: waiting for the reply; last seen: still pending", 3*WaitInterval)
	if f.msg != want {
		t.Fatalf("got %q; want %q", f.msg, want)
	}
}

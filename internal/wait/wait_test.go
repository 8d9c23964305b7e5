package wait

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	if err := Until(time.Second, "three checks", func() (bool, string) { n++; return n >= 3, "" }); err != nil {
		t.Fatalf("got %v; want nil", err)
	}
}

func TestUntilNamesWhatItWaitedForAndTheLastState(t *testing.T) {
	err := Until(3*Interval, "the moon", func() (bool, string) { return false, "still cheese" })
	if err == nil || !strings.Contains(err.Error(), "waiting for the moon; last seen: still cheese") {
		t.Fatalf("got %v; want an error naming the moon and the last state", err)
	}
}

// fatal is a TB whose Fatalf records the message instead of ending the
// goroutine.
type fatal struct{ msg string }

func (*fatal) Helper()                             {}
func (*fatal) Logf(string, ...any)                 {}
func (f *fatal) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

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
	if got := Receive(f, 3*Interval, "the reply", make(chan string)); got != "" {
		t.Fatalf("got %q; want the zero value", got)
	}
	if !strings.Contains(f.msg, "the reply did not arrive within") {
		t.Fatalf("got %q; want a failure naming the reply", f.msg)
	}
}

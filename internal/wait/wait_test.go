package wait

import (
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

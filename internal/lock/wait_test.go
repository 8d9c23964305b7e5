package lock

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestProbeTakesInDeliveredEventFirst: a probe never reports "no event"
// while an event sits in the watch channel; its answer is deferred until
// the event has been handled (the next blocking point).
func TestProbeTakesInDeliveredEventFirst(t *testing.T) {
	w := (&Probe{}).register()
	st := &Attempt{Own: "b"}
	ch := make(chan zk.Event, 1)
	res := make(chan zk.Event, 1)
	go func() { ev, _ := w.wait(context.Background(), ch, st); res <- ev }()

	r1 := make(chan Attempt, 1)
	w.probe <- r1
	if got := <-r1; !got.Waiting || got.Wakeups != 0 {
		t.Fatalf("idle probe: got %+v; want waiting with 0 wakeups", got)
	}

	ch <- zk.Event{Type: zk.EventNodeDeleted, Path: "/p/a"}
	r2 := make(chan Attempt, 1)
	accepted := false
	var ev zk.Event
	select {
	case w.probe <- r2:
		accepted = true
		ev = <-res
	case ev = <-res:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter stuck")
	}
	if ev.Type != zk.EventNodeDeleted || st.Wakeups != 1 {
		t.Fatalf("got %v with %d wakeups; want the deletion and 1", ev.Type, st.Wakeups)
	}
	if !accepted {
		return // the waiter took the event before the probe: nothing more to check
	}
	if len(r2) != 0 {
		t.Fatalf("probe answered before the event was handled: %+v", <-r2)
	}
	ch2 := make(chan zk.Event, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _, _ = w.wait(ctx, ch2, st); close(done) }()
	got := <-r2
	cancel()
	<-done
	if !got.Waiting || got.Wakeups != 1 {
		t.Fatalf("deferred answer: got %+v; want waiting with 1 wakeup", got)
	}
}

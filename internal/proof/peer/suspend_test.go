package peer

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// TestDriversReportASuspensionAsItHappens: each driver's client, cut off
// by its proxy, prints a state event saying it is not connected (the
// library's SUSPENDED) as its listener is told, in the same session; healed
// before the session can expire, one saying it is connected again (kazoo's
// CONNECTED, Curator's RECONNECTED), still in the same session. The peer
// scenario suspended-holding reads exactly these events.
func TestDriversReportASuspensionAsItHappens(t *testing.T) {
	for _, c := range []struct {
		name        string
		start       func(*testing.T, string) *Driver
		told, back  string
		keepsStates bool // the state reply lists every state the listener saw
	}{
		{"kazoo", driver, "SUSPENDED", "CONNECTED", false},
		{"curator", curator, "SUSPENDED", "RECONNECTED", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := c.start(t, c.name+"-W")
			srv := zkserver.Start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			t.Cleanup(cancel)
			px := zkserver.ClientProxy(t, c.name+"-W", srv)
			st := connect(t, ctx, k, px)
			since := len(k.Events())
			t.Logf("fault: %s-W's proxy cuts its connection and refuses new ones", c.name)
			px.Cut(faultproxy.BothEnds)
			t.Cleanup(px.Heal)
			told := waitState(t, ctx, k, since, false, 2500*time.Millisecond)
			if told.State != c.told || told.Session != st.Session {
				t.Fatalf("%s-W cut off: got state event %q in session %q; want %s in session %s", c.name, told.State, told.Session, c.told, st.Session)
			}
			since = len(k.Events())
			t.Logf("fault undone: %s-W's proxy heals, before the session's 10s can run out", c.name)
			px.Heal()
			back := waitState(t, ctx, k, since, true, 20*time.Second)
			if back.State != c.back || back.Session != st.Session {
				t.Fatalf("%s-W healed: got state event %q in session %q; want %s in session %s", c.name, back.State, back.Session, c.back, st.Session)
			}
			now, err := k.State(ctx)
			if err != nil {
				t.Fatalf("%s-W state: %v", c.name, err)
			}
			if want := []string{"CONNECTED", c.told, c.back}; c.keepsStates && !slices.Equal(now.States, want) {
				t.Fatalf("%s-W state: got states %v; want %v", c.name, now.States, want)
			}
		})
	}
}

// waitState waits, within bound, for k's first state event at since or
// later whose connected is connected, and logs when it came.
func waitState(t *testing.T, ctx context.Context, k *Driver, since int, connected bool, bound time.Duration) Event {
	t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	e, err := k.WaitEvent(ctx, fmt.Sprintf("a state event with connected %v", connected), since,
		func(e Event) bool { return e.Kind == "state" && e.Connected != nil && *e.Connected == connected })
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Logf("%s: state %s after %v", k.name, e.State, time.Since(began).Round(time.Millisecond))
	return e
}

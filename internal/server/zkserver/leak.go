package zkserver

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"go.uber.org/goleak"

	"github.com/zk19/zk19/internal/server/tb"
)

// LeakOptions are the goroutines goleak may ignore: idle keep-alive
// connections of the Docker client that testcontainers-go keeps for reuse,
// wherever they are parked (a reading one is parked in the poller, so its
// top function is internal/poll's, and only its stack names net/http).
// Every goroutine of zk19's own making must be gone, a reader of a socket
// left open included.
func LeakOptions() []goleak.Option {
	var opts []goleak.Option
	for _, f := range keepAlive {
		opts = append(opts, goleak.IgnoreAnyFunction(f))
	}
	return opts
}

// keepAlive are the functions of the Docker client's idle keep-alive
// connections, which no leak check counts (LeakOptions, OwnGoroutines).
var keepAlive = []string{"net/http.(*persistConn).readLoop", "net/http.(*persistConn).writeLoop"}

// keptAlive reports whether a goroutine's stack (as the goroutine profile
// prints it) has a keep-alive function of the Docker client anywhere in it.
func keptAlive(stack string) bool {
	return slices.ContainsFunc(keepAlive, func(f string) bool { return strings.Contains(stack, f+"+") })
}

// ownerLabel is the pprof label that names the test a goroutine works for.
const ownerLabel = "zk19.owner"

// Own runs f with its goroutine marked as owner's: every goroutine started
// inside f, and every goroutine those start, carries the mark (a pprof
// label, which the runtime passes on at each go statement), so that a test
// running beside others can count what it leaves (OwnGoroutines). A
// goroutine the runtime starts itself (a time.AfterFunc callback) carries
// no mark.
func Own(owner string, f func()) {
	pprof.Do(context.Background(), pprof.Labels(ownerLabel, owner), func(context.Context) { f() })
}

// OwnGoroutines waits up to within for owner's goroutines (see Own) to
// end, and returns the stacks of those still running then, grouped as the
// goroutine profile groups them: "" when none is. Idle keep-alive
// connections of the Docker client are not counted (LeakOptions).
func OwnGoroutines(owner string, within time.Duration) string {
	var left string
	_ = tb.WaitUntil(within, "no goroutine of "+owner, func() (bool, string) {
		left = ownGoroutines(owner)
		return left == "", left
	})
	return left
}

// ownGoroutines reads the goroutine profile once.
func ownGoroutines(owner string) string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	mark := fmt.Sprintf("# labels: {%q:%q}", ownerLabel, owner)
	var out []string
	for _, group := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(group, "\n"+mark+"\n") && !keptAlive(group) {
			out = append(out, strings.TrimSpace(group))
		}
	}
	return strings.Join(out, "\n\n")
}

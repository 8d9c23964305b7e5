package zkserver

import "go.uber.org/goleak"

// LeakOptions are the goroutines goleak may ignore: idle keep-alive
// connections of the Docker client that testcontainers-go keeps for reuse,
// wherever they are parked (a reading one is parked in the poller, so its
// top function is internal/poll's, and only its stack names net/http).
// Every goroutine of zk19's own making must be gone, a reader of a socket
// left open included.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	}
}

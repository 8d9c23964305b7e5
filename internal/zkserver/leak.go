package zkserver

import "go.uber.org/goleak"

// LeakOptions are the goroutines goleak may ignore: idle keep-alive
// connections of the Docker client that testcontainers-go keeps for reuse.
// Every goroutine of zk19's own making must be gone.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	}
}

// Package zktest starts a real ZooKeeper server, or an ensemble of them,
// for a Go test, and puts fault proxies on the wire so that the test can
// lose one chosen reply, freeze one session or hold one follower, in the
// manner of net/http/httptest: one fixture, with verbs.
//
//	e := zktest.Start(t)                  // one server, removed when t ends
//	c := e.Connect(t, "A")                // a *zk.Conn, through a proxy of its own
//	f := c.Proxy.LoseReply(zktest.Match{Op: zktest.Create, Under: "/app"})
//	_, err := c.Create("/app/x", nil, 0, zk.WorldACL(zk.PermAll))
//	lost := f.Result()                    // lost.Took: the fault happened
//
// # What it starts
//
// The servers come from the environment, as ZK19_BACKEND says:
//
//   - process: the ZooKeeper jar installed on the machine (Debian's
//     zookeeper package, or ZOOKEEPER_HOME), one JVM per server;
//   - container: one Docker container per server, of ZK19_IMAGE;
//   - external: servers that already run, at ZK19_SERVERS (host:port,...):
//     zktest puts client proxies in front of them but owns no server, so
//     the server verbs (HoldFollower, PartitionLeader, Restart) and
//     ensembles skip;
//   - unset or auto: external if ZK19_SERVERS is set, else the container
//     backend if its image is there, else the process backend.
//
// When none can be had, Start skips the test with the reason, except under
// CI=true, where it fails it: in CI a missing server is a broken setup.
// Every server listens on 127.0.0.1 with ports drawn for it, its data in a
// temporary directory; tickTime is 200 ms (WithTickTime), so a session of
// 1 s (Connect's default) expires within a second or two of silence, and
// initLimit and syncLimit are 25 ticks (5 s). In an ensemble, every
// server reaches every other through a fault proxy of its own, on the
// quorum and the election ports both.
//
// # What each fault does on the wire
//
// A Client's connections all go through its own Proxy, which reads
// ZooKeeper's frames (the length-prefixed Jute records) and acts on them:
//
//   - LoseReply: the request m picks reaches the server and takes effect;
//     the proxy discards its reply and closes both sockets. The client
//     sees a connection loss (zk.ErrConnectionClosed) for a request that
//     was done, and reconnects in the same session.
//   - LoseRequest: the proxy discards the request m picks and closes both
//     sockets: the request never took effect.
//   - Cut: every socket of the proxy is closed and new connections are
//     refused until Heal. The client sees the disconnect at once.
//   - Freeze: every byte both ways is discarded and the sockets stay open
//     until Heal: neither end hears of the other, as when a client's
//     machine stops. The server expires the session after its timeout;
//     Expire does that and waits for it on the server (the four-letter
//     word dump) and then for the client (zk.StateExpired).
//   - Hold and Release: the client's bytes are kept, in order, then
//     delivered.
//   - HoldFollower: the leader's stream to one follower (proposals,
//     commits, pings) is kept in order; the follower stays connected and
//     serves reads from what it had: a stale read. Release delivers it.
//   - PartitionLeader: every link between the leader and the others
//     discards every byte both ways until Heal, which resets them.
//   - Restart stops a server's process or container and starts it again on
//     its data.
//
// Each fault reports whether it took: a Fault's Lost.Took, with the
// request's opcode, xid, path and the lost reply's err code; Hold.Release
// the bytes it had kept; Partition.New the leader elected without the old
// one. A test can so tell "the fault did not take" from "the system
// misbehaved". A verb that cannot do its work (no leader elected, a server
// that does not come back) fails the test, naming what it saw last; every
// wait is bounded.
//
// # What is cleaned up, and when
//
// Every cleanup is registered on the TB before the thing it removes is
// made: when the test ends, clients are closed, proxies closed, servers
// stopped and their directories and containers removed. On Ctrl-C (SIGINT
// or SIGTERM) every server of the process is stopped and removed before it
// exits with status 130, unless the test binary's TestMain already does so.
// What a process killed outright (SIGKILL) left is removed by the next
// test process that starts a server.
//
// # What it does not promise
//
// A fault acts on bytes between one client and one server, or between two
// servers, never inside a server: it cannot make a server lose a write it
// acknowledged. A LoseReply armed while the request is already in flight
// may miss it; arm it first, then call. Faults are exact but timing is
// not: what the servers do within their timeouts (when a frozen session
// expires, when a partitioned leader steps down) is theirs. zktest is for
// tests: the proxies buffer held bytes in memory without bound.
package zktest

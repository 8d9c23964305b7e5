package zkserver

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// PortKind names a server-to-server port.
type PortKind int

// The two server-to-server ports of an ensemble member.
const (
	QuorumPort   PortKind = iota // followers connect to the leader here
	ElectionPort                 // leader election connections
)

func (k PortKind) String() string {
	if k == QuorumPort {
		return "quorum"
	}
	return "election"
}

// PeerAddrFunc tells the address server `from` writes in its zoo.cfg for
// server `to`'s port of the given kind; real is the address `to` binds. It is
// how a proxy is put on every directed server-to-server link.
type PeerAddrFunc func(from, to int, kind PortKind, real string) string

type options struct {
	tickTime  time.Duration
	initLimit int
	syncLimit int
	peerAddr  PeerAddrFunc
	label     string
	external  bool
	loggers   map[string]string // logger name -> level, over the default
}

// Option configures a server or an ensemble.
type Option func(*options)

// WithLogger logs the server's logger name (a class, such as
// "org.apache.zookeeper.server.ZooKeeperServer") at level, whatever
// ZK19_SERVER_LOG_LEVEL says: for a claim whose evidence is a line of the
// server's own log.
func WithLogger(name, level string) Option {
	return func(o *options) {
		if o.loggers == nil {
			o.loggers = map[string]string{}
		}
		o.loggers[name] = level
	}
}

// WithTickTime sets tickTime. Session timeouts are negotiated within
// [2, 20] × tickTime, so a small tickTime makes natural expiry fast.
func WithTickTime(d time.Duration) Option { return func(o *options) { o.tickTime = d } }

// WithLimits sets initLimit and syncLimit (in ticks).
func WithLimits(initLimit, syncLimit int) Option {
	return func(o *options) { o.initLimit, o.syncLimit = initLimit, syncLimit }
}

// WithPeerAddr installs the link-address hook (see PeerAddrFunc).
func WithPeerAddr(f PeerAddrFunc) Option { return func(o *options) { o.peerAddr = f } }

// AllowExternal lets the external backend answer with the servers it points
// at. Without it, a claim that asks for a server of its own (its own config,
// its own data) skips there.
func AllowExternal() Option { return func(o *options) { o.external = true } }

// WithLabel names the servers in log prefixes ("zk1", "zk2", ... by default).
func WithLabel(s string) Option { return func(o *options) { o.label = s } }

func buildOptions(opts []Option) options {
	o := options{tickTime: 2 * time.Second, initLimit: 10, syncLimit: 5, label: "zk"}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ports are the three real ports one member binds.
type ports struct{ client, quorum, election int }

func addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// renderConfig writes server id's zoo.cfg. all holds every member's real
// ports, indexed by id-1; n == 1 renders a standalone server.
func renderConfig(id int, all []ports, dataDir string, o options) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# written by zk19's harness for server %d", id)
	w("tickTime=%d", o.tickTime.Milliseconds())
	w("initLimit=%d", o.initLimit)
	w("syncLimit=%d", o.syncLimit)
	w("dataDir=%s", dataDir)
	w("clientPort=%d", all[id-1].client)
	w("clientPortAddress=127.0.0.1")
	w("4lw.commands.whitelist=*")
	w("admin.enableServer=false")
	w("maxClientCnxns=0")
	w("autopurge.purgeInterval=0")
	if len(all) > 1 {
		w("standaloneEnabled=false")
		w("reconfigEnabled=false")
		for j := 1; j <= len(all); j++ {
			q, e := addr(all[j-1].quorum), addr(all[j-1].election)
			if j != id && o.peerAddr != nil {
				q, e = o.peerAddr(id, j, QuorumPort, q), o.peerAddr(id, j, ElectionPort, e)
			}
			w("server.%d=%s:%s", j, q, PortOf(e))
		}
	}
	return b.String()
}

// PortOf is the port of a host:port address (the whole string if it has none).
func PortOf(hostport string) string {
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	return p
}

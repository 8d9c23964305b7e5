package zktest

import (
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/jute"
	"github.com/zk19/zk19/internal/server/tb"
)

// Proxy is a TCP proxy between clients and one ZooKeeper server that reads
// ZooKeeper's frames and faults them on command. A client that dials
// Addr reaches the server through it; every fault acts on every connection
// the proxy carries, so give each client a proxy of its own (Connect does).
type Proxy struct {
	p *faultproxy.Proxy
}

// NewProxy puts a fault proxy in front of the ZooKeeper server at upstream
// (host:port) and closes it when t ends. Its decisions are logged on t as
// "nemesis" lines. Start's servers need none of this (Connect makes one);
// it is for a server the test started some other way.
func NewProxy(t TB, name, upstream string) *Proxy {
	t.Helper()
	p, err := faultproxy.New(upstream, faultproxy.WithName(name), faultproxy.WithZooKeeperFrames(),
		faultproxy.WithLogf(func(format string, args ...any) { t.Logf("nemesis "+format, args...) }))
	if err != nil {
		t.Fatalf("zktest: proxy in front of %s: %v", upstream, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return &Proxy{p: p}
}

// Addr is the address a client dials to go through the proxy.
func (p *Proxy) Addr() string { return p.p.Addr() }

// Op is a kind of request, as a fault picks it: one or more of the
// opcodes ZooKeeper's wire protocol gives it.
type Op int

// The kinds of request a fault can pick. Create covers create and create2
// (go-zookeeper sends create; other clients send create2); GetChildren
// covers getChildren and getChildren2 (go-zookeeper's Children sends
// getChildren2).
const (
	Create Op = iota + 1
	Delete
	Exists
	GetData
	SetData
	GetChildren
	Sync
	Multi
)

var opcodes = map[Op][]int32{
	Create:      {jute.OpCreate, jute.OpCreate2},
	Delete:      {jute.OpDelete},
	Exists:      {jute.OpExists},
	GetData:     {jute.OpGetData},
	SetData:     {jute.OpSetData},
	GetChildren: {jute.OpGetChildren, jute.OpGetChildren2},
	Sync:        {jute.OpSync},
	Multi:       {jute.OpMulti},
}

// String names the op as the wire does, such as "create/create2".
func (o Op) String() string { return faultproxy.Kinds(counts(opcodes[o])) }

func counts(ops []int32) map[int32]int {
	m := map[int32]int{}
	for _, op := range ops {
		m[op] = 1
	}
	return m
}

// Match picks the request a fault acts on.
type Match struct {
	Op Op // the kind of request; required
	// Path, if set, is the exact path the request must name. Under, if
	// set, is a node the request's path must lie strictly under. Neither
	// works with Sync or Multi, whose paths the proxy does not read.
	Path, Under string
	// Err is the err code of the reply LoseReply loses: zk.ErrCode(0), the
	// default, a success. A reply with another code is delivered, and the
	// fault is spent without taking.
	Err zk.ErrCode
}

// String describes m for log lines, such as "create/create2 under /app,
// reply err=0".
func (m Match) String() string { return m.wire().String() }

func (m Match) wire() faultproxy.Match {
	return faultproxy.Match{Ops: opcodes[m.Op], Path: m.Path, Under: m.Under, Err: int32(m.Err)}
}

// LoseReply arms a fault that loses the reply to the next request m picks,
// on any connection of the proxy: the request reaches the server and takes
// effect; when its reply comes back with m.Err, the proxy discards it and
// closes the connection, so the client sees a connection loss for a
// request that was done. The fault is spent after one request; see Fault.
func (p *Proxy) LoseReply(m Match) *Fault { return &Fault{d: p.p.LoseReply(m.wire())} }

// LoseRequest arms a fault that loses the next request m picks on its way
// to the server: the proxy discards it and closes the connection, so the
// request never took effect and the client sees a connection loss.
func (p *Proxy) LoseRequest(m Match) *Fault { return &Fault{d: p.p.LoseRequest(m.wire())} }

// Cut closes the sockets of every connection the proxy carries and refuses
// new ones until Heal: the client sees its connection end at once and
// cannot reconnect through this proxy; its session lives on the server
// until its timeout runs out.
func (p *Proxy) Cut() { p.p.Cut(faultproxy.BothEnds) }

// Freeze makes the proxy discard every byte both ways, its connections and
// new ones left open but silent until Heal: neither the client nor the
// server hears of the other, as if the client's machine had stopped. The
// server expires the session once its timeout passes with no ping; the
// client learns of it only after Heal (see Client.Expire).
func (p *Proxy) Freeze() { p.p.Blackhole(faultproxy.Both) }

// Hold keeps the bytes the client sends, in memory and in order, until
// Release or Heal delivers them: a slow link, not a lost one.
func (p *Proxy) Hold() { p.p.Hold(faultproxy.Up) }

// Held is how many of the client's bytes a Hold keeps now.
func (p *Proxy) Held() int64 { return p.p.Stats().UpHeld }

// Release delivers what Hold kept, in order, and lets bytes pass again.
func (p *Proxy) Release() { p.p.Release(faultproxy.Up) }

// Heal ends Cut, Freeze and Hold: held bytes are delivered, new connections
// accepted, and a connection that lost bytes to a Freeze is reset, so its
// client reconnects. Armed LoseReply and LoseRequest faults stay armed.
func (p *Proxy) Heal() { p.p.Heal() }

// Conns is how many connections the proxy carries now.
func (p *Proxy) Conns() int { return p.p.Stats().Open }

// Accepted is how many connections the proxy has accepted in all: a client
// that reconnected through it counts twice.
func (p *Proxy) Accepted() int { return p.p.Stats().Accepted }

// Fault is one armed LoseReply or LoseRequest. It ends once: when it took
// (Lost.Took), when the reply it waited for came back with another err
// code, when its connection closed first, or on Cancel.
type Fault struct{ d *faultproxy.Drop }

// Lost is what a Fault did.
type Lost struct {
	// Took is true if the fault acted: the reply (or the request) was
	// discarded and the connection closed. False means the test's premise
	// did not come about, and Why says why.
	Took   bool
	Conn   int        // the proxy's connection it acted on, numbered from 1 as accepted; 0 if none
	Op     string     // the picked request's opcode name, such as "create"
	Opcode int32      // the same, as ZooKeeper numbers it (ZooDefs.OpCode)
	Xid    int32      // the picked request's xid
	Path   string     // the path it named, where the proxy reads one
	Zxid   int64      // the reply's zxid, once the reply arrived
	Err    zk.ErrCode // the reply's err code, once the reply arrived
	Why    string     // how the fault ended, or where it stands
}

// Done is closed when the fault has ended.
func (f *Fault) Done() <-chan struct{} { return f.d.Done() }

// Result is what the fault has done so far; it is final once Done is
// closed.
func (f *Fault) Result() Lost {
	r := f.d.Result()
	l := Lost{Took: r.Dropped, Conn: r.Conn, Opcode: r.Op, Xid: r.Xid, Path: r.Path, Zxid: r.Zxid, Err: zk.ErrCode(r.Err), Why: r.Reason}
	if r.Conn != 0 {
		l.Op = jute.OpName(r.Op)
	}
	return l
}

// Wait waits up to within for the fault to end and returns what it did; the
// error names what it last saw when it has not ended. A fault that has not
// ended is left armed: Cancel it if the test goes on.
func (f *Fault) Wait(within time.Duration) (Lost, error) {
	err := tb.WaitUntil(within, "the fault to end", func() (bool, string) {
		select {
		case <-f.d.Done():
			return true, ""
		default:
			return false, fmt.Sprintf("%+v", f.Result())
		}
	})
	return f.Result(), err
}

// Cancel ends the fault if it has not ended; a reply it waited for is
// delivered.
func (f *Fault) Cancel() { f.d.Cancel() }

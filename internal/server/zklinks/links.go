// Package zklinks puts a fault proxy on every directed server-to-server link
// of a zk19 ensemble (StartLinkedEnsemble), so that a claim can hold,
// blackhole or cut the bytes one server sends another (Links).
package zklinks

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/faultproxy"
	"github.com/zk19/zk19/internal/server/zkserver"
)

// Links puts a fault proxy on every directed server-to-server link of an
// ensemble: server i reaches server j's quorum and election ports through
// proxies of its own, named in i's zoo.cfg. Faults are verbs on the links
// between two servers, in the direction the bytes flow.
type Links struct {
	t    zkserver.TB
	mu   sync.Mutex
	q, e map[[2]int]*faultproxy.Proxy // [from, to]: the proxy `from` dials to reach `to`
	real map[[2]int]string            // [server, kind]: the real address
	logf func(string, ...any)
}

// electionHandshakeMax bounds the address in an election handshake.
const electionHandshakeMax = 4096

// StartLinkedEnsemble starts n servers with a proxy on every directed
// server-to-server link, waits until they are ready, and checks that no
// server-to-server connection bypasses a proxy.
func StartLinkedEnsemble(t zkserver.TB, n int, opts ...zkserver.Option) (*zkserver.Ensemble, *Links) {
	t.Helper()
	zkserver.RequireFaults(t)
	l := &Links{t: t, q: map[[2]int]*faultproxy.Proxy{}, e: map[[2]int]*faultproxy.Proxy{}, real: map[[2]int]string{}, logf: t.Logf}
	t.Cleanup(l.close)
	opts = append(opts, zkserver.WithPeerAddr(l.peerAddr))
	e := zkserver.StartEnsemble(t, n, opts...)
	if by := l.Bypasses(); len(by) > 0 {
		t.Fatalf("server-to-server connections bypass the proxies: %v", by)
	}
	return e, l
}

func (l *Links) peerAddr(from, to int, kind zkserver.PortKind, real string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.real[[2]int{to, int(kind)}] = real
	key := [2]int{from, to}
	m := l.q
	if kind == zkserver.ElectionPort {
		m = l.e
	}
	if p, ok := m[key]; ok {
		return p.Addr()
	}
	name := fmt.Sprintf("%s %d->%d", kind, from, to)
	popts := []faultproxy.Option{faultproxy.WithName(name), faultproxy.WithLogf(l.proxyLog)}
	if kind == zkserver.QuorumPort {
		// A new leader reports LEADING before it binds its quorum port.
		// What flows Down is the leader's stream to `from`, read as
		// packets for HoldCommit.
		popts = append(popts, faultproxy.WithDialRetry(10*time.Second), faultproxy.WithQuorumPackets())
	} else {
		popts = append(popts, faultproxy.WithFirstBytes(l.rewriteElection(from, to)))
	}
	p, err := faultproxy.New(real, popts...)
	if err != nil {
		l.t.Fatalf("link proxy %s: %v", name, err)
	}
	m[key] = p
	return p.Addr()
}

// proxyLog keeps the link proxies' per-connection chatter out of the record;
// the verbs below log the faults.
func (l *Links) proxyLog(string, ...any) {}

// rewriteElection returns the hook for the proxy that server from dials to
// reach server to's election port. The dialer's first message names its own
// election address; when the dialer has the smaller id, the receiver drops
// the connection and dials back to that address. The hook replaces it with
// the proxy that `to` uses to reach `from`, so the call back is proxied too.
func (l *Links) rewriteElection(from, to int) func(io.Reader) ([]byte, error) {
	return func(r io.Reader) ([]byte, error) {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, err
		}
		version := int64(binary.BigEndian.Uint64(hdr[:]))
		if version >= 0 { // the oldest protocol: the first long is the sid, no address
			return hdr[:], nil
		}
		var rest [12]byte
		if _, err := io.ReadFull(r, rest[:]); err != nil {
			return nil, err
		}
		sid := int64(binary.BigEndian.Uint64(rest[:8]))
		n := int32(binary.BigEndian.Uint32(rest[8:]))
		if n < 0 || n > electionHandshakeMax {
			return nil, fmt.Errorf("election handshake from %d: address length %d", sid, n)
		}
		old := make([]byte, n)
		if _, err := io.ReadFull(r, old); err != nil {
			return nil, err
		}
		if sid != int64(from) {
			return nil, fmt.Errorf("election handshake on link %d->%d names sid %d", from, to, sid)
		}
		back := l.proxyAddr(zkserver.ElectionPort, to, from)
		if back == "" {
			return nil, fmt.Errorf("no election proxy %d->%d for the call back", to, from)
		}
		out := make([]byte, 0, 20+len(back))
		out = binary.BigEndian.AppendUint64(out, uint64(version))
		out = binary.BigEndian.AppendUint64(out, uint64(sid))
		out = binary.BigEndian.AppendUint32(out, uint32(len(back)))
		return append(out, back...), nil
	}
}

func (l *Links) proxyAddr(kind zkserver.PortKind, from, to int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.q
	if kind == zkserver.ElectionPort {
		m = l.e
	}
	if p, ok := m[[2]int{from, to}]; ok {
		return p.Addr()
	}
	return ""
}

func (l *Links) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range []map[[2]int]*faultproxy.Proxy{l.q, l.e} {
		for _, p := range m {
			_ = p.Close()
		}
	}
}

// each calls f for every proxy that carries bytes between a and b, with the
// direction in which bytes from `from` to `to` flow through it.
func (l *Links) each(from, to int, kinds []zkserver.PortKind, f func(p *faultproxy.Proxy, d faultproxy.Dir, dialer int)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range kinds {
		m := l.q
		if k == zkserver.ElectionPort {
			m = l.e
		}
		if p, ok := m[[2]int{from, to}]; ok { // dialed by `from`: its bytes go up
			f(p, faultproxy.Up, from)
		}
		if p, ok := m[[2]int{to, from}]; ok { // dialed by `to`: bytes from `from` come down
			f(p, faultproxy.Down, to)
		}
	}
}

var allKinds = []zkserver.PortKind{zkserver.QuorumPort, zkserver.ElectionPort}

// Hold stops the bytes that server from sends to server to, on every link
// between them, and keeps them; Release delivers them in order.
func (l *Links) Hold(from, to int) {
	l.t.Helper()
	l.each(from, to, allKinds, func(p *faultproxy.Proxy, d faultproxy.Dir, _ int) { p.Hold(d) })
	l.logf("nemesis hold %d->%d (bytes kept)", from, to)
}

// Release delivers what Hold kept, in order, and lets bytes pass again.
func (l *Links) Release(from, to int) {
	l.t.Helper()
	l.each(from, to, allKinds, func(p *faultproxy.Proxy, d faultproxy.Dir, _ int) { p.Release(d) })
	l.logf("nemesis release %d->%d", from, to)
}

// HoldCommit makes follower `to` lag behind one write of leader `from`
// and nothing else: the first proposal m selects reaches it, and from that
// proposal's COMMIT on, the proxy keeps the leader's packets in order,
// letting PINGs and REVALIDATEs past (see faultproxy.HoldCommit). Release
// the returned hold to deliver them; Heal, and the test's cleanup, release
// it too.
func (l *Links) HoldCommit(from, to int, m faultproxy.TxnMatch) *faultproxy.CommitHold {
	l.t.Helper()
	p := l.Proxy(zkserver.QuorumPort, to, from)
	if p == nil {
		l.t.Fatalf("no quorum link proxy %d->%d", to, from)
	}
	h := p.HoldCommit(m)
	l.t.Cleanup(h.Release)
	l.logf("nemesis hold-commit %d->%d (the COMMIT of the first proposal of %s, and what follows it but PING and REVALIDATE)", from, to, m)
	return h
}

// Blackhole discards the bytes from `from` to `to`; sockets stay open
// until Heal resets the connections that lost bytes.
func (l *Links) Blackhole(from, to int) {
	l.t.Helper()
	l.each(from, to, allKinds, func(p *faultproxy.Proxy, d faultproxy.Dir, _ int) { p.Blackhole(d) })
	l.logf("nemesis blackhole %d->%d", from, to)
}

// PartitionAsym cuts the links between the groups old and new: every
// connection is closed at the end of the server in new and left open but
// silent at the end of the server in old, and new connections are refused.
// The new side notices at once; the old side notices only through its own
// timeouts (for a leader, about syncLimit × tickTime).
func (l *Links) PartitionAsym(old, new []int) {
	l.t.Helper()
	for _, a := range old {
		for _, b := range new {
			l.each(a, b, allKinds, func(p *faultproxy.Proxy, _ faultproxy.Dir, dialer int) {
				if dialer == b {
					p.Cut(faultproxy.ClientEnd)
				} else {
					p.Cut(faultproxy.UpstreamEnd)
				}
			})
		}
	}
	l.logf("nemesis partition old=%v | new=%v (new side's ends closed, old side's ends open and silent, new connections refused)", old, new)
}

// Heal ends every fault as a real partition ends: held bytes are delivered,
// connections left open by PartitionAsym are closed, and connections that
// lost bytes to Blackhole are reset, so no server goes on reading a stream
// with a hole in it; the servers reconnect over new connections.
func (l *Links) Heal() {
	l.t.Helper()
	l.mu.Lock()
	reset := 0
	for _, m := range []map[[2]int]*faultproxy.Proxy{l.q, l.e} {
		for _, p := range m {
			before := p.Stats().Reset
			p.Heal()
			reset += p.Stats().Reset - before
		}
	}
	l.mu.Unlock()
	l.logf("nemesis heal (%d link connections that lost bytes reset)", reset)
}

// Held returns how many bytes from server from to server to the links hold
// now, read under each proxy's lock: a test that reads it right after an
// event learns whether the hold was still in force then.
func (l *Links) Held(from, to int) int64 {
	var n int64
	l.each(from, to, allKinds, func(p *faultproxy.Proxy, d faultproxy.Dir, _ int) {
		s := p.Stats()
		if d == faultproxy.Up {
			n += s.UpHeld
		} else {
			n += s.DownHeld
		}
	})
	return n
}

// Proxy returns the proxy server from dials to reach server to's port.
func (l *Links) Proxy(kind zkserver.PortKind, from, to int) *faultproxy.Proxy {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kind == zkserver.ElectionPort {
		return l.e[[2]int{from, to}]
	}
	return l.q[[2]int{from, to}]
}

// Bypasses lists established connections to a real quorum or election port
// that do not come from this process (the proxies run in it): each one is a
// server-to-server connection that no proxy can fault.
func (l *Links) Bypasses() []string {
	l.mu.Lock()
	ports := map[int]string{}
	for k, a := range l.real {
		if p, err := strconv.Atoi(zkserver.PortOf(a)); err == nil {
			ports[p] = fmt.Sprintf("server %d %s port", k[0], zkserver.PortKind(k[1]))
		}
	}
	l.mu.Unlock()
	mine := map[string]bool{}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(link, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "01" { // ESTABLISHED
				continue
			}
			remote, err := zkserver.DecodeProcAddr(fs[2])
			if err != nil {
				continue
			}
			rp, _ := strconv.Atoi(zkserver.PortOf(remote))
			if what, ok := ports[rp]; ok && !mine[fs[9]] {
				local, _ := zkserver.DecodeProcAddr(fs[1])
				out = append(out, fmt.Sprintf("%s -> %s (%s)", local, remote, what))
			}
		}
		f.Close()
	}
	return out
}

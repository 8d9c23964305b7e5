package faultproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/zk19/zk19/internal/server/jute"
)

// Session is a session the server granted a client through the proxy, as
// the server's handshake reply (ConnectResponse) said: the proxy reads it on
// its way to the client, whatever the client's library, and forwards it
// unchanged.
type Session struct {
	Conn    int           // proxied connection number as in log lines
	ID      int64         // the session id; 0 when the server refused (an expired session)
	Timeout time.Duration // the negotiated session timeout
	Passwd  []byte        // the session's password, which resuming it needs
}

// decodeConnectResponse reads a ConnectResponse payload: protocolVersion,
// timeOut, sessionId, passwd (and a readOnly flag the proxy ignores).
func decodeConnectResponse(p []byte) (Session, error) {
	if len(p) < 4+4+8+4 {
		return Session{}, errors.New("ConnectResponse: short")
	}
	timeout := int32(binary.BigEndian.Uint32(p[4:8]))
	id := int64(binary.BigEndian.Uint64(p[8:16]))
	n := int32(binary.BigEndian.Uint32(p[16:20]))
	if n < 0 || int(n) > len(p)-20 {
		return Session{}, fmt.Errorf("ConnectResponse: passwd length %d", n)
	}
	return Session{ID: id, Timeout: time.Duration(timeout) * time.Millisecond,
		Passwd: append([]byte(nil), p[20:20+n]...)}, nil
}

// Sessions returns the sessions granted through p so far, oldest first; it
// needs WithZooKeeperFrames.
func (p *Proxy) Sessions() []Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Session(nil), p.sessions...)
}

// Keeper holds a session alive on the server from a connection of its own,
// as KeepSession describes.
type Keeper struct {
	p     *Proxy
	s     Session
	nc    net.Conn
	stop  chan struct{}
	ended chan struct{}
	once  sync.Once
	wg    sync.WaitGroup

	mu    sync.Mutex
	pings int
	why   string
}

// ResumeSession dials addr and resumes session s on that connection of
// its own, as a client reconnecting with s's id and password does: the
// server then moves s to it. It returns the connection, its deadline
// cleared, and the session the server granted; the server's refusal (s
// has expired) is an error. within bounds the dial and the handshake.
func ResumeSession(addr string, s Session, within time.Duration) (net.Conn, Session, error) {
	nc, err := net.DialTimeout("tcp", addr, within)
	if err != nil {
		return nil, Session{}, fmt.Errorf("resume %#x: dial %s: %w", s.ID, addr, err)
	}
	req := binary.BigEndian.AppendUint32(nil, 0) // protocolVersion
	req = binary.BigEndian.AppendUint64(req, 0)  // lastZxidSeen
	req = binary.BigEndian.AppendUint32(req, uint32(s.Timeout.Milliseconds()))
	req = binary.BigEndian.AppendUint64(req, uint64(s.ID))
	req = binary.BigEndian.AppendUint32(req, uint32(len(s.Passwd)))
	req = append(req, s.Passwd...)
	req = append(req, 0) // readOnly false
	_ = nc.SetDeadline(time.Now().Add(within))
	if _, err := nc.Write(jute.AppendFrame(nil, req)); err != nil {
		nc.Close()
		return nil, Session{}, fmt.Errorf("resume %#x: handshake: %w", s.ID, err)
	}
	reply, err := jute.ReadFrame(nc, 1<<16)
	if err != nil {
		nc.Close()
		return nil, Session{}, fmt.Errorf("resume %#x: handshake reply: %w", s.ID, err)
	}
	got, err := decodeConnectResponse(reply)
	if err != nil || got.ID != s.ID || got.Timeout <= 0 {
		nc.Close()
		return nil, Session{}, fmt.Errorf("the server would not resume session %#x (reply %+v, %v): expired already", s.ID, got, err)
	}
	_ = nc.SetDeadline(time.Time{})
	return nc, got, nil
}

// KeepSession resumes session s on a connection of its own to p's upstream,
// beside the proxy and none of its faults, and pings it every third of its
// timeout: the server keeps the session, and its ephemeral nodes, alive
// while its client is cut off and after the client has given it up. It is
// the window in which a client has moved on to a new session while the
// server has not yet cleaned up the old one, held open on purpose.
//
// Stop ends the pings and closes the connection; the server expires the
// session one timeout later. If the session's client resumes it first, the
// server closes the keeper's connection (Ended is closed, Why says so).
func (p *Proxy) KeepSession(s Session) (*Keeper, error) {
	if s.ID == 0 || s.Timeout <= 0 {
		return nil, fmt.Errorf("faultproxy: no session to keep: %+v", s)
	}
	nc, got, err := ResumeSession(p.upstream, s, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: keeper: %w", err)
	}
	k := &Keeper{p: p, s: got, nc: nc, stop: make(chan struct{}), ended: make(chan struct{})}
	p.logf("keeper: session %#x resumed on a connection of its own (timeout %v): the server keeps it while the keeper pings", s.ID, got.Timeout)
	k.wg.Add(2)
	go k.pingLoop()
	go k.readLoop()
	return k, nil
}

func (k *Keeper) pingLoop() {
	defer k.wg.Done()
	ping := jute.AppendFrame(nil, jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}.Append(nil))
	t := time.NewTicker(k.s.Timeout / 3)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-k.ended:
			return
		case <-t.C:
		}
		if _, err := k.nc.Write(ping); err != nil {
			k.end(fmt.Sprintf("ping: %v", err))
			return
		}
		k.mu.Lock()
		k.pings++
		k.mu.Unlock()
	}
}

// readLoop reads the server's replies (ping replies) until the connection
// ends.
func (k *Keeper) readLoop() {
	defer k.wg.Done()
	for {
		if _, err := jute.ReadFrame(k.nc, jute.MaxFrame); err != nil {
			k.end(fmt.Sprintf("the server closed the keeper's connection (%v): the session's client resumed it, or the keeper stopped", err))
			return
		}
	}
}

func (k *Keeper) end(why string) {
	k.once.Do(func() {
		k.mu.Lock()
		k.why = why
		k.mu.Unlock()
		k.nc.Close()
		close(k.ended)
		k.p.logf("keeper: session %#x: %s", k.s.ID, why)
	})
}

// Ended is closed once the keeper's connection is gone.
func (k *Keeper) Ended() <-chan struct{} { return k.ended }

// Why says how the keeper's connection ended ("" while it is open).
func (k *Keeper) Why() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.why
}

// Pings returns how many pings the keeper has sent.
func (k *Keeper) Pings() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pings
}

// Stop ends the pings and closes the connection, and waits for the
// keeper's goroutines. Safe to call twice.
func (k *Keeper) Stop() {
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	k.end("stopped: the server expires the session one timeout from its last ping")
	k.wg.Wait()
}

package faultproxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/jute"
)

// connectResponse is a server's handshake reply: protocolVersion, timeOut
// (ms), sessionId, passwd, readOnly.
func connectResponse(id int64, timeout time.Duration, passwd []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(timeout.Milliseconds()))
	b = binary.BigEndian.AppendUint64(b, uint64(id))
	b = binary.BigEndian.AppendUint32(b, uint32(len(passwd)))
	b = append(b, passwd...)
	return frame(b, []byte{0})
}

// TestSessionsAreReadFromTheHandshakeReply: the server's handshake reply
// passes unchanged, and the proxy knows the session it granted.
func TestSessionsAreReadFromTheHandshakeReply(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	client, server := connect(t, p, up)
	passwd := bytes.Repeat([]byte{7}, 16)
	exchange(t, client, server, frame([]byte("a connect request")), connectResponse(0x1234, 4*time.Second, passwd))
	got := p.Sessions()
	if len(got) != 1 || got[0].ID != 0x1234 || got[0].Timeout != 4*time.Second || !bytes.Equal(got[0].Passwd, passwd) || got[0].Conn != 1 {
		t.Fatalf("got sessions %+v; want session 0x1234, 4s, its password, on conn#1", got)
	}
}

// TestKeeperResumesTheSessionAndPings: the keeper dials the upstream
// directly, asks to resume the session with its id and password, pings at
// a third of the timeout, and closes its connection on Stop.
func TestKeeperResumesTheSessionAndPings(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	s := Session{ID: 0x1234, Timeout: 300 * time.Millisecond, Passwd: bytes.Repeat([]byte{7}, 16)}
	done := make(chan *Keeper, 1)
	errs := make(chan error, 1)
	go func() {
		k, err := p.KeepSession(s)
		errs <- err
		done <- k
	}()
	server := up.accept(t)
	req := readFrame(t, server)
	if id := int64(binary.BigEndian.Uint64(req[4+16:])); id != s.ID || !bytes.Contains(req, s.Passwd) {
		t.Fatalf("keeper's connect request %x: got session %#x; want %#x with its password", req, id, s.ID)
	}
	write(t, server, connectResponse(s.ID, s.Timeout, s.Passwd))
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	k := <-done
	ping := jute.AppendFrame(nil, jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}.Append(nil))
	began := time.Now()
	expectFrame(t, server, ping)
	expectFrame(t, server, ping)
	if d := time.Since(began); d > 2*s.Timeout {
		t.Fatalf("two pings took %v; want them a third of the %v timeout apart", d, s.Timeout)
	}
	k.Stop()
	expectClosed(t, server)
	if k.Pings() < 2 || k.Why() == "" {
		t.Fatalf("keeper after Stop: %d pings, why %q; want at least 2 and a reason", k.Pings(), k.Why())
	}
}

// TestKeeperRefusesAnExpiredSession: a server that answers the resume with
// a zero timeout has expired the session already.
func TestKeeperRefusesAnExpiredSession(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	errs := make(chan error, 1)
	go func() {
		_, err := p.KeepSession(Session{ID: 0x1234, Timeout: time.Second, Passwd: []byte{1}})
		errs <- err
	}()
	server := up.accept(t)
	readFrame(t, server)
	write(t, server, connectResponse(0, 0, make([]byte, 16)))
	if err := <-errs; err == nil {
		t.Fatal("got no error; want the keeper to say the session has expired")
	}
}

// TestZKLoseRequestNeverForwardsIt: the request m selects is discarded and
// the connection closed; the requests before it passed, the server never
// saw it.
func TestZKLoseRequestNeverForwardsIt(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.LoseRequest(Match{Ops: []int32{jute.OpDelete}, Under: "/lock"})
	client, server := session(t, p, up)
	other := request(5, jute.OpDelete, pathBody(jute.OpDelete, "/elsewhere/x"))
	forward(t, client, server, other)
	lost := request(6, jute.OpDelete, pathBody(jute.OpDelete, "/lock/n-0000000001"))
	// A frame is counted as delivered once the proxy's write of it has
	// returned, which can be after the server read it: wait for the count
	// of what passed (the session's first frame and the other delete).
	upBefore := int64(len(frame([]byte("c"))) + len(other))
	waitStats(t, p, fmt.Sprintf("%d client bytes delivered", upBefore), func(s Stats) bool { return s.UpBytes == upBefore })
	write(t, client, lost)
	res := expectDone(t, d)
	if !res.Dropped || res.Xid != 6 || res.Op != jute.OpDelete || res.Path != "/lock/n-0000000001" {
		t.Fatalf("got %+v; want the delete of /lock/n-0000000001 (xid 6) dropped", res)
	}
	expectClosed(t, client)
	expectClosed(t, server)
	if s := p.Stats(); s.DroppedRequests != 1 || s.DroppedReplies != 0 {
		t.Fatalf("got stats %+v; want one request dropped and no reply", s)
	}
	// The lost request is counted as discarded, and nothing of it as
	// delivered.
	if s := p.Stats(); s.UpDiscarded != int64(len(lost)) || s.UpBytes != upBefore {
		t.Fatalf("got %d client bytes discarded and %d delivered after the loss; want the lost request's %d discarded and none delivered", s.UpDiscarded, s.UpBytes-upBefore, len(lost))
	}
}

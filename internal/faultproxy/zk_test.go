package faultproxy

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/zk19/zk19/internal/jute"
)

// frame builds one ZooKeeper frame from its payload parts.
func frame(parts ...[]byte) []byte {
	return jute.AppendFrame(nil, bytes.Join(parts, nil))
}

func request(xid, op int32, body []byte) []byte {
	return frame(jute.RequestHeader{Xid: xid, Type: op}.Append(nil), body)
}

func createBody(path string) []byte {
	return jute.CreateRequest{
		Path: path,
		Data: []byte("d"),
		ACL:  []jute.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}},
	}.Append(nil)
}

func reply(xid int32, zxid int64, errCode int32, body []byte) []byte {
	return frame(jute.ReplyHeader{Xid: xid, Zxid: zxid, Err: errCode}.Append(nil), body)
}

// garbage is a create reply body that is not a valid Jute string: a proxy
// that tried to decode the created path would fail on it.
var garbage = []byte{0x7f, 0xff, 0xff, 0xff, 0xde, 0xad}

func readFrame(t testing.TB, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(timeNow().Add(wait))
	b, err := jute.ReadFrameRaw(c, 0)
	if err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	return b
}

func expectFrame(t testing.TB, c net.Conn, want []byte) {
	t.Helper()
	if got := readFrame(t, c); !bytes.Equal(got, want) {
		t.Fatalf("frame %x, want %x", got, want)
	}
}

func expectDone(t testing.TB, d *Drop) DropResult {
	t.Helper()
	select {
	case <-d.Done():
		return d.Result()
	case <-timeAfter(wait):
		t.Fatalf("DropReply fault did not end; result so far %+v", d.Result())
		return DropResult{}
	}
}

func expectNotDone(t testing.TB, d *Drop) {
	t.Helper()
	select {
	case <-d.Done():
		t.Fatalf("DropReply fault ended early: %+v", d.Result())
	default:
	}
}

// handshake exchanges the first frame in each direction.
func handshake(t testing.TB, client, server net.Conn, req, resp []byte) {
	t.Helper()
	write(t, client, req)
	expectFrame(t, server, req)
	write(t, server, resp)
	expectFrame(t, client, resp)
}

func TestZKFirstFrameIsNeverParsed(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/lock"))
	client, server := connect(t, p, up)

	// Both handshake frames would match the fault if parsed: a create under
	// /lock with xid 7, and a successful reply with xid 7.
	fakeConnectReq := request(7, jute.OpCreate, createBody("/lock/handshake-"))
	fakeConnectResp := reply(7, 0x10, 0, garbage)
	handshake(t, client, server, fakeConnectReq, fakeConnectResp)
	expectNotDone(t, d)
	if r := d.Result(); r.Conn != 0 {
		t.Fatalf("handshake was parsed as a request: %+v", r)
	}

	// The real create with xid 7 is matched and forwarded unchanged.
	create := request(7, jute.OpCreate, createBody("/lock/member-"))
	write(t, client, create)
	expectFrame(t, server, create)
	// A watch event before the reply still reaches the client; the reply
	// (err=0, body garbage) is dropped and both sockets closed.
	event := reply(jute.XidNotification, -1, 0, []byte{0, 0, 0, 1})
	write(t, server, event)
	write(t, server, reply(7, 0x1a, 0, garbage))
	expectFrame(t, client, event)
	expectClosed(t, client)
	expectClosed(t, server)
	r := expectDone(t, d)
	want := DropResult{Conn: 1, Xid: 7, Op: jute.OpCreate, Zxid: 0x1a, Err: 0, Dropped: true, Reason: r.Reason}
	if r != want {
		t.Fatalf("result %+v, want %+v", r, want)
	}
	if s := p.Stats(); s.DroppedReplies != 1 {
		t.Fatalf("stats %+v", s)
	}

	// The fault is spent: a later connection passes normally.
	client2, server2 := connect(t, p, up)
	handshake(t, client2, server2, frame([]byte("connect")), frame([]byte("session")))
	write(t, client2, create)
	expectFrame(t, server2, create)
	ok := reply(7, 0x1b, 0, garbage)
	write(t, server2, ok)
	expectFrame(t, client2, ok)
}

func TestZKErrorReplyIsForwarded(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/lock/"))
	client, server := connect(t, p, up)
	handshake(t, client, server, frame([]byte("hello")), frame([]byte("welcome")))

	// Not matched: another parent, and a non-create under /lock.
	for _, req := range [][]byte{
		request(1, jute.OpCreate, createBody("/other/x")),
		request(2, jute.OpCreate, createBody("/lock")),
		request(3, jute.OpGetData, append(jute.CreateRequest{Path: "/lock/x"}.Append(nil)[:11], 0)),
	} {
		write(t, client, req)
		expectFrame(t, server, req)
	}
	expectNotDone(t, d)

	create := request(4, jute.OpCreate2, createBody("/lock/x-"))
	write(t, client, create)
	expectFrame(t, server, create)
	nodeExists := reply(4, 0x20, -110, garbage)
	write(t, server, nodeExists)
	expectFrame(t, client, nodeExists)
	r := expectDone(t, d)
	if r.Dropped || r.Xid != 4 || r.Op != jute.OpCreate2 || r.Err != -110 || r.Zxid != 0x20 {
		t.Fatalf("result %+v", r)
	}
	// The fault is spent: the connection stays open and the next
	// successful create reply passes.
	create5 := request(5, jute.OpCreate, createBody("/lock/y-"))
	write(t, client, create5)
	expectFrame(t, server, create5)
	ok := reply(5, 0x21, 0, garbage)
	write(t, server, ok)
	expectFrame(t, client, ok)
}

// TestZKCapturedSession replays frames captured from a real ZooKeeper 3.8.0
// session (testdata/jute) through the proxy.
func TestZKCapturedSession(t *testing.T) {
	seed := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "jute", name+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	up := newUpstream(t)
	p, logs := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/zk19-capture"))
	client, server := connect(t, p, up)
	handshake(t, client, server, seed("handshake-request"), seed("handshake-reply"))

	// create /zk19-capture itself is not under /zk19-capture.
	write(t, client, seed("create-parent-request"))
	expectFrame(t, server, seed("create-parent-request"))
	write(t, server, seed("create-parent-reply"))
	expectFrame(t, client, seed("create-parent-reply"))
	// Pings pass both ways.
	write(t, client, seed("ping-request"))
	expectFrame(t, server, seed("ping-request"))
	write(t, server, seed("ping-reply"))
	expectFrame(t, client, seed("ping-reply"))
	expectNotDone(t, d)

	// The ephemeral-sequential create (xid 2) under it is matched.
	write(t, client, seed("create-request"))
	expectFrame(t, server, seed("create-request"))
	logs.waitLine(t, "xid=2 op=create path=/zk19-capture/lock-: forwarded")
	write(t, server, seed("create-reply"))
	expectClosed(t, client)
	expectClosed(t, server)
	r := expectDone(t, d)
	if !r.Dropped || r.Xid != 2 || r.Op != jute.OpCreate || r.Err != 0 {
		t.Fatalf("result %+v", r)
	}
	logs.waitLine(t, "reply xid=2 zxid=0x3 err=0: dropped")
}

func TestZKFramesSplitAndCoalesced(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/lock"))
	client, server := connect(t, p, up)
	handshake(t, client, server, frame([]byte("c")), frame([]byte("s")))
	create := request(9, jute.OpCreate, createBody("/lock/split-"))
	// One frame in three writes, the last one coalesced with a ping.
	ping := request(jute.XidPing, jute.OpPing, nil)
	write(t, client, create[:2])
	write(t, client, create[2:10])
	write(t, client, append(append([]byte(nil), create[10:]...), ping...))
	expectFrame(t, server, create)
	expectFrame(t, server, ping)
	// The reply, split too, is recognized and dropped.
	rep := reply(9, 0x30, 0, []byte("/lock/split-0000000001"))
	write(t, server, rep[:7])
	expectNotDone(t, d)
	write(t, server, rep[7:])
	expectClosed(t, client)
	if r := expectDone(t, d); !r.Dropped || r.Xid != 9 {
		t.Fatalf("result %+v", r)
	}
}

func TestZKNonFramedTrafficFallsBackToRaw(t *testing.T) {
	up := newUpstream(t)
	p, logs := newProxy(t, up.addr(), WithZooKeeperFrames())
	client, server := connect(t, p, up)
	// A four-letter word: "ruok" read as a length is far over MaxFrame.
	write(t, client, []byte("ruok"))
	expectRead(t, server, "ruok")
	logs.waitLine(t, "not ZooKeeper framing")
	write(t, server, []byte("imok"))
	server.Close()
	expectRead(t, client, "imok")
	expectClosed(t, client)
}

func TestZKPartialFrameAtEOFIsForwarded(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	client, server := connect(t, p, up)
	write(t, client, []byte{0, 0, 0, 10, 'a', 'b'})
	client.Close()
	got := readN(t, server, 6)
	if !bytes.Equal(got, []byte{0, 0, 0, 10, 'a', 'b'}) {
		t.Fatalf("got %x", got)
	}
	expectClosed(t, server)
}

func TestZKDropEndsWhenConnectionClosesFirst(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/lock"))
	client, server := connect(t, p, up)
	handshake(t, client, server, frame([]byte("c")), frame([]byte("s")))
	create := request(3, jute.OpCreate, createBody("/lock/a"))
	write(t, client, create)
	expectFrame(t, server, create)
	// The client goes away; the server sees EOF and closes, as ZooKeeper
	// does, before the reply is sent.
	client.Close()
	expectClosed(t, server)
	expectNotDone(t, d) // half-closed: a reply could still reach the client
	server.Close()
	r := expectDone(t, d)
	if r.Dropped || r.Xid != 3 || r.Conn != 1 {
		t.Fatalf("result %+v", r)
	}
}

func TestZKDropCancel(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/lock"))
	client, server := connect(t, p, up)
	handshake(t, client, server, frame([]byte("c")), frame([]byte("s")))
	create := request(3, jute.OpCreate, createBody("/lock/a"))
	write(t, client, create)
	expectFrame(t, server, create)
	d.Cancel()
	d.Cancel()
	if r := expectDone(t, d); r.Dropped || r.Reason != "canceled" {
		t.Fatalf("result %+v", r)
	}
	ok := reply(3, 1, 0, nil)
	write(t, server, ok)
	expectFrame(t, client, ok)
}

func TestZKDropWaitsForHeldReply(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.DropReply(MatchCreateUnder("/lock"))
	client, server := connect(t, p, up)
	handshake(t, client, server, frame([]byte("c")), frame([]byte("s")))
	create := request(3, jute.OpCreate, createBody("/lock/a"))
	write(t, client, create)
	expectFrame(t, server, create)
	p.Hold(Down)
	ping := reply(jute.XidPing, 1, 0, nil)
	write(t, server, ping)
	write(t, server, reply(3, 2, 0, garbage))
	waitFor(t, "reply held", func() bool { return p.Stats().DownHeld == int64(len(ping)+4+16+len(garbage)) })
	expectNotDone(t, d)
	expectSilence(t, client)
	p.Release(Down)
	expectFrame(t, client, ping)
	expectClosed(t, client)
	if r := expectDone(t, d); !r.Dropped || r.Zxid != 2 {
		t.Fatalf("result %+v", r)
	}
}

func TestDropReplyNeedsZooKeeperFrames(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr())
	d := p.DropReply(MatchCreateUnder("/lock"))
	if r := expectDone(t, d); r.Dropped || r.Reason == "" {
		t.Fatalf("result %+v", r)
	}
}

func TestMatchCreateUnder(t *testing.T) {
	tests := []struct {
		parent string
		op     int32
		path   string
		want   bool
	}{
		{"/lock", jute.OpCreate, "/lock/a", true},
		{"/lock/", jute.OpCreate, "/lock/a", true},
		{"/lock", jute.OpCreate2, "/lock/a/b", true},
		{"/lock", jute.OpCreateContainer, "/lock/c", true},
		{"/lock", jute.OpCreateTTL, "/lock/t", true},
		{"/lock", jute.OpCreate, "/lock", false},
		{"/lock", jute.OpCreate, "/locks/a", false},
		{"/lock", jute.OpSetData, "/lock/a", false},
		{"/", jute.OpCreate, "/anything", true},
	}
	for _, tc := range tests {
		body := createBody(tc.path)
		if tc.op == jute.OpCreateTTL {
			body = append(body, 0, 0, 0, 0, 0, 0, 0x27, 0x10)
		}
		got := MatchCreateUnder(tc.parent)(jute.RequestHeader{Xid: 1, Type: tc.op}, body)
		if got != tc.want {
			t.Errorf("MatchCreateUnder(%q)(%s %s) = %v", tc.parent, jute.OpName(tc.op), tc.path, got)
		}
	}
	if MatchCreateUnder("/lock")(jute.RequestHeader{Type: jute.OpCreate}, garbage) {
		t.Error("matched an undecodable body")
	}
}

// TestZKNeverDecodesCreateReplyBody sends create replies whose bodies are
// not valid (a created path must be a Jute string): the proxy drops or
// forwards them by header alone.
func TestZKNeverDecodesCreateReplyBody(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	bodies := [][]byte{nil, garbage, {0xff, 0xff, 0xff, 0xfe}, {0, 0, 0, 9, '/'}}
	for i, body := range bodies {
		xid := int32(10 + i)
		d := p.DropReply(MatchCreateUnder("/lock"))
		client, server := connect(t, p, up)
		handshake(t, client, server, frame([]byte("c")), frame([]byte("s")))
		create := request(xid, jute.OpCreate, createBody("/lock/n-"))
		write(t, client, create)
		expectFrame(t, server, create)
		// An error reply with the same bad body is forwarded byte for byte
		// on a second request first.
		if i%2 == 1 {
			d.Cancel()
			d = p.DropReply(MatchCreateUnder("/lock"))
			create2 := request(xid+100, jute.OpCreate, createBody("/lock/m-"))
			write(t, client, create2)
			expectFrame(t, server, create2)
			bad := reply(xid+100, 5, -110, body)
			write(t, server, bad)
			expectFrame(t, client, bad)
			if r := expectDone(t, d); r.Dropped || r.Err != -110 {
				t.Fatalf("body %x: error reply result %+v", body, r)
			}
			d = p.DropReply(MatchCreateUnder("/lock"))
			create3 := request(xid+200, jute.OpCreate, createBody("/lock/o-"))
			write(t, client, create3)
			expectFrame(t, server, create3)
			xid += 200
		}
		write(t, server, reply(xid, 6, 0, body))
		expectClosed(t, client)
		if r := expectDone(t, d); !r.Dropped || r.Xid != xid {
			t.Fatalf("body %x: result %+v", body, r)
		}
	}
}

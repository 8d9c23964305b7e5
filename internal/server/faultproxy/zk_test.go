package faultproxy

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zk19/zk19/internal/server/jute"
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
	c.SetReadDeadline(time.Now().Add(within))
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
	case <-time.After(within):
		t.Fatalf("LoseReply fault did not end; result so far %+v", d.Result())
		return DropResult{}
	}
}

func expectNotDone(t testing.TB, d *Drop) {
	t.Helper()
	select {
	case <-d.Done():
		t.Fatalf("LoseReply fault ended early: %+v", d.Result())
	default:
	}
}

// forward writes f on from and expects it, unchanged, on to.
func forward(t testing.TB, from, to net.Conn, f []byte) {
	t.Helper()
	write(t, from, f)
	expectFrame(t, to, f)
}

// exchange passes req from client to server and its reply back, unchanged.
func exchange(t testing.TB, client, server net.Conn, req, resp []byte) {
	t.Helper()
	forward(t, client, server, req)
	forward(t, server, client, resp)
}

// session opens a connection through p whose first frame, never parsed,
// has passed each way.
func session(t testing.TB, p *Proxy, up *upstreamServer) (client, server net.Conn) {
	t.Helper()
	client, server = connect(t, p, up)
	exchange(t, client, server, frame([]byte("c")), frame([]byte("s")))
	return client, server
}

// armed starts an upstream and a proxy in ZooKeeper frame mode in front of
// it, loses the reply m selects, and opens a session: the fault is armed
// first, so the session's first frames would trip it if they were parsed.
func armed(t testing.TB, m Match) (p *Proxy, d *Drop, client, server net.Conn) {
	t.Helper()
	up := newUpstream(t)
	p, _ = newProxy(t, up.addr(), WithZooKeeperFrames())
	d = p.LoseReply(m)
	client, server = session(t, p, up)
	return p, d, client, server
}

// lose passes req from client to server, answers it with resp, and expects
// the reply lost: the client's connection closes instead.
func lose(t testing.TB, client, server net.Conn, req, resp []byte) {
	t.Helper()
	forward(t, client, server, req)
	write(t, server, resp)
	expectClosed(t, client)
}

// createOps are the create opcodes (not multi, whose creates are nested).
var createOps = []int32{jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL}

func createsUnder(parent string) Match { return Match{Ops: createOps, Under: parent} }

// pathBody is the body of a request with opcode op naming path, as a
// client would send it.
func pathBody(op int32, path string) []byte {
	switch {
	case jute.IsCreate(op):
		return createBody(path)
	case op == jute.OpDelete:
		return jute.DeleteRequest{Path: path, Version: -1}.Append(nil)
	}
	return jute.PathWatchRequest{Path: path, Watch: true}.Append(nil)
}

// matcherCases are the matchers the byte-level tests run: one per request
// the root claims lose a reply to, with a request each selects.
var matcherCases = []struct {
	name  string
	match Match
	op    int32
	path  string
}{
	{"create under", createsUnder("/lock"), jute.OpCreate, "/lock/member-"},
	{"delete under", Match{Ops: []int32{jute.OpDelete}, Under: "/lock"}, jute.OpDelete, "/lock/member-0000000001"},
	{"getChildren2 of", Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: "/lock"}, jute.OpGetChildren2, "/lock"},
	{"exists of", Match{Ops: []int32{jute.OpExists}, Path: "/lock/pred"}, jute.OpExists, "/lock/pred"},
	{"getData under", Match{Ops: []int32{jute.OpGetData}, Under: "/lock"}, jute.OpGetData, "/lock/x"},
	{"any getChildren", Match{Ops: []int32{jute.OpGetChildren}}, jute.OpGetChildren, "/anything"},
	{"any setData, whose body is never read", Match{Ops: []int32{jute.OpSetData}}, jute.OpSetData, ""},
}

func TestZKFirstFrameIsNeverParsed(t *testing.T) {
	for _, tc := range matcherCases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t)
			p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
			d := p.LoseReply(tc.match)
			client, server := connect(t, p, up)

			// Both handshake frames would match the fault if parsed: the
			// selected request with xid 7, and a successful reply with xid 7.
			fakeConnectReq := request(7, tc.op, pathBody(tc.op, tc.path))
			fakeConnectResp := reply(7, 0x10, 0, garbage)
			exchange(t, client, server, fakeConnectReq, fakeConnectResp)
			expectNotDone(t, d)
			if r := d.Result(); r.Conn != 0 {
				t.Fatalf("got the handshake parsed as a request (%+v); want it forwarded unread", r)
			}

			// The real request with xid 7 is matched and forwarded unchanged.
			req := request(7, tc.op, pathBody(tc.op, tc.path))
			forward(t, client, server, req)
			// A watch event before the reply still reaches the client; the
			// reply (err=0, body garbage) is dropped and both sockets closed.
			event := reply(jute.XidNotification, -1, 0, []byte{0, 0, 0, 1})
			write(t, server, event)
			write(t, server, reply(7, 0x1a, 0, garbage))
			expectFrame(t, client, event)
			expectClosed(t, client)
			expectClosed(t, server)
			r := expectDone(t, d)
			want := DropResult{Conn: 1, Xid: 7, Op: tc.op, Path: tc.path, Zxid: 0x1a, Err: 0, Dropped: true, Reason: r.Reason}
			if r != want {
				t.Fatalf("got result %+v; want %+v", r, want)
			}
			if s := p.Stats(); s.DroppedReplies != 1 {
				t.Fatalf("got %d dropped replies (%+v); want 1", s.DroppedReplies, s)
			}

			// The fault is spent: a later connection passes normally.
			client2, server2 := session(t, p, up)
			exchange(t, client2, server2, req, reply(7, 0x1b, 0, garbage))
		})
	}
}

// TestZKLoseReplyMatchesOpAndPath sends, on one connection, requests that
// miss the matcher by opcode or by path, each answered with success, before
// the one it selects: only that reply is lost.
func TestZKLoseReplyMatchesOpAndPath(t *testing.T) {
	tests := []struct {
		name   string
		match  Match
		misses [][2]any // {op, path}: each must pass
		op     int32
		path   string
	}{
		{"create under /lock", createsUnder("/lock"),
			[][2]any{{jute.OpDelete, "/lock/a"}, {jute.OpCreate, "/lock"}, {jute.OpCreate, "/locks/a"}},
			jute.OpCreate2, "/lock/x-"},
		{"delete under /lock", Match{Ops: []int32{jute.OpDelete}, Under: "/lock"},
			[][2]any{{jute.OpGetChildren2, "/lock"}, {jute.OpExists, "/lock/a"}, {jute.OpGetData, "/lock/a"},
				{jute.OpCreate, "/lock/a"}, {jute.OpDelete, "/other/a"}, {jute.OpDelete, "/lock"}, {jute.OpDelete, "/locks/a"}},
			jute.OpDelete, "/lock/a"},
		{"getChildren of /lock", Match{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: "/lock"},
			[][2]any{{jute.OpGetData, "/lock"}, {jute.OpExists, "/lock"}, {jute.OpDelete, "/lock"},
				{jute.OpGetChildren2, "/lock/sub"}, {jute.OpGetChildren, "/"}},
			jute.OpGetChildren2, "/lock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, d, client, server := armed(t, tc.match)
			for i, miss := range tc.misses {
				op, path := miss[0].(int32), miss[1].(string)
				xid := int32(i + 1)
				forward(t, client, server, request(xid, op, pathBody(op, path)))
				ok := reply(xid, int64(xid), 0, garbage)
				write(t, server, ok)
				client.SetReadDeadline(time.Now().Add(within))
				if got, err := jute.ReadFrameRaw(client, 0); err != nil || !bytes.Equal(got, ok) {
					t.Fatalf("got %x, %v for the reply to %s %s (fault %+v); want the reply forwarded: %v does not select it",
						got, err, jute.OpName(op), path, d.Result(), tc.match)
				}
			}
			xid := int32(len(tc.misses) + 1)
			lose(t, client, server, request(xid, tc.op, pathBody(tc.op, tc.path)), reply(xid, 0x40, 0, garbage))
			r := expectDone(t, d)
			if !r.Dropped || r.Xid != xid || r.Op != tc.op || r.Path != tc.path || r.Zxid != 0x40 {
				t.Fatalf("got result %+v; want xid=%d op=%s path=%s zxid=0x40 dropped", r, xid, jute.OpName(tc.op), tc.path)
			}
		})
	}
}

// TestZKLoseReplyByErrCode loses a delete's NoNode reply, not its success.
func TestZKLoseReplyByErrCode(t *testing.T) {
	const errNoNode = -101
	up := newUpstream(t)
	p, logs := newProxy(t, up.addr(), WithZooKeeperFrames())
	m := Match{Ops: []int32{jute.OpDelete}, Under: "/lock", Err: errNoNode}
	client, server := session(t, p, up)

	// A successful reply is forwarded and spends the fault.
	d := p.LoseReply(m)
	exchange(t, client, server, request(1, jute.OpDelete, pathBody(jute.OpDelete, "/lock/a")), reply(1, 2, 0, nil))
	if r := expectDone(t, d); r.Dropped || r.Err != 0 {
		t.Fatalf("got result %+v; want the success forwarded, not dropped", r)
	}
	logs.waitLine(t, "DropReply spent without dropping (it loses err=-101)")

	// A NoNode reply is lost.
	d = p.LoseReply(m)
	lose(t, client, server, request(2, jute.OpDelete, pathBody(jute.OpDelete, "/lock/a")), reply(2, 3, errNoNode, nil))
	if r := expectDone(t, d); !r.Dropped || r.Err != errNoNode || r.Xid != 2 {
		t.Fatalf("got result %+v; want xid=2 err=%d dropped", r, errNoNode)
	}
}

func TestLoseReplyRefusesAMatchThatCannotMatch(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
	for _, tc := range []struct {
		m    Match
		want string
	}{
		{Match{Under: "/lock"}, "invalid match: no opcode"},
		{Match{Ops: []int32{jute.OpDelete}, Path: "/a", Under: "/b"}, "invalid match: both Path and Under are set"},
		{Match{Ops: []int32{jute.OpDelete, jute.OpSetData}, Under: "/b"}, "invalid match: a path is required but setData has no path decoder"},
	} {
		if r := expectDone(t, p.LoseReply(tc.m)); r.Dropped || r.Reason != tc.want {
			t.Errorf("LoseReply(%v): got %+v; want it ended at once: %q", tc.m, r, tc.want)
		}
	}
}

func TestMatchString(t *testing.T) {
	for m, want := range map[*Match]string{
		{Ops: []int32{jute.OpDelete}, Under: "/lock"}:                       "delete under /lock, reply err=0",
		{Ops: []int32{jute.OpGetChildren, jute.OpGetChildren2}, Path: "/l"}: "getChildren|getChildren2 of /l, reply err=0",
		{Ops: []int32{jute.OpSync}, Err: -4}:                                "sync, reply err=-4",
	} {
		if got := m.String(); got != want {
			t.Errorf("got %q; want %q", got, want)
		}
	}
}

func TestZKErrorReplyIsForwarded(t *testing.T) {
	_, d, client, server := armed(t, createsUnder("/lock/"))

	// Not matched: another parent, and a non-create under /lock.
	for _, req := range [][]byte{
		request(1, jute.OpCreate, createBody("/other/x")),
		request(2, jute.OpCreate, createBody("/lock")),
		request(3, jute.OpGetData, append(jute.CreateRequest{Path: "/lock/x"}.Append(nil)[:11], 0)),
	} {
		forward(t, client, server, req)
	}
	expectNotDone(t, d)

	exchange(t, client, server, request(4, jute.OpCreate2, createBody("/lock/x-")), reply(4, 0x20, -110, garbage))
	r := expectDone(t, d)
	if r.Dropped || r.Xid != 4 || r.Op != jute.OpCreate2 || r.Err != -110 || r.Zxid != 0x20 {
		t.Fatalf("result %+v", r)
	}
	// The fault is spent: the connection stays open and the next
	// successful create reply passes.
	exchange(t, client, server, request(5, jute.OpCreate, createBody("/lock/y-")), reply(5, 0x21, 0, garbage))
}

// TestZKCapturedSession replays frames captured from a real ZooKeeper 3.8.0
// session (testdata/jute) through the proxy.
func TestZKCapturedSession(t *testing.T) {
	seed := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "jute", name+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	up := newUpstream(t)
	p, logs := newProxy(t, up.addr(), WithZooKeeperFrames())
	d := p.LoseReply(createsUnder("/zk19-capture"))
	client, server := connect(t, p, up)
	exchange(t, client, server, seed("handshake-request"), seed("handshake-reply"))

	// create /zk19-capture itself is not under /zk19-capture.
	exchange(t, client, server, seed("create-parent-request"), seed("create-parent-reply"))
	// Pings pass both ways.
	exchange(t, client, server, seed("ping-request"), seed("ping-reply"))
	expectNotDone(t, d)

	// The ephemeral-sequential create (xid 2) under it is matched.
	forward(t, client, server, seed("create-request"))
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
	_, d, client, server := armed(t, createsUnder("/lock"))
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
	passes(t, client, server, "ruok")
	logs.waitLine(t, "not ZooKeeper framing")
	write(t, server, []byte("imok"))
	server.Close()
	expectRead(t, client, "imok")
	expectClosed(t, client)
}

func TestZKPartialFrameAtEOFIsForwarded(t *testing.T) {
	_, _, client, server := linked(t, WithZooKeeperFrames())
	write(t, client, []byte{0, 0, 0, 10, 'a', 'b'})
	client.Close()
	got := readN(t, server, 6)
	if !bytes.Equal(got, []byte{0, 0, 0, 10, 'a', 'b'}) {
		t.Fatalf("got %x", got)
	}
	expectClosed(t, server)
}

func TestZKDropEndsWhenConnectionClosesFirst(t *testing.T) {
	_, d, client, server := armed(t, createsUnder("/lock"))
	forward(t, client, server, request(3, jute.OpCreate, createBody("/lock/a")))
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
	_, d, client, server := armed(t, createsUnder("/lock"))
	forward(t, client, server, request(3, jute.OpCreate, createBody("/lock/a")))
	d.Cancel()
	d.Cancel()
	if r := expectDone(t, d); r.Dropped || r.Reason != "canceled" {
		t.Fatalf("result %+v", r)
	}
	forward(t, server, client, reply(3, 1, 0, nil))
}

func TestZKDropWaitsForHeldReply(t *testing.T) {
	p, d, client, server := armed(t, createsUnder("/lock"))
	forward(t, client, server, request(3, jute.OpCreate, createBody("/lock/a")))
	p.Hold(Down)
	ping := reply(jute.XidPing, 1, 0, nil)
	write(t, server, ping)
	write(t, server, reply(3, 2, 0, garbage))
	waitStats(t, p, "reply held", func(s Stats) bool { return s.DownHeld == int64(len(ping)+4+16+len(garbage)) })
	expectNotDone(t, d)
	expectSilence(t, client)
	p.Release(Down)
	expectFrame(t, client, ping)
	expectClosed(t, client)
	if r := expectDone(t, d); !r.Dropped || r.Zxid != 2 {
		t.Fatalf("result %+v", r)
	}
}

func TestLoseReplyNeedsZooKeeperFrames(t *testing.T) {
	up := newUpstream(t)
	p, _ := newProxy(t, up.addr())
	d := p.LoseReply(createsUnder("/lock"))
	if r := expectDone(t, d); r.Dropped || r.Reason == "" {
		t.Fatalf("result %+v", r)
	}
}

// TestMatchCreatesUnder: a create of any create opcode is selected by a
// parent it is strictly under.
func TestMatchCreatesUnder(t *testing.T) {
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
		_, got := createsUnder(tc.parent).request(jute.RequestHeader{Xid: 1, Type: tc.op}, body)
		if got != tc.want {
			t.Errorf("%v selects %s %s: got %v; want %v", createsUnder(tc.parent), jute.OpName(tc.op), tc.path, got, tc.want)
		}
	}
	if _, ok := createsUnder("/lock").request(jute.RequestHeader{Type: jute.OpCreate}, garbage); ok {
		t.Error("matched an undecodable body")
	}
}

// TestZKNeverDecodesCreateReplyBody sends replies whose bodies are not
// valid (a created path must be a Jute string; a getChildren2 reply is a
// vector of strings and a Stat): for creates and for every other request a
// matcher selects, the proxy drops or forwards a reply by its header alone.
func TestZKNeverDecodesCreateReplyBody(t *testing.T) {
	for _, tc := range matcherCases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t)
			p, _ := newProxy(t, up.addr(), WithZooKeeperFrames())
			bodies := [][]byte{nil, garbage, {0xff, 0xff, 0xff, 0xfe}, {0, 0, 0, 9, '/'}}
			for i, body := range bodies {
				lostReplyWithBody(t, p, up, tc.match, tc.op, tc.path, int32(10+i), body, i%2 == 1)
			}
		})
	}
}

// lostReplyWithBody runs one request selected by m on a new connection and
// loses its err=0 reply, which carries body. If errorFirst, an error reply
// with the same body to an earlier selected request is forwarded byte for
// byte first.
func lostReplyWithBody(t *testing.T, p *Proxy, up *upstreamServer, m Match, op int32, path string, xid int32, body []byte, errorFirst bool) {
	t.Helper()
	client, server := session(t, p, up)
	if errorFirst {
		d := p.LoseReply(m)
		exchange(t, client, server, request(xid+100, op, pathBody(op, path)), reply(xid+100, 5, -110, body))
		if r := expectDone(t, d); r.Dropped || r.Err != -110 {
			t.Fatalf("body %x: got error reply result %+v; want forwarded with err=-110", body, r)
		}
	}
	d := p.LoseReply(m)
	lose(t, client, server, request(xid, op, pathBody(op, path)), reply(xid, 6, 0, body))
	if r := expectDone(t, d); !r.Dropped || r.Xid != xid {
		t.Fatalf("body %x: got result %+v; want xid=%d dropped", body, r, xid)
	}
}

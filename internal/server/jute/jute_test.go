package jute

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

func TestSeedFramesReadBack(t *testing.T) {
	seeds := loadSeeds(t)
	for _, name := range sortedNames(seeds) {
		raw := seeds[name]
		r := bytes.NewReader(raw)
		got, err := ReadFrameRaw(r, 0)
		if err != nil {
			t.Fatalf("%s: ReadFrameRaw: %v", name, err)
		}
		if !bytes.Equal(got, raw) || r.Len() != 0 {
			t.Fatalf("%s: ReadFrameRaw returned %d bytes, left %d, want the whole %d-byte file", name, len(got), r.Len(), len(raw))
		}
		payload, err := ReadFrame(bytes.NewReader(raw), 0)
		if err != nil {
			t.Fatalf("%s: ReadFrame: %v", name, err)
		}
		if !bytes.Equal(AppendFrame(nil, payload), raw) {
			t.Fatalf("%s: AppendFrame(ReadFrame) differs from the captured frame", name)
		}
	}
}

func TestSeedRequests(t *testing.T) {
	seeds := loadSeeds(t)
	want := map[string]RequestHeader{
		"create-parent-request":     {Xid: 1, Type: OpCreate},
		"create-request":            {Xid: 2, Type: OpCreate},
		"getdata-request":           {Xid: 3, Type: OpGetData},
		"getchildren-request":       {Xid: 4, Type: OpGetChildren2},
		"ping-request":              {Xid: XidPing, Type: OpPing},
		"create-nodeexists-request": {Xid: 5, Type: OpCreate},
		"exists-watch-request":      {Xid: 6, Type: OpExists},
		"create-watched-request":    {Xid: 7, Type: OpCreate},
		"closesession-request":      {Xid: 8, Type: OpCloseSession},
	}
	for name, wh := range want {
		raw, ok := seeds[name]
		if !ok {
			t.Fatalf("seed %s missing", name)
		}
		h, body, err := DecodeRequestHeader(raw[4:])
		if err != nil || h != wh {
			t.Fatalf("%s: header %+v, %v; want %+v", name, h, err, wh)
		}
		if !bytes.Equal(append(h.Append(nil), body...), raw[4:]) {
			t.Fatalf("%s: header re-encoding differs", name)
		}
		if !IsCreate(h.Type) {
			continue
		}
		cr, err := DecodeCreateRequest(body)
		if err != nil {
			t.Fatalf("%s: DecodeCreateRequest: %v", name, err)
		}
		if !bytes.Equal(cr.Append(nil), body) {
			t.Fatalf("%s: create body re-encoding differs", name)
		}
	}
	cr, err := DecodeCreateRequest(seeds["create-request"][4+8:])
	if err != nil {
		t.Fatal(err)
	}
	wantCreate := CreateRequest{
		Path:  "/zk19-capture/lock-",
		Data:  []byte("owner-1"),
		ACL:   []ACL{{Perms: 31, Scheme: "world", ID: "anyone"}},
		Flags: 3,
	}
	if !reflect.DeepEqual(cr, wantCreate) {
		t.Fatalf("create-request decoded to %+v, want %+v", cr, wantCreate)
	}
	parent, err := DecodeCreateRequest(seeds["create-parent-request"][4+8:])
	if err != nil {
		t.Fatal(err)
	}
	if parent.Path != "/zk19-capture" || parent.Data != nil || parent.Flags != 0 {
		t.Fatalf("create-parent-request decoded to %+v", parent)
	}
}

func TestSeedReplies(t *testing.T) {
	seeds := loadSeeds(t)
	want := map[string]struct{ xid, err int32 }{
		"create-parent-reply":     {1, 0},
		"create-reply":            {2, 0},
		"getdata-reply":           {3, 0},
		"getchildren-reply":       {4, 0},
		"ping-reply":              {XidPing, 0},
		"create-nodeexists-reply": {5, -110},
		"exists-watch-reply":      {6, -101},
		"notification":            {XidNotification, 0},
		"create-watched-reply":    {7, 0},
		"closesession-reply":      {8, 0},
	}
	for name, w := range want {
		raw, ok := seeds[name]
		if !ok {
			t.Fatalf("seed %s missing", name)
		}
		h, body, err := DecodeReplyHeader(raw[4:])
		if err != nil || h.Xid != w.xid || h.Err != w.err {
			t.Fatalf("%s: header %+v, %v; want xid %d err %d", name, h, err, w.xid, w.err)
		}
		if !bytes.Equal(append(h.Append(nil), body...), raw[4:]) {
			t.Fatalf("%s: header re-encoding differs", name)
		}
	}
}

// errReader fails every read with errBoom.
type errReader struct{}

var errBoom = errors.New("boom")

func (errReader) Read([]byte) (int, error) { return 0, errBoom }

func TestReadFrameErrors(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
		max  int
		want error
	}{
		{"empty input is clean EOF", bytes.NewReader(nil), 0, io.EOF},
		{"partial length prefix", bytes.NewReader([]byte{0, 0}), 0, ErrTruncated},
		{"negative length", bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xfe, 1, 2}), 0, ErrNegativeLength},
		{"minus one length", bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff}), 0, ErrNegativeLength},
		{"over explicit max", bytes.NewReader([]byte{0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}), 8, ErrFrameTooLarge},
		{"over default max", bytes.NewReader(AppendFrame(nil, make([]byte, MaxFrame+1))), 0, ErrFrameTooLarge},
		{"huge claimed length", bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff}), 0, ErrFrameTooLarge},
		{"payload truncated", bytes.NewReader([]byte{0, 0, 0, 10, 1, 2, 3}), 0, ErrTruncated},
		{"payload missing", bytes.NewReader([]byte{0, 0, 0, 1}), 0, ErrTruncated},
		{"max-size claim, short stream", bytes.NewReader([]byte{0, 0x10, 0, 0, 1}), 0, ErrTruncated},
		{"reader error", errReader{}, 0, errBoom},
		{"reader error after prefix", io.MultiReader(bytes.NewReader([]byte{0, 0, 0, 4}), errReader{}), 0, errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(tc.r, tc.max)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ReadFrame error %v, want %v", err, tc.want)
			}
			if tc.want == io.EOF && err != io.EOF {
				t.Fatalf("clean EOF must be returned unwrapped, got %v", err)
			}
		})
	}
}

func TestReadFrameBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, readChunk - 1, readChunk, readChunk + 1, 3*readChunk + 7, MaxFrame} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		frame := AppendFrame(nil, payload)
		// Two frames back to back: the reader must stop exactly at the first.
		stream := append(append([]byte(nil), frame...), frame...)
		r := iotest.HalfReader(bytes.NewReader(stream))
		got, err := ReadFrame(r, 0)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("n=%d: ReadFrame = %d bytes, %v", n, len(got), err)
		}
		raw, err := ReadFrameRaw(r, n)
		if err != nil || !bytes.Equal(raw, frame) {
			t.Fatalf("n=%d: ReadFrameRaw = %d bytes, %v", n, len(raw), err)
		}
		if _, err := ReadFrame(r, 0); err != io.EOF {
			t.Fatalf("n=%d: third read error %v, want io.EOF", n, err)
		}
	}
}

func TestAppendFrameAppends(t *testing.T) {
	got := AppendFrame([]byte("xy"), []byte("abc"))
	want := []byte{'x', 'y', 0, 0, 0, 3, 'a', 'b', 'c'}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendFrame = %x, want %x", got, want)
	}
}

func TestDecodeHeadersTruncated(t *testing.T) {
	full := ReplyHeader{Xid: 1, Zxid: 2, Err: 3}.Append(nil)
	for n := 0; n < 16; n++ {
		if _, _, err := DecodeReplyHeader(full[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("DecodeReplyHeader(%d bytes) error %v, want ErrTruncated", n, err)
		}
		if n < 8 {
			if _, _, err := DecodeRequestHeader(full[:n]); !errors.Is(err, ErrTruncated) {
				t.Fatalf("DecodeRequestHeader(%d bytes) error %v, want ErrTruncated", n, err)
			}
		}
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	rq := RequestHeader{Xid: -8, Type: OpSetWatches}
	b := append(rq.Append([]byte{}), 9, 9)
	gotRq, body, err := DecodeRequestHeader(b)
	if err != nil || gotRq != rq || !bytes.Equal(body, []byte{9, 9}) {
		t.Fatalf("request header round trip: %+v %x %v", gotRq, body, err)
	}
	rp := ReplyHeader{Xid: 42, Zxid: 0x100000001a, Err: -110}
	b = rp.Append(nil)
	gotRp, body, err := DecodeReplyHeader(b)
	if err != nil || gotRp != rp || len(body) != 0 {
		t.Fatalf("reply header round trip: %+v %x %v", gotRp, body, err)
	}
}

func TestCreateRequestRoundTrip(t *testing.T) {
	tests := []CreateRequest{
		{Path: "/a", Data: nil, ACL: nil, Flags: 0},
		{Path: "/a", Data: []byte{}, ACL: []ACL{}, Flags: 1},
		{Path: "/lock/x-", Data: []byte("d"), ACL: []ACL{{31, "world", "anyone"}, {1, "digest", "u:h"}}, Flags: 3},
		{Path: "", Data: []byte{0}, ACL: []ACL{{0, "", ""}}, Flags: -1},
	}
	for _, cr := range tests {
		enc := cr.Append(nil)
		got, err := DecodeCreateRequest(enc)
		if err != nil {
			t.Fatalf("%+v: %v", cr, err)
		}
		if !reflect.DeepEqual(got, cr) {
			t.Fatalf("round trip %+v -> %+v", cr, got)
		}
		// createTTL appends a long TTL; the decoder must tolerate it.
		withTTL := appendInt64(append([]byte(nil), enc...), 60000)
		if got, err := DecodeCreateRequest(withTTL); err != nil || !reflect.DeepEqual(got, cr) {
			t.Fatalf("with trailing ttl: %+v, %v", got, err)
		}
	}
}

func TestDecodeCreateRequestDoesNotAlias(t *testing.T) {
	enc := CreateRequest{Path: "/p", Data: []byte("data")}.Append(nil)
	got, err := DecodeCreateRequest(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 0xee
	}
	if string(got.Data) != "data" || got.Path != "/p" {
		t.Fatalf("decoded value changed with its input: %+v", got)
	}
}

func TestDecodeCreateRequestErrors(t *testing.T) {
	i32 := func(v int32) []byte { return appendInt32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	str := func(s string) []byte { return appendString(nil, s) }
	acl := cat(i32(31), str("world"), str("anyone"))
	tests := []struct {
		name string
		body []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"path length cut", []byte{0, 0}, ErrTruncated},
		{"path negative", cat(i32(-2), str("x")), ErrNegativeLength},
		{"path longer than input", cat(i32(100), []byte("/abc")), ErrFrameTooLarge},
		{"path max int32", cat(i32(0x7fffffff)), ErrFrameTooLarge},
		{"data missing", str("/a"), ErrTruncated},
		{"data negative", cat(str("/a"), i32(-7)), ErrNegativeLength},
		{"data longer than input", cat(str("/a"), i32(5), []byte("abc")), ErrFrameTooLarge},
		{"acl count missing", cat(str("/a"), i32(-1)), ErrTruncated},
		{"acl count beyond input", cat(str("/a"), i32(-1), i32(1000), acl, i32(0)), ErrFrameTooLarge},
		{"acl count max int32", cat(str("/a"), i32(-1), i32(0x7fffffff), i32(0)), ErrFrameTooLarge},
		{"acl scheme longer than input", cat(str("/a"), i32(-1), i32(1), i32(31), i32(20), []byte("wogo")), ErrFrameTooLarge},
		{"acl id longer than input", cat(str("/a"), i32(-1), i32(1), i32(31), str(""), i32(3)), ErrFrameTooLarge},
		{"second acl id length cut", cat(str("/a"), i32(-1), i32(2), acl, i32(31), str("w"), []byte{0, 0, 0}), ErrTruncated},
		{"acl id negative", cat(str("/a"), i32(-1), i32(1), i32(31), str("world"), i32(-9), i32(0)), ErrNegativeLength},
		{"flags missing", cat(str("/a"), i32(-1), i32(1), acl), ErrTruncated},
		{"flags cut", cat(str("/a"), i32(-1), i32(-1), []byte{0, 0, 0}), ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCreateRequest(tc.body)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	// A vector count below -1 is an empty vector, as in the official
	// BinaryInputArchive.startVector (the differential fuzz target found
	// the Go codec refusing it).
	got, err := DecodeCreateRequest(cat(str("/a"), i32(-1), i32(-3), i32(5)))
	if err != nil || got.ACL == nil || len(got.ACL) != 0 || got.Flags != 5 {
		t.Fatalf("acl count -3: %+v, %v; want an empty non-nil ACL and flags 5", got, err)
	}
	// A nil path (-1) is tolerated and decodes to "".
	got, err = DecodeCreateRequest(cat(i32(-1), i32(-1), i32(-1), i32(2)))
	if err != nil || got.Path != "" || got.Data != nil || got.ACL != nil || got.Flags != 2 {
		t.Fatalf("nil path/data/acl: %+v, %v", got, err)
	}
}

func TestOpName(t *testing.T) {
	tests := map[int32]string{
		OpCreate: "create", OpCreate2: "create2", OpPing: "ping", OpCloseSession: "closeSession",
		OpCreateSession: "createSession", OpError: "error", OpWhoAmI: "whoAmI", 10: "op(10)", -99: "op(-99)",
	}
	for op, want := range tests {
		if got := OpName(op); got != want {
			t.Errorf("OpName(%d) = %q, want %q", op, got, want)
		}
	}
}

func TestIsCreate(t *testing.T) {
	for op := int32(-20); op < 120; op++ {
		want := op == OpCreate || op == OpCreate2 || op == OpCreateContainer || op == OpCreateTTL
		if IsCreate(op) != want {
			t.Errorf("IsCreate(%s) = %v", OpName(op), !want)
		}
	}
}

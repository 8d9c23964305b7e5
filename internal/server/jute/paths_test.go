package jute

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestSeedRequestPaths(t *testing.T) {
	seeds := loadSeeds(t)
	want := map[string]string{
		"create-parent-request": "/zk19-capture",
		"create-request":        "/zk19-capture/lock-",
		"getdata-request":       "/zk19-capture/lock-0000000000",
		"getchildren-request":   "/zk19-capture",
		"exists-watch-request":  "/zk19-capture/watched",
	}
	for name, path := range want {
		h, body, err := DecodeRequestHeader(seeds[name][4:])
		if err != nil {
			t.Fatalf("%s: header: %v", name, err)
		}
		got, err := RequestPath(h.Type, body)
		if err != nil || got != path {
			t.Fatalf("%s: RequestPath(%s) = %q, %v; want %q", name, OpName(h.Type), got, err, path)
		}
	}
	// The captured getData and getChildren2 leave no watch; exists does.
	for name, watch := range map[string]bool{"getdata-request": false, "getchildren-request": false, "exists-watch-request": true} {
		r, err := DecodePathWatchRequest(seeds[name][4+8:])
		if err != nil || r.Watch != watch {
			t.Fatalf("%s: %+v, %v; want watch=%v", name, r, err, watch)
		}
		if !bytes.Equal(r.Append(nil), seeds[name][4+8:]) {
			t.Fatalf("%s: re-encoding differs", name)
		}
	}
}

func TestRequestPathUnsupportedOps(t *testing.T) {
	body := DeleteRequest{Path: "/a", Version: -1}.Append(nil)
	for _, op := range []int32{OpSetData, OpSync, OpMulti, OpPing, OpCheck, OpCloseSession, 999} {
		if p, err := RequestPath(op, body); !errors.Is(err, errors.ErrUnsupported) || p != "" {
			t.Errorf("RequestPath(%s) = %q, %v; want errors.ErrUnsupported", OpName(op), p, err)
		}
	}
}

func TestDeleteRequestRoundTrip(t *testing.T) {
	for _, r := range []DeleteRequest{{"/lock/x-0000000001", -1}, {"", 0}, {"/a", 7}} {
		got, err := DecodeDeleteRequest(r.Append(nil))
		if err != nil || got != r {
			t.Fatalf("round trip %+v -> %+v, %v", r, got, err)
		}
		if p, err := RequestPath(OpDelete, r.Append(nil)); err != nil || p != r.Path {
			t.Fatalf("RequestPath(delete %+v) = %q, %v", r, p, err)
		}
	}
}

func TestPathRequestErrors(t *testing.T) {
	i32 := func(v int32) []byte { return appendInt32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		op   int32
		body []byte
		want error
	}{
		{"delete empty", OpDelete, nil, ErrTruncated},
		{"delete path negative", OpDelete, cat(i32(-5), i32(0)), ErrNegativeLength},
		{"delete path longer than input", OpDelete, cat(i32(9), []byte("/a")), ErrFrameTooLarge},
		{"delete version missing", OpDelete, appendString(nil, "/a"), ErrTruncated},
		{"delete version cut", OpDelete, cat(appendString(nil, "/a"), []byte{0xff, 0xff}), ErrTruncated},
		{"exists watch missing", OpExists, appendString(nil, "/a"), ErrTruncated},
		{"getData path max int32", OpGetData, cat(i32(0x7fffffff), []byte{1}), ErrFrameTooLarge},
		{"getChildren empty", OpGetChildren, nil, ErrTruncated},
		{"getChildren2 path negative", OpGetChildren2, cat(i32(-2), []byte{1}), ErrNegativeLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if p, err := RequestPath(tc.op, tc.body); !errors.Is(err, tc.want) || p != "" {
				t.Fatalf("RequestPath = %q, %v; want error %v", p, err, tc.want)
			}
		})
	}
	// A nil path (-1) decodes to "", like CreateRequest's; any non-zero
	// watch byte is true, as Java's readBoolean.
	r, err := DecodePathWatchRequest(cat(i32(-1), []byte{7}))
	if err != nil || r != (PathWatchRequest{Path: "", Watch: true}) {
		t.Fatalf("nil path, watch byte 7: %+v, %v", r, err)
	}
}

func TestDecodePathRequestsDoNotAlias(t *testing.T) {
	del := DeleteRequest{Path: "/p", Version: 1}.Append(nil)
	pw := PathWatchRequest{Path: "/q", Watch: true}.Append(nil)
	d, err1 := DecodeDeleteRequest(del)
	w, err2 := DecodePathWatchRequest(pw)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for _, b := range [][]byte{del, pw} {
		for i := range b {
			b[i] = 'z'
		}
	}
	if d.Path != "/p" || w.Path != "/q" {
		t.Fatalf("decoded values changed with their input: %+v %+v", d, w)
	}
}

// pathOps are the opcodes RequestPath decodes.
var pathOps = []int32{OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpExists, OpGetData, OpGetChildren, OpGetChildren2}

func FuzzRequestPath(f *testing.F) {
	addSeeds(f, func(name string, raw []byte) []byte {
		if isRequestSeed(name) {
			return raw[4+8:]
		}
		return nil
	})
	f.Add(DeleteRequest{Path: "/zk19-capture/lock-0000000000", Version: -1}.Append(nil))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, op := range pathOps {
			p, err := RequestPath(op, body)
			if err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNegativeLength) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("%s: unexpected error kind: %v", OpName(op), err)
				}
				continue
			}
			if len(p)+4 > len(body) {
				t.Fatalf("%s: path of %d bytes from a %d-byte body", OpName(op), len(p), len(body))
			}
		}
		if r, err := DecodeDeleteRequest(body); err == nil {
			if again, err := DecodeDeleteRequest(r.Append(nil)); err != nil || again != r {
				t.Fatalf("delete round trip %+v -> %+v, %v", r, again, err)
			}
		}
		if r, err := DecodePathWatchRequest(body); err == nil {
			if again, err := DecodePathWatchRequest(r.Append(nil)); err != nil || !reflect.DeepEqual(again, r) {
				t.Fatalf("path-watch round trip %+v -> %+v, %v", r, again, err)
			}
		}
	})
}

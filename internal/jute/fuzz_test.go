package jute

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// addSeeds adds every captured frame to f, transformed by fn (nil skips).
func addSeeds(f *testing.F, fn func(name string, raw []byte) []byte) {
	seeds := loadSeeds(f)
	for _, name := range sortedNames(seeds) {
		if b := fn(name, seeds[name]); b != nil {
			f.Add(b)
		}
	}
}

func FuzzReadFrame(f *testing.F) {
	addSeeds(f, func(_ string, raw []byte) []byte { return raw })
	// Two captured frames back to back, and a truncated one.
	seeds := loadSeeds(f)
	f.Add(append(append([]byte(nil), seeds["ping-request"]...), seeds["create-request"]...))
	f.Add(seeds["create-reply"][:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, limit := range []int{0, 16} {
			payload, err := ReadFrame(bytes.NewReader(data), limit)
			raw, rawErr := ReadFrameRaw(bytes.NewReader(data), limit)
			if (err == nil) != (rawErr == nil) {
				t.Fatalf("ReadFrame err %v, ReadFrameRaw err %v", err, rawErr)
			}
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNegativeLength) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if err == io.EOF && len(data) != 0 {
					t.Fatalf("io.EOF for %d bytes of input", len(data))
				}
				continue
			}
			if limit <= 0 {
				limit = MaxFrame
			}
			if len(payload) > limit || len(payload)+4 > len(data) {
				t.Fatalf("payload of %d bytes from %d bytes of input (limit %d)", len(payload), len(data), limit)
			}
			if !bytes.Equal(raw, data[:4+len(payload)]) {
				t.Fatalf("ReadFrameRaw is not a prefix of the input")
			}
			if !bytes.Equal(AppendFrame(nil, payload), raw) {
				t.Fatalf("AppendFrame(payload) != raw frame")
			}
		}
	})
}

func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f, func(name string, raw []byte) []byte {
		if isRequestSeed(name) || name == "handshake-request" {
			return raw[4:]
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, body, err := DecodeRequestHeader(payload)
		if err != nil {
			if !errors.Is(err, ErrTruncated) || len(payload) >= 8 {
				t.Fatalf("header error %v for %d bytes", err, len(payload))
			}
			return
		}
		if !bytes.Equal(append(h.Append(nil), body...), payload) {
			t.Fatalf("header re-encoding differs")
		}
		// Decode every body as a create, whatever the opcode: the decoder
		// must cope with arbitrary bytes.
		cr, err := DecodeCreateRequest(body)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNegativeLength) && !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(cr.Path)+len(cr.Data)+12*len(cr.ACL) > len(body) {
			t.Fatalf("decoded more than the body holds")
		}
		enc := cr.Append(nil)
		again, err := DecodeCreateRequest(enc)
		if err != nil {
			t.Fatalf("re-decoding own encoding: %v", err)
		}
		if !reflect.DeepEqual(again, cr) {
			t.Fatalf("round trip %+v -> %+v", cr, again)
		}
		if len(enc) > len(body)+4 { // only a nil path (-1 -> "") may differ
			t.Fatalf("encoding of %d bytes from a %d-byte body", len(enc), len(body))
		}
	})
}

func FuzzDecodeReply(f *testing.F) {
	addSeeds(f, func(name string, raw []byte) []byte {
		if isReplySeed(name) || name == "handshake-reply" {
			return raw[4:]
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, body, err := DecodeReplyHeader(payload)
		if err != nil {
			if !errors.Is(err, ErrTruncated) || len(payload) >= 16 {
				t.Fatalf("header error %v for %d bytes", err, len(payload))
			}
			return
		}
		if !bytes.Equal(append(h.Append(nil), body...), payload) {
			t.Fatalf("header re-encoding differs")
		}
	})
}

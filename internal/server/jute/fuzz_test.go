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

// payloads selects, for addSeeds, the payloads of one side's frames: those
// is names, and that side's handshake.
func payloads(is func(name string) bool, handshake string) func(string, []byte) []byte {
	return func(name string, raw []byte) []byte {
		if is(name) || name == handshake {
			return raw[4:]
		}
		return nil
	}
}

// headerRoundTrip decodes the header at the start of payload: it may fail
// only as truncated input shorter than size bytes, and what it decodes
// re-encodes to the bytes it read. It returns the body, or false if the
// header did not decode.
func headerRoundTrip[H interface{ Append([]byte) []byte }](t *testing.T, payload []byte, size int,
	decode func([]byte) (H, []byte, error)) ([]byte, bool) {
	t.Helper()
	h, body, err := decode(payload)
	if err != nil {
		if !errors.Is(err, ErrTruncated) || len(payload) >= size {
			t.Fatalf("header error %v for %d bytes", err, len(payload))
		}
		return nil, false
	}
	if !bytes.Equal(append(h.Append(nil), body...), payload) {
		t.Fatalf("header re-encoding differs")
	}
	return body, true
}

func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f, payloads(isRequestSeed, "handshake-request"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		body, ok := headerRoundTrip(t, payload, 8, DecodeRequestHeader)
		if !ok {
			return
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
	addSeeds(f, payloads(isReplySeed, "handshake-reply"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		headerRoundTrip(t, payload, 16, DecodeReplyHeader)
	})
}

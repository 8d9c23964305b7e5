// Package jute is a minimal codec for the parts of ZooKeeper's Jute wire
// format that the fault-injection proxy and the tests need: client-protocol
// framing, request and reply headers, and the bodies of the requests whose
// path the proxy can match (create, delete, exists, getData, getChildren,
// getChildren2); and on the server-to-server links, the quorum packets a
// leader sends its followers and the header of a proposal's transaction.
//
// Encodings are big-endian: int is int32, long is int64, a buffer or string
// is an int32 length (-1 means nil) followed by that many bytes, a vector is
// an int32 count (-1 means nil) followed by its elements, and a bool is one
// byte. Decoders never panic on malformed input, and never allocate more
// than the input could hold.
//
// There is intentionally no decoder for any reply body: the proxy never
// needs the path the server returned for a create, nor any other result.
package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxFrame is the default limit on a frame's payload length used by
// ReadFrame and ReadFrameRaw when they are given a non-positive limit.
//
// ZooKeeper 3.8 rejects frames longer than jute.maxbuffer, whose default is
// 0xfffff (1 MiB - 1) on both the server and the Java client, so every frame
// a default-configured ensemble exchanges fits in 1 MiB.
const MaxFrame = 1 << 20

// Errors returned (wrapped with context) by the frame readers and decoders.
// Test for them with errors.Is.
var (
	// ErrTruncated means the input ended before a complete value.
	ErrTruncated = errors.New("jute: truncated input")
	// ErrNegativeLength means a length or count was negative (other than
	// the -1 that encodes nil, where nil is allowed).
	ErrNegativeLength = errors.New("jute: negative length")
	// ErrFrameTooLarge means a frame, buffer, string or vector claims to be
	// longer than the limit or than the input that holds it.
	ErrFrameTooLarge = errors.New("jute: length too large")
)

// readChunk bounds each allocation ReadFrame makes while a frame's bytes
// arrive, so a short stream that claims a large frame cannot make the reader
// allocate the full claimed size up front.
const readChunk = 64 << 10

// ReadFrame reads one frame from r and returns its payload without the
// 4-byte length prefix. A non-positive limit means MaxFrame.
//
// It returns io.EOF, unwrapped, if r is at EOF before the first byte of the
// frame; an error wrapping ErrTruncated if r ends inside the frame; an error
// wrapping ErrNegativeLength or ErrFrameTooLarge if the length prefix is
// negative or exceeds limit (in which case only the prefix has been consumed).
// Other read errors are returned wrapped. The buffer starts at no more than
// 64 KiB and grows as bytes arrive, so a stream that claims a large frame
// and then ends early costs little memory.
func ReadFrame(r io.Reader, limit int) ([]byte, error) {
	return readFrame(r, limit, false)
}

// ReadFrameRaw is like ReadFrame but returns the whole frame including its
// length prefix, ready to be forwarded unchanged.
func ReadFrameRaw(r io.Reader, limit int) ([]byte, error) {
	return readFrame(r, limit, true)
}

func readFrame(r io.Reader, limit int, withPrefix bool) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFrame
	}
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		switch err {
		case io.EOF:
			return nil, io.EOF
		case io.ErrUnexpectedEOF:
			return nil, fmt.Errorf("frame length prefix: %w", ErrTruncated)
		}
		return nil, fmt.Errorf("jute: reading frame length: %w", err)
	}
	n := int(int32(binary.BigEndian.Uint32(prefix[:])))
	if n < 0 {
		return nil, fmt.Errorf("frame length %d: %w", n, ErrNegativeLength)
	}
	if n > limit {
		return nil, fmt.Errorf("frame length %d exceeds limit %d: %w", n, limit, ErrFrameTooLarge)
	}
	off := 0
	if withPrefix {
		off = 4
	}
	total := off + n
	buf := make([]byte, off, off+min(n, readChunk))
	copy(buf, prefix[:off])
	for len(buf) < total {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(total, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("frame payload: got %d of %d bytes: %w", len(buf)-off, n, ErrTruncated)
			}
			return nil, fmt.Errorf("jute: reading frame payload: %w", err)
		}
	}
	return buf, nil
}

// AppendFrame appends payload to dst as one frame (4-byte big-endian length
// prefix, then the payload) and returns the extended slice.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

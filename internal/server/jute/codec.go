package jute

import (
	"encoding/binary"
	"fmt"
)

// decoder reads Jute primitives from a byte slice. The first failure is kept
// in err and makes every later read a no-op, so callers check err once.
type decoder struct {
	p   []byte
	err error
}

// decode reads one record from p with read and returns it with the bytes
// after it; on a failure it returns the zero record and the first error.
func decode[T any](p []byte, read func(d *decoder) T) (T, []byte, error) {
	d := decoder{p: p}
	v := read(&d)
	if d.err != nil {
		var zero T
		return zero, nil, d.err
	}
	return v, d.p, nil
}

func (d *decoder) fail(field string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%s: %w", field, err)
	}
}

// next consumes and returns the next n bytes, which alias the input; when
// fewer are left it fails with ErrTruncated. After a failure it returns nil.
func (d *decoder) next(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.p) < n {
		d.fail(field, ErrTruncated)
		return nil
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}

func (d *decoder) int32(field string) int32 {
	if b := d.next(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *decoder) int64(field string) int64 {
	if b := d.next(field, 8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// bool reads a Jute boolean: one byte, true unless zero (as Java's
// DataInput.readBoolean).
func (d *decoder) bool(field string) bool {
	b := d.next(field, 1)
	return b != nil && b[0] != 0
}

// length reads a buffer or string length. It returns -1 for nil, and
// otherwise a length that fits in the remaining input; any other negative
// length fails, as the official decoder's checkLength does.
func (d *decoder) length(field string) int {
	n := int(d.int32(field))
	if d.err != nil {
		return 0
	}
	switch {
	case n == -1:
		return -1
	case n < 0:
		d.fail(field, fmt.Errorf("length %d: %w", n, ErrNegativeLength))
		return 0
	case n > len(d.p):
		d.fail(field, fmt.Errorf("length %d with %d bytes left: %w", n, len(d.p), ErrFrameTooLarge))
		return 0
	}
	return n
}

// buffer reads a Jute buffer; -1 decodes to nil, 0 to an empty non-nil
// slice. The result is a copy, never an alias of the input.
func (d *decoder) buffer(field string) []byte {
	n := d.length(field)
	if d.err != nil || n < 0 {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.next(field, n))
	return b
}

// string reads a Jute ustring; -1 (nil) decodes to "".
func (d *decoder) string(field string) string {
	n := d.length(field)
	if d.err != nil || n < 0 {
		return ""
	}
	return string(d.next(field, n))
}

// count reads a vector's element count as the official
// BinaryInputArchive.startVector does: -1 is nil (returned as -1), and any
// other negative count is an empty vector, not an error (its index is done
// at once). A count whose elements (each at least minElem bytes) cannot fit
// in the remaining input fails.
func (d *decoder) count(field string, minElem int) int {
	n := int(d.int32(field))
	switch {
	case d.err != nil:
		return 0
	case n == -1:
		return -1
	case n < 0:
		return 0
	case n > len(d.p)/minElem:
		d.fail(field, fmt.Errorf("count %d with %d bytes left: %w", n, len(d.p), ErrFrameTooLarge))
		return 0
	}
	return n
}

func appendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

func appendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// appendBuffer encodes b; a nil slice is written as length -1.
func appendBuffer(dst, b []byte) []byte {
	if b == nil {
		return appendInt32(dst, -1)
	}
	dst = appendInt32(dst, int32(len(b)))
	return append(dst, b...)
}

func appendString(dst []byte, s string) []byte {
	dst = appendInt32(dst, int32(len(s)))
	return append(dst, s...)
}

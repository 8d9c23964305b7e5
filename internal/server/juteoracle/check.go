package juteoracle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Result is what one check saw, for the record's per-record lines.
type Result struct {
	Kind  string
	Bytes int    // length of the encoding or input checked
	Note  string // what the check accepted and why, or ""
}

// CheckValue checks the Go record v of kind k in both directions: the
// official classes encode it and the Go decoder reads the same fields from
// the same number of bytes as the official decoder does; the Go codec
// encodes it and the official classes read back v's fields; and the two
// encodings are equal byte for byte.
//
// One difference is known and asserted exactly rather than ignored: for a
// character outside the BMP, BinaryOutputArchive.writeString of ZooKeeper
// 3.8 encodes each UTF-16 surrogate on its own (CESU-8), which its own
// BinaryInputArchive then reads back as U+FFFD, where Go writes UTF-8. There
// the official bytes must be exactly the Go encoding of the CESU-8 strings,
// and Note says so. (ZooKeeper paths cannot hold such characters: PathUtils
// refuses surrogates; and the proxy itself never encodes a string.)
func (o *Oracle) CheckValue(k *Kind, v any) (Result, error) {
	rv := reflect.ValueOf(v)
	bj, tj, err := o.encode(k, rv)
	if err != nil {
		return Result{}, fmt.Errorf("official encode of %s: %w", describe(v), err)
	}
	c := &comparer{}
	if err := c.record(k.Name, rv, tj, k.trailer); err != nil {
		return Result{}, fmt.Errorf("the official record filled from Go's fields: %w", err)
	}
	res := Result{Kind: k.Name, Bytes: len(bj)}
	if err := o.officialToGo(k, bj); err != nil {
		return res, err
	}
	bg := append(k.encode(v), bj[len(bj)-k.trailerLen:]...)
	if i := firstDiff(bg, bj); i >= 0 {
		cesu := append(k.encode(cesuView(rv).Interface()), bj[len(bj)-k.trailerLen:]...)
		if !bytes.Equal(cesu, bj) {
			return res, fmt.Errorf("%s encodings differ from byte %d of %d: got %s (Go); want %s (official)",
				k.Name, i, len(bj), showBytes(bg[i:]), showBytes(bj[i:]))
		}
		res.Note = "non-BMP characters: the official encoder writes CESU-8 (its decoder reads U+FFFD), Go writes UTF-8"
	}
	return res, o.goToOfficial(k, rv, bg)
}

// officialToGo checks that the Go decoder reads from the official encoding
// bj the fields the official decoder reads, from as many bytes.
func (o *Oracle) officialToGo(k *Kind, bj []byte) error {
	gv, n, err := k.decode(bj)
	if err != nil {
		return fmt.Errorf("official encode → Go decode: Go refuses %s: %w", showBytes(bj), err)
	}
	consumed, _, tdj, err := o.decode(k, bj)
	if err != nil {
		return fmt.Errorf("official encode → official decode of %s: %w", showBytes(bj), err)
	}
	if err := (&comparer{}).record(k.Name, reflect.ValueOf(gv), tdj, k.trailer); err != nil {
		return fmt.Errorf("official encode → Go decode of %s: %w", showBytes(bj), err)
	}
	if n+k.trailerLen != consumed || consumed != len(bj) {
		return fmt.Errorf("official encode → Go decode: %s consumed %d of %d bytes (Go); want %d (official)",
			k.Name, n+k.trailerLen, len(bj), consumed)
	}
	return nil
}

// goToOfficial checks that the official decoder reads rv's fields from the
// Go encoding bg, all of it, and writes it back unchanged.
func (o *Oracle) goToOfficial(k *Kind, rv reflect.Value, bg []byte) error {
	consumed, reenc, tg, err := o.decode(k, bg)
	if err != nil {
		return fmt.Errorf("jute: Go encode → official decode of %s: %w", showBytes(bg), err)
	}
	if err := (&comparer{}).record(k.Name, rv, tg, k.trailer); err != nil {
		return fmt.Errorf("jute: Go encode → official decode of %s: %w", showBytes(bg), err)
	}
	if consumed != len(bg) {
		return fmt.Errorf("jute: Go encode → official decode: %s consumed %d bytes (official); want all %d (Go)", k.Name, consumed, len(bg))
	}
	if i := firstDiff(reenc, bg); i >= 0 && reflect.DeepEqual(cesuView(rv).Interface(), rv.Interface()) {
		return fmt.Errorf("jute: Go encode → official decode → official encode: got %s (official); want %s (Go) from byte %d",
			showBytes(reenc[i:]), showBytes(bg[i:]), i)
	}
	return nil
}

// CheckBytes hands the same bytes to both decoders: both must refuse them,
// or both read the same fields from the same number of bytes, and then the
// record read is checked both ways with CheckValue. Where the Go codec
// cannot hold what the server holds (a null ustring, which Go reads as "";
// a ustring that is not UTF-8, which the server reads with U+FFFD), the
// comparison uses the server's view and says so in Note.
func (o *Oracle) CheckBytes(k *Kind, b []byte) (Result, error) {
	gv, n, gerr := k.decode(b)
	consumed, _, tj, jerr := o.decode(k, b)
	var refused *officialError
	if jerr != nil && !errors.As(jerr, &refused) {
		return Result{}, jerr
	}
	res := Result{Kind: k.Name, Bytes: len(b)}
	switch {
	case gerr != nil && jerr != nil:
		res.Note = "both refuse"
		return res, nil
	case gerr != nil:
		return res, fmt.Errorf("%s: Go refuses what the official classes read (%d bytes): %v (input %s)", k.Name, consumed, gerr, showBytes(b))
	case jerr != nil && k.trailerLen > 0 && len(b)-n < k.trailerLen:
		res.Note = fmt.Sprintf("Go reads the record and skips the %d-byte trailer the official class needs and lacks", k.trailerLen)
		return res, nil
	case jerr != nil:
		return res, fmt.Errorf("%s: Go reads %s from what the official classes refuse: %v (input %s)", k.Name, describe(gv), jerr, showBytes(b))
	}
	c := &comparer{nilOK: true}
	if err := c.record(k.Name, reflect.ValueOf(gv), tj, k.trailer); err != nil {
		return res, fmt.Errorf("same bytes, both decoders: %w (input %s)", err, showBytes(b))
	}
	if consumed != n+k.trailerLen {
		return res, fmt.Errorf("same bytes, both decoders: %s consumed %d bytes (Go); want %d (official) (input %s)",
			k.Name, n+k.trailerLen, consumed, showBytes(b))
	}
	r, err := o.CheckValue(k, javaView(reflect.ValueOf(gv)).Interface())
	if err != nil {
		return res, fmt.Errorf("the record both decoded from %s: %w", showBytes(b), err)
	}
	res.Note = joinNotes(c.note(), r.Note)
	return res, nil
}

func (c *comparer) note() string {
	var nilString, replaced string
	if c.nilString > 0 {
		nilString = fmt.Sprintf("%d null ustring(s) read as \"\" by Go", c.nilString)
	}
	if c.replaced > 0 {
		replaced = fmt.Sprintf("%d non-UTF-8 ustring(s), compared as the server reads them", c.replaced)
	}
	return joinNotes(nilString, replaced)
}

func joinNotes(notes ...string) string {
	var parts []string
	for _, n := range notes {
		if n != "" {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "; ")
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// encode asks the official class to encode the Go record rv.
func (o *Oracle) encode(k *Kind, rv reflect.Value) ([]byte, map[string]any, error) {
	tree := toTree(rv).(map[string]any)
	for tag, v := range k.trailer {
		tree[tag] = v
	}
	js, err := json.Marshal(tree)
	if err != nil {
		return nil, nil, err
	}
	rest, err := o.call("encode " + k.Class + " " + string(js))
	if err != nil {
		return nil, nil, err
	}
	h, t, _ := strings.Cut(rest, " ")
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, nil, fmt.Errorf("oracle encoding %q: %v", h, err)
	}
	m, err := recordTree(t)
	return b, m, err
}

// decode asks the official class to read b.
func (o *Oracle) decode(k *Kind, b []byte) (consumed int, reenc []byte, tree map[string]any, err error) {
	rest, err := o.call("decode " + k.Class + " " + hex.EncodeToString(b))
	if err != nil {
		return 0, nil, nil, err
	}
	f := strings.SplitN(rest, " ", 3)
	if len(f) != 3 {
		return 0, nil, nil, fmt.Errorf("oracle decode answer %q", rest)
	}
	if consumed, err = strconv.Atoi(f[0]); err != nil {
		return 0, nil, nil, err
	}
	if reenc, err = hex.DecodeString(f[1]); err != nil {
		return 0, nil, nil, err
	}
	tree, err = recordTree(f[2])
	return consumed, reenc, tree, err
}

func recordTree(s string) (map[string]any, error) {
	t, err := parseTree(s)
	if err != nil {
		return nil, err
	}
	m, ok := t.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("oracle tree %q is not a record", s)
	}
	return m, nil
}

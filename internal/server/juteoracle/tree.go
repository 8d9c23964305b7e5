package juteoracle

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// A tree is a record as JuteOracle.java reads and writes it: an object per
// record keyed by the official field names, hex for ustrings and buffers
// (see the comment at the top of the Java file). The Go side of a tree is
// built from the Go record by reflection, so a new record needs no code.

// field is a field of a Go record and the official names that lead to it:
// by default the Go name with a lower-case first letter (Xid -> xid, and an
// all-capital name wholly lower-case: ACL -> acl), else the `jute` struct
// tag, whose dots step into a nested official record (jute.ACL's Scheme is
// "id.scheme": the official ACL holds an Id record).
type field struct {
	index int
	path  []string
}

func fieldsOf(t reflect.Type) []field {
	fs := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("jute")
		if name == "" {
			name = lowerName(f.Name)
		}
		fs = append(fs, field{index: i, path: strings.Split(name, ".")})
	}
	return fs
}

func lowerName(s string) string {
	if strings.ToUpper(s) == s {
		return strings.ToLower(s)
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// toTree returns v as the oracle's tree.
func toTree(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return hex.EncodeToString([]byte(v.String()))
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return hex.EncodeToString(v.Bytes())
		}
		l := make([]any, v.Len())
		for i := range l {
			l[i] = toTree(v.Index(i))
		}
		return l
	case reflect.Struct:
		m := map[string]any{}
		for _, f := range fieldsOf(v.Type()) {
			at := m
			for _, p := range f.path[:len(f.path)-1] {
				if _, ok := at[p].(map[string]any); !ok {
					at[p] = map[string]any{}
				}
				at = at[p].(map[string]any)
			}
			at[f.path[len(f.path)-1]] = toTree(v.Field(f.index))
		}
		return m
	}
	panic(fmt.Sprintf("official: no Jute type for Go %s", v.Type()))
}

// parseTree reads a tree the oracle wrote, keeping numbers exact.
func parseTree(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("oracle tree %q: %v", s, err)
	}
	return v, nil
}

// mismatch is a field on which the Go record and the official one differ.
type mismatch struct {
	field     string // Record.field[i].sub, in official names
	got, want string // the Go side's, the official side's
}

func (m *mismatch) Error() string {
	return fmt.Sprintf("%s: got %s (Go); want %s (official)", m.field, m.got, m.want)
}

// comparer walks a Go record beside an official tree. A null ustring is
// accepted as "" only where nilOK is set: the Go codec has no nil string and
// decodes one as "", which matters only when both sides read the same
// bytes. Strings are compared as the server holds them (javaString).
type comparer struct {
	nilOK     bool
	nilString int // null ustrings read as "" by Go
	replaced  int // ustrings that are not UTF-8, which Java reads with U+FFFD
}

func (c *comparer) value(path string, v reflect.Value, j any) error {
	switch v.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := j.(json.Number)
		got, err := n.Int64()
		if !ok || err != nil || got != v.Int() {
			return &mismatch{path, fmt.Sprint(v.Int()), fmt.Sprint(j)}
		}
	case reflect.Bool:
		if b, ok := j.(bool); !ok || b != v.Bool() {
			return &mismatch{path, fmt.Sprint(v.Bool()), fmt.Sprint(j)}
		}
	case reflect.String:
		return c.str(path, v.String(), j)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return buffer(path, v.Bytes(), j)
		}
		return c.vector(path, v, j)
	case reflect.Struct:
		m, ok := j.(map[string]any)
		if !ok {
			return &mismatch{path, "a record", show(j)}
		}
		return c.record(path, v, m, nil)
	default:
		panic(fmt.Sprintf("official: no Jute type for Go %s", v.Type()))
	}
	return nil
}

func (c *comparer) str(path, s string, j any) error {
	if j == nil {
		if c.nilOK && s == "" {
			c.nilString++
			return nil
		}
		return &mismatch{path, fmt.Sprintf("%q", s), "null"}
	}
	b, err := hexOf(j)
	want := javaString(s)
	if want != s {
		c.replaced++
	}
	if err != nil || string(b) != want {
		return &mismatch{path, fmt.Sprintf("%q", want), fmt.Sprintf("%q", b)}
	}
	return nil
}

func buffer(path string, b []byte, j any) error {
	if j == nil || b == nil {
		if j == nil && b == nil {
			return nil
		}
		return &mismatch{path, showBytes(b), show(j)}
	}
	got, err := hexOf(j)
	if err != nil || string(got) != string(b) {
		return &mismatch{path, showBytes(b), show(j)}
	}
	return nil
}

func (c *comparer) vector(path string, v reflect.Value, j any) error {
	l, ok := j.([]any)
	if j == nil || v.IsNil() || !ok {
		if j == nil && v.IsNil() {
			return nil
		}
		return &mismatch{path, vectorLen(v), show(j)}
	}
	if len(l) != v.Len() {
		return &mismatch{path, vectorLen(v), fmt.Sprintf("%d elements", len(l))}
	}
	for i := range l {
		if err := c.value(fmt.Sprintf("%s[%d]", path, i), v.Index(i), l[i]); err != nil {
			return err
		}
	}
	return nil
}

// record compares every field of v, then fails on an official field that no
// Go field reads, unless extra names it.
func (c *comparer) record(path string, v reflect.Value, m map[string]any, extra map[string]any) error {
	// read maps each official name a Go field reaches to whether the Go
	// field stops there (true) or steps into a nested record (false).
	read := map[string]bool{}
	for _, f := range fieldsOf(v.Type()) {
		name := strings.Join(f.path, ".")
		at, ok := lookup(m, f.path)
		if !ok {
			return &mismatch{path + "." + name, "a field", "no such field"}
		}
		if err := c.value(path+"."+name, v.Field(f.index), at); err != nil {
			return err
		}
		for i := 1; i < len(f.path); i++ {
			read[strings.Join(f.path[:i], ".")] = false
		}
		read[name] = true
	}
	return unread(path, m, "", read, extra)
}

func lookup(m map[string]any, path []string) (any, bool) {
	var at any = m
	for _, k := range path {
		obj, ok := at.(map[string]any)
		if !ok {
			return nil, false
		}
		if at, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return at, true
}

func unread(path string, m map[string]any, prefix string, read map[string]bool, extra map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		full := prefix + k
		leaf, ok := read[full]
		if _, allowed := extra[full]; !ok && !allowed {
			return &mismatch{path + "." + full, "no such field", show(m[k])}
		}
		if sub, isRec := m[k].(map[string]any); ok && !leaf && isRec {
			if err := unread(path, sub, full+".", read, extra); err != nil {
				return err
			}
		}
	}
	return nil
}

func hexOf(j any) ([]byte, error) {
	s, ok := j.(string)
	if !ok {
		return nil, fmt.Errorf("not hex: %v", j)
	}
	return hex.DecodeString(s)
}

func vectorLen(v reflect.Value) string {
	if v.IsNil() {
		return "null"
	}
	return fmt.Sprintf("%d elements", v.Len())
}

func showBytes(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) > 24:
		return fmt.Sprintf("%d bytes %x...", len(b), b[:24])
	}
	return fmt.Sprintf("%d bytes %x", len(b), b)
}

func show(j any) string {
	if s, ok := j.(string); ok {
		if b, err := hex.DecodeString(s); err == nil {
			return showBytes(b)
		}
	}
	if j == nil {
		return "null"
	}
	return fmt.Sprint(j)
}

// javaView returns a copy of v with every string as the server holds it.
func javaView(v reflect.Value) reflect.Value { return mapStrings(v, javaString) }

// mapStrings returns a copy of v with f applied to every string in it.
func mapStrings(v reflect.Value, f func(string) string) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		return reflect.ValueOf(f(v.String())).Convert(v.Type())
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(mapStrings(v.Index(i), f))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			n.Field(i).Set(mapStrings(v.Field(i), f))
		}
		return n
	}
	return v
}

package juteoracle

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Case is a Go record to check, named by what makes it an edge case.
type Case struct {
	Name  string
	Value any
}

// Cases returns edge cases of k's Go type: every field at zero, a baseline
// record, every field at its extreme value, then the baseline with one
// field at a time varied through the edge values of its type, so that a
// failure points at one field. They follow from the type alone.
func Cases(k *Kind) []Case {
	vals := variants(k.typ)
	cases := []Case{
		{"zero", reflect.Zero(k.typ).Interface()},
		{"baseline", vals[0].v.Interface()},
		{"extremes", extremes(k.typ).Interface()},
	}
	for _, v := range vals[1:] {
		cases = append(cases, Case{v.name, v.v.Interface()})
	}
	return cases
}

type variant struct {
	name string
	v    reflect.Value
}

// Edge values per Jute type; the first is the baseline, the last the
// extreme.
var (
	int32Edges = []int64{7, 0, 1,
		-1,   // notification xid; a nil length
		-2,   // ping xid
		-4,   // auth xid
		-8,   // setWatches xid
		-11,  // closeSession
		-101, // NoNode
		-110, // NodeExists
		-112, // SessionExpired
		255, 256, math.MaxInt32, math.MinInt32}
	int64Edges = []int64{0x1_00000005, 0, 1, -1,
		0xffffffff,   // the counter's last value in epoch 0
		0x1_00000000, // the first zxid of epoch 1
		0x7fffffff_00000000, math.MaxInt64, math.MinInt64}
	stringEdges = []string{"/zk19/lock-", "", "/", "/zk19/lock-0000000007",
		"/锁/节点-é-🔒",                     // multi-byte UTF-8, up to four bytes
		"/a\x00b",                       // a NUL inside
		strings.Repeat("/segment", 512)} // a long path, 4 KiB
	bufferEdges = [][]byte{[]byte("owner-1"), nil, {}, {0}, allBytes(), pattern(64 << 10)}
)

func allBytes() []byte { return pattern(256) }

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// variants returns the edge values of t, baseline first.
func variants(t reflect.Type) []variant {
	var out []variant
	add := func(name string, v any) { out = append(out, variant{name, reflect.ValueOf(v).Convert(t)}) }
	switch t.Kind() {
	case reflect.Int32, reflect.Int64:
		edges := int32Edges
		if t.Kind() == reflect.Int64 {
			edges = int64Edges
		}
		for _, e := range edges {
			add(fmt.Sprint(e), e)
		}
	case reflect.Bool:
		add("true", true)
		add("false", false)
	case reflect.String:
		for _, s := range stringEdges {
			add(describeString(s), s)
		}
	case reflect.Slice:
		return sliceVariants(t)
	case reflect.Struct:
		return structVariants(t)
	default:
		panic(fmt.Sprintf("official: no Jute type for Go %s", t))
	}
	return out
}

func sliceVariants(t reflect.Type) []variant {
	if t.Elem().Kind() == reflect.Uint8 {
		var out []variant
		for _, b := range bufferEdges {
			out = append(out, variant{describeBytes(b), reflect.ValueOf(b).Convert(t)})
		}
		return out
	}
	elems := variants(t.Elem())
	all := reflect.MakeSlice(t, 0, len(elems))
	for _, e := range elems {
		all = reflect.Append(all, e.v)
	}
	return []variant{
		{"1 element", reflect.Append(reflect.MakeSlice(t, 0, 1), elems[0].v)},
		{"null", reflect.Zero(t)},
		{"0 elements", reflect.MakeSlice(t, 0, 0)},
		{fmt.Sprintf("%d elements", len(elems)), all},
	}
}

// structVariants: the baseline has every field at its baseline; each other
// variant changes one field.
func structVariants(t reflect.Type) []variant {
	base := reflect.New(t).Elem()
	fields := fieldsOf(t)
	per := make([][]variant, len(fields))
	for i, f := range fields {
		per[i] = variants(t.Field(f.index).Type)
		base.Field(f.index).Set(per[i][0].v)
	}
	out := []variant{{"baseline", base}}
	for i, f := range fields {
		for _, v := range per[i][1:] {
			n := reflect.New(t).Elem()
			n.Set(base)
			n.Field(f.index).Set(v.v)
			out = append(out, variant{strings.Join(f.path, ".") + "=" + v.name, n})
		}
	}
	return out
}

// extremes returns t with every field at its last edge value.
func extremes(t reflect.Type) reflect.Value {
	if t.Kind() != reflect.Struct {
		v := variants(t)
		return v[len(v)-1].v
	}
	n := reflect.New(t).Elem()
	for _, f := range fieldsOf(t) {
		n.Field(f.index).Set(extremes(t.Field(f.index).Type))
	}
	return n
}

func describeString(s string) string {
	if len(s) > 24 {
		return fmt.Sprintf("%q...(%d bytes)", s[:12], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func describeBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%d bytes", len(b))
}

// describe shows a Go record in one short line.
func describe(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return fmt.Sprint(v)
	}
	parts := make([]string, 0, rv.NumField())
	for _, f := range fieldsOf(rv.Type()) {
		parts = append(parts, strings.Join(f.path, ".")+"="+describeValue(rv.Field(f.index)))
	}
	return rv.Type().Name() + "{" + strings.Join(parts, " ") + "}"
}

func describeValue(v reflect.Value) string {
	switch {
	case v.Kind() == reflect.String:
		return describeString(v.String())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		return describeBytes(v.Bytes())
	case v.Kind() == reflect.Slice && v.IsNil():
		return "null"
	case v.Kind() == reflect.Slice && v.Len() > 1:
		return fmt.Sprintf("[%d elements]", v.Len())
	case v.Kind() == reflect.Slice:
		parts := []string{}
		for i := range v.Len() {
			parts = append(parts, describe(v.Index(i).Interface()))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

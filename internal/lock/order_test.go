package lock

import (
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/zk19/zk19/internal/fence"
)

// TestOrderBySequenceNotName: the whole-name order of these candidates is
// the reverse of their sequence order; Order must follow the sequence
// (claim L2), skip children without the infix, and keep 10-digit suffixes
// that string comparison would also order correctly in line with numbers.
func TestOrderBySequenceNotName(t *testing.T) {
	kids := []string{
		"aaaa-lock-0000000002",
		"ready",
		"cccc-lock-0000000000",
		"bbbb-lock-0000000001",
		"config-node",
		"0000-lock-0000000010",
	}
	got, err := Order(kids)
	if err != nil {
		t.Fatalf("Order: %v", err)
	}
	want := []Entry{{"cccc-lock-0000000000", 0}, {"bbbb-lock-0000000001", 1}, {"aaaa-lock-0000000002", 2}, {"0000-lock-0000000010", 10}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v; want %v", got, want)
	}
	byName := append([]string(nil), kids...)
	sort.Strings(byName)
	if byName[0] == want[0].Name {
		t.Fatalf("test data: name order should not start with the lowest sequence")
	}
}

func TestOrderRejectsMalformedCandidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{
		{"x-lock-", fence.ErrNoSuffix},
		{"x-lock--000000001", fence.ErrNegativeSeq},
		{"x-lock-00000000a1", fence.ErrNotNumeric},
		{"x-lock-99999999999", fence.ErrSeqOverflow},
		{"x-lock-2147483648", fence.ErrSeqOverflow},
		{"x-lock-12", fence.ErrShortSeq},
	} {
		_, err := Order([]string{"ok-lock-0000000000", tc.name})
		if !errors.Is(err, ErrMalformed) || !errors.Is(err, tc.want) {
			t.Errorf("Order(%q): got %v; want ErrMalformed and %v", tc.name, err, tc.want)
		}
	}
	_, err := Order([]string{"a-lock-0000000003", "b-lock-0000000003"})
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("duplicate sequence: got %v; want ErrMalformed", err)
	}
}

func TestPredecessor(t *testing.T) {
	kids := []string{"c-lock-0000000002", "a-lock-0000000000", "b-lock-0000000001"}
	for _, tc := range []struct {
		own, pred string
		ok        bool
	}{
		{"a-lock-0000000000", "", true},
		{"b-lock-0000000001", "a-lock-0000000000", true},
		{"c-lock-0000000002", "b-lock-0000000001", true},
		{"d-lock-0000000003", "", false},
	} {
		pred, ok, err := Predecessor(kids, tc.own)
		if err != nil || pred != tc.pred || ok != tc.ok {
			t.Errorf("Predecessor(%s): got %q %v %v; want %q %v", tc.own, pred, ok, err, tc.pred, tc.ok)
		}
	}
}

func TestOpString(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		want string
	}{
		{Op{Type: "invoke", Kind: "exists", Path: "/lock/a-lock-0000000000", Watch: true}, "invoke exists /lock/a-lock-0000000000 watch"},
		{Op{Type: "ok", Kind: "exists", Value: "false"}, "ok false"},
		{Op{Type: "info", Kind: "acquired", Path: "/l/x", Value: "lowest of 1"}, "info acquired /l/x lowest of 1"},
	} {
		if got := tc.op.String(); got != tc.want {
			t.Errorf("got %q; want %q", got, tc.want)
		}
	}
}

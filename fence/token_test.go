package fence_test

import (
	"errors"
	"fmt"
	. "github.com/zk19/zk19/fence"
	"math"
	"strings"
	"testing"
)

var sentinels = []error{ErrNoSuffix, ErrNegativeSeq, ErrSeqOverflow, ErrNotNumeric, ErrShortSeq}

func TestParseSeq(t *testing.T) {
	tests := []struct {
		name    string
		node    string
		want    int64
		wantErr error
	}{
		{"zero", "guid-lock-0000000000", 0, nil},
		{"seven", "c2b3f1-lock-0000000007", 7, nil},
		{"max int32", "x-lock-2147483647", math.MaxInt32, nil},
		{"bare suffix", "-lock-0000000042", 42, nil},
		{"last infix wins", "a-lock-0000000001-lock-0000000002", 2, nil},
		{"infix in guid", "x-lock-y-lock-0000000003", 3, nil},
		{"no infix", "guid-0000000007", 0, ErrNoSuffix},
		{"empty name", "", 0, ErrNoSuffix},
		{"empty suffix", "guid-lock-", 0, ErrNoSuffix},
		{"lock without dashes", "guidlock0000000007", 0, ErrNoSuffix},
		{"negative", "abc-lock--000000001", 0, ErrNegativeSeq},
		{"min int32", "abc-lock--2147483648", 0, ErrNegativeSeq},
		{"lone minus", "abc-lock--", 0, ErrNegativeSeq},
		{"int32 overflow", "x-lock-2147483648", 0, ErrSeqOverflow},
		{"max 10 digits", "x-lock-9999999999", 0, ErrSeqOverflow},
		{"11 digits", "x-lock-00000000001", 0, ErrSeqOverflow},
		{"huge", "x-lock-99999999999999999999999", 0, ErrSeqOverflow},
		{"plus sign", "x-lock-+000000001", 0, ErrNotNumeric},
		{"leading space", "x-lock- 000000001", 0, ErrNotNumeric},
		{"trailing space", "x-lock-000000001 ", 0, ErrNotNumeric},
		{"trailing newline", "x-lock-0000000001\n", 0, ErrNotNumeric},
		{"hex", "x-lock-00000000ff", 0, ErrNotNumeric},
		{"underscore", "x-lock-0_00000001", 0, ErrNotNumeric},
		{"arabic-indic digits", "x-lock-٠٠٠٠٠٠٠٠٠١", 0, ErrNotNumeric},
		{"fullwidth digit", "x-lock-000000000１", 0, ErrNotNumeric},
		{"NUL", "x-lock-000000000\x00", 0, ErrNotNumeric},
		{"short", "x-lock-7", 0, ErrShortSeq},
		{"nine digits", "x-lock-000000007", 0, ErrShortSeq},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSeq(tc.node)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ParseSeq(%q) = %d, %v; want error %v", tc.node, got, err, tc.wantErr)
				}
				if want := fmt.Sprintf("fence: %q: %v", tc.node, tc.wantErr); err.Error() != want {
					t.Errorf("error message = %q; want %q", err, want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSeq(%q) = %d, %v; want %d, nil", tc.node, got, err, tc.want)
			}
		})
	}
}

func TestParseSeqMessage(t *testing.T) {
	_, err := ParseSeq("abc-lock--000000001")
	const want = `fence: "abc-lock--000000001": negative sequence suffix`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v; want %s", err, want)
	}
}

func TestParseToken(t *testing.T) {
	tok, err := ParseToken(5, "guid-lock-0000000007")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Token{Domain: 5, Seq: 7}); tok != want {
		t.Errorf("ParseToken = %v; want %v", tok, want)
	}
	if _, err := ParseToken(5, "guid-lock-000000007"); !errors.Is(err, ErrShortSeq) {
		t.Errorf("short suffix: err = %v; want ErrShortSeq", err)
	}
	if tok, err := ParseToken(5, "guid"); !errors.Is(err, ErrNoSuffix) || tok != (Token{}) {
		t.Errorf("no suffix: got %v, %v; want zero token, ErrNoSuffix", tok, err)
	}
}

func TestTokenCompare(t *testing.T) {
	tests := []struct {
		a, b Token
		want int
	}{
		{Token{Domain: 1, Seq: 5}, Token{Domain: 1, Seq: 5}, 0},
		{Token{Domain: 1, Seq: 4}, Token{Domain: 1, Seq: 5}, -1},
		{Token{Domain: 1, Seq: 6}, Token{Domain: 1, Seq: 5}, +1},
		{Token{Domain: 1, Seq: 9}, Token{Domain: 2, Seq: 0}, -1}, // a newer domain dominates any seq
		{Token{Domain: 2, Seq: 0}, Token{Domain: 1, Seq: 9}, +1},
		{Token{Domain: 1, Seq: math.MaxInt32}, Token{Domain: 2, Seq: 0}, -1},
		{Token{Domain: 0, Seq: 0}, Token{Domain: 0, Seq: 0}, 0},
		{Token{Domain: -1, Seq: 0}, Token{Domain: 0, Seq: -1}, -1},
	}
	for _, tc := range tests {
		if got := tc.a.Compare(tc.b); got != tc.want {
			t.Errorf("%v.Compare(%v) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
		if got := tc.b.Compare(tc.a); got != -tc.want {
			t.Errorf("%v.Compare(%v) = %d; want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestTokenString(t *testing.T) {
	if got := (Token{Domain: 5, Seq: 7}).String(); got != "g5/7" {
		t.Errorf("String = %q; want g5/7", got)
	}
}

func FuzzParseSeq(f *testing.F) {
	for _, s := range []string{
		"guid-lock-0000000007", "x-lock-2147483647", "x-lock-2147483648",
		"x-lock--2147483648", "x-lock-", "", "x-lock-+000000001",
		"x-lock-٠٠٠٠٠٠٠٠٠١", "a-lock-0000000001-lock-0000000002", "x-lock-7",
		"x-lock-00000000001", "-lock-9999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, node string) {
		v, err := ParseSeq(node)
		if err != nil {
			n := 0
			for _, s := range sentinels {
				if errors.Is(err, s) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("ParseSeq(%q) error %v matches %d sentinels; want 1", node, err, n)
			}
			return
		}
		if v < 0 || v > math.MaxInt32 {
			t.Fatalf("ParseSeq(%q) = %d; outside [0, MaxInt32]", node, v)
		}
		i := strings.LastIndex(node, LockInfix)
		if i < 0 {
			t.Fatalf("ParseSeq(%q) = %d without %q", node, v, LockInfix)
		}
		if suffix, f := node[i+len(LockInfix):], fmt.Sprintf("%010d", v); suffix != f {
			t.Fatalf("ParseSeq(%q) = %d; %%010d gives %q, suffix is %q", node, v, f, suffix)
		}
	})
}

package fence_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/zk19/zk19/fence"
)

func TestTokenTextRoundTrip(t *testing.T) {
	lock := fence.LockID("/services/billing/lock")
	for _, tok := range []fence.Token{
		fence.NewToken("/services/billing/lock", 0, 0),
		{Lock: lock, Domain: 5, Seq: 7},
		{Lock: lock, Domain: math.MaxInt64, Seq: math.MaxInt32},
		{Lock: lock, Domain: math.MinInt64, Seq: 0},
		{Lock: lock, Domain: math.MinInt64, Seq: math.MaxInt32}, // the longest text form: exactly the parser's bound
		{Lock: lock, Domain: -1, Seq: 3},
		{Domain: 5, Seq: 7}, // no lock identity: an empty field
		{Seq: 1},
	} {
		b, err := tok.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%#v): %v", tok, err)
		}
		t.Logf("%#v travels as %s", tok, b)
		var got fence.Token
		if err := got.UnmarshalText(b); err != nil || got != tok {
			t.Errorf("UnmarshalText(%s) = %#v, %v; want %#v: the text form does not round-trip", b, got, err, tok)
		}
		j, err := json.Marshal(struct{ T fence.Token }{tok})
		if err != nil {
			t.Fatalf("json.Marshal(%#v): %v", tok, err)
		}
		var back struct{ T fence.Token }
		if err := json.Unmarshal(j, &back); err != nil || back.T != tok {
			t.Errorf("json round trip of %#v through %s = %#v, %v; want the token", tok, j, back.T, err)
		}
	}
	if got, want := fence.LockID("/services/billing/lock"), lock; got != want || len(got) != 16 {
		t.Errorf("LockID = %q; want 16 hex digits, stable", got)
	}
	if fence.LockID("/a") == fence.LockID("/a/") {
		t.Errorf("LockID(%q) == LockID(%q); want two locks", "/a", "/a/")
	}
}

func TestTokenTextRefusesWhatIsNotExactlyAToken(t *testing.T) {
	good, err := fence.NewToken("/l", 5, 7).MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	g := string(good)
	lock := fence.LockID("/l")
	for _, s := range []string{
		"", "g5/7", "5/7", "7",
		g[:len(g)-1], // truncated: must not read as seq 0 … or a smaller token
		g[:len(g)-2],
		strings.TrimSuffix(g, ":7"),
		g + "x", g + " ", " " + g, g + "\n", `"` + g + `"`, "<" + g + ">",
		g + ":1", strings.Replace(g, "v1", "v2", 1), strings.ToUpper(g),
		"zk19-fence-v1:" + lock + ":05:7", "zk19-fence-v1:" + lock + ":5:07",
		"zk19-fence-v1:" + lock + ":+5:7", "zk19-fence-v1:" + lock + ":-0:7", "zk19-fence-v1:" + lock + ":-05:7",
		"zk19-fence-v1:" + lock + ":-9223372036854775809:7", "zk19-fence-v1:" + lock + ":--5:7",
		"zk19-fence-v1:" + lock + ":5:-7", "zk19-fence-v1:" + lock + ":5:2147483648",
		"zk19-fence-v1:" + lock + ":9223372036854775808:7",
		"zk19-fence-v1:" + strings.ToUpper(lock) + ":5:7",
		"zk19-fence-v1:" + lock[:15] + ":5:7", "zk19-fence-v1:/l:5:7",
		"zk19-fence-v1:" + lock + "::7", "zk19-fence-v1:" + lock + ":5:",
		"zk19-fence-v1:" + lock + ":５:7",
		"zk19-fence-v1::0:0", // the zero token
	} {
		tok := fence.Token{Lock: "kept", Domain: 1, Seq: 1}
		err := tok.UnmarshalText([]byte(s))
		if err == nil {
			t.Errorf("UnmarshalText(%q) = %#v, nil; want an error: not exactly a token", s, tok)
			continue
		}
		if !errors.Is(err, fence.ErrMalformedToken) && !errors.Is(err, fence.ErrZeroToken) {
			t.Errorf("UnmarshalText(%q) error %v; want it to wrap ErrMalformedToken or ErrZeroToken", s, err)
		}
		if tok != (fence.Token{Lock: "kept", Domain: 1, Seq: 1}) {
			t.Errorf("UnmarshalText(%q) failed but changed the token to %#v; want it unchanged", s, tok)
		}
	}
	for _, tok := range []fence.Token{{}, {Lock: "x", Seq: 1}, {Seq: -1}, {Seq: math.MaxInt32 + 1}} {
		if b, err := tok.MarshalText(); err == nil {
			t.Errorf("MarshalText(%#v) = %q, nil; want an error: the format cannot carry it", tok, b)
		}
	}
}

func FuzzTokenText(f *testing.F) {
	lock := fence.LockID("/l")
	for _, s := range []string{
		"zk19-fence-v1:" + lock + ":5:7", "zk19-fence-v1::0:1", "zk19-fence-v1:" + lock + ":0:0",
		"zk19-fence-v1:" + lock + ":05:7", "zk19-fence-v1:" + lock + ":9223372036854775807:2147483647",
		"g5/7", "", "zk19-fence-v1:::", "zk19-fence-v1::-9223372036854775808:0", "zk19-fence-v1::-0:1", "zk19-fence-v2:" + lock + ":5:7",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var tok fence.Token
		if err := tok.UnmarshalText([]byte(s)); err != nil {
			if !errors.Is(err, fence.ErrMalformedToken) && !errors.Is(err, fence.ErrZeroToken) {
				t.Fatalf("UnmarshalText(%q) error %v wraps neither ErrMalformedToken nor ErrZeroToken", s, err)
			}
			if !tok.IsZero() {
				t.Fatalf("UnmarshalText(%q) failed and left %#v; want the token unchanged", s, tok)
			}
			return
		}
		if tok.IsZero() || tok.Seq < 0 || tok.Seq > math.MaxInt32 {
			t.Fatalf("UnmarshalText(%q) = %#v; outside the format", s, tok)
		}
		b, err := tok.MarshalText()
		if err != nil || string(b) != s {
			t.Fatalf("UnmarshalText(%q) = %#v, which marshals as %q, %v; want the same text: the form is not canonical", s, tok, b, err)
		}
	})
}

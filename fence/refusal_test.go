package fence_test

import (
	"context"
	"errors"
	"testing"

	. "github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencetest"
)

// TestZeroTokenIsRefused: the zero Token is no lock's token; every resource
// of the package refuses it, before and after a mark, and stores nothing.
func TestZeroTokenIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, im := range append(fencedImpls, impl{"compare-then-write control", func(testing.TB, ...Option) Resource { return fencetest.NewCheckThenWrite(nil) }}) {
		t.Run(im.name, func(t *testing.T) {
			r := im.open(t)
			if res, err := r.Write(ctx, Token{}, "zero"); !errors.Is(err, ErrZeroToken) || res.Accepted {
				t.Fatalf("first Write(Token{}) = %+v, %v; want refused with ErrZeroToken", res, err)
			}
			mustWrite(t, r, g(0, 1), "a", true)
			if res, err := r.Write(ctx, Token{}, "zero"); !errors.Is(err, ErrZeroToken) || res.Accepted {
				t.Fatalf("Write(Token{}) after a mark = %+v, %v; want refused with ErrZeroToken", res, err)
			}
			if v, m, _, err := r.Read(ctx); err != nil || v != "a" || m != g(0, 1) {
				t.Errorf("Read = %q, %v, %v; want \"a\" under g0/1: the zero token stored something", v, m, err)
			}
		})
	}
}

// TestForeignLockIsRefused: a resource whose mark came from one lock
// refuses a token of another lock, however large, and says which.
func TestForeignLockIsRefused(t *testing.T) {
	ctx := context.Background()
	billing, other := NewToken("/services/billing/lock", 0, 3), NewToken("/services/other/lock", 9, 100)
	for _, im := range fencedImpls {
		t.Run(im.name, func(t *testing.T) {
			r := im.open(t)
			if _, err := r.Write(ctx, billing, "billing"); err != nil {
				t.Fatal(err)
			}
			res, err := r.Write(ctx, other, "other")
			var foreign *ForeignLockError
			if !errors.Is(err, ErrForeignLock) || !errors.As(err, &foreign) || foreign.Mark != billing || foreign.Token != other || res.Accepted {
				t.Fatalf("Write of another lock's token = %+v, %v; want a *ForeignLockError with mark %#v and token %#v", res, err, billing, other)
			}
			t.Logf("refused: %v", err)
			if v, m, _, err := r.Read(ctx); err != nil || v != "billing" || m != billing {
				t.Errorf("Read = %q, %#v, %v; want \"billing\" under %#v", v, m, err, billing)
			}
		})
	}
}

// TestWriteOnceForgetsRequestsBelowTheMark: the request ids are kept while
// their token is the mark, so a retry is recognised; once a larger token is
// accepted they are forgotten, and a retry is refused by its token: applied
// once either way (F12), with a table that does not grow with every request.
func TestWriteOnceForgetsRequestsBelowTheMark(t *testing.T) {
	ctx := context.Background()
	for _, im := range fencedImpls {
		t.Run(im.name, func(t *testing.T) {
			r := im.open(t).(onceWriter)
			for _, id := range []string{"a1", "a2"} {
				if _, err := r.WriteOnce(ctx, g(1, 3), id, id); err != nil {
					t.Fatal(err)
				}
			}
			if res, err := r.WriteOnce(ctx, g(1, 3), "a1", "a1"); err != nil || !res.Duplicate || res.Accepted {
				t.Fatalf("retry of a1 under the same mark = %+v, %v; want a duplicate", res, err)
			}
			if _, err := r.WriteOnce(ctx, g(1, 4), "b1", "b1"); err != nil {
				t.Fatal(err)
			}
			res, err := r.WriteOnce(ctx, g(1, 3), "a2", "a2")
			if !errors.Is(err, ErrStale) || res.Accepted || res.Duplicate {
				t.Fatalf("retry of a2 after the mark rose = %+v, %v; want refused by its token (ErrStale)", res, err)
			}
			if v, _, _, _ := r.Read(ctx); v != "b1" {
				t.Errorf("value %q; want b1", v)
			}
		})
	}
}

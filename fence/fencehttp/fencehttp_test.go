package fencehttp_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencehttp"
)

// TestHandlerAnswers: the status of each outcome of a fenced write, and the
// client's reading of a 409 back into a *fence.StaleError.
func TestHandlerAnswers(t *testing.T) {
	store := fence.NewMemory()
	defer store.Close()
	srv := httptest.NewServer(fencehttp.Handler(func(w http.ResponseWriter, r *http.Request, tok fence.Token) error {
		if r.URL.Path == "/broken" {
			return errors.New("disk on fire")
		}
		_, err := store.Write(r.Context(), tok, r.URL.Path)
		return err
	}))
	defer srv.Close()
	mark, stale := fence.NewToken("/l", 0, 2), fence.NewToken("/l", 0, 1)
	send := func(path string, header string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if header != "" {
			req.Header.Set(fencehttp.Header, header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		t.Logf("PUT %s with %q: %s %s", path, header, resp.Status, strings.TrimSpace(string(body)))
		return resp, string(body)
	}
	if resp, _ := send("/b", text(t, mark)); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("write with the mark: %s; want 204", resp.Status)
	}
	resp, body := send("/a", text(t, stale))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "mark g0/2") || resp.Header.Get(fencehttp.MarkHeader) != text(t, mark) {
		t.Errorf("stale write: %s %q, %s %q; want 409 naming the mark g0/2 in the body and the header", resp.Status, body, fencehttp.MarkHeader, resp.Header.Get(fencehttp.MarkHeader))
	}
	var se *fence.StaleError
	if err := fencehttp.Check(resp, stale); !errors.As(err, &se) || se.Mark != mark || se.Token != stale {
		t.Errorf("Check of the 409 = %v; want a *fence.StaleError with mark %v and token %v", err, mark, stale)
	}
	if resp, body := send("/c", text(t, fence.NewToken("/other", 0, 9))); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "of lock") {
		t.Errorf("another lock's token: %s %q; want 409 saying which lock", resp.Status, body)
	}
	for _, h := range []string{"", "g0/3", text(t, mark) + "x", `"` + text(t, mark) + `"`, "zk19-fence-v1::0:0"} {
		if resp, _ := send("/d", h); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("token header %q: %s; want 400, the write not run", h, resp.Status)
		}
	}
	if resp, _ := send("/broken", text(t, mark)); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("a write that fails: %s; want 500", resp.Status)
	}
	if v, m, _, _ := store.Read(t.Context()); v != "/b" || m != mark {
		t.Errorf("stored %q under %v; want \"/b\" under %v", v, m, mark)
	}
}

// TestTransportAttachesTheToken: the request that leaves carries the token;
// the caller's request is not changed.
func TestTransportAttachesTheToken(t *testing.T) {
	tok := fence.NewToken("/l", 3, 4)
	var got fence.Token
	var gotErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, gotErr = fencehttp.TokenFrom(r) }))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: &fencehttp.Transport{Token: tok}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotErr != nil || got != tok {
		t.Errorf("server read %#v, %v; want %#v", got, gotErr, tok)
	}
	if h := req.Header.Get(fencehttp.Header); h != "" {
		t.Errorf("the caller's request got header %q; want it unchanged", h)
	}
	if _, err := (&http.Client{Transport: &fencehttp.Transport{}}).Get(srv.URL); err == nil {
		t.Errorf("a Transport with the zero Token sent its request; want an error")
	}
}

// TestCheckTakesOnly2xxAsAccepted: Check reads every 2xx as an accepted
// write and nothing else as one, a redirect included (a client that
// followed no redirect has not written).
func TestCheckTakesOnly2xxAsAccepted(t *testing.T) {
	tok := fence.Token{Lock: "L", Seq: 3}
	for _, tc := range []struct {
		status int
		ok     bool
	}{{199, false}, {200, true}, {204, true}, {299, true}, {300, false}, {307, false}, {409, false}, {500, false}} {
		resp := &http.Response{StatusCode: tc.status, Status: http.StatusText(tc.status), Header: http.Header{}, Body: io.NopCloser(strings.NewReader("body"))}
		if err := fencehttp.Check(resp, tok); (err == nil) != tc.ok {
			t.Errorf("Check of a %d: got %v; want accepted %v", tc.status, err, tc.ok)
		}
	}
}

// TestCheckTakesA409AsStaleOnlyBelowItsMark: a 409 is read as
// fence.ErrStale only when its Fencing-Mark is of the token's lock and
// above the token. A mark the token is not below (equal, lower), one of
// another lock, or none at all, is some other refusal: an error that is
// not ErrStale, so a caller does not give up its hold for a write it
// could still make.
func TestCheckTakesA409AsStaleOnlyBelowItsMark(t *testing.T) {
	tok := fence.NewToken("/L", 1, 3)
	for _, tc := range []struct {
		what  string
		mark  string
		stale bool
	}{
		{"a mark above the token", text(t, fence.NewToken("/L", 1, 4)), true},
		{"a mark equal to the token", text(t, tok), false},
		{"a mark below the token", text(t, fence.NewToken("/L", 1, 2)), false},
		{"a mark of another lock", text(t, fence.NewToken("/M", 1, 9)), false},
		{"no mark", "", false},
	} {
		resp := &http.Response{StatusCode: http.StatusConflict, Status: "409 Conflict", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("refused"))}
		if tc.mark != "" {
			resp.Header.Set(fencehttp.MarkHeader, tc.mark)
		}
		if err := fencehttp.Check(resp, tok); errors.Is(err, fence.ErrStale) != tc.stale || err == nil {
			t.Errorf("Check of a 409 with %s: got %v; want an error, stale %v", tc.what, err, tc.stale)
		}
	}
}

// text is tok as the Fencing-Token and Fencing-Mark headers carry it.
func text(t *testing.T, tok fence.Token) string {
	t.Helper()
	b, err := tok.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHandlerAnswersARefusalWithoutAMarkWith400: a write refused for a
// reason that has no mark to name (fence.ErrZeroToken) is answered 400,
// with the refusal in the body, not 500 as a failed write: the request was
// wrong, the resource is fine.
func TestHandlerAnswersARefusalWithoutAMarkWith400(t *testing.T) {
	srv := httptest.NewServer(fencehttp.Handler(func(http.ResponseWriter, *http.Request, fence.Token) error {
		return fmt.Errorf("resource: %w", fence.ErrZeroToken)
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(fencehttp.Header, text(t, fence.NewToken("/l", 0, 1)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	t.Logf("PUT /a: %s %s", resp.Status, strings.TrimSpace(string(body)))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), fence.ErrZeroToken.Error()) {
		t.Errorf("a write refused with ErrZeroToken: got %s %q; want 400 naming the refusal", resp.Status, body)
	}
}

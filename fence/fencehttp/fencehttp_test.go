package fencehttp_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	other := fence.NewToken("/other", 0, 9)
	resp, body = send("/c", text(t, other))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "of lock") || resp.Header.Get(fencehttp.MarkHeader) != text(t, mark) {
		t.Errorf("another lock's token: %s %q, %s %q; want 409 saying which lock, the mark in the header", resp.Status, body, fencehttp.MarkHeader, resp.Header.Get(fencehttp.MarkHeader))
	}
	var fe *fence.ForeignLockError
	if err := fencehttp.Check(resp, other); !errors.As(err, &fe) || fe.Mark != mark || fe.Token != other || !fence.Refused(err) {
		t.Errorf("Check of the 409 for another lock's token = %v; want a *fence.ForeignLockError with mark %v and token %v, fence.Refused true", err, mark, other)
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

// TestCheckTakesA409AsStaleOnlyBelowItsMark: a 409 is read as a refusal
// only when its Fencing-Mark says why: fence.ErrStale when the mark is of
// the token's lock and above the token, fence.ErrForeignLock when it is of
// another lock (issue 48, item 6: that refusal was an untyped error, so
// the caller had to take the write as maybe stored). A mark the token is
// not below (equal, lower), or none at all, is some other error: not a
// refusal (fence.Refused false), so a caller neither gives up its hold for
// a write it could still make nor takes the write as not stored.
func TestCheckTakesA409AsStaleOnlyBelowItsMark(t *testing.T) {
	tok := fence.NewToken("/L", 1, 3)
	for _, tc := range []struct {
		what string
		mark string
		want error // the refusal Check must return; nil: an error that is none
	}{
		{"a mark above the token", text(t, fence.NewToken("/L", 1, 4)), fence.ErrStale},
		{"a mark equal to the token", text(t, tok), nil},
		{"a mark below the token", text(t, fence.NewToken("/L", 1, 2)), nil},
		{"a mark of another lock", text(t, fence.NewToken("/M", 1, 9)), fence.ErrForeignLock},
		{"a mark of another lock below the token", text(t, fence.NewToken("/M", 0, 1)), fence.ErrForeignLock},
		{"no mark", "", nil},
	} {
		resp := &http.Response{StatusCode: http.StatusConflict, Status: "409 Conflict", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("refused"))}
		if tc.mark != "" {
			resp.Header.Set(fencehttp.MarkHeader, tc.mark)
		}
		err := fencehttp.Check(resp, tok)
		switch {
		case err == nil:
			t.Errorf("Check of a 409 with %s: got nil; want an error", tc.what)
		case tc.want == nil && fence.Refused(err):
			t.Errorf("Check of a 409 with %s: got %v, a refusal; want an error that is none", tc.what, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("Check of a 409 with %s: got %v; want an error wrapping %v", tc.what, err, tc.want)
		case errors.Is(err, fence.ErrStale) && tc.want != fence.ErrStale:
			t.Errorf("Check of a 409 with %s: got %v, stale; want %v", tc.what, err, tc.want)
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

// TestDoIsTheClientSideInOneCall: Do sets the token, sends, checks and
// closes (issue 48, item 6: the client side took a request, the header,
// Do, Check and a close on every call). The request that leaves carries
// the token and the caller's is unchanged; an accepted write gives the
// caller its response, body unread and open; a stale refusal is a
// *fence.StaleError and a foreign-lock refusal a *fence.ForeignLockError
// (fence.Refused true), a failed write an error that is no refusal, each
// with a nil response and the body drained to its end and closed for the
// caller; the zero token sends nothing and closes the request's body.
func TestDoIsTheClientSideInOneCall(t *testing.T) {
	store := fence.NewMemory()
	defer store.Close()
	failure := strings.Repeat("disk on fire ", 1000) // longer than Check reads: only Do's drain reaches its end
	var reached atomic.Int32
	srv := httptest.NewServer(fencehttp.Handler(func(w http.ResponseWriter, r *http.Request, tok fence.Token) error {
		reached.Add(1)
		if r.URL.Path == "/broken" {
			return errors.New(failure)
		}
		if _, err := store.Write(r.Context(), tok, r.URL.Path); err != nil {
			return err
		}
		_, err := io.WriteString(w, "stored "+r.URL.Path)
		return err
	}))
	defer srv.Close()
	var sent []string
	var body *trackedBody
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.Header.Get(fencehttp.Header))
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			body = &trackedBody{ReadCloser: resp.Body}
			resp.Body = body
		}
		return resp, err
	})}
	put := func(path string, tok fence.Token) (*http.Request, *http.Response, error) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		sent, body = nil, nil
		resp, err := fencehttp.Do(t.Context(), client, req, tok)
		t.Logf("Do PUT %s with %v: %v", path, tok, err)
		return req, resp, err
	}
	mark := fence.NewToken("/l", 0, 2)

	req, resp, err := put("/a", mark)
	if err != nil || resp == nil {
		t.Fatalf("an accepted write: got %v, %v; want the response and nil", resp, err)
	}
	if body.closed || body.eof {
		t.Errorf("an accepted write's body: got closed %v, read to its end %v; want it left to the caller, unread and open", body.closed, body.eof)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != "stored /a" {
		t.Errorf("an accepted write: got %s %q; want 200 \"stored /a\", the handler's answer", resp.Status, got)
	}
	if len(sent) != 1 || sent[0] != text(t, mark) {
		t.Errorf("the Fencing-Token headers sent: got %q; want [%q]", sent, text(t, mark))
	}
	if h := req.Header.Get(fencehttp.Header); h != "" {
		t.Errorf("the caller's request got header %q; want it unchanged", h)
	}

	stale, other := fence.NewToken("/l", 0, 1), fence.NewToken("/other", 0, 9)
	for _, tc := range []struct {
		what, path string
		tok        fence.Token
		want       error // the refusal; nil: a failed write, no refusal
	}{
		{"a stale write", "/b", stale, fence.ErrStale},
		{"another lock's write", "/c", other, fence.ErrForeignLock},
		{"a failed write", "/broken", mark, nil},
	} {
		_, resp, err := put(tc.path, tc.tok)
		m, tok, typed := refusalOf(err)
		switch {
		case resp != nil:
			t.Errorf("%s: got a response, %s; want none", tc.what, resp.Status)
		case tc.want == nil && (err == nil || fence.Refused(err) || !strings.Contains(err.Error(), "500")):
			t.Errorf("%s: got %v; want an error naming the 500 that is no refusal (the write may have been stored)", tc.what, err)
		case tc.want != nil && (!errors.Is(err, tc.want) || !typed || m != mark || tok != tc.tok || !fence.Refused(err)):
			t.Errorf("%s: got %v (%T); want a refusal wrapping %v with mark %v and token %v, fence.Refused true", tc.what, err, err, tc.want, mark, tc.tok)
		}
		if body == nil || !body.eof || !body.closed {
			t.Errorf("%s: got the body %+v; want it read to its end and closed by Do", tc.what, body)
		}
	}

	before := reached.Load()
	rb := &trackedBody{ReadCloser: io.NopCloser(strings.NewReader("value"))}
	req, err = http.NewRequest(http.MethodPut, srv.URL+"/d", rb)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := fencehttp.Do(t.Context(), client, req, fence.Token{}); resp != nil || err == nil || reached.Load() != before || !rb.closed {
		t.Errorf("the zero token: got %v, %v, %d requests reached the handler, request body closed %v; want no response, an error, none sent, the body closed", resp, err, reached.Load()-before, rb.closed)
	}
	if v, m, _, _ := store.Read(t.Context()); v != "/a" || m != mark {
		t.Errorf("stored %q under %v; want \"/a\" under %v", v, m, mark)
	}
}

// refusalOf is the mark and token of a *fence.StaleError or a
// *fence.ForeignLockError; ok is false for any other error.
func refusalOf(err error) (mark, tok fence.Token, ok bool) {
	var se *fence.StaleError
	var fe *fence.ForeignLockError
	switch {
	case errors.As(err, &se):
		return se.Mark, se.Token, true
	case errors.As(err, &fe):
		return fe.Mark, fe.Token, true
	}
	return fence.Token{}, fence.Token{}, false
}

// trackedBody notes whether a body was read to its end and closed.
type trackedBody struct {
	io.ReadCloser
	eof, closed bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *trackedBody) Close() error {
	b.closed = true
	return b.ReadCloser.Close()
}

// Package fencehttp carries a fencing token over HTTP, with the standard
// library only: the client attaches its lock's token to each request
// (Do, or Transport and SetToken), the server reads it and runs the
// handler's write under the fence (Handler), and a refusal is answered 409
// Conflict with the mark in the body and the Fencing-Mark header, which the
// client turns back into the resource's refusal (Check): a
// *fence.StaleError for a token below the mark, a *fence.ForeignLockError
// for a token of another lock than the mark's; fence.Refused is true for
// both.
//
// A service's client side is one call: Do sets the token, sends, checks
// the answer and, for anything but an accepted write, drains and closes the
// body.
//
// The token travels in the Fencing-Token header in fence.Token's text form
// (MarshalText). A request without one, or with one that does not parse,
// is refused with 400 Bad Request before the write runs.
//
// What it guarantees: a write that Handler runs is fenced as the resource
// or the transaction it runs in fences it (fence.Resource's Write,
// fence.AdvanceMark); a refusal is never answered 2xx; a 409 that Check
// reads as a refusal (fence.Refused) came with the mark of a Handler's
// refusal, so the write was not stored. What it does not: the header is not
// authenticated (fencing is not authentication; use TLS and the service's
// own authentication), and a request the client sent before it lost its
// lock may arrive after it: only the resource's mark refuses it. Any other
// error of Check or Do (a 5xx, a lost connection) says nothing of the
// write: it may or may not have been stored.
package fencehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/zk19/zk19/fence"
)

// Header is the request header that carries the token.
const Header = "Fencing-Token"

// MarkHeader is the response header of a 409 that carries the resource's
// mark, in the token's text form.
const MarkHeader = "Fencing-Mark"

// SetToken puts tok in r's Fencing-Token header. It fails for a token the
// text form cannot carry (the zero Token included).
func SetToken(r *http.Request, tok fence.Token) error {
	b, err := tok.MarshalText()
	if err != nil {
		return err
	}
	r.Header.Set(Header, string(b))
	return nil
}

// TokenFrom reads the token of r's Fencing-Token header, strictly (see
// fence.Token.UnmarshalText); a missing header, or more than one, is an
// error.
func TokenFrom(r *http.Request) (fence.Token, error) {
	vs := r.Header.Values(Header)
	if len(vs) != 1 {
		return fence.Token{}, fmt.Errorf("fencehttp: %d %s headers; want 1", len(vs), Header)
	}
	var tok fence.Token
	if err := tok.UnmarshalText([]byte(vs[0])); err != nil {
		return fence.Token{}, err
	}
	return tok, nil
}

// Transport is an http.RoundTripper that attaches Token to every request
// it sends through Base (http.DefaultTransport if nil), on a copy of the
// request, as RoundTrip must not change it. Make one per hold: its token
// is the hold's (lock.Held.Token).
type Transport struct {
	Token fence.Token
	Base  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if err := SetToken(r, t.Token); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// WriteFunc is a handler's write under the fence: it stores what r asks for
// with tok, through a fence.Resource or in a transaction that calls
// fence.AdvanceMark, and returns the resource's error unchanged (a refusal
// is an error: fence.ErrStale, fence.ErrForeignLock). It writes the
// response only when it returns nil; if it writes nothing, Handler answers
// 204 No Content.
type WriteFunc func(w http.ResponseWriter, r *http.Request, tok fence.Token) error

// Handler returns a handler that reads the request's token and runs write
// with it. It answers 400 when the token is missing or malformed (write
// does not run), 409 Conflict when write returns a refusal (a
// *fence.StaleError: the body names the mark and the MarkHeader carries
// it; a *fence.ForeignLockError: the body says which lock, and the
// MarkHeader carries the mark, of the lock the resource is bound to), and
// 500 for any other error of write.
func Handler(write WriteFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, err := TokenFrom(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec := &recorder{ResponseWriter: w}
		err = write(rec, r, tok)
		var stale *fence.StaleError
		var foreign *fence.ForeignLockError
		switch {
		case err == nil && !rec.wrote:
			w.WriteHeader(http.StatusNoContent)
		case err == nil:
		case rec.wrote:
			// The write answered and failed: the answer stands; nothing
			// more can be said on this response.
		case errors.As(err, &stale):
			conflict(w, stale.Mark, err)
		case errors.As(err, &foreign):
			conflict(w, foreign.Mark, err)
		case fence.Refused(err):
			http.Error(w, err.Error(), http.StatusBadRequest)
		default:
			http.Error(w, "fencehttp: the write failed: "+err.Error(), http.StatusInternalServerError)
		}
	})
}

func conflict(w http.ResponseWriter, mark fence.Token, err error) {
	if b, merr := mark.MarshalText(); merr == nil {
		w.Header().Set(MarkHeader, string(b))
	}
	http.Error(w, err.Error(), http.StatusConflict)
}

// recorder notes whether the write answered.
type recorder struct {
	http.ResponseWriter
	wrote bool
}

func (r *recorder) WriteHeader(code int) {
	r.wrote = true
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Check reads a response's answer to a fenced write: nil for 2xx. A 409
// with a Fencing-Mark is the resource's refusal of tok, the token the
// request carried: a *fence.ForeignLockError (errors.Is
// fence.ErrForeignLock) when the mark is of another lock than tok's, a
// *fence.StaleError (errors.Is fence.ErrStale) when tok is below it; both
// carry that mark and tok, and fence.Refused is true for them. Anything
// else (a 409 whose mark tok is not below, or without one, any other
// status) is an error with the status and the start of the body, which
// says nothing of the write. It reads at most the start of the body and
// does not close it.
func Check(resp *http.Response, tok fence.Token) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.TrimSpace(string(body))
	if resp.StatusCode == http.StatusConflict {
		var mark fence.Token
		if err := mark.UnmarshalText([]byte(resp.Header.Get(MarkHeader))); err == nil {
			switch {
			case tok.Lock != mark.Lock:
				return &fence.ForeignLockError{Mark: mark, Token: tok}
			case tok.Compare(mark) < 0:
				return &fence.StaleError{Mark: mark, Token: tok}
			}
		}
	}
	return fmt.Errorf("fencehttp: %s: %s", resp.Status, msg)
}

// drainLimit bounds what Do reads of a body it closes, so that the
// connection can be used again without reading an endless body.
const drainLimit = 64 << 10

// Do is a fenced write's client side in one call: it sends req with tok in
// its Fencing-Token header, through client (http.DefaultClient if nil),
// under ctx, and checks the answer (Check). The caller's req is not
// changed: Do sends a copy with ctx as its context.
//
// An accepted write (2xx) returns the response, whose body the caller
// reads and closes, as after http.Client.Do. Any other answer returns a nil
// response and Check's error (a refusal: *fence.StaleError or
// *fence.ForeignLockError, fence.Refused true), and Do has drained and
// closed the body. A token the text form cannot carry (the zero Token
// included) is an error before anything is sent, and req's body is
// closed. A failure to send is http.Client.Do's error: the write may or may
// not have been stored.
func Do(ctx context.Context, client *http.Client, req *http.Request, tok fence.Token) (*http.Response, error) {
	r := req.Clone(ctx)
	if err := SetToken(r, tok); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(r)
	if err != nil {
		return nil, err
	}
	if err := Check(resp, tok); err != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
		_ = resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

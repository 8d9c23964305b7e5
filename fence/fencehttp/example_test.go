package fencehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencehttp"
	"github.com/zk19/zk19/lock"
)

// The article's fencing story over the wire: a storage service fences its
// register with the token each request carries. A holds the lock and
// writes; A sends another write, which is held up on its way; A's session
// expires meanwhile, and B holds the lock and writes. A's late request
// arrives with A's token, below the mark B's write set: the service answers
// 409 Conflict, which fencehttp.Do gives A back as the resource's refusal
// (a *fence.StaleError), and the stored value is B's.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	parent := newParent()

	// The service: a fenced register behind HTTP. Its write runs under the
	// fence and returns the resource's error; a refusal is one.
	store := fence.NewMemory() // in a service: its database (fence.AdvanceMark in its transaction)
	srv := httptest.NewServer(fencehttp.Handler(func(w http.ResponseWriter, r *http.Request, tok fence.Token) error {
		value, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = store.Write(r.Context(), tok, string(value))
		return err
	}))
	defer srv.Close()

	// put sends value with held's token through client (nil: the default)
	// and reports the answer. fencehttp.Do is the client side in one call:
	// the token's header, the send, the check (a refusal comes back as the
	// resource's error) and, for a refusal, the body's close.
	put := func(who string, held *lock.Held, client *http.Client, value string) {
		req, err := http.NewRequest(http.MethodPut, srv.URL+"/register", strings.NewReader(value))
		if err != nil {
			fmt.Println(err)
			return
		}
		resp, err := fencehttp.Do(ctx, client, req, held.Token)
		if err != nil {
			fmt.Printf("%s writes %q with token sequence %d: refused: %v; stale: %v\n", who, value, held.Token.Seq, fence.Refused(err), errors.Is(err, fence.ErrStale))
			return
		}
		defer resp.Body.Close()
		fmt.Printf("%s writes %q with token sequence %d: %s\n", who, value, held.Token.Seq, resp.Status)
	}

	connA, expireA := connectCuttable("A")
	heldByA, err := lock.New(connA, parent).Acquire(ctx)
	if err != nil {
		fmt.Println("A:", err)
		return
	}
	put("A", heldByA, nil, "from A")

	// A's next request waits on its way until resume is closed.
	resume, lateDone := make(chan struct{}), make(chan struct{})
	paused := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		<-resume
		return http.DefaultTransport.RoundTrip(r)
	})}
	go func() {
		defer close(lateDone)
		put("A (late)", heldByA, paused, "late, from A")
	}()

	expireA(heldByA.Path)
	fmt.Println("A's session expired while its request waited; the server deleted A's node")

	heldByB, err := lock.New(connect("B"), parent).Acquire(ctx)
	if err != nil {
		fmt.Println("B:", err)
		return
	}
	defer heldByB.Release(ctx)
	put("B", heldByB, nil, "from B")

	close(resume)
	<-lateDone
	value, mark, _, _ := store.Read(ctx)
	fmt.Printf("stored: %q under B's token: %v\n", value, mark == heldByB.Token)
	// Output:
	// A writes "from A" with token sequence 0: 204 No Content
	// A's session expired while its request waited; the server deleted A's node
	// B writes "from B" with token sequence 1: 204 No Content
	// A (late) writes "late, from A" with token sequence 0: refused: true; stale: true
	// stored: "from B" under B's token: true
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

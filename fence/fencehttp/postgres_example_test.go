package fencehttp_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/fence/fencehttp"
	"github.com/zk19/zk19/internal/server/sqldb"
	"github.com/zk19/zk19/internal/server/zkclient"
	"github.com/zk19/zk19/lock"
)

// The same service as the package's Example, with its register in
// PostgreSQL: a fence.Durable on the service's database, behind the
// handler. A holds the lock, writes, and lets the lock go; B holds it and
// writes; A's late request, with A's token, is refused over HTTP (409
// Conflict, a *fence.StaleError for A), and the database keeps B's value
// under B's token. This is claim F3 (§5 ¶2 sentence 3: after the new
// holder's write is accepted, the old holder's late write is refused and
// the new value stays) over HTTP, with the resource in PostgreSQL; here A
// lets the lock go instead of expiring (F1, §5 ¶1 sentence 2, is the
// package's Example), which the resource cannot tell apart.
func Example_postgres() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The service: its register is a fenced row of its PostgreSQL database.
	store, err := fence.NewDurable(ctx, postgresDB()) // in a service: sql.Open("pgx", its DSN)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(fencehttp.Handler(func(w http.ResponseWriter, r *http.Request, tok fence.Token) error {
		value, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = store.Write(r.Context(), tok, string(value))
		return err
	}))
	defer srv.Close()

	// send PUTs value with tok and says what the service answered.
	send := func(who string, tok fence.Token, value string) {
		client := &http.Client{Transport: &fencehttp.Transport{Token: tok}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/register", strings.NewReader(value))
		if err != nil {
			fmt.Println(who, err)
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(who, err)
			return
		}
		defer resp.Body.Close()
		err = fencehttp.Check(resp, tok)
		fmt.Printf("%s: %s; stale: %v\n", who, resp.Status, errors.Is(err, fence.ErrStale))
	}

	parent := postgresParent()
	heldByA, err := lock.New(connect("A"), parent).Acquire(ctx)
	if err != nil {
		fmt.Println("A:", err)
		return
	}
	send("A", heldByA.Token, "from A")
	if err := heldByA.Release(ctx); err != nil {
		fmt.Println("A's release:", err)
	}
	heldByB, err := lock.New(connect("B"), parent).Acquire(ctx)
	if err != nil {
		fmt.Println("B:", err)
		return
	}
	defer heldByB.Release(ctx)
	send("B", heldByB.Token, "from B")
	send("A, late", heldByA.Token, "late, from A")

	value, mark, _, err := store.Read(ctx)
	fmt.Printf("stored in PostgreSQL: %q under B's token: %v (%v)\n", value, mark == heldByB.Token, err)
	// Output:
	// A: 204 No Content; stale: false
	// B: 204 No Content; stale: false
	// A, late: 409 Conflict; stale: true
	// stored in PostgreSQL: "from B" under B's token: true (<nil>)
}

// postgresDB is a fresh database on the PostgreSQL server that this file
// starts once, on first use (internal/server/sqldb: Debian's PostgreSQL as a
// process), stopped with the package's Scope, at the end and on Ctrl-C.
var postgresDB = sync.OnceValue(func() *sql.DB {
	return sqldb.Start(scope).Open(scope)
})

// postgresParent creates the Example's persistent lock parent.
func postgresParent() string {
	const p = "/fencehttp-example-postgres"
	c := zkclient.Connect(scope, "setup", []string{server().Client}, zkclient.Quiet())
	if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		scope.Fatalf("create %s: %v", p, err)
	}
	return p
}

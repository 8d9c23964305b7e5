package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"

	"github.com/zk19/zk19/fence"
)

// A holder whose lock has passed to another writes late: the fenced
// resource has accepted the newer token, so it refuses the older one. The
// tokens are what lock.Held.Token carries: the lock nodes' sequence
// numbers.
func ExampleMemory_Write() {
	ctx := context.Background()
	res := fence.NewMemory()
	defer res.Close()

	a, _ := fence.ParseToken(0, "9a1c-lock-0000000005") // A's node: A held first
	b, _ := fence.ParseToken(0, "77f0-lock-0000000006") // B's node: B holds after A

	for _, w := range []struct {
		who   string
		tok   fence.Token
		value string
	}{
		{"A", a, "written by A while it held"},
		{"B", b, "written by B, the new holder"},
		{"A", a, "A, late: its lock has passed to B"},
	} {
		r, err := res.Write(ctx, w.tok, w.value)
		if err != nil && !errors.Is(err, fence.ErrStale) { // a refusal is an error too: ErrStale
			fmt.Println(err)
			return
		}
		fmt.Printf("%s writes with %v: accepted=%v, mark now %v\n", w.who, w.tok, r.Accepted, r.Mark)
	}
	v, mark, _, _ := res.Read(ctx)
	fmt.Printf("value %q under mark %v\n", v, mark)
	// Output:
	// A writes with g0/5: accepted=true, mark now g0/5
	// B writes with g0/6: accepted=true, mark now g0/6
	// A writes with g0/5: accepted=false, mark now g0/6
	// value "written by B, the new holder" under mark g0/6
}

// The durable resource keeps the mark in the same SQLite row as the value,
// so a restart forgets neither: a late write refused before the restart is
// refused after it. The service opens the database with its own driver;
// this one uses modernc.org/sqlite.
func ExampleNewDurable() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	dsn := "file:" + filepath.Join(dir, "resource.db") + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"

	open := func() (*sql.DB, *fence.Durable) {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			panic(err)
		}
		db.SetMaxOpenConns(1)
		res, err := fence.NewDurable(ctx, db)
		if err != nil {
			panic(err)
		}
		return db, res
	}

	db, res := open()
	_, err1 := res.Write(ctx, fence.Token{Domain: 0, Seq: 6}, "B's value")
	db.Close() // the service restarts

	db, res = open()
	defer db.Close()
	_, err2 := res.Write(ctx, fence.Token{Domain: 0, Seq: 5}, "A's late value")
	v, mark, _, _ := res.Read(ctx)
	fmt.Printf("before the restart: accepted=%v; after it: accepted=%v\n", err1 == nil, err2 == nil)
	var stale *fence.StaleError
	if errors.As(err2, &stale) {
		fmt.Printf("refused: token %v below the mark %v\n", stale.Token, stale.Mark)
	}
	fmt.Printf("value %q under mark %v\n", v, mark)
	// Output:
	// before the restart: accepted=true; after it: accepted=false
	// refused: token g0/5 below the mark g0/6
	// value "B's value" under mark g0/6
}

// A recreated lock parent restarts its sequence numbers at 0. With the
// parent's czxid as the domain, the new parent's first token still orders
// after every token of the old one.
func ExampleToken_Compare() {
	old := fence.Token{Domain: 0x100000004, Seq: 41}  // czxid of the old parent
	fresh := fence.Token{Domain: 0x100000009, Seq: 0} // the recreated parent
	fmt.Println(fresh.Compare(old), old.Compare(fresh))
	// Output: 1 -1
}

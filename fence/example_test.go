package fence_test

import (
	"context"
	"database/sql"
	"encoding/json"
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

// A service fences its own table: in each of its transactions it advances
// the register's mark with the request's token, then writes its own rows.
// The fence and the write commit together or not at all; a stale token
// rolls the whole transaction back.
func ExampleAdvanceMark() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "billing.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE accounts (name TEXT PRIMARY KEY, balance INTEGER NOT NULL)`); err != nil {
		panic(err)
	}
	if err := fence.CreateMarks(ctx, db, "billing_marks"); err != nil {
		panic(err)
	}

	// credit is one request of the service, with the token it carried.
	credit := func(tok fence.Token, name string, amount int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() // after Commit, a no-op
		if err := fence.AdvanceMark(ctx, tx, "billing_marks", "accounts", tok); err != nil {
			return err // a refusal: *fence.StaleError, nothing written
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (name, balance) VALUES (?1, ?2)
ON CONFLICT (name) DO UPDATE SET balance = balance + excluded.balance`, name, amount); err != nil {
			return err
		}
		return tx.Commit()
	}

	a := fence.NewToken("/services/billing/lock", 0, 5) // A held first
	b := fence.NewToken("/services/billing/lock", 0, 6) // B holds after A
	fmt.Println("A:", credit(a, "alice", 10))
	fmt.Println("B:", credit(b, "alice", 1))
	err = credit(a, "alice", 10) // A, late
	if stale := (*fence.StaleError)(nil); errors.As(err, &stale) {
		fmt.Println("A, late: refused under the mark", stale.Mark, "-", err)
	} else {
		fmt.Println("A, late:", err)
	}
	var balance int
	if err := db.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE name = 'alice'`).Scan(&balance); err != nil {
		panic(err)
	}
	fmt.Println("alice's balance:", balance)
	// Output:
	// A: <nil>
	// B: <nil>
	// A, late: refused under the mark g0/6 - fence: stale token: g0/5 is below the mark g0/6
	// alice's balance: 11
}

// A token travels as text, here in JSON: the lock's identity, the domain
// and the sequence, in one versioned form that parses back exactly; a
// token in any other form is refused.
func ExampleToken_MarshalText() {
	tok := fence.NewToken("/services/billing/lock", 0, 7)
	b, err := json.Marshal(map[string]fence.Token{"token": tok})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	var back struct{ Token fence.Token }
	fmt.Println(json.Unmarshal(b, &back), back.Token == tok)
	fmt.Println(back.Token.UnmarshalText([]byte("g0/7")))
	// Output:
	// {"token":"zk19-fence-v1:744008c8841e2ca0:0:7"}
	// <nil> true
	// fence: token "g0/7": malformed fencing token: does not start with "zk19-fence-v1:"
}

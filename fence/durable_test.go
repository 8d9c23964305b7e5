package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/internal/server/sqldb"
)

// databases are the two databases fence speaks, each opened fresh for a
// test: a SQLite file, and a database of this binary's PostgreSQL server.
var databases = []struct {
	name string
	open func(t *testing.T) *sql.DB
}{
	{"sqlite", func(t *testing.T) *sql.DB {
		t.Helper()
		dsn, err := sqldb.SQLiteDSN(filepath.Join(t.TempDir(), "fence.db"))
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}},
	{"postgres", func(t *testing.T) *sql.DB { return sqldb.Open(t) }},
}

// onEachDatabase runs test once per database, each in a subtest.
func onEachDatabase(t *testing.T, test func(t *testing.T, open func(*testing.T) *sql.DB)) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) { test(t, db.open) })
	}
}

// openDurableDB opens a Durable on a database the test holds (open), with
// one connection, as internal/server/sqldb opens it: every call of the resource
// then runs on the same connection, the one the call before left in the
// pool.
func openDurableDB(t *testing.T, open func(*testing.T) *sql.DB, opts ...Option) (*Durable, *sql.DB) {
	t.Helper()
	db := open(t)
	db.SetMaxOpenConns(1)
	d, err := NewDurable(context.Background(), db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, db
}

// TestDurableReadErrorIsNotOK: a Read whose query fails (here the database
// was closed under the resource) reports the error and ok=false, even though
// a mark was set.
func TestDurableReadErrorIsNotOK(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, open func(*testing.T) *sql.DB) {
		d, db := openDurableDB(t, open)
		mustWrite(t, d, g(1, 1), "x", true)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, err := d.Read(context.Background()); ok || err == nil {
			t.Errorf("Read on a closed database got ok=%v, err=%v; want ok=false and an error", ok, err)
		}
		// A write that fails while its context is live says the
		// database's error alone: no context's cause is put before it.
		if _, err := d.Write(context.Background(), g(1, 2), "y"); err == nil || strings.Contains(err.Error(), "%!") || errors.Is(err, context.Canceled) {
			t.Errorf("Write on a closed database, its context live: got %v; want the database's error, without a context's", err)
		}
	})
}

// TestDurableFailedWriteRollsBack: a write whose transaction fails after
// BEGIN IMMEDIATE (its context is cancelled at the decision, so the UPDATE
// does not run) ends the transaction before its connection goes back to the
// pool. The pool has one connection, so the next write and read run on it:
// they must work and see the value and mark from before the failed write.
func TestDurableFailedWriteRollsBack(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, open func(*testing.T) *sql.DB) {
		ctx := context.Background()
		var cancelAtDecision context.CancelFunc
		d, db := openDurableDB(t, open, WithTrace(&Trace{Decided: func(Decision) {
			if cancelAtDecision != nil {
				cancelAtDecision()
			}
		}}))
		if n := db.Stats().MaxOpenConnections; n != 1 {
			t.Fatalf("got MaxOpenConnections %d; want 1, so that the failed write's connection is reused", n)
		}
		mustWrite(t, d, g(1, 5), "a", true)

		failing, cancel := context.WithCancel(ctx)
		defer cancel()
		cancelAtDecision = cancel
		if res, err := d.Write(failing, g(1, 6), "lost"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Write cancelled at its decision got %+v, %v; want context.Canceled", res, err)
		}
		cancelAtDecision = nil

		if v, m, ok, err := d.Read(ctx); err != nil || !ok || v != "a" || m != g(1, 5) {
			t.Errorf("Read after the failed write got %q, %v, %v, %v; want \"a\", g1/5, true, nil", v, m, ok, err)
		}
		res, err := d.Write(ctx, g(1, 6), "b")
		if want := (Result{Accepted: true, Mark: g(1, 6), Prev: "a", Commit: 2}); err != nil || res != want {
			t.Fatalf("Write after the failed write got %+v, %v; want %+v", res, err, want)
		}
		if v, m, ok, err := d.Read(ctx); err != nil || !ok || v != "b" || m != g(1, 6) {
			t.Errorf("Read after the next write got %q, %v, %v, %v; want \"b\", g1/6, true, nil", v, m, ok, err)
		}
	})
}

// TestDurableRegistersShareTables: two registers in the same tables, named
// by the caller, keep a mark each; the applied table keeps only the
// requests of each register's mark.
func TestDurableRegistersShareTables(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, open func(*testing.T) *sql.DB) {
		ctx := context.Background()
		tables := Tables{Marks: "svc_marks", Values: "svc_values", Applied: "svc_applied"}
		a, db := openDurableDB(t, open, WithTables(tables), WithRegister("a"))
		b, err := NewDurable(ctx, db, WithTables(tables), WithRegister("b"))
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, a, g(1, 9), "a9", true)
		mustWrite(t, b, g(1, 2), "b2", true) // below a's mark: b has its own
		mustWrite(t, a, g(1, 8), "stale", false)
		if v, m, _, err := b.Read(ctx); err != nil || v != "b2" || m != g(1, 2) {
			t.Errorf("b.Read = %q, %v, %v; want b2 under g1/2", v, m, err)
		}
		for i, id := range []string{"r1", "r2", "r3"} {
			if _, err := a.WriteOnce(ctx, g(1, int64(10+i)), id, id); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM svc_applied WHERE register = 'a'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("applied rows of register a after three requests under rising tokens: %d, %v; want 1 (those below the mark pruned)", n, err)
		}
		if _, err := NewDurable(ctx, db, WithTables(Tables{Marks: "x; DROP TABLE svc_marks", Values: "v", Applied: "a"})); err == nil {
			t.Errorf("NewDurable with a table name that is not an identifier succeeded; want an error")
		}
	})
}

// TestAdvanceMarkInTheCallersTransaction: the mark moves only when the
// caller commits; a refusal says why; what AdvanceMark refuses it refuses
// before it touches the table.
func TestAdvanceMarkInTheCallersTransaction(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, open func(*testing.T) *sql.DB) {
		ctx := context.Background()
		_, db := openDurableDB(t, open)
		if err := CreateMarks(ctx, db, "svc_marks"); err != nil {
			t.Fatal(err)
		}
		tok := NewToken("/l", 0, 4)
		advance := func(tok Token, commit bool) error {
			t.Helper()
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if err := AdvanceMark(ctx, tx, "svc_marks", "r", tok); err != nil {
				return err
			}
			if commit {
				return tx.Commit()
			}
			return nil
		}
		markOf := func() (Token, bool) {
			t.Helper()
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			m, ok, err := ReadMark(ctx, tx, "svc_marks", "r")
			if err != nil {
				t.Fatal(err)
			}
			return m, ok
		}
		if err := advance(NewToken("/l", 0, 9), false); err != nil {
			t.Fatal(err)
		}
		if m, ok := markOf(); ok {
			t.Fatalf("after a rolled-back advance the mark is %v; want none: the fence commits with the caller's transaction", m)
		}
		if err := advance(tok, true); err != nil {
			t.Fatal(err)
		}
		if m, ok := markOf(); !ok || m != tok {
			t.Fatalf("mark %v (%v); want %v", m, ok, tok)
		}
		if err := advance(NewToken("/l", 0, 3), true); !errors.Is(err, ErrStale) {
			t.Errorf("a smaller token: %v; want ErrStale", err)
		}
		if err := advance(NewToken("/other", 0, 5), true); !errors.Is(err, ErrForeignLock) {
			t.Errorf("another lock's token: %v; want ErrForeignLock", err)
		}
		if err := advance(Token{}, true); !errors.Is(err, ErrZeroToken) {
			t.Errorf("the zero token: %v; want ErrZeroToken", err)
		}
		if err := AdvanceMark(ctx, nil, "svc_marks", "r", tok); err == nil {
			t.Errorf("AdvanceMark without a transaction succeeded; want an error")
		}
		if m, _ := markOf(); m != tok {
			t.Errorf("mark %v after the refusals; want %v unchanged", m, tok)
		}
	})
}

// TestDurableRefusesAnEarlierVersionsTable: a database with the one-row
// table of earlier versions is refused, not silently given a fresh mark.
func TestDurableRefusesAnEarlierVersionsTable(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, open func(*testing.T) *sql.DB) {
		ctx := context.Background()
		_, db := openDurableDB(t, open)
		if _, err := db.ExecContext(ctx, `CREATE TABLE resource (id INTEGER PRIMARY KEY, value TEXT, marked INTEGER, mark_domain INTEGER, mark_seq INTEGER, commits INTEGER)`); err != nil {
			t.Fatal(err)
		}
		if d, err := NewDurable(ctx, db); err == nil {
			_ = d.Close()
			t.Errorf("NewDurable on a database with an earlier version's table succeeded; want an error: its mark would be lost")
		}
	})
}

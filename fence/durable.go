package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
)

// Durable is a fenced resource kept in a SQLite database that the caller
// opens with the driver of its choice (this package imports none). The
// value and the mark live in one row. Each Write runs on one connection as
// BEGIN IMMEDIATE … COMMIT: it reads the row, and one conditional UPDATE
// both compares the token with the mark and stores the value, so the
// decision and the write commit together or not at all (claims F8, F12).
//
// For an accepted write to survive a crash, open the database in WAL mode
// with synchronous=FULL; for writers in several processes, set a busy
// timeout. With modernc.org/sqlite, for example:
//
//	sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)")
//
// and, so that the writers of one process queue instead of polling the file
// lock, db.SetMaxOpenConns(1).
//
// It is safe for concurrent use, also by several Durable values (or
// processes) on the same database file.
type Durable struct {
	db     *sql.DB
	trace  *Trace
	closed atomic.Bool
}

var _ Resource = (*Durable)(nil)

const schema = `CREATE TABLE IF NOT EXISTS resource (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	value       TEXT    NOT NULL,
	marked      INTEGER NOT NULL,
	mark_domain INTEGER NOT NULL,
	mark_seq    INTEGER NOT NULL,
	commits     INTEGER NOT NULL
);
INSERT OR IGNORE INTO resource (id, value, marked, mark_domain, mark_seq, commits)
VALUES (1, '', 0, 0, 0, 0);
CREATE TABLE IF NOT EXISTS applied (request TEXT PRIMARY KEY);`

// fencedUpdate stores the value and raises the mark in one statement, only
// if no mark is set yet or the token is not below the mark.
const fencedUpdate = `UPDATE resource
SET value = ?1, marked = 1,
    mark_domain = ?2, mark_seq = ?3, commits = commits + 1
WHERE id = 1 AND (marked = 0 OR mark_domain < ?2 OR (mark_domain = ?2 AND mark_seq <= ?3))`

// selectRow reads the whole row.
const selectRow = `SELECT value, marked, mark_domain, mark_seq, commits FROM resource WHERE id = 1`

// NewDurable makes db (a SQLite database) a fenced resource, creating its
// two tables if they are missing. Value and mark persist in the database;
// a later NewDurable on the same database continues with them. Close does
// not close db.
func NewDurable(ctx context.Context, db *sql.DB, opts ...Option) (*Durable, error) {
	if db == nil {
		return nil, errors.New("fence: NewDurable needs a database")
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("fence: create tables: %w", err)
	}
	return &Durable{db: db, trace: options(opts).trace}, nil
}

// Write implements Resource. A token equal to the mark is accepted; a
// larger token raises the mark.
func (d *Durable) Write(ctx context.Context, tok Token, value string) (Result, error) {
	return d.write(ctx, tok, "", value)
}

// WriteOnce is Write for a request that may be retried: a request id
// already applied stores nothing (Result.Duplicate). The id is looked up and
// recorded in the same transaction as the token check and the value, so a
// retry after a crash or a lost reply is applied once.
func (d *Durable) WriteOnce(ctx context.Context, tok Token, id, value string) (Result, error) {
	if id == "" {
		return Result{}, errors.New("fence: WriteOnce needs a request id")
	}
	return d.write(ctx, tok, id, value)
}

func (d *Durable) write(ctx context.Context, tok Token, id, value string) (res Result, err error) {
	if d.closed.Load() {
		return Result{}, ErrClosed
	}
	var commits uint64
	err = d.immediate(ctx, func(conn *sql.Conn) (err error) {
		res, commits, err = d.decideAndWrite(ctx, conn, tok, id, value)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	res.Commit = commits
	return res, nil
}

// decideAndWrite is one write's critical section, inside the IMMEDIATE
// transaction: read the row, let the Trace see the decision, then the
// conditional UPDATE that compares and writes in one statement.
func (d *Durable) decideAndWrite(ctx context.Context, conn *sql.Conn, tok Token, id, value string) (res Result, commits uint64, err error) {
	var marked bool
	if err := conn.QueryRowContext(ctx, selectRow).Scan(&res.Prev, &marked, &res.Mark.Domain, &res.Mark.Seq, &commits); err != nil {
		return res, 0, fmt.Errorf("fence: read: %w", err)
	}
	if id != "" {
		if res.Duplicate, err = applied(ctx, conn, id); err != nil || res.Duplicate {
			return res, commits, err
		}
	}
	d.trace.decided(Decision{Token: tok, Mark: res.Mark, Marked: marked, Admitted: !marked || tok.Compare(res.Mark) >= 0})
	r, err := conn.ExecContext(ctx, fencedUpdate, value, tok.Domain, tok.Seq)
	if err != nil {
		return res, 0, fmt.Errorf("fence: write: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return res, 0, fmt.Errorf("fence: write: %w", err)
	}
	if res.Accepted = n == 1; !res.Accepted {
		return res, commits, nil
	}
	if id != "" {
		if _, err := conn.ExecContext(ctx, `INSERT INTO applied (request) VALUES (?1)`, id); err != nil {
			return res, 0, fmt.Errorf("fence: record request %s: %w", id, err)
		}
	}
	res.Mark = tok // not below the old mark, so it is the new mark
	return res, commits + 1, nil
}

// immediate runs body on one connection inside BEGIN IMMEDIATE … COMMIT:
// SQLite takes the write lock at BEGIN, so the row body reads is the row its
// UPDATE judges, also against other processes. Any error rolls back.
func (d *Durable) immediate(ctx context.Context, body func(*sql.Conn) error) (err error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("fence: connection: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("fence: begin: %w", err)
	}
	defer func() {
		if err != nil {
			// Not ctx: a cancelled write must still end its transaction
			// before the connection goes back to the pool.
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	if err := body(conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("fence: commit: %w", err)
	}
	return nil
}

// applied reports whether request id was applied, inside the transaction.
func applied(ctx context.Context, conn *sql.Conn, id string) (bool, error) {
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM applied WHERE request = ?1`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("fence: look up request %s: %w", id, err)
	}
	return n > 0, nil
}

// clearMark forgets the mark and keeps the value. One UPDATE is one
// transaction, so no write is judged against half of it. It is reached only
// through package fencetest: it is claim T4's wrong rule.
func (d *Durable) clearMark(ctx context.Context) error {
	if d.closed.Load() {
		return ErrClosed
	}
	if _, err := d.db.ExecContext(ctx, `UPDATE resource SET marked = 0, mark_domain = 0, mark_seq = 0 WHERE id = 1`); err != nil {
		return fmt.Errorf("fence: clear mark: %w", err)
	}
	return nil
}

// Read implements Resource.
func (d *Durable) Read(ctx context.Context) (string, Token, bool, error) {
	if d.closed.Load() {
		return "", Token{}, false, ErrClosed
	}
	var (
		value   string
		marked  bool
		mark    Token
		commits uint64
	)
	if err := d.db.QueryRowContext(ctx, selectRow).Scan(&value, &marked, &mark.Domain, &mark.Seq, &commits); err != nil {
		return "", Token{}, false, fmt.Errorf("fence: read: %w", err)
	}
	return value, mark, marked, nil
}

// Close implements Resource: later calls fail with ErrClosed. The database
// stays open; its owner closes it.
func (d *Durable) Close() error {
	d.closed.Store(true)
	return nil
}

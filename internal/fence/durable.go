package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// Durable is a fenced resource persisted in a SQLite database file. The
// value and the mark live in one row; each Write is one IMMEDIATE
// transaction whose single conditional UPDATE both checks the token against
// the mark and stores the value, so the decision and the write commit
// atomically. The database uses WAL journaling with synchronous=FULL, so an
// accepted write survives a crash. It is safe for concurrent use, also by
// several Durable values (or processes) opened on the same file.
type Durable struct {
	db     *sql.DB
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

// OpenDurable opens (creating if needed) the resource stored at path.
// Value and mark persist across Close and OpenDurable on the same path.
func OpenDurable(ctx context.Context, path string) (*Durable, error) {
	if path == "" {
		return nil, errors.New("fence: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("fence: database path %q: %w", path, err)
	}
	if strings.ContainsRune(abs, '?') {
		return nil, fmt.Errorf("fence: database path %q must not contain '?'", path)
	}
	dsn := abs + "?_txlock=immediate&_busy_timeout=10000&_journal_mode=WAL&_synchronous=FULL"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("fence: open %q: %w", path, err)
	}
	// One connection serialises this process's transactions; IMMEDIATE
	// transactions and busy_timeout serialise against other processes.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("fence: init %q: %w", path, err)
	}
	return &Durable{db: db}, nil
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
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return Result{}, fmt.Errorf("fence: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// The read only reports Prev/Mark/Commit; the IMMEDIATE transaction
	// holds the write lock, so it sees the row the UPDATE will judge.
	var marked bool
	if err := tx.QueryRowContext(ctx, selectRow).Scan(&res.Prev, &marked, &res.Mark.Domain, &res.Mark.Seq, &res.Commit); err != nil {
		return Result{}, fmt.Errorf("fence: read: %w", err)
	}
	if id != "" {
		if res.Duplicate, err = applied(ctx, tx, id); err != nil || res.Duplicate {
			return res, errors.Join(err, tx.Commit())
		}
	}
	r, err := tx.ExecContext(ctx, fencedUpdate, value, tok.Domain, tok.Seq)
	if err != nil {
		return Result{}, fmt.Errorf("fence: write: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return Result{}, fmt.Errorf("fence: write: %w", err)
	}
	if res.Accepted = n == 1; res.Accepted && id != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO applied (request) VALUES (?1)`, id); err != nil {
			return Result{}, fmt.Errorf("fence: record request %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return Result{}, fmt.Errorf("fence: commit: %w", err)
	}
	if res.Accepted {
		res.Mark = tok // not below the old mark, so it is the new mark
		res.Commit++
	}
	return res, nil
}

// applied reports whether request id was applied, inside tx.
func applied(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM applied WHERE request = ?1`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("fence: look up request %s: %w", id, err)
	}
	return n > 0, nil
}

// ClearMark forgets the high-water mark and keeps the value, in one
// transaction. Like Memory.ClearMark it is the wrong rule of claim T4.
func (d *Durable) ClearMark(ctx context.Context) error {
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

// Close implements Resource; later calls fail with ErrClosed.
func (d *Durable) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	return d.db.Close()
}

package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// Durable is a fenced register kept in a SQLite or PostgreSQL database that
// the caller opens with the driver of its choice (this package imports
// none; NewDurable asks the database which it is). Its mark is a row of a
// marks table, kept by the same statement AdvanceMark runs; its value and
// commit count are a row of a values table; the request ids of WriteOnce
// are rows of an applied table. Several registers (WithRegister) share the
// tables, whose names the caller chooses (WithTables). Each Write runs on
// one connection in one transaction: it reads the mark, advances it with
// one conditional statement that compares and writes, and stores the
// value, so the decision and the write commit together or not at all
// (claims F6, F8, F12).
//
// On SQLite the transaction is BEGIN IMMEDIATE … COMMIT: SQLite takes its
// write lock at BEGIN, so no other write of the database runs until it
// ends. For an accepted write to survive a crash, open the database in WAL
// mode with synchronous=FULL; for writers in several processes, set a busy
// timeout. With modernc.org/sqlite, for example:
//
//	sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)")
//
// and, so that the writers of one process queue instead of polling the file
// lock, db.SetMaxOpenConns(1).
//
// On PostgreSQL the transaction is READ COMMITTED, whatever the server's
// default, and it starts by locking the register's row of the marks table
// (SELECT … FOR UPDATE, after inserting the row without a mark if it is
// missing): a second write of the register, from any process, waits there
// until the first commits or rolls back, then reads what it committed.
// Writes of other registers do not wait. An accepted write is durable as
// the server's settings make a commit (fsync, synchronous_commit). With
// pgx, for example: sql.Open("pgx", "postgres://…") after importing
// github.com/jackc/pgx/v5/stdlib.
//
// It is safe for concurrent use, also by several Durable values (or
// processes) on the same database.
type Durable struct {
	db       *sql.DB
	dl       dialect
	trace    *Trace
	register string
	t        Tables
	closed   atomic.Bool
}

var _ Resource = (*Durable)(nil)

// Tables names the tables of a Durable in its database. Each name is an SQL
// identifier: an ASCII letter or '_', then letters, digits or '_'.
type Tables struct {
	Marks   string // one mark per register (see CreateMarks, AdvanceMark)
	Values  string // one value and commit count per register
	Applied string // the request ids of WriteOnce, with their tokens
}

// DefaultTables are the tables a Durable uses unless WithTables names
// others.
var DefaultTables = Tables{Marks: "fence_marks", Values: "fence_values", Applied: "fence_applied"}

// DefaultRegister is the register a Durable holds unless WithRegister names
// another.
const DefaultRegister = "default"

// WithTables makes a Durable keep its register in the tables t names.
// Other resources ignore it.
func WithTables(t Tables) Option { return func(c *config) { c.tables = &t } }

// WithRegister makes a Durable hold the register name, so that several
// registers share one set of tables, each with its own mark. Other
// resources ignore it.
func WithRegister(name string) Option { return func(c *config) { c.register = name } }

// NewDurable makes a register of db (a SQLite or PostgreSQL database; any
// other is refused with ErrUnknownDatabase) a fenced resource, creating its
// tables if they are missing. Value and mark persist in the
// database; a later NewDurable of the same register continues with them.
// Close does not close db. A database written by the Durable of earlier
// versions (one row in a table named resource, with a mark_seq column) is
// refused: its mark would not be read, and a stale token taken; copy the
// mark into the marks table and drop that table first.
func NewDurable(ctx context.Context, db *sql.DB, opts ...Option) (*Durable, error) {
	if db == nil {
		return nil, errors.New("fence: NewDurable needs a database")
	}
	var err error
	c := options(opts)
	d := &Durable{db: db, trace: c.trace, register: c.register, t: DefaultTables}
	if c.tables != nil {
		d.t = *c.tables
	}
	if d.register == "" {
		d.register = DefaultRegister
	}
	for _, name := range []string{d.t.Marks, d.t.Values, d.t.Applied} {
		if !isIdent(name) {
			return nil, fmt.Errorf("fence: table name %q: want an SQL identifier ([A-Za-z_][A-Za-z0-9_]*)", name)
		}
	}
	if d.dl, err = detect(ctx, db); err != nil {
		return nil, err
	}
	if err := refuseOldSchema(ctx, db, d.dl); err != nil {
		return nil, err
	}
	if err := CreateMarks(ctx, db, d.t.Marks); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, d.sql(schema)); err != nil {
		return nil, fmt.Errorf("fence: create tables: %w", err)
	}
	return d, nil
}

// refuseOldSchema fails if db holds the one-row table of earlier versions.
func refuseOldSchema(ctx context.Context, db *sql.DB, dl dialect) error {
	var n int
	err := db.QueryRowContext(ctx, dl.oldSchema()).Scan(&n)
	if err != nil {
		return fmt.Errorf("fence: look for an earlier version's table: %w", err)
	}
	if n > 0 {
		return errors.New("fence: the database holds the mark of an earlier version (table resource): migrate it to the marks table, or its mark is lost and a stale token taken")
	}
	return nil
}

const schema = `CREATE TABLE IF NOT EXISTS {values} (
	register TEXT    PRIMARY KEY,
	value    TEXT    NOT NULL,
	commits  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS {applied} (
	register    TEXT    NOT NULL,
	request     TEXT    NOT NULL,
	mark_lock   TEXT    NOT NULL,
	mark_domain INTEGER NOT NULL,
	mark_seq    INTEGER NOT NULL,
	PRIMARY KEY (register, request)
);`

// sql puts the tables' names into a statement, in the database's dialect.
func (d *Durable) sql(stmt string) string {
	return d.dl.rewrite(strings.NewReplacer("{marks}", d.t.Marks, "{values}", d.t.Values, "{applied}", d.t.Applied).Replace(stmt))
}

// Write implements Resource. A token equal to the mark is accepted; a
// larger token raises the mark.
func (d *Durable) Write(ctx context.Context, tok Token, value string) (Result, error) {
	return d.write(ctx, tok, "", value)
}

// WriteOnce is Write for a request that may be retried: a request id
// already applied stores nothing (Result.Duplicate, nil error). The id is
// looked up and recorded in the same transaction as the token check and the
// value, so a retry after a crash or a lost reply is applied once. The ids
// are kept while their token is the mark; the transaction that raises the
// mark deletes the others, so the table holds the requests of one token,
// and a retry of a forgotten id is refused by its token (*StaleError).
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
	if tok.IsZero() {
		return Result{}, ErrZeroToken
	}
	var refused error
	err = d.immediate(ctx, func(conn *sql.Conn) (err error) {
		res, refused, err = d.decideAndWrite(ctx, conn, tok, id, value)
		return err
	})
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		// pgx closes a connection whose context ends, and the next
		// statement on it reports a bad connection: the cause is ctx's.
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if err != nil {
		return Result{}, err
	}
	return res, refused
}

// decideAndWrite is one write's critical section, inside the IMMEDIATE
// transaction: look the request up, advance the mark (which lets the Trace
// see the decision, then compares and writes in one statement), then store
// the value and record the request. A refusal is returned apart from err,
// which ends the transaction.
func (d *Durable) decideAndWrite(ctx context.Context, conn *sql.Conn, tok Token, id, value string) (res Result, refused, err error) {
	if d.dl == postgres {
		if err := d.lockRegister(ctx, conn); err != nil {
			return res, nil, err
		}
	}
	if err := conn.QueryRowContext(ctx, d.sql(selectValue), d.register).Scan(&res.Prev, &res.Commit); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return res, nil, fmt.Errorf("fence: read: %w", err)
	}
	if id != "" {
		if res.Duplicate, res.Mark, err = d.applied(ctx, conn, id); err != nil || res.Duplicate {
			return res, nil, err
		}
	}
	var m markRow
	if m, err = advance(ctx, d.dl.in(conn), d.t.Marks, d.register, tok, d.trace); err != nil {
		return res, nil, err
	}
	res.Mark = m.tok
	if m.refused != nil {
		return res, m.refused, nil
	}
	res.Accepted, res.Mark, res.Commit = true, m.tok, res.Commit+1
	if _, err := conn.ExecContext(ctx, d.sql(upsertValue), d.register, value); err != nil {
		return res, nil, fmt.Errorf("fence: write: %w", err)
	}
	if id != "" {
		return res, nil, d.record(ctx, conn, id, m.tok)
	}
	return res, nil, nil
}

const (
	selectValue = `SELECT value, commits FROM {values} WHERE register = ?1`
	upsertValue = `INSERT INTO {values} (register, value, commits) VALUES (?1, ?2, 1)
ON CONFLICT (register) DO UPDATE SET value = excluded.value, commits = commits + 1`
	selectApplied = `SELECT count(*) FROM {applied} WHERE register = ?1 AND request = ?2`
	insertApplied = `INSERT INTO {applied} (register, request, mark_lock, mark_domain, mark_seq) VALUES (?1, ?2, ?3, ?4, ?5)`
	// pruneApplied forgets the requests whose token is below the mark ?3-?5.
	pruneApplied = `DELETE FROM {applied} WHERE register = ?1
AND (mark_lock <> ?2 OR mark_domain < ?3 OR (mark_domain = ?3 AND mark_seq < ?4))`
	selectRow = `SELECT coalesce(v.value, ''), coalesce(m.marked, 0), coalesce(m.mark_lock, ''),
	coalesce(m.mark_domain, 0), coalesce(m.mark_seq, 0)
FROM (SELECT CAST(?1 AS TEXT) AS register) AS r
LEFT JOIN {values} AS v ON v.register = r.register
LEFT JOIN {marks} AS m ON m.register = r.register`
)

// applied reports whether request id was applied, inside the transaction,
// with the mark it was applied under.
func (d *Durable) applied(ctx context.Context, conn *sql.Conn, id string) (bool, Token, error) {
	var n int
	if err := conn.QueryRowContext(ctx, d.sql(selectApplied), d.register, id).Scan(&n); err != nil {
		return false, Token{}, fmt.Errorf("fence: look up request %s: %w", id, err)
	}
	if n == 0 {
		return false, Token{}, nil
	}
	m, err := readMark(ctx, d.dl.in(conn), d.t.Marks, d.register)
	return true, m.tok, err
}

// record keeps request id with the mark tok, and forgets the requests below
// it, inside the transaction.
func (d *Durable) record(ctx context.Context, conn *sql.Conn, id string, tok Token) error {
	if _, err := conn.ExecContext(ctx, d.sql(pruneApplied), d.register, tok.Lock, tok.Domain, tok.Seq); err != nil {
		return fmt.Errorf("fence: forget requests below %v: %w", tok, err)
	}
	if _, err := conn.ExecContext(ctx, d.sql(insertApplied), d.register, id, tok.Lock, tok.Domain, tok.Seq); err != nil {
		return fmt.Errorf("fence: record request %s: %w", id, err)
	}
	return nil
}

// immediate runs body on one connection inside BEGIN IMMEDIATE … COMMIT:
// SQLite takes the write lock at BEGIN, so the row body reads is the row its
// UPDATE judges, also against other processes. On PostgreSQL the
// transaction is READ COMMITTED, whatever the server's default, and body
// starts by locking the register's row of the marks table
// (lockRegister), which orders the register's writes as SQLite's write
// lock does. Any error rolls back.
func (d *Durable) immediate(ctx context.Context, body func(*sql.Conn) error) (err error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("fence: connection: %w", err)
	}
	defer conn.Close()
	if d.dl == postgres {
		_, err = conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL READ COMMITTED")
	} else {
		_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	}
	if err != nil {
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

// lockRegister takes, on PostgreSQL, the lock on the register's row of the
// marks table, first in the write's transaction, and holds it until the
// transaction ends: a second write of the register waits here, before it
// reads the value, the request ids or the mark, for the first to commit,
// and then reads what it committed (READ COMMITTED reads the latest commit
// at each statement). A register without a row gets one with no mark
// (marked 0) first; two first writes wait for each other on its key.
func (d *Durable) lockRegister(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, d.sql(insertNoMark), d.register); err != nil {
		return fmt.Errorf("fence: the register's row: %w", err)
	}
	var marked bool
	if err := conn.QueryRowContext(ctx, d.sql(lockMarkRow), d.register).Scan(&marked); err != nil {
		return fmt.Errorf("fence: lock the register's row: %w", err)
	}
	return nil
}

const (
	insertNoMark = `INSERT INTO {marks} (register, marked, mark_lock, mark_domain, mark_seq) VALUES (?1, 0, '', 0, 0)
ON CONFLICT (register) DO NOTHING`
	lockMarkRow = `SELECT marked FROM {marks} WHERE register = ?1 FOR UPDATE`
)

// clearMark forgets the mark and keeps the value. One UPDATE is one
// transaction, so no write is judged against half of it. It is reached only
// through package fencetest: it is claim T4's wrong rule.
func (d *Durable) clearMark(ctx context.Context) error {
	if d.closed.Load() {
		return ErrClosed
	}
	if _, err := d.db.ExecContext(ctx, d.sql(clearMarkSQL), d.register); err != nil {
		return fmt.Errorf("fence: clear mark: %w", err)
	}
	return nil
}

const clearMarkSQL = `UPDATE {marks} SET marked = 0, mark_lock = '', mark_domain = 0, mark_seq = 0 WHERE register = ?1`

// Read implements Resource. Value and mark are read in one statement.
func (d *Durable) Read(ctx context.Context) (string, Token, bool, error) {
	if d.closed.Load() {
		return "", Token{}, false, ErrClosed
	}
	var (
		value  string
		marked bool
		mark   Token
	)
	if err := d.db.QueryRowContext(ctx, d.sql(selectRow), d.register).Scan(&value, &marked, &mark.Lock, &mark.Domain, &mark.Seq); err != nil {
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

package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// CreateMarks creates the marks table named table in db if it is missing:
// one row per register, holding that register's mark. AdvanceMark keeps
// it. table is an SQL identifier ([A-Za-z_][A-Za-z0-9_]*). db is a SQLite
// or a PostgreSQL database; any other is refused with ErrUnknownDatabase.
func CreateMarks(ctx context.Context, db *sql.DB, table string) error {
	if !isIdent(table) {
		return fmt.Errorf("fence: table name %q: want an SQL identifier ([A-Za-z_][A-Za-z0-9_]*)", table)
	}
	dl, err := detect(ctx, db)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, dl.rewrite(strings.ReplaceAll(marksSchema, "{marks}", table))); err != nil {
		return fmt.Errorf("fence: create table %s: %w", table, err)
	}
	return nil
}

const marksSchema = `CREATE TABLE IF NOT EXISTS {marks} (
	register    TEXT    PRIMARY KEY,
	marked      INTEGER NOT NULL,
	mark_lock   TEXT    NOT NULL,
	mark_domain INTEGER NOT NULL,
	mark_seq    INTEGER NOT NULL
)`

// AdvanceMark is the fence inside the caller's own transaction: it compares
// tok with the mark of register in the marks table (made by CreateMarks)
// and raises the mark to tok, in one conditional statement, so that a
// service's own writes in tx and the fence commit together or not at all.
// It returns nil when tok is admitted (see Admit: the register's first
// token, or one of the mark's lock not below it); otherwise the refusal,
// *StaleError, *ForeignLockError or ErrZeroToken, and the caller rolls tx
// back. Any other error is the database's.
//
// tx is a transaction of a SQLite or a PostgreSQL database: AdvanceMark
// asks which (one SELECT version(), and on SQLite one sqlite_version(), in
// tx, at each call) and refuses any other with ErrUnknownDatabase rather
// than guess.
//
// What it guarantees: among transactions that call AdvanceMark for one
// register before they write, none that commits wrote with a token below
// one committed before it, nor with another lock's token.
//   - SQLite: the statement's compare and write are one step, and SQLite
//     runs one writing transaction at a time; a transaction whose snapshot
//     is older than a committed write fails with SQLITE_BUSY (a BEGIN
//     IMMEDIATE transaction, or a busy timeout and a retry, avoids it).
//   - PostgreSQL, READ COMMITTED (its default): the statement (INSERT … ON
//     CONFLICT DO UPDATE … WHERE the token is not below the mark) locks
//     the register's row until tx ends; a second transaction's statement
//     waits for that lock, then compares its token with the mark the first
//     committed, and is refused (*StaleError) below it. Under REPEATABLE
//     READ or SERIALIZABLE, the second fails instead with PostgreSQL's
//     serialization failure (SQLSTATE 40001) when the two overlap, even
//     with an equal or larger token; retry the whole transaction.
//
// What it does not: it fences only the writes made in tx; it does not
// commit or roll back tx. On PostgreSQL under READ COMMITTED, rows tx read
// before AdvanceMark may be older than the mark it finds; read the
// service's rows after it, when the register's row is locked, and they are
// the ones written under the mark.
func AdvanceMark(ctx context.Context, tx *sql.Tx, table, register string, tok Token) error {
	if tx == nil {
		return errors.New("fence: AdvanceMark needs a transaction")
	}
	if !isIdent(table) {
		return fmt.Errorf("fence: table name %q: want an SQL identifier ([A-Za-z_][A-Za-z0-9_]*)", table)
	}
	if tok.IsZero() {
		return ErrZeroToken
	}
	dl, err := detect(ctx, tx)
	if err != nil {
		return err
	}
	m, err := advance(ctx, dl.in(tx), table, register, tok, nil)
	if err != nil {
		return err
	}
	return m.refused
}

// ReadMark reads register's mark in the marks table named table, inside the
// caller's transaction tx: marked is false while no token was admitted for
// the register. Read in the same transaction as the service's own rows, it
// is the mark those rows were written under (on PostgreSQL, under REPEATABLE
// READ or SERIALIZABLE, where one snapshot serves the whole transaction;
// under READ COMMITTED each statement reads the latest commit). It takes no
// lock. tx is a SQLite or PostgreSQL transaction, as for AdvanceMark.
func ReadMark(ctx context.Context, tx *sql.Tx, table, register string) (mark Token, marked bool, err error) {
	if tx == nil {
		return Token{}, false, errors.New("fence: ReadMark needs a transaction")
	}
	if !isIdent(table) {
		return Token{}, false, fmt.Errorf("fence: table name %q: want an SQL identifier ([A-Za-z_][A-Za-z0-9_]*)", table)
	}
	dl, err := detect(ctx, tx)
	if err != nil {
		return Token{}, false, err
	}
	m, err := readMark(ctx, dl.in(tx), table, register)
	return m.tok, m.marked, err
}

// querier is what advance needs of a transaction: a *sql.Tx, or a *sql.Conn
// inside BEGIN IMMEDIATE.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// markRow is a register's mark as advance found it, and advance's refusal.
type markRow struct {
	tok     Token // the mark after the statement
	marked  bool
	refused error
}

// fencedUpdate compares a token with a register's mark and raises the mark
// to it, in one statement: it inserts the register's first mark, or updates
// the mark only if none is set or the token is of the mark's lock and not
// below it.
const fencedUpdate = `INSERT INTO {marks} (register, marked, mark_lock, mark_domain, mark_seq) VALUES (?1, 1, ?2, ?3, ?4)
ON CONFLICT (register) DO UPDATE SET marked = 1, mark_lock = ?2, mark_domain = ?3, mark_seq = ?4
WHERE marked = 0 OR (mark_lock = ?2 AND (mark_domain < ?3 OR (mark_domain = ?3 AND mark_seq <= ?4)))`

// advance is AdvanceMark's and Durable's one compare-and-advance, inside the
// transaction q: read the mark, let trace see the decision, then the
// statement that compares and writes. The refusal is in the mark; err is
// the database's.
func advance(ctx context.Context, q querier, table, register string, tok Token, trace *Trace) (markRow, error) {
	m, err := readMark(ctx, q, table, register)
	if err != nil {
		return m, err
	}
	refused := Admit(tok, m.tok, m.marked)
	trace.decided(Decision{Token: tok, Mark: m.tok, Marked: m.marked, Admitted: refused == nil})
	r, err := q.ExecContext(ctx, strings.ReplaceAll(fencedUpdate, "{marks}", table), register, tok.Lock, tok.Domain, tok.Seq)
	if err != nil {
		return m, fmt.Errorf("fence: advance the mark: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return m, fmt.Errorf("fence: advance the mark: %w", err)
	}
	switch {
	case n == 1 && refused == nil:
		return markRow{tok: tok, marked: true}, nil
	case n == 0 && refused != nil:
		m.refused = refused
		return m, nil
	case n == 0:
		// On PostgreSQL under READ COMMITTED: the register had no mark
		// when it was read, and another transaction's first mark, which
		// the statement waited for, committed since; the statement
		// compared tok with that mark and refused it. Read it (this
		// statement sees it) and say why.
		again, err := readMark(ctx, q, table, register)
		if err == nil {
			if again.refused = Admit(tok, again.tok, again.marked); again.refused != nil {
				return again, nil
			}
		}
	}
	return m, fmt.Errorf("fence: the mark of %q moved under the transaction: read %v (set: %v), the statement changed %d rows for %v", register, m.tok, m.marked, n, tok)
}

// readMark reads register's mark inside the transaction q; a register
// without a row has no mark.
func readMark(ctx context.Context, q querier, table, register string) (markRow, error) {
	var m markRow
	err := q.QueryRowContext(ctx, "SELECT marked, mark_lock, mark_domain, mark_seq FROM "+table+" WHERE register = ?1", register).
		Scan(&m.marked, &m.tok.Lock, &m.tok.Domain, &m.tok.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return markRow{}, nil
	}
	if err != nil {
		return m, fmt.Errorf("fence: read the mark of %q: %w", register, err)
	}
	return m, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

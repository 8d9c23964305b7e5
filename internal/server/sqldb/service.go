package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/zk19/zk19/fence"
)

// Service is a service's own PostgreSQL table fenced as a service fences
// it, as SQLiteService is on SQLite: each write is one READ
// COMMITTED transaction of the service that calls fence.AdvanceMark first
// and then reads and writes the service's row (table ledger, not fence's).
// Its reads come after AdvanceMark, whose statement holds the register's
// row lock until the commit, so they see the rows of the last fenced
// commit. It is a fence.Resource, so that the claims' checks run on it.
type Service struct {
	db       *sql.DB
	register string
}

var _ fence.Resource = (*Service)(nil)

const (
	serviceMarks  = "service_marks"
	serviceSchema = `CREATE TABLE IF NOT EXISTS ledger (
	name    TEXT   PRIMARY KEY,
	value   TEXT   NOT NULL,
	commits BIGINT NOT NULL
)`
)

// OpenService makes the service's tables in a fresh database of this
// binary's server (Shared), with the register name; it is closed at tb's
// cleanup.
func OpenService(tb TB, register string) *Service {
	tb.Helper()
	db := Open(tb)
	ctx := context.Background()
	if err := fence.CreateMarks(ctx, db, serviceMarks); err != nil {
		tb.Fatalf("pgserver: the service's marks: %v", err)
	}
	if _, err := db.ExecContext(ctx, serviceSchema); err != nil {
		tb.Fatalf("pgserver: the service's ledger: %v", err)
	}
	return &Service{db: db, register: register}
}

// Write implements fence.Resource: AdvanceMark, then the service's row, in
// one transaction of the service.
func (s *Service) Write(ctx context.Context, tok fence.Token, value string) (res fence.Result, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return res, fmt.Errorf("service: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := fence.AdvanceMark(ctx, tx, serviceMarks, s.register, tok); err != nil {
		var stale *fence.StaleError
		var foreign *fence.ForeignLockError
		if errors.As(err, &stale) {
			res.Mark = stale.Mark
		} else if errors.As(err, &foreign) {
			res.Mark = foreign.Mark
		}
		res.Prev, res.Commit, _ = s.row(ctx, tx)
		return res, err
	}
	if res.Prev, res.Commit, err = s.row(ctx, tx); err != nil {
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger (name, value, commits) VALUES ($1, $2, 1)
ON CONFLICT (name) DO UPDATE SET value = excluded.value, commits = ledger.commits + 1`, s.register, value); err != nil {
		return res, fmt.Errorf("service: write the ledger: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("service: commit: %w", err)
	}
	res.Accepted, res.Mark, res.Commit = true, tok, res.Commit+1
	return res, nil
}

// row reads the service's row in tx: its value and commit count.
func (s *Service) row(ctx context.Context, tx *sql.Tx) (value string, commits uint64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT value, commits FROM ledger WHERE name = $1`, s.register).Scan(&value, &commits)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("service: read the ledger: %w", err)
	}
	return value, commits, nil
}

// Read implements fence.Resource: the service's row and the mark, in one
// REPEATABLE READ transaction (one snapshot for both).
func (s *Service) Read(ctx context.Context) (value string, mark fence.Token, marked bool, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return "", fence.Token{}, false, fmt.Errorf("service: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if value, _, err = s.row(ctx, tx); err != nil {
		return "", fence.Token{}, false, err
	}
	mark, marked, err = fence.ReadMark(ctx, tx, serviceMarks, s.register)
	return value, mark, marked, err
}

// Close does nothing: the database is closed at the test's cleanup.
func (s *Service) Close() error { return nil }

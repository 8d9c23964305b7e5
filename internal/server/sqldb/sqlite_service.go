package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/zk19/zk19/fence"
)

// SQLiteService is a service's own table fenced as a service fences it: each
// write is one transaction of the service that calls fence.AdvanceMark and
// then writes the service's row (table ledger, not fence's), so the fence
// and the write commit together. It is a fence.Resource, so that the
// claims' checks run on it as on fence's own resources.
type SQLiteService struct {
	db       *sql.DB
	register string
}

var _ fence.Resource = (*SQLiteService)(nil)

const (
	sqliteServiceMarks  = "service_marks"
	sqliteServiceSchema = `CREATE TABLE IF NOT EXISTS ledger (
	name    TEXT    PRIMARY KEY,
	value   TEXT    NOT NULL,
	commits INTEGER NOT NULL
)`
)

// OpenSQLiteService opens (creating if needed) the service's database at path,
// with the register name.
func OpenSQLiteService(ctx context.Context, path, register string) (*SQLiteService, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	if err := fence.CreateMarks(ctx, db, sqliteServiceMarks); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if _, err := db.ExecContext(ctx, sqliteServiceSchema); err != nil {
		return nil, errors.Join(fmt.Errorf("sqlite: create ledger: %w", err), db.Close())
	}
	return &SQLiteService{db: db, register: register}, nil
}

// Write implements fence.Resource: AdvanceMark, then the service's row, in
// one transaction of the service.
func (s *SQLiteService) Write(ctx context.Context, tok fence.Token, value string) (res fence.Result, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("sqlite: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := tx.QueryRowContext(ctx, `SELECT value, commits FROM ledger WHERE name = ?1`, s.register).Scan(&res.Prev, &res.Commit); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return res, fmt.Errorf("sqlite: read the ledger: %w", err)
	}
	if err := fence.AdvanceMark(ctx, tx, sqliteServiceMarks, s.register, tok); err != nil {
		var stale *fence.StaleError
		var foreign *fence.ForeignLockError
		if errors.As(err, &stale) {
			res.Mark = stale.Mark
		} else if errors.As(err, &foreign) {
			res.Mark = foreign.Mark
		}
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger (name, value, commits) VALUES (?1, ?2, 1)
ON CONFLICT (name) DO UPDATE SET value = excluded.value, commits = commits + 1`, s.register, value); err != nil {
		return res, fmt.Errorf("sqlite: write the ledger: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("sqlite: commit: %w", err)
	}
	res.Accepted, res.Mark, res.Commit = true, tok, res.Commit+1
	return res, nil
}

// Read implements fence.Resource: the service's row and the mark, in one
// transaction.
func (s *SQLiteService) Read(ctx context.Context) (value string, mark fence.Token, marked bool, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", fence.Token{}, false, fmt.Errorf("sqlite: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tx.QueryRowContext(ctx, `SELECT value FROM ledger WHERE name = ?1`, s.register).Scan(&value); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fence.Token{}, false, fmt.Errorf("sqlite: read the ledger: %w", err)
	}
	mark, marked, err = fence.ReadMark(ctx, tx, sqliteServiceMarks, s.register)
	return value, mark, marked, err
}

// Close closes the database.
func (s *SQLiteService) Close() error { return s.db.Close() }

// This file opens the durable fenced resource of the zk19 tests on a
// SQLite file with modernc's pure-Go driver (OpenSQLite). The public fence
// package imports no driver; this room is where the tests bring one.

package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/zk19/zk19/fence"
)

// SQLiteDSN is the data source name for path that fence.Durable's doc asks for:
// WAL journaling with synchronous=FULL (an accepted write survives a crash)
// and a busy timeout (writers in several processes wait for each other).
func SQLiteDSN(path string) (string, error) {
	if path == "" {
		return "", errors.New("sqlite: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("sqlite: database path %q: %w", path, err)
	}
	if strings.ContainsRune(abs, '?') {
		return "", fmt.Errorf("sqlite: database path %q must not contain '?'", path)
	}
	return "file:" + abs + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)", nil
}

// SQLiteDurable is a fence.Durable that owns its database: Close closes both.
type SQLiteDurable struct {
	*fence.Durable
	db   *sql.DB
	path string
}

// openDB opens the database file at path on one connection: it queues
// this process's writes in database/sql's pool, in order; the busy timeout
// is only for other processes. Many connections would poll SQLite's file
// lock and starve each other.
func openDB(path string) (*sql.DB, error) {
	dsn, err := SQLiteDSN(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// OpenSQLite opens (creating if needed) the durable resource stored at path.
// Value and mark persist across Close and OpenSQLite on the same path.
func OpenSQLite(ctx context.Context, path string, opts ...fence.Option) (*SQLiteDurable, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	d, err := fence.NewDurable(ctx, db, opts...)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &SQLiteDurable{Durable: d, db: db, path: path}, nil
}

// Path is the file the resource is stored at: OpenSQLite opens it again after Close.
func (d *SQLiteDurable) Path() string { return d.path }

// Close closes the resource, then its database.
func (d *SQLiteDurable) Close() error {
	return errors.Join(d.Durable.Close(), d.db.Close())
}

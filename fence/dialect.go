package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// dialect is the SQL a database speaks: the statements of this package are
// written for SQLite (numbered parameters ?1, an upsert whose ON CONFLICT
// clause names the target's columns bare) and rewritten for PostgreSQL.
type dialect int

const (
	sqlite dialect = iota + 1
	postgres
)

func (d dialect) String() string {
	if d == postgres {
		return "PostgreSQL"
	}
	return "SQLite"
}

// ErrUnknownDatabase is the error of every function of this package given a
// database that is neither SQLite nor PostgreSQL: the fence's statements
// and its locking are proven on those two only, and a guess could admit a
// stale token.
var ErrUnknownDatabase = errors.New("fence: the database is neither SQLite nor PostgreSQL")

// detect asks the database which it is, inside q (a transaction, a
// connection or a pool): PostgreSQL answers SELECT version() with a text
// that begins "PostgreSQL "; SQLite has no version() and answers SELECT
// sqlite_version(). version() is asked first because a failed statement
// aborts a PostgreSQL transaction, and not a SQLite one. Anything else is
// ErrUnknownDatabase.
func detect(ctx context.Context, q querier) (dialect, error) {
	var v string
	errPG := q.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	if errPG == nil {
		if strings.HasPrefix(v, "PostgreSQL ") {
			return postgres, nil
		}
		return 0, fmt.Errorf("%w: it answers version() with %q", ErrUnknownDatabase, v)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fence: which database: %w", err)
	}
	errLite := q.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v)
	if errLite == nil {
		return sqlite, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fence: which database: %w", err)
	}
	return 0, fmt.Errorf("%w: SELECT version(): %v; SELECT sqlite_version(): %v", ErrUnknownDatabase, errPG, errLite)
}

// in returns q speaking d: q itself for SQLite, q with every statement
// rewritten (dialect.rewrite) for PostgreSQL.
func (d dialect) in(q querier) querier {
	if d == postgres {
		return pgQuerier{q}
	}
	return q
}

// pgQuerier runs SQLite's statements on PostgreSQL, rewritten.
type pgQuerier struct{ q querier }

func (p pgQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.q.ExecContext(ctx, postgres.rewrite(query), args...)
}

func (p pgQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.q.QueryRowContext(ctx, postgres.rewrite(query), args...)
}

var (
	numbered  = regexp.MustCompile(`\?([0-9]+)`)
	integer   = regexp.MustCompile(`\bINTEGER\b`)
	upsertOf  = regexp.MustCompile(`(?s)^\s*INSERT INTO ([A-Za-z_][A-Za-z0-9_]*) \(([^)]*)\).*?ON CONFLICT \([^)]*\) DO UPDATE SET `)
	wordOrDot = regexp.MustCompile(`[A-Za-z_.][A-Za-z0-9_.]*`)
)

// rewrite turns one of this package's statements into d's: for
// PostgreSQL, ?N becomes $N; INTEGER columns become BIGINT (SQLite's
// INTEGER holds 64 bits, PostgreSQL's 32); and in an upsert's DO UPDATE
// clause a bare column of the target, which PostgreSQL finds ambiguous
// beside excluded's, is qualified by the target's name (the SET's targets
// excepted).
func (d dialect) rewrite(stmt string) string {
	if d != postgres {
		return stmt
	}
	stmt = numbered.ReplaceAllString(stmt, "$$$1")
	stmt = integer.ReplaceAllString(stmt, "BIGINT")
	m := upsertOf.FindStringSubmatchIndex(stmt)
	if m == nil {
		return stmt
	}
	table := stmt[m[2]:m[3]]
	cols := map[string]bool{}
	for _, c := range strings.Split(stmt[m[4]:m[5]], ",") {
		cols[strings.TrimSpace(c)] = true
	}
	qualify := func(expr string) string {
		return wordOrDot.ReplaceAllStringFunc(expr, func(w string) string {
			if cols[w] {
				return table + "." + w
			}
			return w
		})
	}
	head, update := stmt[:m[1]], stmt[m[1]:]
	set, where, hasWhere := strings.Cut(update, "\nWHERE ")
	var out []string
	for _, assign := range strings.Split(set, ",") {
		target, expr, ok := strings.Cut(assign, "=")
		if !ok {
			out = append(out, assign)
			continue
		}
		out = append(out, target+"="+qualify(expr))
	}
	stmt = head + strings.Join(out, ",")
	if hasWhere {
		stmt += "\nWHERE " + qualify(where)
	}
	return stmt
}

// oldSchema is the statement that counts the one-row tables of earlier
// versions (table resource, with a mark_seq column) in d's catalogue.
func (d dialect) oldSchema() string {
	if d == postgres {
		return `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'resource' AND column_name = 'mark_seq'`
	}
	return `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'resource' AND sql LIKE '%mark_seq%'`
}

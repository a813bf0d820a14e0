// Package migrations holds payledger's SQL schema, embedded in the binary, and
// applies it with goose: one transaction per file, versions recorded in
// goose_db_version, and a Postgres advisory lock so that several `ledger serve`
// processes starting together migrate once.
//
// Files are numbered NNNNN_name.sql and never edited once released; a change
// is a new file.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed *.sql
var files embed.FS

// Migrator applies and inspects the embedded migrations on one database.
type Migrator struct {
	db       *sql.DB
	provider *goose.Provider
}

// New returns a Migrator over pool. Close releases its database/sql handle
// (not the pool).
func New(pool *pgxpool.Pool) (*Migrator, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migrations: session locker: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, files, goose.WithSessionLocker(locker))
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return &Migrator{db: db, provider: p}, nil
}

// Up applies every pending migration and returns how many it applied.
func (m *Migrator) Up(ctx context.Context) (int, error) {
	res, err := m.provider.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrations: up: %w", err)
	}
	return len(res), nil
}

// Versions returns the database's current version and the newest embedded one.
func (m *Migrator) Versions(ctx context.Context) (current, target int64, err error) {
	current, target, err = m.provider.GetVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("migrations: versions: %w", err)
	}
	return current, target, nil
}

// DownTo rolls back every migration above version (0: all of them). It is
// for operators reverting a failed deploy and for tests; serve never calls it.
func (m *Migrator) DownTo(ctx context.Context, version int64) error {
	if _, err := m.provider.DownTo(ctx, version); err != nil {
		return fmt.Errorf("migrations: down to %d: %w", version, err)
	}
	return nil
}

// Close releases the database/sql handle; the pool stays open.
func (m *Migrator) Close() error { return m.db.Close() }

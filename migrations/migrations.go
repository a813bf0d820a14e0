// Package migrations holds payledger's SQL schema, embedded in the binary, and
// applies it with goose: one transaction per file, versions recorded in
// goose_db_version, and a Postgres advisory lock so that several `ledger serve`
// processes starting together migrate once. It also applies the schema of
// River, the Postgres job queue the background jobs use, with River's own
// migrator, so one `ledger migrate` brings a database fully up to date.
//
// Files are numbered NNNNN_name.sql and never edited once released; a change
// is a new file.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed *.sql
var files embed.FS

// Migrator applies and inspects the embedded migrations on one database.
type Migrator struct {
	pool     *pgxpool.Pool
	db       *sql.DB
	provider *goose.Provider
	river    *rivermigrate.Migrator[pgx.Tx]
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
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrations: river: %w", err)
	}
	return &Migrator{pool: pool, db: db, provider: p, river: rm}, nil
}

// Up applies every pending payledger migration, then River's, and returns
// how many payledger migrations it applied.
func (m *Migrator) Up(ctx context.Context) (int, error) {
	res, err := m.provider.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrations: up: %w", err)
	}
	if err := m.riverMigrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return len(res), err
	}
	return len(res), nil
}

// riverLockKey serialises River's migrations across processes (goose has
// its own lock; River's migrator takes none).
const riverLockKey = 0x70_61_79_6c_72_69_76 // "paylriv"

func (m *Migrator) riverMigrate(ctx context.Context, dir rivermigrate.Direction, opts *rivermigrate.MigrateOpts) error {
	// River applies each version in its own transaction (one adds an enum
	// value that the next uses), so the lock is a session lock held on a
	// connection of its own for the whole run.
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrations: river %s: %w", dir, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", riverLockKey); err != nil {
		return fmt.Errorf("migrations: river %s: lock: %w", dir, err)
	}
	defer func() {
		// A failed unlock leaves the lock with the session: drop it.
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", riverLockKey); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := m.river.Migrate(ctx, dir, opts); err != nil {
		return fmt.Errorf("migrations: river %s: %w", dir, err)
	}
	return nil
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
	if version == 0 {
		if err := m.riverMigrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: -1}); err != nil {
			return err
		}
	}
	if _, err := m.provider.DownTo(ctx, version); err != nil {
		return fmt.Errorf("migrations: down to %d: %w", version, err)
	}
	return nil
}

// Close releases the database/sql handle; the pool stays open.
func (m *Migrator) Close() error { return m.db.Close() }

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/migrations"
)

// openPool applies pending migrations to dbURL, so serve never runs against
// an old schema, then opens the pool serve works with.
func openPool(ctx context.Context, dbURL string, logger *slog.Logger) (*pgxpool.Pool, error) {
	pcfg, err := migratedConfig(ctx, dbURL, logger)
	if err != nil {
		return nil, err
	}
	return newPool(ctx, pcfg)
}

// openStorePool is openPool for the database of the Postgres event store:
// every new connection runs the append path once before the pool hands it
// out (postgres.WarmUp), which needs the migrated schema, so the migrations
// run on a pool of their own first.
func openStorePool(ctx context.Context, dbURL string, logger *slog.Logger) (*pgxpool.Pool, error) {
	pcfg, err := migratedConfig(ctx, dbURL, logger)
	if err != nil {
		return nil, err
	}
	pcfg.AfterConnect = postgres.WarmUp
	return newPool(ctx, pcfg)
}

// openReadOnly connects without applying migrations; every transaction of
// the pool is read-only, so the read-only commands (verify, doctor,
// dead-letters list) cannot write even by mistake.
func openReadOnly(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("read-only database: %w", err)
	}
	pcfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pcfg.ConnConfig.RuntimeParams["application_name"] = "ledger (read-only)"
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("read-only database %s: %w", redact(dbURL), err)
	}
	return pool, nil
}

func migratedConfig(ctx context.Context, dbURL string, logger *slog.Logger) (*pgxpool.Config, error) {
	if err := migrateDatabase(ctx, dbURL, logger); err != nil {
		return nil, err
	}
	return poolConfig(dbURL)
}

func newPool(ctx context.Context, pcfg *pgxpool.Config) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// migrate applies the schema to the read-model database (and to a separate
// Postgres event store database when one is configured).
func migrate(ctx context.Context, e *environment) error {
	if err := migrateDatabase(ctx, e.cfg.DatabaseURL, e.logger); err != nil {
		return err
	}
	if kind, _ := eventStoreKind(e.cfg.EventStoreURL); kind == "postgres" {
		return migrateDatabase(ctx, e.cfg.EventStoreURL, e.logger)
	}
	return nil
}

// migrateDatabase applies pending migrations to the database at dbURL.
func migrateDatabase(ctx context.Context, dbURL string, logger *slog.Logger) error {
	pcfg, err := poolConfig(dbURL)
	if err != nil {
		return err
	}
	pool, err := newPool(ctx, pcfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	m, err := migrations.New(pool)
	if err != nil {
		return err
	}
	defer m.Close()
	n, err := m.Up(ctx)
	if err != nil {
		return fmt.Errorf("database %s: %w", redact(dbURL), err)
	}
	current, _, _ := m.Versions(ctx)
	logger.Info("migrations applied", "database", redact(dbURL), "applied", n, "version", current)
	return nil
}

// poolConfig parses dbURL with the ledger's pool defaults.
func poolConfig(dbURL string) (*pgxpool.Config, error) {
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		// pgx's default (4 on two cores) is too small: the projector holds
		// two connections, River a listener plus one to fetch and one to
		// complete jobs (a running job holds none, whatever
		// LEDGER_JOBS_WORKERS), and every in-flight webhook one.
		pcfg.MaxConns = max(pcfg.MaxConns, 20)
	}
	return pcfg, nil
}

// migrationsCheck reports not-ready while the database is behind the binary's
// schema (another process may be mid-migration, or someone rolled back).
func migrationsCheck(m *migrations.Migrator) api.Check {
	return api.Check{Name: "migrations", Run: func(ctx context.Context) error {
		current, target, err := m.Versions(ctx)
		if err != nil {
			return err
		}
		if current < target {
			return fmt.Errorf("schema version %d, binary needs %d", current, target)
		}
		return nil
	}}
}

// redact hides a password in a database URL for logs.
func redact(dbURL string) string {
	if u, err := url.Parse(dbURL); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

// openReadOnlyStores opens, read-only, the database and the event store a
// read-only command reads; close releases both.
func openReadOnlyStores(ctx context.Context, e *environment) (pool *pgxpool.Pool, store openedStore, closeAll func(), err error) {
	pool, err = openReadOnly(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return nil, openedStore{}, nil, err
	}
	store, err = openEventStore(ctx, e.cfg, pool, openReadOnly, e.logger)
	if err != nil {
		pool.Close()
		return nil, openedStore{}, nil, err
	}
	return pool, store, func() { store.close(); pool.Close() }, nil
}

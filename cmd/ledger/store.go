package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/kurrentdb"
	"github.com/payledger/payledger/eventstore/postgres"
)

// openedStore is the event store LEDGER_EVENTSTORE_URL selects.
type openedStore struct {
	eventstore.Store
	// pg is the Postgres store, nil for KurrentDB: verify audits the whole
	// store through it.
	pg    *postgres.Store
	close func()
}

// openEventStore selects the adapter: the Postgres store in the main
// database (pool) when LEDGER_EVENTSTORE_URL is empty, KurrentDB for esdb://
// or kurrentdb://, and the Postgres store in a database of its own, opened
// with openPool, for postgres:// (serve migrates it; verify opens it
// read-only).
func openEventStore(ctx context.Context, cfg Config, pool *pgxpool.Pool,
	openPool func(context.Context, string) (*pgxpool.Pool, error), logger *slog.Logger) (openedStore, error) {
	opts := postgres.Options{
		PollInterval: cfg.EventStorePollPeriod,
		GroupSize:    cfg.AppendGroupSize,
		GroupWriters: cfg.AppendGroupWriters,
	}
	if cfg.EventStoreURL == "" {
		s := postgres.New(pool, opts)
		return openedStore{Store: s, pg: s, close: func() {}}, nil
	}
	kind, err := eventStoreKind(cfg.EventStoreURL)
	if err != nil {
		return openedStore{}, err
	}
	if kind == "kurrentdb" {
		// The client connects lazily: serve starts even while KurrentDB is
		// down, /readyz says so, and webhooks answer 503 until it is back.
		s, err := kurrentdb.Open(ctx, cfg.EventStoreURL, kurrentdb.Options{Logger: logger})
		if err != nil {
			return openedStore{}, fmt.Errorf("LEDGER_EVENTSTORE_URL: %w", err)
		}
		return openedStore{Store: s, close: func() { _ = s.Close() }}, nil
	}
	esPool, err := openPool(ctx, cfg.EventStoreURL)
	if err != nil {
		return openedStore{}, err
	}
	s := postgres.New(esPool, opts)
	return openedStore{Store: s, pg: s, close: esPool.Close}, nil
}

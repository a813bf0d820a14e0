package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

var _ eventstore.Store = (*Store)(nil)

// Options tunes a Store. The zero value gives the defaults.
type Options struct {
	// PollInterval is how long a subscription that has caught up waits
	// before asking for new events again (default 25ms). It bounds the
	// delivery latency of an idle feed.
	PollInterval time.Duration
	// BatchSize is how many events a subscription reads per query and
	// buffers (default 256).
	BatchSize int
}

// Default option values.
const (
	DefaultPollInterval = 25 * time.Millisecond
	DefaultBatchSize    = 256
)

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	return o
}

// Store is the Postgres eventstore.Store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	opts Options
}

// New returns a Store over pool. The schema must be migrated (Ping says
// whether it is); New itself does no I/O.
func New(pool *pgxpool.Pool, opts Options) *Store {
	return &Store{pool: pool, opts: opts.withDefaults()}
}

// pingSQL is a round trip (so it checks the connection, like pool.Ping) that
// also checks the schema, so readiness is false until migrations ran.
const pingSQL = `SELECT to_regclass('es_events') IS NOT NULL
	AND to_regprocedure('es_append(text, bigint, uuid[], text[], jsonb[], jsonb[])') IS NOT NULL
	AND to_regprocedure('es_lock_stream(text)') IS NOT NULL`

// Ping reports whether Postgres answers and the event store schema exists.
// Both failures wrap domain.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	var ready bool
	if err := s.pool.QueryRow(ctx, pingSQL).Scan(&ready); err != nil {
		return translate("postgres: ping", err)
	}
	if !ready {
		return fmt.Errorf("postgres: ping: es_events, es_append or es_lock_stream is missing (migrations not applied): %w", domain.ErrUnavailable)
	}
	return nil
}

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
	// GroupSize is the most single-event appends with any revision merged
	// into one transaction when they wait at the same time (default 64);
	// 1 appends each in its own transaction.
	GroupSize int
	// GroupWriters is the most merged transactions in flight at once
	// (default 2): streams are spread over that many lanes, each with one
	// transaction in flight. More lets more overlap on the server; fewer
	// makes each merge more.
	GroupWriters int
	// GroupTimeout bounds one merged transaction (default 10s). It is not
	// the callers' own deadline: a merged transaction serves them all.
	GroupTimeout time.Duration
}

// Default option values.
const (
	DefaultPollInterval = 25 * time.Millisecond
	DefaultBatchSize    = 256
	DefaultGroupSize    = 64
	DefaultGroupWriters = 2
	DefaultGroupTimeout = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.GroupSize <= 0 {
		o.GroupSize = DefaultGroupSize
	}
	if o.GroupWriters <= 0 {
		o.GroupWriters = DefaultGroupWriters
	}
	if o.GroupTimeout <= 0 {
		o.GroupTimeout = DefaultGroupTimeout
	}
	return o
}

// Store is the Postgres eventstore.Store. It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	opts  Options
	group *group // nil when GroupSize is 1
}

// New returns a Store over pool. The schema must be migrated (Ping says
// whether it is); New itself does no I/O.
func New(pool *pgxpool.Pool, opts Options) *Store {
	s := &Store{pool: pool, opts: opts.withDefaults()}
	if s.opts.GroupSize > 1 {
		s.group = newGroup(s, s.opts.GroupSize, s.opts.GroupWriters, s.opts.GroupTimeout)
	}
	return s
}

// pingSQL is a round trip (so it checks the connection, like pool.Ping) that
// also checks the schema, so readiness is false until migrations ran.
const pingSQL = `SELECT to_regclass('es_events') IS NOT NULL
	AND to_regprocedure('es_append(text, bigint, uuid[], text[], jsonb[], jsonb[])') IS NOT NULL
	AND to_regprocedure('es_lock_stream(text)') IS NOT NULL
	AND to_regprocedure('es_append_group(text[], uuid[], text[], jsonb[], jsonb[])') IS NOT NULL`

// Ping reports whether Postgres answers and the event store schema exists.
// Both failures wrap domain.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	var ready bool
	if err := s.pool.QueryRow(ctx, pingSQL).Scan(&ready); err != nil {
		return translate("postgres: ping", err)
	}
	if !ready {
		return fmt.Errorf("postgres: ping: es_events or one of its functions is missing (migrations not applied): %w", domain.ErrUnavailable)
	}
	return nil
}

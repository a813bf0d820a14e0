package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

// A connection that WarmUp readied holds the append statements prepared,
// leaves no row behind, and appends as any other.
func TestWarmUp(t *testing.T) {
	ctx := context.Background()
	cfg := pgtest.NewPool(t).Config()
	cfg.MaxConns = 2
	cfg.AfterConnect = WarmUp
	pool := newPoolWith(t, cfg)

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	rows, err := conn.Query(ctx, `SELECT statement FROM pg_prepared_statements`)
	if err != nil {
		t.Fatalf("prepared statements: %v", err)
	}
	var prepared []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("scan: %v", err)
		}
		prepared = append(prepared, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("prepared statements: %v", err)
	}
	conn.Release()
	for _, want := range []string{groupSQL, lockStreamSQL, appendSingleSQL} {
		if !slices.Contains(prepared, want) {
			t.Errorf("after WarmUp the connection has not prepared %.40q…", want)
		}
	}

	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM es_events`).Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	if n != 0 {
		t.Fatalf("WarmUp left %d rows in es_events, want 0", n)
	}

	s := New(pool, Options{})
	stream := "payment-stripe-pi_warm"
	res, err := s.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{testEvent(t, "pi_warm", "1")})
	if err != nil {
		t.Fatalf("append on a warmed connection: %v", err)
	}
	if res.Revision != 0 || res.Duplicate {
		t.Fatalf("append = %+v, want revision 0, not a duplicate", res)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM es_events`).Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	if n != 1 {
		t.Fatalf("es_events holds %d rows after WarmUp and one append, want 1", n)
	}
}

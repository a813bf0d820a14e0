package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestUnreachable: when Postgres cannot be reached every operation says
// domain.ErrUnavailable, so the API answers 503 and the provider retries.
func TestUnreachable(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), "postgres://postgres@127.0.0.1:1/payledger?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := New(pool, Options{})
	const stream = "payment-stripe-pi_3Nk-x_Y"
	tests := []struct {
		name string
		op   func(ctx context.Context) error
	}{
		{"append", func(ctx context.Context) error {
			_, err := s.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{testEvent(t, stream, "a")})
			return err
		}},
		{"read", func(ctx context.Context) error { _, err := s.ReadStream(ctx, stream); return err }},
		{"ping", s.Ping},
		{"subscribe", func(ctx context.Context) error {
			sub, _ := s.SubscribeAll(ctx, eventstore.Start, eventstore.Filter{})
			defer sub.Close()
			_, err := sub.Next(ctx)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op(t.Context())
			if !errors.Is(err, domain.ErrUnavailable) || domain.KindOf(err) != domain.KindUnavailable {
				t.Fatalf("err = %v, want one wrapping domain.ErrUnavailable", err)
			}
		})
	}
}

// TestPing: ready only when the schema is migrated, so /readyz waits for
// migrations.
func TestPing(t *testing.T) {
	tests := []struct {
		name      string
		pool      func(testing.TB) *pgxpool.Pool
		wantReady bool
	}{
		{"migrated", pgtest.NewPool, true},
		{"unmigrated", pgtest.NewEmptyPool, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New(tt.pool(t), Options{}).Ping(t.Context())
			if tt.wantReady && err != nil || !tt.wantReady && !errors.Is(err, domain.ErrUnavailable) {
				t.Fatalf("ping = %v, want ready %t", err, tt.wantReady)
			}
		})
	}
}

// TestCanceled: the caller's own cancellation is a context error, not an
// outage.
func TestCanceled(t *testing.T) {
	s := New(newPool(t, 4), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	const stream = "payment-stripe-pi_3Nk-x_Ycanceled"
	_, err := s.Append(ctx, stream, eventstore.Any(), []eventstore.EventData{testEvent(t, stream, "a")})
	if !errors.Is(err, context.Canceled) || errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("append = %v, want context.Canceled only", err)
	}
}

// TestConnectionKilled: a connection the server drops under a statement
// (failover, restart, pg_terminate_backend) is an outage too.
func TestConnectionKilled(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t, 1)
	s := New(pool, Options{})
	var pid int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin := newPoolWith(t, pool.Config())
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1, 5000)", pid); err != nil {
		t.Fatal(err)
	}
	_, err := s.ReadStream(ctx, "payment-stripe-pi_3Nk-x_Ykilled")
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("read on a killed connection = %v, want one wrapping domain.ErrUnavailable", err)
	}
}

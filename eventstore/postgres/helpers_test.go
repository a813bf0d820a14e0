package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

// newPool returns a pool of up to maxConns connections on a fresh, migrated
// database (pgtest's own pool is sized for ordinary tests).
func newPool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg := pgtest.NewPool(t).Config()
	cfg.MaxConns = maxConns
	return newPoolWith(t, cfg)
}

func newPoolWith(t testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// testEvent is a payment.created event of Stripe payment pid; key tells its
// events apart.
func testEvent(t testing.TB, pid, key string) eventstore.EventData {
	t.Helper()
	m := domain.Meta{
		Provider:          "stripe",
		ProviderEventID:   "evt_1Nk-" + pid + "_" + key,
		ProviderEventType: "payment_intent.created",
		ProviderPaymentID: pid,
	}
	e, err := eventstore.NewCodec().Encode(&domain.PaymentCreated{Meta: m, Amount: 4200, Currency: "USD"},
		eventstore.Metadata{Provider: "stripe", RawBody: []byte(`{"id":"` + m.ProviderEventID + `"}`)})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return e
}

// rowQuerier is a pool, a connection or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// appendIn calls es_append with Any on q the way Store does, so a test can
// run it inside a transaction it holds open. It returns the outcome.
func appendIn(ctx context.Context, q rowQuerier, stream string, evs ...eventstore.EventData) (string, error) {
	c, err := newAppendCall(stream, eventstore.Any(), evs)
	if err != nil {
		return "", err
	}
	a := c.arrays()
	var r appendRow
	err = q.QueryRow(ctx, appendSQL, c.stream, sqlExpected(c.expected), a.ids, a.types, a.data, a.meta).Scan(r.dest()...)
	if err != nil {
		return "", fmt.Errorf("es_append: %w", err)
	}
	return c.decodeRow(r).kind.String(), nil
}

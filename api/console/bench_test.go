package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
)

// BenchmarkConsolePages renders every page of the console against a real
// Postgres holding LEDGER_CONSOLE_BENCH_PAYMENTS payments (default
// 100,000; two facts each, projected by the real runner), through the real
// read API: the server time of a page, its queries included.
//
//	go test ./api/console -run '^$' -bench ConsolePages -benchtime 20x
func BenchmarkConsolePages(b *testing.B) {
	n := 100_000
	if v := os.Getenv("LEDGER_CONSOLE_BENCH_PAYMENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("LEDGER_CONSOLE_BENCH_PAYMENTS=%q", v)
		}
	}
	pool := pgtest.NewPool(b)
	store := postgres.New(pool, postgres.Options{BatchSize: 5000, PollInterval: 10 * time.Millisecond})
	start := time.Now()
	seedPayments(b, pool, n)
	project(b, pool, store)
	b.Logf("%d payments seeded and projected in %s", n, time.Since(start).Round(time.Second))

	c := benchConsole(b, pool, store)
	cookie := benchCookie(b, c)
	mid := fmt.Sprintf("pi_bench%07d", n/2)
	// Between its two facts: created at 2026-03-01 + 20 s per payment, succeeded a minute later.
	between := time.Date(2026, 3, 1, 0, 0, 30, 0, time.UTC).Add(time.Duration(n/2) * 20 * time.Second).Format(time.RFC3339)
	for _, page := range []string{"/console/payments", "/console/payments?provider=stripe&status=confirmed",
		"/console/payments/stripe/" + mid, "/console/payments/stripe/" + mid + "?as_of=" + between,
		"/console/reviews", "/console/dead-letters", "/console/reconciliation", "/console/ledger", "/console/health"} {
		b.Run(page, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, page, nil)
				req.AddCookie(cookie)
				rec := httptest.NewRecorder()
				c.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", page, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// seedPayments stores n Stripe payments, created then succeeded, by SQL.
func seedPayments(b *testing.B, pool *pgxpool.Pool, n int) {
	const chunk = 50_000
	for from := 0; from < 2*n; from += chunk {
		_, err := pool.Exec(b.Context(), `INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
			SELECT $3 || 'stripe-pi_bench' || lpad((g / 2)::text, 7, '0'), g % 2, gen_random_uuid(),
				(ARRAY['payment.created.v1', 'payment.succeeded.v1'])[g % 2 + 1],
				jsonb_build_object('provider', 'stripe', 'provider_event_id', 'evt_bench' || g,
					'provider_event_type', (ARRAY['payment_intent.created', 'payment_intent.succeeded'])[g % 2 + 1],
					'provider_payment_id', 'pi_bench' || lpad((g / 2)::text, 7, '0'),
					'occurred_at', to_char(timestamp '2026-03-01' + (g / 2) * interval '20 seconds' + (g % 2) * interval '1 minute',
						'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
					'amount', 1000 + (g / 2) % 9000, 'amount_received', 1000 + (g / 2) % 9000,
					'currency', (ARRAY['BRL', 'USD'])[(g / 2) % 2 + 1]),
				jsonb_build_object('provider', 'stripe', 'source', 'webhook', 'received_at', '2026-03-02T10:00:00Z')
			FROM generate_series($1::bigint, $2::bigint - 1) g ORDER BY g`, from, min(from+chunk, 2*n), eventstore.PaymentStreamPrefix)
		if err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
}

// project runs the real runner until it has caught up with the store.
func project(b *testing.B, pool *pgxpool.Pool, store *postgres.Store) {
	r := projections.NewRunner(projections.RunnerConfig{BatchSize: 2000}, pool, store)
	ctx, cancel := contextWithCancel(b)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		pos, err := r.Position(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if _, lag, err := store.Lag(b.Context(), eventstore.PaymentStreamPrefix, pos); err == nil && lag == 0 && pos != eventstore.Start {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("the projection did not catch up in 10 minutes")
		}
	}
}

func benchConsole(b *testing.B, pool *pgxpool.Pool, store *postgres.Store) *Console {
	q := projections.NewQueries(pool)
	dl := projections.NewDeadLetters(pool)
	srv, err := api.NewServer(api.Config{Tokens: []api.Token{{Role: api.RoleRead, Name: "bench", Value: "bench-token"}},
		LedgerProviders: []string{"stripe"}}, api.Deps{Store: store, Payments: q, Ledger: q, Reconciliation: q, Reviews: q,
		DeadLetterQueue: dl, Seals: q, Rebuilds: q, Registry: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(Config{API: srv, Tokens: []Token{{Role: "read", Name: "bench", Value: "bench-token"}}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func benchCookie(b *testing.B, c *Console) *http.Cookie {
	v, err := c.keys.seal(session{Token: "bench-token", Role: "read", Name: "bench", Nonce: "n", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	return &http.Cookie{Name: cookieName, Value: v}
}

func contextWithCancel(b *testing.B) (context.Context, context.CancelFunc) {
	return context.WithCancel(b.Context())
}

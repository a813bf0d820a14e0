package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
	"github.com/payledger/payledger/providers/stripe"
)

// Ingest benchmarks: the whole webhook path (read body, verify the Stripe
// signature, map, encode, append to the real Postgres store, answer) driven
// through the handler in-process, side by side with the floor: a handler that
// does nothing but one INSERT … ON CONFLICT DO NOTHING per request into the
// same Postgres. Their ratio is the figure BENCHMARKS.md tracks. One in five
// deliveries is a duplicate, as providers' retries make them.

const benchSecret = "whsec_bench_secret"

// benchPool opens a fresh migrated database with room for the benchmark's
// concurrency (the pool default of 4 connections would be the bottleneck).
func benchPool(b *testing.B) *pgxpool.Pool {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewPool(b).Config().ConnString())
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 32
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// deliveries yields signed Stripe deliveries; every fifth repeats an earlier one.
type deliveries struct {
	n atomic.Int64
}

func (d *deliveries) next() (body []byte, sig string) {
	i := d.n.Add(1)
	if i%5 == 0 {
		i -= 3 // a redelivery of a recent event
	}
	body = fmt.Appendf(nil, `{"id":"evt_bench_%d","object":"event","api_version":"2026-07-29.dahlia","created":1780000000,"livemode":false,"type":"payment_intent.succeeded","data":{"object":{"id":"pi_bench_%d","object":"payment_intent","amount":2000,"amount_received":2000,"currency":"usd","status":"succeeded"}}}`, i, i/3)
	return body, stripe.Sign(body, benchSecret, time.Now())
}

func runIngest(b *testing.B, h http.Handler) {
	var d deliveries
	var latencies = make(chan []time.Duration, 64)
	b.SetParallelism(16) // 32 concurrent deliveries on 2 cores: the store is I/O-bound
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			body, sig := d.next()
			req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", strings.NewReader(string(body)))
			req.Header.Set("Stripe-Signature", sig)
			rec := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(rec, req)
			mine = append(mine, time.Since(start))
			if rec.Code != http.StatusOK {
				b.Errorf("status %d: %s", rec.Code, rec.Body)
			}
		}
		latencies <- mine
	})
	b.StopTimer()
	close(latencies)
	var all []time.Duration
	for l := range latencies {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "webhooks/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
}

func BenchmarkIngest(b *testing.B) {
	pool := benchPool(b)
	provider, err := stripe.New(stripe.Config{Secrets: []string{benchSecret}})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := api.NewServer(api.Config{}, api.Deps{
		Store:     postgres.New(pool, postgres.Options{}),
		Payments:  projections.NewQueries(pool),
		Providers: []api.Provider{provider},
	})
	if err != nil {
		b.Fatal(err)
	}
	runIngest(b, srv)
}

// BenchmarkIngestFloor is the physical floor: one INSERT … ON CONFLICT DO
// NOTHING per request, no verification, no mapping.
func BenchmarkIngestFloor(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE floor_events (id text PRIMARY KEY, body jsonb NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, r.ContentLength)
		if _, err := r.Body.Read(body); err != nil && int64(len(body)) != r.ContentLength {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := r.Header.Get("Stripe-Signature")
		if _, err := pool.Exec(r.Context(), `INSERT INTO floor_events (id, body) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, body); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	runIngest(b, h)
}

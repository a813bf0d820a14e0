package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
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
// same Postgres. Their ratio is the figure BENCHMARKS.md tracks.
//
// The comparison is like for like: both handlers get the same signed bodies
// from the same generator, at the same concurrency (the sub-benchmark's
// conc: that many goroutines, and a pool of that many connections), against
// the same server, each on a fresh database. One in five deliveries is a
// redelivery, as providers' retries make them, and the floor dedupes on the
// same event ID we do (handed to it in a header, so it parses nothing), so
// its ON CONFLICT does the same share of no-op inserts. Three consecutive
// events belong to one payment, so deliveries of one payment are in flight
// together, as a provider's bursts make them.
//
//	go test -run '^$' -bench 'Ingest' -benchtime 5s ./api/               # all concurrencies
//	go test -run '^$' -bench 'Ingest.*/conc=32$' -benchtime 5s ./api/   # the headline

const benchSecret = "whsec_bench_secret"

// benchEventHeader carries the delivery's event ID to the floor handler;
// payledger's handler ignores it.
const benchEventHeader = "Bench-Event-Id"

// benchConcurrency is the number of deliveries in flight (and of pool
// connections) each sub-benchmark runs with.
var benchConcurrency = []int{8, 16, 32, 64}

// benchPool opens a fresh migrated database with one connection per
// delivery in flight (the pool default of 4 would be the bottleneck).
func benchPool(b *testing.B, conns int) *pgxpool.Pool {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewPool(b).Config().ConnString())
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = int32(conns)
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

func (d *deliveries) next() (id string, body []byte, sig string) {
	i := d.n.Add(1)
	if i%5 == 0 {
		i -= 3 // a redelivery of a recent event
	}
	id = fmt.Sprintf("evt_bench_%d", i)
	body = fmt.Appendf(nil, `{"id":"evt_bench_%d","object":"event","api_version":"2026-07-29.dahlia","created":1780000000,"livemode":false,"type":"payment_intent.succeeded","data":{"object":{"id":"pi_bench_%d","object":"payment_intent","amount":2000,"amount_received":2000,"currency":"usd","status":"succeeded"}}}`, i, i/3)
	return id, body, stripe.Sign(body, benchSecret, time.Now())
}

// runIngest drives h with conc deliveries in flight and reports throughput
// and acknowledgement latency.
func runIngest(b *testing.B, conc int, h http.Handler) {
	var d deliveries
	var latencies = make(chan []time.Duration, conc)
	b.SetParallelism(max(1, conc/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			id, body, sig := d.next()
			req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", strings.NewReader(string(body)))
			req.Header.Set("Stripe-Signature", sig)
			req.Header.Set(benchEventHeader, id)
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

// ingestOnly is the ledger reader of a benchmark that never reads the
// ledger: the embedded nil interface satisfies LedgerReader.
type ingestOnly struct{ api.LedgerReader }

func BenchmarkIngest(b *testing.B) {
	for _, conc := range benchConcurrency {
		b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
			pool := benchPool(b, conc)
			provider, err := stripe.New(stripe.Config{Secrets: []string{benchSecret}})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := api.NewServer(api.Config{}, api.Deps{
				Store:     postgres.New(pool, postgres.Options{}),
				Payments:  projections.NewQueries(pool),
				Ledger:    ingestOnly{},
				Providers: []api.Provider{provider},
			})
			if err != nil {
				b.Fatal(err)
			}
			runIngest(b, conc, srv)
		})
	}
}

// BenchmarkIngestFloor is the physical floor: one INSERT … ON CONFLICT DO
// NOTHING of the body per request, keyed by the event ID, no verification,
// no parsing, no mapping.
func BenchmarkIngestFloor(b *testing.B) {
	for _, conc := range benchConcurrency {
		b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
			pool := benchPool(b, conc)
			ctx := context.Background()
			if _, err := pool.Exec(ctx, `CREATE TABLE floor_events (id text PRIMARY KEY, body jsonb NOT NULL)`); err != nil {
				b.Fatal(err)
			}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				const insert = `INSERT INTO floor_events (id, body) VALUES ($1, $2) ON CONFLICT DO NOTHING`
				if _, err := pool.Exec(r.Context(), insert, r.Header.Get(benchEventHeader), body); err != nil {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
				w.WriteHeader(http.StatusOK)
			})
			runIngest(b, conc, h)
		})
	}
}

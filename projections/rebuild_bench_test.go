package projections

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// rebuildEvents sizes BenchmarkRebuild. Issue 5's figure is a million:
// go test -run '^$' -bench Rebuild -benchtime 1x ./projections/ -args -rebuild.events=1000000
var rebuildEvents = flag.Int("rebuild.events", 100_000, "events seeded into the Postgres store for BenchmarkRebuild")

// BenchmarkRebuild measures a full rebuild: the payments and ledger read models replayed
// from zero over rebuildEvents events already in the real Postgres store
// (four per payment: created, processing, succeeded, a partial refund), by
// the real runner through the real feed, until its checkpoint reaches the
// store's head. Events are seeded with one SQL statement, not timed.
func BenchmarkRebuild(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.NewPool(b)
	n := *rebuildEvents
	seedStart := time.Now()
	if _, err := pool.Exec(ctx, seedSQL, n); err != nil {
		b.Fatalf("seed %d events: %v", n, err)
	}
	b.Logf("seeded %d events in %s", n, time.Since(seedStart).Round(time.Millisecond))
	var head eventstore.Position
	if err := pool.QueryRow(ctx, `SELECT tx_id, seq FROM es_events ORDER BY tx_id DESC, seq DESC LIMIT 1`).Scan(&head.Commit, &head.Prepare); err != nil {
		b.Fatal(err)
	}
	store := postgres.New(pool, postgres.Options{BatchSize: 1000})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := Reset(ctx, pool, DefaultName); err != nil {
			b.Fatal(err)
		}
		r := NewRunner(RunnerConfig{BatchSize: 1000}, pool, store)
		b.StartTimer()
		stop := start(b, r)
		for {
			p, err := r.Position(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if p == head {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.StopTimer()
		stop()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM payments WHERE status = 'partially_refunded'`).Scan(&rows); err != nil || rows != (n+3)/4 {
		b.Fatalf("rebuild left %d partially refunded payments, want %d (%v)", rows, (n+3)/4, err)
	}
	// The ledger: a capture and a partial refund per payment.
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ledger_entries`).Scan(&rows); err != nil || rows != 2*(n/4) {
		b.Fatalf("rebuild posted %d journal entries, want %d (%v)", rows, 2*(n/4), err)
	}
}

// seedSQL writes $1 events, four per payment, as the codec would encode them.
var seedSQL = fmt.Sprintf(`
INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
SELECT 'payment-stripe-pi_rebuild_' || p, k, md5('rebuild:' || g)::uuid,
       (ARRAY['payment.created.v1','payment.processing.v1','payment.succeeded.v1','payment.refunded.v1'])[k + 1],
       jsonb_build_object('provider', 'stripe', 'provider_event_id', 'evt_rebuild_' || g,
           'provider_event_type', 'test', 'provider_payment_id', 'pi_rebuild_' || p,
           'occurred_at', to_char(timestamptz '2026-01-01 00:00:00+00' + make_interval(secs => g), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'amount', 2000, 'amount_received', 2000, 'currency', 'USD',
           'amount_refunded', 500, 'amount_captured', 2000),
       %s
  FROM generate_series(0, $1::int - 1) AS g, LATERAL (SELECT g / 4 AS p, g %% 4 AS k) AS x`,
	`jsonb_build_object('provider', 'stripe', 'received_at', '2026-01-01T00:00:00Z')`)

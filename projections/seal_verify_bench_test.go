package projections

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// BenchmarkVerifyChains1M is issue 19's figure: LEDGER_CHAIN_BENCH_EVENTS
// events (1,000,000 for the issue; skipped when unset, so `make test` and
// `make bench` never seed it) in payment streams of 4 events, seeded by SQL
// into es_events, sealed by the real Sealer, then verified whole-store as
// `ledger verify --chains` does on Postgres. BENCHMARKS.md has the command
// and the figures: seed and seal time, verify time, events/s, peak heap and
// the RSS high-water mark of the verify alone.
func BenchmarkVerifyChains1M(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("LEDGER_CHAIN_BENCH_EVENTS"))
	if n <= 0 {
		b.Skip("LEDGER_CHAIN_BENCH_EVENTS unset: set it (1000000 for the issue's figure) to seed and verify")
	}
	ctx := b.Context()
	pool := pgtest.NewPool(b)
	start := time.Now()
	seedChainBench(b, pool, n)
	b.Logf("seeded %d events in %s", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	sealChainBench(b, pool, n)
	b.Logf("sealed %d events in %s", n, time.Since(start).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE es_events, event_seals"); err != nil {
		b.Fatal(err)
	}
	store := postgres.New(pool, postgres.Options{})
	for b.Loop() {
		rep, peak, hwm, took := measureVerify(b, func() (ChainReport, error) {
			return VerifyChains(ctx, store, pool, nil, WithEventTable(pool))
		})
		if !rep.OK() || rep.Events != n || rep.UnsealedStreams != 0 {
			b.Fatalf("report %+v, want %d intact sealed events", rep, n)
		}
		b.ReportMetric(float64(n)/took.Seconds(), "events/s")
		b.ReportMetric(took.Seconds(), "verify-s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(hwm)/(1<<10), "max-rss-MiB")
		b.Logf("verified %d streams, %d events in %s: peak heap in use %.1f MiB, RSS high-water mark %.1f MiB",
			rep.Streams, rep.Events, took.Round(time.Millisecond), float64(peak)/(1<<20), float64(hwm)/(1<<10))
	}
	// The part of that which lists streams without seals, alone.
	start = time.Now()
	var rep ChainReport
	if err := rep.addUnsealedStreams(ctx, pool, pool, verifyPage); err != nil || rep.UnsealedStreams != 0 {
		b.Fatalf("unsealed streams: %+v, %v", rep, err)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.Logf("of which the walk of es_events for streams without seals: %s; max RSS of the whole process (seeding and sealing included) %.1f MiB",
		time.Since(start).Round(time.Millisecond), float64(ru.Maxrss)/(1<<10))
}

// seedChainBench inserts n events, 4 a payment stream, 100,000 a statement
// (each its own transaction, as a store is filled over time). Data and
// metadata are JSON objects like the mapper's, non-ASCII included.
func seedChainBench(b *testing.B, pool *pgxpool.Pool, n int) {
	const chunk = 100_000
	for from := 0; from < n; from += chunk {
		_, err := pool.Exec(b.Context(), `INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
			SELECT $3 || 'stripe-pi_bench' || lpad((g / 4)::text, 7, '0'), g % 4, gen_random_uuid(),
				(ARRAY['payment.created.v1', 'payment.authorized.v1', 'payment.succeeded.v1', 'payment.settled.v1'])[g % 4 + 1],
				jsonb_build_object('amount', 1000 + g % 9000, 'currency', 'BRL', 'provider', 'stripe',
					'provider_id', 'pi_bench' || (g / 4), 'description', 'pedido nº ' || g),
				jsonb_build_object('source', 'webhook', 'request_id', 'req_' || g, 'received_at', '2026-12-03T10:00:00Z')
			FROM generate_series($1::bigint, $2::bigint - 1) g ORDER BY g`, from, min(from+chunk, n), eventstore.PaymentStreamPrefix)
		if err != nil {
			b.Fatalf("seed events %d..: %v", from, err)
		}
	}
}

// sealChainBench runs the real Sealer until it has sealed all n events.
// SealUntilIdle may return early while the feed holds back, so it loops.
func sealChainBench(b *testing.B, pool *pgxpool.Pool, n int) {
	store := postgres.New(pool, postgres.Options{BatchSize: 5000})
	sealer := NewSealer(SealerConfig{BatchSize: 5000}, pool, store)
	for {
		if err := sealer.SealUntilIdle(b.Context(), time.Second); err != nil {
			b.Fatalf("SealUntilIdle: %v", err)
		}
		var sealed int
		if err := pool.QueryRow(b.Context(), "SELECT count(*) FROM event_seals").Scan(&sealed); err != nil {
			b.Fatal(err)
		}
		if sealed >= n {
			return
		}
	}
}

// measureVerify runs verify, sampling the heap in use every 10 ms, and
// returns its peak and the process's RSS high-water mark (KiB) reached
// during verify only: the mark is reset first (Linux clear_refs 5), so the
// seeding and the sealer do not count.
func measureVerify(b *testing.B, verify func() (ChainReport, error)) (ChainReport, uint64, int64, time.Duration) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("RSS high-water mark not reset (%v): it covers the seeding too", err)
	}
	var peak atomic.Uint64
	ctx, cancel := context.WithCancel(b.Context())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for t := time.NewTicker(10 * time.Millisecond); ctx.Err() == nil; <-t.C {
			runtime.ReadMemStats(&m)
			peak.Store(max(peak.Load(), m.HeapInuse))
		}
	}()
	start := time.Now()
	rep, err := verify()
	took := time.Since(start)
	cancel()
	<-sampled
	if err != nil {
		b.Fatalf("VerifyChains: %v", err)
	}
	return rep, peak.Load(), rssHighWater(b), took
}

// rssHighWater is VmHWM of /proc/self/status in KiB, or, without it, the
// lifetime peak getrusage reports.
func rssHighWater(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for line := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err == nil {
					return kb
				}
			}
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Maxrss
}

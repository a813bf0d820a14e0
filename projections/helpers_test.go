package projections

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/eventstore"
)

// eventually polls cond until it holds; the generous deadline only bounds a
// broken test, it asserts nothing about speed.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testConfig is a runner config with quick retries.
func testConfig(name string, log *slog.Logger) RunnerConfig {
	return RunnerConfig{Name: name, BatchSize: 7, RetryMin: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: log}
}

// start runs r until the returned stop is called; stop waits for Run to
// return and checks that it returned nil.
func start(t testing.TB, r *Runner) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitPosition waits until r's committed checkpoint is want.
func waitPosition(t testing.TB, r *Runner, want eventstore.Position) {
	t.Helper()
	eventually(t, "checkpoint "+want.String(), func() bool {
		p, err := r.Position(t.Context())
		if err != nil {
			t.Fatalf("Position: %v", err)
		}
		return p == want
	})
}

// dumpPayments renders every payments row except id and projected_at (which
// differ between a replay and the incremental run), keyed by payment.
func dumpPayments(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	return dump(t, pool, `SELECT provider || '/' || provider_payment_id,
		concat_ws('|', status, currency, amount, amount_captured, amount_refunded, amount_disputed, fee, fee_currency,
			created_at, updated_at, event_count, review_reasons::text)
		FROM payments`)
}

// dumpEvents renders every payment_events row, keyed by event ID.
func dumpEvents(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	return dump(t, pool, `SELECT event_id::text,
		concat_ws('|', provider, provider_payment_id, revision, type, data, recorded_at)
		FROM payment_events`)
}

// dumpRaw renders whole payments rows, id and projected_at included.
func dumpRaw(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	return dump(t, pool, `SELECT provider || '/' || provider_payment_id, p::text FROM payments p`)
}

func dump(t testing.TB, pool *pgxpool.Pool, q string) map[string]string {
	t.Helper()
	rows, err := pool.Query(t.Context(), q)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	out := map[string]string{}
	var k, v string
	if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error { out[k] = v; return nil }); err != nil {
		t.Fatalf("dump: %v", err)
	}
	return out
}

func diffDumps(t testing.TB, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: missing %s (want %s)", what, k, w)
		} else if g != w {
			t.Errorf("%s: %s\n got %s\nwant %s", what, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s = %s", what, k, g)
		}
	}
}

package api

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
)

// TestPaymentAsOf: a payment whose facts arrived out of order answers
// as_of at every moment between its facts. On the effective axis it is the
// fold of the facts whose provider time is at or before the moment; on the
// recorded axis the fold of the facts stored by then; /events lists those
// facts and /ledger the entries on the same axis; before the first fact the
// payment is 404.
func TestPaymentAsOf(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{})
	env := newEnv(t)
	q := projections.NewQueries(pool)
	env.deps.Store, env.deps.Payments, env.deps.Ledger = store, q, q
	srv := env.server(t)

	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	// Provider times: created 0, succeeded 10, refunded 20. Arrival: the
	// success first, then the refund, then the creation.
	deliveries := []struct {
		id, kind string
		amount   int64
		min      int
	}{{"evt_s", "succeeded", 2000, 10}, {"evt_r", "refunded", 500, 20}, {"evt_c", "created", 2000, 0}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- projections.NewRunner(projections.RunnerConfig{}, pool, store).Run(ctx) }()
	defer func() { cancel(); <-done }()
	// After each delivery, once the read model holds it, the API's answer
	// is sampled with the moment it was given: the recorded view of that
	// moment must answer exactly the same.
	var storedBy []time.Time
	var sampled []string
	for i, d := range deliveries {
		body := fmt.Appendf(nil, `{"id":%q,"type":"x","events":[{"kind":%q,"payment":"pi_asof","amount":%d,"currency":"usd","at":%d}]}`,
			d.id, d.kind, d.amount, at(d.min).Unix())
		if res := serve(t, srv, signedWebhook(body, testNow)); res.status != 200 {
			t.Fatalf("%s: %d %s", d.id, res.status, res.raw)
		}
		var answer response
		waitFor(t, func() bool {
			answer = serve(t, srv, get("/v1/payments/fakepay/pi_asof", readToken))
			return answer.status == 200 && answer.body["event_count"] == float64(i+1)
		})
		storedBy, sampled = append(storedBy, time.Now()), append(sampled, string(answer.raw))
		time.Sleep(20 * time.Millisecond)
	}

	asOf := func(path string, t0 time.Time, basis string) response {
		v := url.Values{"as_of": {t0.Format(time.RFC3339Nano)}}
		if basis != "" {
			v.Set("basis", basis)
		}
		return serve(t, srv, get("/v1/payments/fakepay/pi_asof"+path+"?"+v.Encode(), readToken))
	}
	tests := []struct {
		name     string
		moment   time.Time
		basis    string
		status   string // "" for 404
		refunded float64
		facts    int
		entries  int
	}{
		{"effective before the first fact", at(-1), "", "", 0, 0, 0},
		{"effective at the creation", at(0), "effective", "pending", 0, 1, 0},
		{"effective between creation and success", at(5), "", "pending", 0, 1, 0},
		{"effective at the success", at(10), "", "confirmed", 0, 2, 1},
		{"effective after the refund", at(25), "", "partially_refunded", 500, 3, 2},
		{"recorded before anything was stored", storedBy[0].Add(-time.Hour), "recorded", "", 0, 0, 0},
		{"recorded after the first arrival", storedBy[0], "recorded", "confirmed", 0, 1, 1},
		{"recorded after the refund arrived", storedBy[1], "recorded", "partially_refunded", 500, 2, 2},
		{"recorded after everything", storedBy[2], "recorded", "partially_refunded", 500, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, evs, led := asOf("", tc.moment, tc.basis), asOf("/events", tc.moment, tc.basis), asOf("/ledger", tc.moment, tc.basis)
			if tc.status == "" {
				if p.status != 404 || evs.status != 404 || led.status != 404 {
					t.Fatalf("payment %d, events %d, ledger %d: want 404 each", p.status, evs.status, led.status)
				}
				return
			}
			if p.status != 200 || p.body["status"] != tc.status || p.body["amount_refunded"] != tc.refunded ||
				p.body["event_count"] != float64(tc.facts) {
				t.Errorf("payment %d %s, want %s refunded %v with %d facts", p.status, p.raw, tc.status, tc.refunded, tc.facts)
			}
			if n := len(objects(t, evs.body["events"])); evs.status != 200 || n != tc.facts {
				t.Errorf("events: %d, %d listed, want %d", evs.status, n, tc.facts)
			}
			if n := len(objects(t, led.body["entries"])); led.status != 200 || n != tc.entries {
				t.Errorf("ledger: %d, %d entries, want %d: %s", led.status, n, tc.entries, led.raw)
			}
		})
	}

	for i, moment := range storedBy {
		if got := asOf("", moment, "recorded"); string(got.raw) != sampled[i] {
			t.Errorf("recorded as of the moment of answer %d:\n%s\nthe API answered then:\n%s", i+1, got.raw, sampled[i])
		}
	}

	for _, bad := range []string{"as_of=yesterday", "as_of=2026-03-02", "as_of=2026-03-02T09:00:00Z&basis=wall",
		"basis=recorded", "as_of=2026-03-02T09:00:00Z&as_of=2026-03-03T09:00:00Z", "asof=2026-03-02T09:00:00Z"} {
		for _, path := range []string{"", "/events", "/ledger"} {
			if res := serve(t, srv, get("/v1/payments/fakepay/pi_asof"+path+"?"+bad, readToken)); res.status != 400 {
				t.Errorf("%s?%s: %d, want 400", path, bad, res.status)
			}
		}
	}
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30 s")
		}
	}
}

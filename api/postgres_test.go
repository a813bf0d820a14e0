package api

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
	"github.com/payledger/payledger/providers/stripe"
)

// The real implementations fit the interfaces api declares; cmd/ledger
// wires exactly these.
var (
	_ Provider      = (*stripe.Provider)(nil)
	_ EventStore    = (*postgres.Store)(nil)
	_ PaymentReader = (*projections.Queries)(nil)
)

// TestWebhooksOnPostgres runs concurrent deliveries for one payment against
// the real Postgres event store: appends race for the same stream, the
// server retries the conflicts, and every delivery ends stored exactly once
// at consecutive revisions; redeliveries are duplicates.
func TestWebhooksOnPostgres(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{})
	env := newEnv(t)
	env.deps.Store = store
	env.deps.Payments = projections.NewQueries(pool)
	env.deps.Checks = []Check{{Name: "eventstore", Run: store.Ping}}
	env.cfg.AppendAttempts = 20 // many writers on one stream at once
	srv := env.server(t)

	const deliveries = 12
	bodies := make([][]byte, deliveries)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"id":"evt_pg_%02d","type":"payment_intent.payment_failed","events":[`+
			`{"kind":"failed","payment":"pi_pg-1_x","amount":700,"currency":"usd","at":%d}]}`, i, 1740000000+i))
	}
	run := func(want string) {
		var wg sync.WaitGroup
		for _, b := range bodies {
			wg.Go(func() {
				res := serve(t, srv, signedWebhook(b, testNow))
				if res.status != http.StatusOK || res.body["outcome"] != want {
					t.Errorf("delivery: %d %s, want %s", res.status, res.raw, want)
				}
			})
		}
		wg.Wait()
	}
	run("accepted")
	run("duplicate")

	recs, err := store.ReadStream(context.Background(), "payment-fakepay-pi_pg-1_x")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != deliveries {
		t.Fatalf("stored %d events, want %d", len(recs), deliveries)
	}
	res := serve(t, srv, get("/v1/payments/fakepay/pi_pg-1_x/events", readToken))
	events, _ := res.body["events"].([]any)
	if res.status != 200 || len(events) != deliveries {
		t.Fatalf("events: %d, %d events", res.status, len(events))
	}
	for i, e := range events {
		if rev := e.(map[string]any)["revision"]; rev != float64(i) {
			t.Errorf("event %d has revision %v", i, rev)
		}
	}
	// The projector is not running here: the read model does not know it.
	if res := serve(t, srv, get("/v1/payments/fakepay/pi_pg-1_x", readToken)); res.status != 404 {
		t.Errorf("payment from an empty read model: %d %s", res.status, res.raw)
	}
	if res := serve(t, srv, get("/v1/payments?limit=10", readToken)); res.status != 200 || string(res.raw) != `{"payments":[],"next_cursor":""}`+"\n" {
		t.Errorf("list from an empty read model: %d %s", res.status, res.raw)
	}
	if res := serve(t, srv, get("/readyz", "")); res.status != 200 {
		t.Errorf("readyz: %d %s", res.status, res.raw)
	}
}

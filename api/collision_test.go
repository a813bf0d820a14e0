package api

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
)

var _ DeadLetterRecorder = (*projections.DeadLetters)(nil)

// failingDeadLetters is a dead-letter queue that cannot be written.
type failingDeadLetters struct{}

func (failingDeadLetters) Record(context.Context, domain.DeadLetterFailure) (int64, error) {
	return 0, errors.New("connection refused")
}

// TestCollisionOnPostgres: one provider event ID for two payments. The
// second delivery is answered 200 conflict, nothing is appended to its
// stream, and a dead letter names both streams; a redelivery is conflict
// again and counts on the same dead letter.
func TestCollisionOnPostgres(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{})
	dl := projections.NewDeadLetters(pool)
	env := newEnv(t)
	env.deps.Store = store
	env.deps.Payments = projections.NewQueries(pool)
	env.deps.DeadLetters = dl
	srv := env.server(t)

	first := []byte(`{"id":"evt_same","type":"payment_intent.payment_failed","events":[` +
		`{"kind":"failed","payment":"pi_a","amount":700,"currency":"usd","at":1740000000}]}`)
	second := []byte(`{"id":"evt_same","type":"payment_intent.payment_failed","events":[` +
		`{"kind":"failed","payment":"pi_b","amount":900,"currency":"usd","at":1740000001}]}`)
	if res := serve(t, srv, signedWebhook(first, testNow)); res.status != http.StatusOK || res.body["outcome"] != "accepted" {
		t.Fatalf("first delivery: %d %s", res.status, res.raw)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		res := serve(t, srv, signedWebhook(second, testNow))
		if res.status != http.StatusOK || res.body["outcome"] != "conflict" || res.body["stream"] != "payment-fakepay-pi_b" ||
			res.body["conflicting_stream"] != "payment-fakepay-pi_a" {
			t.Fatalf("colliding delivery %d: %d %s", attempt, res.status, res.raw)
		}
		recs, err := store.ReadStream(t.Context(), "payment-fakepay-pi_b")
		if err != nil || len(recs) != 0 {
			t.Fatalf("stream of the colliding payment: %d events, %v; want none", len(recs), err)
		}
		page, err := dl.ListDeadLetters(t.Context(), domain.DeadLetterQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.DeadLetters) != 1 {
			t.Fatalf("after delivery %d: %d dead letters, want 1", attempt, len(page.DeadLetters))
		}
		d := page.DeadLetters[0]
		if d.Kind != domain.DeadLetterCollision || d.Cause != domain.CauseEventIDTaken || d.Attempts != attempt ||
			d.ProviderPaymentID != "pi_b" || len(d.Streams) != 2 || d.Streams[0] != "payment-fakepay-pi_b" ||
			d.Streams[1] != "payment-fakepay-pi_a" || d.State != domain.DeadLetterOpen || res.body["dead_letter_id"] != float64(d.ID) {
			t.Errorf("dead letter after delivery %d: %+v", attempt, d)
		}
	}
	if recs, _ := store.ReadStream(t.Context(), "payment-fakepay-pi_a"); len(recs) != 1 {
		t.Errorf("the first payment's stream holds %d events, want 1", len(recs))
	}

	// A dead letter that cannot be kept leaves the provider's retry as the
	// only copy: 503.
	down := newEnv(t)
	down.deps.Store = store
	down.deps.DeadLetters = failingDeadLetters{}
	if res := serve(t, down.server(t), signedWebhook(second, testNow)); res.status != http.StatusServiceUnavailable {
		t.Errorf("with the queue down: %d %s, want 503", res.status, res.raw)
	}
}

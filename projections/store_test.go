package projections

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// appendAll appends each event to its payment's stream in the real Postgres
// store and returns the position of the last one written.
func appendAll(t testing.TB, store *postgres.Store, events ...domain.Event) eventstore.Position {
	t.Helper()
	codec := eventstore.NewCodec()
	var last eventstore.Position
	for _, e := range events {
		d, err := codec.Encode(e, eventstore.Metadata{Provider: e.EventMeta().Provider, ReceivedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		m := e.EventMeta()
		res, err := store.Append(t.Context(), eventstore.PaymentStream(m.Provider, m.ProviderPaymentID),
			eventstore.Any(), []eventstore.EventData{d})
		if err != nil {
			t.Fatalf("append %s: %v", m.Key(), err)
		}
		if !res.Duplicate {
			last = res.Position
		}
	}
	return last
}

// TestRunnerOnPostgresStore runs the projector on the real Postgres event
// store: an incremental run stopped and restarted half way, then a Reset
// and replay from zero, which must give the same read model.
func TestRunnerOnPostgresStore(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond, BatchSize: 16})
	q := NewQueries(pool)
	newRunner := func() *Runner { return NewRunner(testConfig("payments_v1", nil), pool, store) }

	var all []domain.Event
	for n := range 15 {
		all = append(all, lifecycle("stripe", n)...)
	}
	first := appendAll(t, store, all...)
	r1 := newRunner()
	stop := start(t, r1)
	waitPosition(t, r1, first)
	stop()

	// While stopped: redeliveries (duplicates the store rejects), late
	// events of projected payments, and new payments.
	appendAll(t, store, all[:5]...)
	late := []domain.Event{
		pay{"stripe", all[0].EventMeta().ProviderPaymentID}.succeeded("evt_late", -time.Minute, 1000),
		pay{"stripe", lifecycle("stripe", 3)[0].EventMeta().ProviderPaymentID}.refunded("evt_late", 3*time.Hour, 1003, 1003),
	}
	for n := 15; n < 25; n++ {
		late = append(late, lifecycle("adyen", n)...)
	}
	appendAll(t, store, late...)
	all = append(all, late...)
	// A foreign stream last: the filtered feed ends with a checkpoint.
	res, err := store.Append(t.Context(), "customer-cus_Q1-a", eventstore.Any(), []eventstore.EventData{
		{ID: uuid.New(), Type: "customer.created.v1", Data: []byte(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	r2 := newRunner()
	stop = start(t, r2)
	waitPosition(t, r2, res.Position)
	stop()
	checkReadModel(t, q, all)
	for _, e := range late[:2] {
		want := map[string]domain.Status{domain.TypePaymentSucceeded: domain.StatusConfirmed,
			domain.TypePaymentRefunded: domain.StatusRefunded}[e.EventType()]
		s, err := q.Payment(t.Context(), "stripe", e.EventMeta().ProviderPaymentID)
		if err != nil || s.Status != want {
			t.Errorf("after late %s: %+v, %v; want status %s", e.EventType(), s, err, want)
		}
	}
	incremental, incrementalEvents := dumpPayments(t, pool), dumpEvents(t, pool)
	if len(incrementalEvents) != len(all) {
		t.Errorf("payment_events has %d rows, want %d", len(incrementalEvents), len(all))
	}

	if err := Reset(t.Context(), pool, "payments_v1"); err != nil {
		t.Fatal(err)
	}
	r3 := newRunner()
	start(t, r3)
	waitPosition(t, r3, res.Position)
	diffDumps(t, "payments after replay", dumpPayments(t, pool), incremental)
	diffDumps(t, "payment_events after replay", dumpEvents(t, pool), incrementalEvents)
}

// The real store satisfies the runner's Subscriber.
var _ Subscriber = (*postgres.Store)(nil)

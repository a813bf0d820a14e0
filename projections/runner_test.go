package projections

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/logtest"
	"github.com/payledger/payledger/internal/pgtest"
)

// foldAll is what the read model must hold: domain.Fold of each payment's
// events, rendered like dumpPayments.
func foldAll(t testing.TB, events []domain.Event) map[string]domain.PaymentState {
	t.Helper()
	byPayment := map[string][]domain.Event{}
	for _, e := range events {
		m := e.EventMeta()
		k := m.Provider + "/" + m.ProviderPaymentID
		byPayment[k] = append(byPayment[k], e)
	}
	out := map[string]domain.PaymentState{}
	for k, evs := range byPayment {
		out[k] = domain.Fold(evs...).State()
	}
	return out
}

// checkReadModel compares every payments row with the domain fold.
func checkReadModel(t testing.TB, q *Queries, events []domain.Event) {
	t.Helper()
	want := foldAll(t, events)
	page, err := q.ListPayments(t.Context(), domain.PaymentFilter{Limit: domain.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Payments) != len(want) || page.NextCursor != "" {
		t.Errorf("read model has %d payments (next cursor %q), want %d", len(page.Payments), page.NextCursor, len(want))
	}
	for _, got := range page.Payments {
		w, ok := want[got.Provider+"/"+got.ProviderPaymentID]
		if !ok || !sameState(got, w) {
			t.Errorf("payment %s/%s\n got %+v\nwant %+v", got.Provider, got.ProviderPaymentID, got, w)
		}
	}
}

func TestRunnerProjectsFeed(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	var all []domain.Event
	for n := range 30 {
		evs := lifecycle("stripe", n)
		all = append(all, evs...)
		feed.add(evs...)
		if n%4 == 0 {
			feed.checkpoint()
		}
	}
	// An event of another aggregate is filtered out, not a reason to stop.
	feed.addRecorded(eventstore.RecordedEvent{ID: uuid.New(), Stream: "customer-cus_1", Type: "customer.created.v1", Data: []byte(`{}`)})
	last := feed.checkpoint()

	r := NewRunner(testConfig("payments_v1", nil), pool, feed)
	start(t, r)
	waitPosition(t, r, last)
	checkReadModel(t, NewQueries(pool), all)
	if got := len(dumpEvents(t, pool)); got != len(all) {
		t.Errorf("payment_events has %d rows, want %d", got, len(all))
	}
}

func TestRunnerResumesFromCheckpointAfterRestart(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	q := NewQueries(pool)
	var all []domain.Event
	for n := range 12 {
		evs := lifecycle("stripe", n)
		all = append(all, evs...)
		feed.add(evs...)
	}
	r1 := NewRunner(testConfig("payments_v1", nil), pool, feed)
	stop := start(t, r1)
	first := feed.checkpoint()
	waitPosition(t, r1, first)
	stop()

	// While no runner runs: new payments, and late, out-of-order events of
	// already projected ones (a full refund of a payment already refunded
	// in part; a success for one that was only created).
	late := []domain.Event{
		pay{"stripe", lifecycle("stripe", 3)[0].EventMeta().ProviderPaymentID}.refunded("evt_late", 3*time.Hour, 1003, 1003),
		pay{"stripe", lifecycle("stripe", 6)[0].EventMeta().ProviderPaymentID}.succeeded("evt_late", -time.Hour, 1006),
	}
	for n := 12; n < 20; n++ {
		late = append(late, lifecycle("stripe", n)...)
	}
	all = append(all, late...)
	feed.add(late...)
	last := feed.checkpoint()

	r2 := NewRunner(testConfig("payments_v1", nil), pool, feed)
	start(t, r2)
	waitPosition(t, r2, last)
	checkReadModel(t, q, all)
	if got := len(dumpEvents(t, pool)); got != len(all) {
		t.Errorf("payment_events has %d rows, want %d", got, len(all))
	}
	subs := feed.subscriptions()
	if len(subs) != 2 || subs[0] != eventstore.Start || subs[1] != first {
		t.Errorf("subscribed from %v, want [%s %s]", subs, eventstore.Start, first)
	}
	s, err := q.Payment(t.Context(), "stripe", late[0].EventMeta().ProviderPaymentID)
	if err != nil || s.Status != domain.StatusRefunded {
		t.Errorf("late full refund: %+v, %v; want refunded", s, err)
	}
}

func TestRunnerReplayFromZeroEqualsIncremental(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	r := NewRunner(testConfig("payments_v1", nil), pool, feed)
	stop := start(t, r)
	// Incremental: events arrive while the runner runs, in several waves.
	for wave := range 4 {
		for n := wave * 10; n < wave*10+10; n++ {
			evs := lifecycle("stripe", n)
			// Newest first inside a payment: arrival order must not matter.
			for i := len(evs) - 1; i >= 0; i-- {
				feed.add(evs[i])
			}
		}
		waitPosition(t, r, feed.checkpoint())
	}
	stop()
	incremental, incrementalEvents := dumpPayments(t, pool), dumpEvents(t, pool)

	if err := Reset(t.Context(), pool, "payments_v1"); err != nil {
		t.Fatal(err)
	}
	if got := len(dumpPayments(t, pool)); got != 0 {
		t.Fatalf("%d payments after Reset", got)
	}
	if p, err := r.Position(t.Context()); err != nil || p != eventstore.Start {
		t.Fatalf("Position after Reset = %s, %v; want start", p, err)
	}
	r2 := NewRunner(testConfig("payments_v1", nil), pool, feed)
	start(t, r2)
	waitPosition(t, r2, feed.checkpoint())
	diffDumps(t, "payments after replay", dumpPayments(t, pool), incremental)
	diffDumps(t, "payment_events after replay", dumpEvents(t, pool), incrementalEvents)
}

func TestRunnerRebuildsWhenResetWhileRunning(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	var all []domain.Event
	for n := range 10 {
		all = append(all, lifecycle("stripe", n)...)
	}
	feed.add(all...)
	r := NewRunner(testConfig("payments_v1", nil), pool, feed)
	start(t, r)
	waitPosition(t, r, feed.checkpoint())

	// Reset under a live runner: its next compare-and-set fails, and it
	// restarts from the (now missing) checkpoint, i.e. from the start.
	if err := Reset(t.Context(), pool, "payments_v1"); err != nil {
		t.Fatal(err)
	}
	more := lifecycle("stripe", 10)
	all = append(all, more...)
	feed.add(more...)
	waitPosition(t, r, feed.checkpoint())
	checkReadModel(t, NewQueries(pool), all)
}

// TestRunnerParksUndecodableEvent: the runner parks the event's stream,
// logs it, and projects the payments after it.
func TestRunnerParksUndecodableEvent(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	good := lifecycle("stripe", 2)
	feed.add(good...)
	feed.checkpoint()
	feed.addRecorded(eventstore.RecordedEvent{ID: uuid.New(), Stream: "payment-stripe-pi_new",
		Type: "payment.teleported.v1", Data: []byte(`{"provider":"stripe","provider_payment_id":"pi_new"}`)})
	after := lifecycle("stripe", 3)
	feed.add(after...)
	last := feed.checkpoint()

	logs := &logtest.Recorder{}
	r := NewRunner(testConfig("payments_v1", logs.Logger()), pool, feed)
	start(t, r)
	waitPosition(t, r, last)
	if n := logs.Count("WARN", "payment-stripe-pi_new", eventstore.ErrUnknownType.Error()); n != 1 {
		t.Errorf("%d parking logs, want 1", n)
	}
	if logs.Count("ERROR") != 0 {
		t.Error("the runner logged an error: parking is not a failure")
	}
	checkReadModel(t, NewQueries(pool), append(good, after...))
	var provider, id string
	if err := pool.QueryRow(t.Context(), `SELECT provider, provider_payment_id FROM parked_streams
		WHERE stream = 'payment-stripe-pi_new'`).Scan(&provider, &id); err != nil || provider != "stripe" || id != "pi_new" {
		t.Errorf("parked row: %s/%s, %v", provider, id, err)
	}
}

func TestRunnerResubscribesAfterSubscriptionError(t *testing.T) {
	pool := pgtest.NewPool(t)
	feed := newMemFeed(t)
	all := lifecycle("stripe", 5)
	feed.add(all...)
	r := NewRunner(testConfig("payments_v1", nil), pool, feed)
	start(t, r)
	first := feed.checkpoint()
	waitPosition(t, r, first)

	feed.fail(errors.New("connection reset by peer"))
	more := lifecycle("stripe", 11)
	all = append(all, more...)
	feed.add(more...)
	waitPosition(t, r, feed.checkpoint())
	checkReadModel(t, NewQueries(pool), all)
	subs := feed.subscriptions()
	if len(subs) < 2 || subs[len(subs)-1] != first {
		t.Errorf("subscriptions %v: want a resubscription from the committed %s", subs, first)
	}
}

func TestRunnerOneActivePerName(t *testing.T) {
	pool := pgtest.NewPool(t)
	feedA, feedB := newMemFeed(t), newMemFeed(t)
	evs := lifecycle("stripe", 1)
	feedA.add(evs...)
	feedB.add(evs...)

	a := NewRunner(testConfig("payments_v1", nil), pool, feedA)
	stopA := start(t, a)
	waitPosition(t, a, feedA.checkpoint())

	logsB := &logtest.Recorder{}
	b := NewRunner(testConfig("payments_v1", logsB.Logger()), pool, feedB)
	start(t, b)
	eventually(t, "runner B waiting for the lock", func() bool {
		return logsB.Count("INFO", "another process holds the projection lock") >= 2
	})
	if subs := feedB.subscriptions(); len(subs) != 0 {
		t.Fatalf("runner B subscribed (%v) while A held the lock", subs)
	}
	// A different name is a different projection with a lock of its own.
	feedC := newMemFeed(t)
	feedC.add(evs...)
	other := NewRunner(testConfig("other_v1", nil), pool, feedC)
	stopOther := start(t, other)
	waitPosition(t, other, feedC.checkpoint())
	stopOther()
	if subs := feedB.subscriptions(); len(subs) != 0 {
		t.Fatalf("runner B subscribed (%v) while A held the lock", subs)
	}

	// When A stops, its lock is released and B takes over from A's checkpoint.
	stopA()
	eventually(t, "runner B subscribed", func() bool { return len(feedB.subscriptions()) > 0 })
	if p, err := a.Position(t.Context()); err != nil || feedB.subscriptions()[0] != p {
		t.Errorf("B subscribed from %v, want A's checkpoint %s (%v)", feedB.subscriptions(), p, err)
	}
}

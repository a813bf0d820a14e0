package projections

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestApplyHistoriesInMemoryMatchReadBack applies the same feed, cut into
// the same random batches with redeliveries, once with the histories kept in
// memory (a cache small enough to evict) and once read back from
// payment_events every batch, into two databases: the read models must be
// equal row for row, and equal to domain.Fold of each payment's events.
func TestApplyHistoriesInMemoryMatchReadBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var feed []domain.Event
	for n := range 40 {
		feed = append(feed, lifecycle([]string{"stripe", "mercadopago"}[n%2], n)...)
	}
	rng.Shuffle(len(feed), func(i, j int) { feed[i], feed[j] = feed[j], feed[i] })
	// At-least-once: a fifth of the events delivered again, later.
	for _, e := range feed[:len(feed)/5] {
		at := len(feed)/5 + rng.IntN(len(feed)-len(feed)/5)
		feed = append(feed[:at], append([]domain.Event{e}, feed[at:]...)...)
	}
	var batches [][]domain.Event
	for rest := feed; len(rest) > 0; {
		n := min(1+rng.IntN(9), len(rest))
		batches, rest = append(batches, rest[:n]), rest[n:]
	}

	modes := []struct {
		name      string
		histories int
		readBack  bool
	}{{"in memory, 8 payments", 8, false}, {"read back", -1, true}}
	results := make([]map[string]string, len(modes))
	for i, m := range modes {
		pool := pgtest.NewPool(t)
		a := newApplier(t, pool)
		a.r.histories = newHistories(m.histories)
		a.r.histories.readBack = m.readBack
		for _, b := range batches {
			a.apply(a.messages(b...))
		}
		results[i] = dumpPayments(t, pool)
		if a.r.histories.lru == nil {
			continue
		}
		// What memory holds is what payment_events holds, redeliveries
		// included.
		for _, k := range a.r.histories.lru.Keys() {
			var rows int
			if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM payment_events
				WHERE provider = $1 AND provider_payment_id = $2`, k.provider, k.id).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if h, _ := a.r.histories.lru.Peek(k); len(h) != rows {
				t.Errorf("%s: %d events in memory, %d rows in payment_events", k, len(h), rows)
			}
		}
	}
	diffDumps(t, modes[0].name+" vs "+modes[1].name, results[0], results[1])

	byPayment := map[string][]domain.Event{}
	for _, e := range feed {
		m := e.EventMeta()
		byPayment[m.Provider+"/"+m.ProviderPaymentID] = append(byPayment[m.Provider+"/"+m.ProviderPaymentID], e)
	}
	if len(results[0]) != len(byPayment) {
		t.Errorf("%d payments rows, want %d", len(results[0]), len(byPayment))
	}
	for k, evs := range byPayment {
		s := domain.Fold(evs...).State()
		want := fmt.Sprintf("%s|%s|%d|%d|%d|%d|%d|%s|%s|%s|%d|", s.Status, s.Currency, s.Amount, s.AmountCaptured,
			s.AmountRefunded, s.AmountDisputed, s.Fee, s.FeeCurrency, s.CreatedAt.Format("2006-01-02 15:04:05-07"),
			s.UpdatedAt.Format("2006-01-02 15:04:05-07"), s.EventCount)
		if got := results[0][k]; len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("%s: read model %s, want domain.Fold's %s…", k, got, want)
		}
	}
}

// TestApplyForgetsHistoriesWhenABatchFails: after a failed batch the runner
// cannot know what payment_events holds, so it reads histories back. Here a
// Reset empties the tables behind the runner's back; the failed
// compare-and-set must drop the memory of the events the Reset removed.
func TestApplyForgetsHistoriesWhenABatchFails(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	p := pay{"stripe", "pi_forget-1"}
	a.apply(a.messages(p.created("evt_1", 0, 700), p.succeeded("evt_2", time.Minute, 700)))
	if err := Reset(t.Context(), pool, a.r.cfg.Name); err != nil {
		t.Fatal(err)
	}

	refund := a.messages(p.refunded("evt_3", time.Hour, 700, 100))
	if _, err := a.r.apply(t.Context(), a.pos, refund); !errors.Is(err, errCheckpointMoved) {
		t.Fatalf("apply after a Reset: err = %v, want errCheckpointMoved", err)
	}
	// The runner starts over from the (new) checkpoint, as a session does.
	pos, err := loadCheckpoint(t.Context(), pool, a.r.cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	a.pos = pos
	a.apply(refund)
	got, err := NewQueries(pool).Payment(t.Context(), p.provider, p.id)
	if err != nil {
		t.Fatal(err)
	}
	if want := domain.Fold(p.refunded("evt_3", time.Hour, 700, 100)).State(); !sameState(got, want) {
		t.Errorf("payment after the Reset\n got %+v\nwant the fold of what payment_events holds %+v", got, want)
	}
}

// TestHistoriesPlanNeverWritesIntoTheCache: a batch that fails after plan
// must leave the cached history as it was.
func TestHistoriesPlanNeverWritesIntoTheCache(t *testing.T) {
	h := newHistories(4)
	k := paymentKey{"stripe", "pi_1"}
	past := make([]recorded, 1, 8) // spare capacity an append could write into
	past[0] = recorded{id: "a"}
	h.store(map[paymentKey][]recorded{k: past})

	p := pay{"stripe", "pi_1"}
	feed := newMemFeed(t)
	feed.add(p.succeeded("evt_2", time.Minute, 1), p.refunded("evt_3", time.Hour, 1, 1))
	var events []decoded
	r := NewRunner(RunnerConfig{}, nil, nil)
	for _, m := range feed.msgs {
		d, err := r.decode(m.Event)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, d)
	}
	pl1 := h.plan([]paymentKey{k}, events[:1])
	pl2 := h.plan([]paymentKey{k}, events[1:])
	first, second := pl1.histories, pl2.histories
	if len(pl1.missing)+len(pl1.fresh) != 0 || len(first[k]) != 2 || len(second[k]) != 2 {
		t.Fatalf("plan: %d and %d events, missing %v, fresh %v; want 2, 2, none", len(first[k]), len(second[k]),
			pl1.missing, pl1.fresh)
	}
	if first[k][1].id == second[k][1].id {
		t.Errorf("two merges of different batches share their new event %s", first[k][1].id)
	}
	if cached, _ := h.lru.Peek(k); len(cached) != 1 || past[:2][1].id != "" {
		t.Errorf("cache holds %d events (want 1), spare capacity written: %+v", len(cached), past[:2])
	}
}

// TestApplyNewPaymentIsCheckedAgainstTheTable: a payment whose stream starts
// in the batch is folded from the batch alone, but only once payment_events
// confirms it holds nothing else for that payment. Here an event of the
// payment came earlier from another stream (which payledger never writes),
// and the runner forgot it: the check must catch it and fold both.
func TestApplyNewPaymentIsCheckedAgainstTheTable(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	p := pay{"stripe", "pi_checked-1"}
	created := p.created("evt_1", 0, 900)
	d, err := a.feed.codec.Encode(created, eventstore.Metadata{Provider: p.provider})
	if err != nil {
		t.Fatal(err)
	}
	a.feed.addRecorded(eventstore.RecordedEvent{ID: d.ID, Stream: "payment-stripe-elsewhere",
		Type: d.Type, Data: d.Data, Metadata: d.Metadata})
	a.feed.mu.Lock()
	foreign := slices.Clone(a.feed.msgs[len(a.feed.msgs)-1:])
	a.feed.mu.Unlock()
	a.apply(foreign)
	a.r.histories.purge()

	succeeded := p.succeeded("evt_2", time.Minute, 900)
	batch := a.messages(succeeded)
	if pl := a.r.histories.plan([]paymentKey{{p.provider, p.id}}, mustDecode(t, a.r, batch)); len(pl.fresh) != 1 {
		t.Fatalf("plan: fresh %v, missing %v; want the payment fresh (its stream starts here)", pl.fresh, pl.missing)
	}
	a.apply(batch)
	got, err := NewQueries(pool).Payment(t.Context(), p.provider, p.id)
	if err != nil {
		t.Fatal(err)
	}
	if want := domain.Fold(created, succeeded).State(); !sameState(got, want) {
		t.Errorf("payment\n got %+v\nwant the fold of both rows of payment_events %+v", got, want)
	}
	if h, _ := a.r.histories.lru.Peek(paymentKey{p.provider, p.id}); len(h) != 2 {
		t.Errorf("%d events in memory, want the 2 of payment_events", len(h))
	}
}

func mustDecode(t *testing.T, r *Runner, msgs []eventstore.Message) []decoded {
	t.Helper()
	var out []decoded
	for _, m := range msgs {
		d, err := r.decode(m.Event)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestStartsStream(t *testing.T) {
	k := paymentKey{"stripe", "pi_s-1"}
	own := eventstore.PaymentStream(k.provider, k.id)
	ev := func(stream string, rev uint64) decoded {
		return decoded{rec: &eventstore.RecordedEvent{Stream: stream, Revision: rev}}
	}
	tests := []struct {
		name   string
		events []decoded
		want   bool
	}{
		{"first event", []decoded{ev(own, 0)}, true},
		{"first events, any order", []decoded{ev(own, 1), ev(own, 0), ev(own, 2)}, true},
		{"a later event", []decoded{ev(own, 3)}, false},
		{"later events", []decoded{ev(own, 1), ev(own, 2)}, false},
		{"an event from another stream", []decoded{ev(own, 0), ev("payment-stripe-other", 0)}, false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := startsStream(k, tt.events); got != tt.want {
				t.Errorf("startsStream = %v, want %v", got, tt.want)
			}
		})
	}
}

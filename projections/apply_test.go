package projections

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/pgtest"
)

// applier drives the runner's apply path with explicit batches, so a test
// decides exactly where batch boundaries fall.
type applier struct {
	t    testing.TB
	r    *Runner
	feed *memFeed
	pos  eventstore.Position
}

func newApplier(t testing.TB, pool *pgxpool.Pool) *applier {
	t.Helper()
	r := NewRunner(RunnerConfig{Name: "apply_test"}, pool, nil)
	pos, err := loadCheckpoint(t.Context(), pool, r.cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{t: t, r: r, feed: newMemFeed(t), pos: pos}
}

// messages appends events to the feed and returns their messages.
func (a *applier) messages(events ...domain.Event) []eventstore.Message {
	a.feed.mu.Lock()
	n := len(a.feed.msgs)
	a.feed.mu.Unlock()
	a.feed.add(events...)
	a.feed.mu.Lock()
	defer a.feed.mu.Unlock()
	return slices.Clone(a.feed.msgs[n:])
}

// apply applies one batch, which must succeed.
func (a *applier) apply(batch []eventstore.Message) {
	a.t.Helper()
	pos, err := a.r.apply(a.t.Context(), a.pos, batch)
	if err != nil {
		a.t.Fatalf("apply: %v", err)
	}
	a.pos = pos
}

func TestApplyFoldsPayments(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	q := NewQueries(pool)
	p := pay{"stripe", "pi_3QaBc-d_E1"}
	tests := []struct {
		name    string
		batches func(p pay) [][]domain.Event
		want    func(p pay) domain.PaymentState
	}{{
		name: "created then succeeded",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 2000)}, {p.succeeded("evt_2", time.Minute, 2000)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusConfirmed, 2000, 2000, 0, 0, 2, 0, time.Minute)
		},
	}, {
		name: "full refund before success and creation, one batch each",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.refunded("evt_3", time.Hour, 2000, 2000)},
				{p.succeeded("evt_2", time.Minute, 2000)}, {p.created("evt_1", 0, 2000)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusRefunded, 2000, 2000, 2000, 0, 3, 0, time.Hour)
		},
	}, {
		name: "full refund before success and creation, one batch",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.refunded("evt_3", time.Hour, 2000, 2000),
				p.succeeded("evt_2", time.Minute, 2000), p.created("evt_1", 0, 2000)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusRefunded, 2000, 2000, 2000, 0, 3, 0, time.Hour)
		},
	}, {
		name: "failed then succeeded on retry",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 500), p.failed("evt_2", time.Second, 500)},
				{p.succeeded("evt_3", 2*time.Second, 500)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusConfirmed, 500, 500, 0, 0, 3, 0, 2*time.Second)
		},
	}, {
		name: "partial refund",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 900), p.succeeded("evt_2", time.Second, 900),
				p.refunded("evt_3", time.Hour, 900, 300)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusPartiallyRefunded, 900, 900, 300, 0, 3, 0, time.Hour)
		},
	}, {
		name: "dispute lost",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 700), p.succeeded("evt_2", time.Second, 700)},
				{p.disputeOpened("evt_3", time.Hour, 700)}, {p.disputeClosed("evt_4", 2*time.Hour, 700, domain.DisputeLost)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusChargeback, 700, 700, 0, 700, 4, 0, 2*time.Hour)
		},
	}, {
		name: "dispute won, closed event first",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.disputeClosed("evt_4", 2*time.Hour, 700, domain.DisputeWon)},
				{p.created("evt_1", 0, 700), p.succeeded("evt_2", time.Second, 700), p.disputeOpened("evt_3", time.Hour, 700)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusConfirmed, 700, 700, 0, 700, 4, 0, 2*time.Hour)
		},
	}, {
		name: "cancelled",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 100)}, {p.cancelled("evt_2", time.Minute, 100)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusCancelled, 100, 0, 0, 0, 2, 0, time.Minute)
		},
	}, {
		name: "refund exceeding capture is flagged",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 1000), p.succeeded("evt_2", time.Second, 1000)},
				{p.refunded("evt_3", time.Hour, 1000, 1500)}}
		},
		want: func(p pay) domain.PaymentState {
			s := state(p, domain.StatusRefunded, 1000, 1000, 1500, 0, 3, 0, time.Hour)
			s.ReviewReasons = []string{domain.ReviewRefundExceedsCapture}
			return s
		},
	}, {
		name: "an event delivered again in a later batch counts once",
		batches: func(p pay) [][]domain.Event {
			return [][]domain.Event{{p.created("evt_1", 0, 100), p.succeeded("evt_2", time.Minute, 100)},
				{p.succeeded("evt_2", time.Minute, 100)}}
		},
		want: func(p pay) domain.PaymentState {
			return state(p, domain.StatusConfirmed, 100, 100, 0, 0, 2, 0, time.Minute)
		},
	}}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pay{p.provider, p.id + "_" + string(rune('a'+i))}
			var all []domain.Event
			for _, b := range tt.batches(p) {
				a.apply(a.messages(b...))
				all = append(all, b...)
			}
			got, err := q.Payment(t.Context(), p.provider, p.id)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(p); !reflect.DeepEqual(got, want) {
				t.Errorf("read model\n got %+v\nwant %+v", got, want)
			}
			if fold := domain.Fold(all...).State(); !sameState(got, fold) {
				t.Errorf("read model differs from domain.Fold\n got %+v\nfold %+v", got, fold)
			}
		})
	}
}

// state builds an expected PaymentState; at and updated are offsets from t0.
func state(p pay, s domain.Status, amount, captured, refunded, disputed int64, n int, created, updated time.Duration) domain.PaymentState {
	return domain.PaymentState{
		Provider: p.provider, ProviderPaymentID: p.id, Status: s, Currency: "USD",
		Amount: amount, AmountCaptured: captured, AmountRefunded: refunded, AmountDisputed: disputed,
		CreatedAt: t0.Add(created), UpdatedAt: t0.Add(updated), EventCount: n, ReviewReasons: []string{},
	}
}

// sameState compares states, treating nil and empty review reasons alike.
func sameState(a, b domain.PaymentState) bool {
	a.ReviewReasons, b.ReviewReasons = nonNil(a.ReviewReasons), nonNil(b.ReviewReasons)
	return reflect.DeepEqual(a, b)
}

func TestApplySameBatchTwiceChangesNothing(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	p, o := pay{"stripe", "pi_twice-1"}, pay{"stripe", "pi_twice_2"}
	a.apply(a.messages(p.created("evt_p1", 0, 100), o.created("evt_o1", 0, 300)))
	from := a.pos
	batch := a.messages(p.succeeded("evt_p2", time.Minute, 100), o.failed("evt_o2", time.Minute, 300),
		pay{"stripe", "pi_twice_3"}.created("evt_n1", time.Second, 50))
	a.apply(batch)
	to := a.pos
	wantRows, wantEvents := dumpRaw(t, pool), dumpEvents(t, pool)

	// Rewind the checkpoint as a crash between commit and acknowledgement
	// would, and apply the very same batch again.
	if _, err := pool.Exec(t.Context(), "UPDATE projection_checkpoints SET position = $1 WHERE name = $2",
		from.String(), a.r.cfg.Name); err != nil {
		t.Fatal(err)
	}
	a.pos = from
	a.apply(batch)
	if a.pos != to {
		t.Errorf("position after re-apply = %s, want %s", a.pos, to)
	}
	diffDumps(t, "payments (with id and projected_at)", dumpRaw(t, pool), wantRows)
	diffDumps(t, "payment_events", dumpEvents(t, pool), wantEvents)
}

func TestApplyCheckpointOnlyMessages(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	updatedAt := func() time.Time {
		var at time.Time
		if err := pool.QueryRow(t.Context(), "SELECT updated_at FROM projection_checkpoints WHERE name = $1",
			a.r.cfg.Name).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}

	c1, c2 := a.feed.checkpoint(), a.feed.checkpoint()
	a.apply([]eventstore.Message{{Checkpoint: c1}, {Checkpoint: c2}})
	if got, err := a.r.Position(t.Context()); err != nil || got != c2 {
		t.Fatalf("Position = %s, %v; want %s", got, err, c2)
	}

	// Nothing new: no write at all (updated_at stays), position unchanged.
	before := updatedAt()
	a.apply([]eventstore.Message{{Checkpoint: c2}, {Checkpoint: c1}})
	if a.pos != c2 {
		t.Errorf("position after stale checkpoints = %s, want %s", a.pos, c2)
	}
	if after := updatedAt(); !after.Equal(before) {
		t.Errorf("checkpoint rewritten (updated_at %s -> %s) though its position did not change", before, after)
	}

	// Checkpoints batched with events: the last position wins.
	msgs := a.messages(pay{"stripe", "pi_cp"}.created("evt_cp", 0, 10))
	c3 := a.feed.checkpoint()
	a.apply(append(msgs, eventstore.Message{Checkpoint: c3}))
	if got, err := a.r.Position(t.Context()); err != nil || got != c3 {
		t.Errorf("Position = %s, %v; want %s", got, err, c3)
	}
}

func TestApplyCompareAndSetDetectsConcurrentMove(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	a.apply(a.messages(pay{"stripe", "pi_cas_1"}.created("evt_1", 0, 10)))
	moved := eventstore.Position{Commit: 99, Prepare: 99}
	if _, err := pool.Exec(t.Context(), "UPDATE projection_checkpoints SET position = $1 WHERE name = $2",
		moved.String(), a.r.cfg.Name); err != nil {
		t.Fatal(err)
	}
	before, beforeEvents := dumpRaw(t, pool), dumpEvents(t, pool)

	got, err := a.r.apply(t.Context(), a.pos, a.messages(pay{"stripe", "pi_cas_2"}.created("evt_2", 0, 20)))
	if !errors.Is(err, errCheckpointMoved) {
		t.Fatalf("apply after a concurrent move: err = %v, want errCheckpointMoved", err)
	}
	if got != a.pos {
		t.Errorf("apply returned position %s, want the unchanged %s", got, a.pos)
	}
	diffDumps(t, "payments", dumpRaw(t, pool), before)
	diffDumps(t, "payment_events", dumpEvents(t, pool), beforeEvents)
	if p, err := a.r.Position(t.Context()); err != nil || p != moved {
		t.Errorf("Position = %s, %v; want the other writer's %s", p, err, moved)
	}
}

// TestApplyParksUndecodableEvent: the event parks its stream in the
// batch's transaction; the rest of the batch is applied.
func TestApplyParksUndecodableEvent(t *testing.T) {
	tests := []struct {
		name   string
		typ    string
		data   string
		wantIs error
	}{
		{"unknown type", "payment.teleported.v1", `{"provider":"stripe","provider_payment_id":"pi_x"}`, eventstore.ErrUnknownType},
		{"malformed data", domain.TypePaymentSucceeded, `{"provider":"stripe",`, errUndecodable},
		{"no payment in data", domain.TypePaymentSucceeded, `{"provider":"stripe","amount":5}`, errUndecodable},
	}
	pool := pgtest.NewPool(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := pool.Exec(t.Context(), "DELETE FROM projection_checkpoints; DELETE FROM parked_streams"); err != nil {
				t.Fatal(err)
			}
			a := newApplier(t, pool)
			good := pay{"stripe", "pi_good_" + string(rune('a'+i))}
			batch := a.messages(good.created("evt_g1_"+good.id, 0, 10))
			bad := a.feed.addRecorded(eventstore.RecordedEvent{ID: uuid.New(), Stream: "payment-stripe-pi_x",
				Type: tt.typ, Data: []byte(tt.data)})
			a.feed.mu.Lock()
			batch = append(batch, a.feed.msgs[len(a.feed.msgs)-1])
			a.feed.mu.Unlock()
			batch = append(batch, a.messages(good.succeeded("evt_g2_"+good.id, time.Minute, 10))...)

			from := a.pos
			got, err := a.r.apply(t.Context(), from, batch)
			if err != nil {
				t.Fatalf("err = %v, want nil (parked)", err)
			}
			if want := batch[len(batch)-1].Event.Position; got != want {
				t.Errorf("position = %s, want %s (the whole batch)", got, want)
			}
			if p, err := a.r.Position(t.Context()); err != nil || p != got {
				t.Errorf("committed Position = %s, %v; want %s", p, err, got)
			}
			s, err := NewQueries(pool).Payment(t.Context(), good.provider, good.id)
			if err != nil || s.EventCount != 2 {
				t.Errorf("payment beside the parked one = %+v, %v; want both events applied", s, err)
			}
			var pos, cause, lastErr string
			if err := pool.QueryRow(t.Context(), `SELECT p.position, d.cause, d.last_error FROM parked_streams p
				JOIN dead_letters d ON d.id = p.dead_letter_id WHERE p.stream = 'payment-stripe-pi_x'`).Scan(&pos, &cause, &lastErr); err != nil {
				t.Fatalf("parked row: %v", err)
			}
			if pos != bad.String() || cause != domain.CauseUndecodable || !strings.Contains(lastErr, tt.wantIs.Error()) {
				t.Errorf("parked at %s, cause %q, error %q; want %s, undecodable, %v", pos, cause, lastErr, bad, tt.wantIs)
			}
			if !a.r.parked["payment-stripe-pi_x"] {
				t.Error("the runner's parked set misses the stream")
			}
		})
	}
}

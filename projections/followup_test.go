package projections

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/internal/logtest"
	"github.com/payledger/payledger/internal/pgtest"
)

// tableFollowUp is a FollowUp that records every event it is handed in the
// followups table, inside the batch's transaction, the way a job queue
// inserts jobs. fail, when set, decides per call whether to fail after
// writing; poison makes it write a row that fails a deferred constraint, so
// the batch fails at COMMIT, after every statement succeeded.
type tableFollowUp struct {
	fail   func(call int) error
	poison bool

	mu    sync.Mutex
	calls int
}

var _ FollowUp = (*tableFollowUp)(nil)

func (f *tableFollowUp) EnqueueTx(ctx context.Context, tx pgx.Tx, events []domain.Event) error {
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.mu.Unlock()
	for _, e := range events {
		if _, err := tx.Exec(ctx, "INSERT INTO followups (event_id, type) VALUES ($1, $2)",
			eventstore.EventID(e.EventMeta()), e.EventType()); err != nil {
			return err
		}
	}
	if f.poison {
		if _, err := tx.Exec(ctx, "INSERT INTO followup_poison (target) VALUES (42)"); err != nil {
			return err
		}
	}
	if f.fail != nil {
		return f.fail(call)
	}
	return nil
}

func (f *tableFollowUp) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// newFollowUpPool is a fresh database with the tables tableFollowUp writes.
func newFollowUpPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.NewPool(t)
	_, err := pool.Exec(t.Context(), `
		CREATE TABLE followups (event_id uuid NOT NULL, type text NOT NULL);
		CREATE TABLE followup_targets (id int PRIMARY KEY);
		CREATE TABLE followup_poison (target int REFERENCES followup_targets DEFERRABLE INITIALLY DEFERRED)`)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// followed returns how many times each event was followed up.
func followed(t testing.TB, pool *pgxpool.Pool) map[string]int {
	t.Helper()
	out := map[string]int{}
	for k, v := range dump(t, pool, "SELECT event_id::text, count(*)::text FROM followups GROUP BY event_id") {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	return out
}

func TestApplyFollowUpCommitsWithTheBatch(t *testing.T) {
	queueDown := errors.New("queue down")
	tests := []struct {
		name       string
		followUp   *tableFollowUp
		moveFirst  bool // another writer moves the checkpoint before the batch
		wantErr    func(error) bool
		wantCalled bool
	}{{
		name:       "a committed batch enqueues every event",
		followUp:   &tableFollowUp{},
		wantCalled: true,
	}, {
		name:       "a follow-up error rolls the batch back",
		followUp:   &tableFollowUp{fail: func(int) error { return queueDown }},
		wantErr:    func(err error) bool { return errors.Is(err, queueDown) },
		wantCalled: true,
	}, {
		name:     "a batch that fails at commit enqueues nothing",
		followUp: &tableFollowUp{poison: true},
		wantErr: func(err error) bool {
			var pgErr *pgconn.PgError
			return errors.As(err, &pgErr) && pgErr.Code == "23503"
		},
		wantCalled: true,
	}, {
		name:      "a batch losing the checkpoint race enqueues nothing",
		followUp:  &tableFollowUp{},
		moveFirst: true,
		wantErr:   func(err error) bool { return errors.Is(err, errCheckpointMoved) },
	}}
	pool := newFollowUpPool(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := pool.Exec(t.Context(), "TRUNCATE followups, payments, payment_events"); err != nil {
				t.Fatal(err)
			}
			r := NewRunner(RunnerConfig{Name: fmt.Sprintf("followup_%d", i), FollowUp: tt.followUp}, pool, nil)
			from, err := loadCheckpoint(t.Context(), pool, r.cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			feed := newMemFeed(t)
			p, o := pay{"mercadopago", "1319-4001"}, pay{"stripe", "pi_3QfollowUp"}
			feed.add(&domain.PaymentNotified{Meta: p.meta("mp_n1", 0, "payment.created"), Action: "payment.created"},
				o.created("evt_1", 0, 100), o.succeeded("evt_2", time.Second, 100))
			last := feed.checkpoint()
			if tt.moveFirst {
				if _, err := pool.Exec(t.Context(), "UPDATE projection_checkpoints SET position = '99/99' WHERE name = $1",
					r.cfg.Name); err != nil {
					t.Fatal(err)
				}
			}

			got, err := r.apply(t.Context(), from, feed.msgs)
			if tt.wantErr == nil {
				if err != nil || got != last {
					t.Fatalf("apply = %s, %v; want %s, nil", got, err, last)
				}
				want := map[string]int{}
				for _, m := range feed.msgs[:3] {
					want[m.Event.ID.String()] = 1
				}
				if f := followed(t, pool); fmt.Sprint(f) != fmt.Sprint(want) {
					t.Errorf("followed up %v, want every event once: %v", f, want)
				}
				if n := len(dumpPayments(t, pool)); n != 2 {
					t.Errorf("%d payments rows, want 2", n)
				}
			} else {
				if !tt.wantErr(err) {
					t.Fatalf("apply error = %v", err)
				}
				if got != from {
					t.Errorf("apply returned %s, want the unchanged %s", got, from)
				}
				if f := followed(t, pool); len(f) != 0 {
					t.Errorf("a rolled-back batch enqueued %v", f)
				}
				if n := len(dumpPayments(t, pool)); n != 0 {
					t.Errorf("a rolled-back batch wrote %d payments rows", n)
				}
			}
			if called := tt.followUp.callCount() > 0; called != tt.wantCalled {
				t.Errorf("follow-up called = %v, want %v", called, tt.wantCalled)
			}
		})
	}
}

// TestRunnerRetriesFailedFollowUp: a failing follow-up stops the projection
// like any apply error; once it succeeds, every event has been followed up
// exactly once, because the failed attempts rolled back with their batch.
func TestRunnerRetriesFailedFollowUp(t *testing.T) {
	pool := newFollowUpPool(t)
	feed := newMemFeed(t)
	var all []domain.Event
	for n := range 12 {
		evs := lifecycle("stripe", n)
		all = append(all, evs...)
		feed.add(evs...)
	}
	last := feed.checkpoint()
	log := &logtest.Recorder{}
	fu := &tableFollowUp{fail: func(call int) error {
		if call <= 3 {
			return fmt.Errorf("queue unavailable (call %d)", call)
		}
		return nil
	}}
	cfg := testConfig("payments_v1", log.Logger())
	cfg.FollowUp = fu
	r := NewRunner(cfg, pool, feed)
	start(t, r)
	waitPosition(t, r, last)

	checkReadModel(t, NewQueries(pool), all)
	f := followed(t, pool)
	if len(f) != len(all) {
		t.Errorf("%d events followed up, want %d", len(f), len(all))
	}
	for id, n := range f {
		if n != 1 {
			t.Errorf("event %s followed up %d times, want once", id, n)
		}
	}
	if n := log.Count("retrying from the committed checkpoint", "queue unavailable"); n != 3 {
		t.Errorf("logged %d follow-up failures, want 3", n)
	}
}

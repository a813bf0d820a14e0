package projections

import (
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestAudit projects three payments with the real runner, corrupts the read
// model or the store, and checks what Audit reports.
func TestAudit(t *testing.T) {
	a, b, c := pay{"stripe", "pi_3QvA-refund_1"}, pay{"stripe", "pi_3QvB-failed_2"}, pay{"stripe", "pi_3QvC-dispute_3"}
	events := []domain.Event{
		a.created("evt_1", 0, 5000), a.succeeded("evt_2", time.Second, 5000), a.refunded("evt_3", time.Hour, 5000, 1200),
		b.created("evt_1", 0, 900), b.failed("evt_2", time.Minute, 900),
		c.created("evt_1", 0, 7300), c.succeeded("evt_2", time.Second, 7300), c.disputeOpened("evt_3", time.Hour, 7300),
	}
	tests := []struct {
		name          string
		corrupt       []string
		want          []AuditMismatch
		checked, rows int
		folded        int
	}{
		{name: "clean", checked: 3, rows: 3, folded: 8},
		{
			name:    "refund amount off by one",
			corrupt: []string{`UPDATE payments SET amount_refunded = amount_refunded + 1 WHERE provider_payment_id = 'pi_3QvA-refund_1'`},
			want:    []AuditMismatch{{"stripe/pi_3QvA-refund_1", "amount_refunded", "1201", "1200"}},
			checked: 3, rows: 3, folded: 8,
		},
		{
			name:    "status and event count",
			corrupt: []string{`UPDATE payments SET status = 'confirmed', event_count = 3 WHERE provider_payment_id = 'pi_3QvB-failed_2'`},
			want: []AuditMismatch{
				{"stripe/pi_3QvB-failed_2", "status", "confirmed", "failed"},
				{"stripe/pi_3QvB-failed_2", "event_count", "3", "2"},
			},
			checked: 3, rows: 3, folded: 8,
		},
		{
			name:    "row lost",
			corrupt: []string{`DELETE FROM payments WHERE provider_payment_id = 'pi_3QvC-dispute_3'`},
			checked: 2, rows: 2, folded: 5,
		},
		{
			name: "event after the checkpoint is not folded",
			corrupt: []string{`INSERT INTO es_events (stream, revision, event_id, type, data, metadata)
				SELECT stream, revision + 1, gen_random_uuid(), type, data, metadata
				FROM es_events WHERE stream = 'payment-stripe-pi_3QvB-failed_2' ORDER BY revision DESC LIMIT 1`},
			checked: 3, rows: 3, folded: 8,
		},
		{
			name: "row of a stream without events",
			corrupt: []string{`INSERT INTO payments (provider, provider_payment_id, status, currency, amount, amount_captured, amount_refunded, amount_disputed, created_at, updated_at, event_count, last_recorded_at, last_fact_at)
				VALUES ('stripe', 'pi_3QvD-ghost_4', 'confirmed', 'USD', 1, 0, 0, 0, now(), now(), 1, now(), now())`},
			want:    []AuditMismatch{{"stripe/pi_3QvD-ghost_4", "stream", "row present", "no events in payment-stripe-pi_3QvD-ghost_4"}},
			checked: 4, rows: 4, folded: 8,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := pgtest.NewPool(t)
			store := postgres.New(pool, postgres.Options{PollInterval: 5 * time.Millisecond})
			last := appendAll(t, store, events...)
			r := NewRunner(testConfig(DefaultName, nil), pool, store)
			stop := start(t, r)
			waitPosition(t, r, last)
			stop()
			for _, q := range tt.corrupt {
				if _, err := pool.Exec(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			rep, err := Audit(t.Context(), pool, DefaultName, store)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Checkpoint != last || rep.PaymentsChecked != tt.checked || len(rep.Streams) != tt.rows || rep.EventsFolded != tt.folded {
				t.Errorf("checkpoint %s, checked %d, streams %d, folded %d; want %s, %d, %d, %d",
					rep.Checkpoint, rep.PaymentsChecked, len(rep.Streams), rep.EventsFolded, last, tt.checked, tt.rows, tt.folded)
			}
			if !rep.Streams[eventstore.PaymentStream("stripe", "pi_3QvA-refund_1")] {
				t.Errorf("streams %v lack payment A's", rep.Streams)
			}
			if len(rep.Mismatches) != len(tt.want) {
				t.Fatalf("mismatches = %+v, want %+v", rep.Mismatches, tt.want)
			}
			for i := range tt.want {
				if rep.Mismatches[i] != tt.want[i] {
					t.Errorf("mismatch %d = %+v, want %+v", i, rep.Mismatches[i], tt.want[i])
				}
			}
			if wantPayments := min(len(tt.want), 1); rep.Mismatched != wantPayments {
				t.Errorf("mismatched payments = %d, want %d", rep.Mismatched, wantPayments)
			}
		})
	}
}

// TestAuditEmpty: a database nobody projected into has checkpoint Start and
// nothing to check.
func TestAuditEmpty(t *testing.T) {
	pool := pgtest.NewPool(t)
	rep, err := Audit(t.Context(), pool, DefaultName, postgres.New(pool, postgres.Options{}))
	if err != nil || rep.Checkpoint != eventstore.Start || rep.PaymentsChecked != 0 || rep.Mismatches == nil {
		t.Errorf("Audit = %+v, %v", rep, err)
	}
	if p, err := Checkpoint(t.Context(), pool, DefaultName); err != nil || p != eventstore.Start {
		t.Errorf("Checkpoint = %s, %v; want Start", p, err)
	}
}

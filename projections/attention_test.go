package projections

import (
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
)

func TestAttention(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := t.Context()
	q := NewQueries(pool)

	empty, err := q.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Reviews)+len(empty.DeadLetters)+len(empty.Awaiting) != 0 || empty.Parked.Count != 0 || !empty.Parked.Oldest.IsZero() {
		t.Fatalf("empty database: %+v, want nothing", empty)
	}

	a := newApplier(t, pool)
	pix, card := pay{"mercadopago", "1001"}, pay{"stripe", "pi_1"}
	processing := func(p pay, evt string, at time.Duration) domain.Event {
		return &domain.PaymentProcessing{Meta: p.meta(evt, at, "payment.updated"), Amount: 500, Currency: "BRL"}
	}
	a.apply(a.messages(processing(pix, "evt_1", 0), processing(pix, "evt_2", time.Hour), card.created("evt_3", 0, 100)))

	failedAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	dl := NewDeadLetters(pool)
	for i, f := range []domain.DeadLetterFailure{
		{Key: "job:1", Kind: domain.DeadLetterJob, Cause: "enrich", At: failedAt, Error: "500"},
		{Key: "job:2", Kind: domain.DeadLetterJob, Cause: "enrich", At: failedAt.Add(time.Hour), Error: "500"},
		{Key: "projection:payment-stripe-pi_9", Kind: domain.DeadLetterProjection, Cause: domain.CauseUndecodable, At: failedAt, Error: "bad"},
	} {
		id, err := dl.Record(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if _, err := pool.Exec(ctx, `INSERT INTO parked_streams (stream, dead_letter_id, event_id, position, parked_at)
                VALUES ('payment-stripe-pi_9', $1, gen_random_uuid(), '1/1', $2)`, id, failedAt.Add(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A retried dead letter and a resolved review are not waiting for anyone.
	if _, err := pool.Exec(ctx, `UPDATE dead_letters SET state = 'retried' WHERE dedupe_key = 'job:2'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO reviews (id, provider, provider_payment_id, reason, cause, status_at_open, opened_at, resolved_at)
        VALUES ('rev_a', 'mercadopago', '1001', 'confirmation_timeout', 'status:awaiting_confirmation', 'awaiting_confirmation', $1, NULL),
               ('rev_b', 'mercadopago', '1001', 'confirmation_timeout', 'status:pending', 'pending', $2, NULL),
               ('rev_c', 'stripe', 'pi_1', 'currency_mismatch', 'evt_3', 'pending', $1, $2)`, failedAt, failedAt.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	got, err := q.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what string
		got  domain.AttentionCount
		want domain.AttentionCount
	}{
		{"reviews mercadopago timeout", got.Reviews[[2]string{"mercadopago", "confirmation_timeout"}], domain.AttentionCount{Count: 2, Oldest: failedAt}},
		{"reviews stripe (resolved)", got.Reviews[[2]string{"stripe", "currency_mismatch"}], domain.AttentionCount{}},
		{"dead letters job enrich (one retried)", got.DeadLetters[[2]string{"job", "enrich"}], domain.AttentionCount{Count: 1, Oldest: failedAt}},
		{"dead letters projection", got.DeadLetters[[2]string{"projection", "undecodable"}], domain.AttentionCount{Count: 1, Oldest: failedAt}},
		{"parked", got.Parked, domain.AttentionCount{Count: 1, Oldest: failedAt.Add(2 * time.Hour)}},
		{"awaiting mercadopago", got.Awaiting["mercadopago"], domain.AttentionCount{Count: 1, Oldest: pix.meta("", 0, "").OccurredAt}},
		{"awaiting stripe (pending)", got.Awaiting["stripe"], domain.AttentionCount{}},
	}
	for _, c := range checks {
		if c.got.Count != c.want.Count || !c.got.Oldest.Equal(c.want.Oldest) {
			t.Errorf("%s = %+v, want %+v", c.what, c.got, c.want)
		}
	}
	if len(got.Reviews) != 1 || len(got.DeadLetters) != 2 || len(got.Awaiting) != 1 {
		t.Errorf("groups: %d reviews, %d dead letters, %d awaiting; want 1, 2, 1", len(got.Reviews), len(got.DeadLetters), len(got.Awaiting))
	}
}

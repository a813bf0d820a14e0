package projections

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
)

// paymentKey identifies a payment in the read model.
type paymentKey struct{ provider, id string }

func comparePaymentKeys(a, b paymentKey) int {
	if c := cmp.Compare(a.provider, b.provider); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// affectedPayments returns the batch's payments, sorted so that concurrent
// writers lock rows in the same order.
func affectedPayments(events []decoded) []paymentKey {
	keys := make([]paymentKey, 0, len(events))
	for _, d := range events {
		keys = append(keys, paymentKey{d.meta.Provider, d.meta.ProviderPaymentID})
	}
	slices.SortFunc(keys, comparePaymentKeys)
	return slices.Compact(keys)
}

// upsertPaymentsSQL writes the folded states. The row id is left alone on
// conflict (it is the immutable list order), and a row whose state did not
// change is not rewritten, so replaying a batch leaves the table as it was.
const upsertPaymentsSQL = `INSERT INTO payments AS p
	(provider, provider_payment_id, status, currency, amount, amount_captured, amount_refunded,
	 amount_disputed, fee, fee_currency, created_at, updated_at, event_count, review_reasons,
	 last_recorded_at, last_fact_at, notified_only, requires_review, unreviewed_anomalies)
	SELECT u.provider, u.payment_id, u.status, u.currency, u.amount, u.captured, u.refunded,
		u.disputed, u.fee, u.fee_currency, u.created_at, u.updated_at, u.event_count,
		ARRAY(SELECT jsonb_array_elements_text(u.reasons::jsonb)),
		u.last_recorded_at, u.last_fact_at, u.notified_only, u.requires_review, u.unreviewed
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
		$8::bigint[], $9::bigint[], $10::text[], $11::timestamptz[], $12::timestamptz[], $13::int[], $14::text[],
		$15::timestamptz[], $16::timestamptz[], $17::boolean[], $18::boolean[], $19::boolean[])
		AS u(provider, payment_id, status, currency, amount, captured, refunded,
		     disputed, fee, fee_currency, created_at, updated_at, event_count, reasons,
		     last_recorded_at, last_fact_at, notified_only, requires_review, unreviewed)
	ON CONFLICT (provider, provider_payment_id) DO UPDATE SET
		status = excluded.status, currency = excluded.currency, amount = excluded.amount,
		amount_captured = excluded.amount_captured, amount_refunded = excluded.amount_refunded,
		amount_disputed = excluded.amount_disputed, fee = excluded.fee,
		fee_currency = excluded.fee_currency, created_at = excluded.created_at,
		updated_at = excluded.updated_at, event_count = excluded.event_count,
		review_reasons = excluded.review_reasons, last_recorded_at = excluded.last_recorded_at,
		last_fact_at = excluded.last_fact_at, notified_only = excluded.notified_only,
		requires_review = excluded.requires_review, unreviewed_anomalies = excluded.unreviewed_anomalies, projected_at = now()
	WHERE (p.status, p.currency, p.amount, p.amount_captured, p.amount_refunded, p.amount_disputed,
	       p.fee, p.fee_currency, p.created_at, p.updated_at, p.event_count, p.review_reasons,
	       p.last_recorded_at, p.last_fact_at, p.notified_only, p.requires_review, p.unreviewed_anomalies)
	   IS DISTINCT FROM
	      (excluded.status, excluded.currency, excluded.amount, excluded.amount_captured,
	       excluded.amount_refunded, excluded.amount_disputed, excluded.fee, excluded.fee_currency,
	       excluded.created_at, excluded.updated_at, excluded.event_count, excluded.review_reasons,
	       excluded.last_recorded_at, excluded.last_fact_at, excluded.notified_only,
	       excluded.requires_review, excluded.unreviewed_anomalies)`

// queueUpsertPayments queues upsertPaymentsSQL for states.
func queueUpsertPayments(b *pgx.Batch, rows []foldedRow) error {
	c := newPaymentColumns(len(rows))
	for _, r := range rows {
		if err := c.add(r); err != nil {
			return err
		}
	}
	queueExec(b, fmt.Sprintf("upsert %d payments", len(rows)), nil, upsertPaymentsSQL, c.provider,
		c.paymentID, c.status, c.currency, c.amount, c.captured, c.refunded, c.disputed, c.fee, c.feeCurrency, c.createdAt,
		c.updatedAt, c.eventCount, c.reasons, c.lastRecorded, c.lastFact, c.notifiedOnly, c.requiresReview, c.unreviewed)
	// In the same batch and transaction: a review row and its payment's
	// requires_review never disagree.
	queueUpsertReviews(b, rows)
	return nil
}

// foldedRow is a payments row as the projector writes it: the folded state and what the reconciler
// selects by (migrations/00008_reconciliation.sql).
type foldedRow struct {
	state        domain.PaymentState
	lastRecorded time.Time // newest fact, checks included
	lastFact     time.Time // newest provider fact
	notifiedOnly bool      // every provider fact is a bare notification
	reviews      []domain.Review
	unreviewed   bool // an anomaly has no review yet (domain.AnomalyReviews)
}

// foldedRowOf folds one payment's history (in revision order) into its row.
func foldedRowOf(h []recorded) foldedRow {
	evs := make([]domain.Event, len(h))
	r := foldedRow{notifiedOnly: true}
	facts := 0
	for i, rec := range h {
		evs[i] = rec.event
		if rec.recordedAt.After(r.lastRecorded) {
			r.lastRecorded = rec.recordedAt
		}
		if domain.IsOwnFact(rec.event) {
			continue
		}
		facts++
		if rec.recordedAt.After(r.lastFact) {
			r.lastFact = rec.recordedAt
		}
		if _, ok := rec.event.(*domain.PaymentNotified); !ok {
			r.notifiedOnly = false
		}
	}
	if facts == 0 {
		// Only checks (never written: checks follow a provider fact) date
		// the payment by them rather than by the zero time.
		r.lastFact, r.notifiedOnly = r.lastRecorded, false
	}
	// The one state machine: the same fold the command path uses.
	p := domain.Fold(evs...)
	r.state, r.reviews = p.State(), p.Reviews()
	r.unreviewed = len(domain.AnomalyReviews(p, time.Time{})) > 0
	return r
}

// paymentColumns holds payment states column by column for unnest.
type paymentColumns struct {
	provider, paymentID, status, currency []string
	amount, captured, refunded, disputed  []int64
	fee                                   []int64
	feeCurrency                           []string
	createdAt, updatedAt                  []time.Time
	eventCount                            []int32
	reasons                               []string // JSON arrays: unnest cannot carry ragged text[][]
	lastRecorded, lastFact                []time.Time
	notifiedOnly, requiresReview          []bool
	unreviewed                            []bool
}

func newPaymentColumns(n int) *paymentColumns {
	return &paymentColumns{
		provider: make([]string, 0, n), paymentID: make([]string, 0, n),
		status: make([]string, 0, n), currency: make([]string, 0, n),
		amount: make([]int64, 0, n), captured: make([]int64, 0, n),
		refunded: make([]int64, 0, n), disputed: make([]int64, 0, n),
		fee: make([]int64, 0, n), feeCurrency: make([]string, 0, n),
		createdAt: make([]time.Time, 0, n), updatedAt: make([]time.Time, 0, n),
		eventCount: make([]int32, 0, n), reasons: make([]string, 0, n),
		lastRecorded: make([]time.Time, 0, n), lastFact: make([]time.Time, 0, n), notifiedOnly: make([]bool, 0, n),
	}
}

func (c *paymentColumns) add(r foldedRow) error {
	s := r.state
	reasons, err := json.Marshal(nonNil(s.ReviewReasons))
	if err != nil {
		return fmt.Errorf("encode review reasons of %s/%s: %w", s.Provider, s.ProviderPaymentID, err)
	}
	c.provider = append(c.provider, s.Provider)
	c.paymentID = append(c.paymentID, s.ProviderPaymentID)
	c.status = append(c.status, string(s.Status))
	c.currency = append(c.currency, string(s.Currency))
	c.amount = append(c.amount, s.Amount)
	c.captured = append(c.captured, s.AmountCaptured)
	c.refunded = append(c.refunded, s.AmountRefunded)
	c.disputed = append(c.disputed, s.AmountDisputed)
	c.fee = append(c.fee, s.Fee)
	c.feeCurrency = append(c.feeCurrency, string(s.FeeCurrency))
	c.createdAt = append(c.createdAt, s.CreatedAt)
	c.updatedAt = append(c.updatedAt, s.UpdatedAt)
	c.eventCount = append(c.eventCount, int32(s.EventCount))
	c.reasons = append(c.reasons, string(reasons))
	c.lastRecorded = append(c.lastRecorded, r.lastRecorded)
	c.lastFact = append(c.lastFact, r.lastFact)
	c.notifiedOnly = append(c.notifiedOnly, r.notifiedOnly)
	c.requiresReview = append(c.requiresReview, s.RequiresReview)
	c.unreviewed = append(c.unreviewed, r.unreviewed)
	return nil
}

// nonNil returns s, or an empty slice for nil: read models never hold a
// NULL list.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

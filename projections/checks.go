package projections

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
)

// insertChecksSQL lands the batch's reconciliation checks in the
// reconciliation log, in feed order (ordinality), so that id orders the log
// as the checks were recorded. ON CONFLICT DO NOTHING makes a replayed batch
// a no-op; a rebuild reproduces the rows from the streams.
const insertChecksSQL = `INSERT INTO reconciliation_checks
	(event_id, provider, provider_payment_id, checked_at, run, trigger, status_before, status_observed,
	 provider_status, status_after, outcome, cause, observed_event_id, error)
	SELECT u.event_id, u.provider, u.payment_id, u.checked_at, u.run, u.trigger, u.status_before,
		u.status_observed, u.provider_status, u.status_after, u.outcome, u.cause, u.observed_event_id, u.error
	FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
		WITH ORDINALITY AS u(event_id, provider, payment_id, checked_at, run, trigger, status_before,
		     status_observed, provider_status, status_after, outcome, cause, observed_event_id, error, ord)
	ORDER BY u.ord
	ON CONFLICT (event_id) DO NOTHING`

// queueInsertChecks queues the insert of the batch's reconciliation checks
// into the reconciliation log; a batch without checks queues nothing.
func queueInsertChecks(b *pgx.Batch, events []decoded) {
	var c checkColumns
	for _, d := range events {
		if e, ok := d.event.(*domain.ReconciliationChecked); ok {
			c.add(d.rec.ID, e)
		}
	}
	if len(c.ids) == 0 {
		return
	}
	queueExec(b, fmt.Sprintf("log %d reconciliation checks", len(c.ids)), nil, insertChecksSQL, c.ids, c.provider,
		c.paymentID, c.checkedAt, c.run, c.trigger, c.before, c.observed, c.providerStatus, c.after, c.outcome,
		c.cause, c.eventID, c.error)
}

// checkColumns holds reconciliation checks column by column for unnest.
type checkColumns struct {
	ids                                   [][16]byte
	provider, paymentID                   []string
	checkedAt                             []time.Time
	run, trigger, before, observed        []string
	providerStatus, after, outcome, cause []string
	eventID, error                        []string
}

func (c *checkColumns) add(id [16]byte, e *domain.ReconciliationChecked) {
	c.ids = append(c.ids, id)
	c.provider = append(c.provider, e.Provider)
	c.paymentID = append(c.paymentID, e.ProviderPaymentID)
	c.checkedAt = append(c.checkedAt, e.OccurredAt)
	c.run = append(c.run, e.Run)
	c.trigger = append(c.trigger, e.Trigger)
	c.before = append(c.before, string(e.StatusBefore))
	c.observed = append(c.observed, string(e.StatusObserved))
	c.providerStatus = append(c.providerStatus, e.ProviderStatus)
	c.after = append(c.after, string(e.StatusAfter))
	c.outcome = append(c.outcome, string(e.Outcome))
	c.cause = append(c.cause, string(e.Cause))
	c.eventID = append(c.eventID, e.EventID)
	c.error = append(c.error, e.Error)
}

// checkOf is the reconciliation log row the projector writes for the check
// e stored as id: what the audit compares the table with.
func checkOf(id string, e *domain.ReconciliationChecked) domain.ReconciliationCheck {
	return domain.ReconciliationCheck{
		ID: id, Provider: e.Provider, ProviderPaymentID: e.ProviderPaymentID,
		CheckedAt: e.OccurredAt.UTC().Truncate(time.Microsecond), Run: e.Run, Trigger: e.Trigger,
		StatusBefore: e.StatusBefore, StatusObserved: e.StatusObserved, ProviderStatus: e.ProviderStatus,
		StatusAfter: e.StatusAfter, Outcome: e.Outcome, Cause: e.Cause, EventID: e.EventID, Error: e.Error,
	}
}

// checkColumnList is the reconciliation_checks columns scanCheck reads.
const checkColumnList = `id, event_id::text, provider, provider_payment_id, checked_at, run, trigger, status_before,
	status_observed, provider_status, status_after, outcome, cause, observed_event_id, error`

// scanCheck reads one row of checkColumnList; it returns the row id too.
func scanCheck(r pgx.CollectableRow) (int64, domain.ReconciliationCheck, error) {
	var (
		id                      int64
		c                       domain.ReconciliationCheck
		before, observed, after string
		outcome, cause          string
	)
	err := r.Scan(&id, &c.ID, &c.Provider, &c.ProviderPaymentID, &c.CheckedAt, &c.Run, &c.Trigger, &before,
		&observed, &c.ProviderStatus, &after, &outcome, &cause, &c.EventID, &c.Error)
	c.CheckedAt = c.CheckedAt.UTC()
	c.StatusBefore, c.StatusObserved, c.StatusAfter = domain.Status(before), domain.Status(observed), domain.Status(after)
	c.Outcome, c.Cause = domain.CheckOutcome(outcome), domain.CorrectionCause(cause)
	return id, c, err
}

package projections

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

const unreviewedAnomaliesQuery = `SELECT id, provider, provider_payment_id, status, currency, amount, last_recorded_at
	FROM payments WHERE unreviewed_anomalies AND id > $1 ORDER BY id LIMIT $2`

// UnreviewedAnomalies returns up to limit payments flagged
// unreviewed_anomalies (the fold found an anomaly no review was opened for
// yet) with a row id above afterID, in id order, and the id of the last one
// (afterID when none): the review sweep's keyset pages. The partial index
// payments_unreviewed_anomalies_idx serves it.
func (q *Queries) UnreviewedAnomalies(ctx context.Context, limit int, afterID int64) ([]domain.Candidate, int64, error) {
	const op = "projections: unreviewed anomalies"
	if limit <= 0 {
		return nil, afterID, domain.Invalid(op, "limit must be positive", nil)
	}
	rows, _ := q.pool.Query(ctx, unreviewedAnomaliesQuery, afterID, limit)
	last := afterID
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Candidate, error) {
		var c domain.Candidate
		var status, currency string
		err := r.Scan(&last, &c.Provider, &c.ProviderPaymentID, &status, &currency, &c.Amount, &c.LastRecordedAt)
		c.Status, c.Currency, c.LastRecordedAt = domain.Status(status), domain.Currency(currency), c.LastRecordedAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, afterID, pgerr.Wrap(op, err)
	}
	return out, last, nil
}

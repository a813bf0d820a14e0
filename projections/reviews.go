package projections

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

// upsertReviewsSQL writes the folded reviews of the batch's payments (table
// reviews, migrations/00010_attention.sql). New ones are inserted in
// (opened_at, id) order so seq orders the queue; a known one is rewritten
// only when it changed (its resolution), so a replayed batch is a no-op.
const upsertReviewsSQL = `INSERT INTO reviews AS r
	(id, provider, provider_payment_id, reason, cause, status_at_open, deadline, opened_at,
	 resolved_at, resolution, note, resolved_by)
	SELECT u.id, u.provider, u.payment_id, u.reason, u.cause, u.status, u.deadline, u.opened_at,
		u.resolved_at, u.resolution, u.note, u.resolved_by
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
		$8::timestamptz[], $9::timestamptz[], $10::text[], $11::text[], $12::text[])
		WITH ORDINALITY AS u(id, provider, payment_id, reason, cause, status, deadline, opened_at,
		     resolved_at, resolution, note, resolved_by, ord)
	ORDER BY u.ord
	ON CONFLICT (id) DO UPDATE SET
		reason = excluded.reason, cause = excluded.cause, status_at_open = excluded.status_at_open,
		deadline = excluded.deadline, opened_at = excluded.opened_at, resolved_at = excluded.resolved_at,
		resolution = excluded.resolution, note = excluded.note, resolved_by = excluded.resolved_by
	WHERE (r.reason, r.cause, r.status_at_open, r.deadline, r.opened_at, r.resolved_at, r.resolution, r.note, r.resolved_by)
	   IS DISTINCT FROM
	      (excluded.reason, excluded.cause, excluded.status_at_open, excluded.deadline, excluded.opened_at,
	       excluded.resolved_at, excluded.resolution, excluded.note, excluded.resolved_by)`

// queueUpsertReviews queues upsertReviewsSQL for the reviews of rows; rows
// without reviews queue nothing.
func queueUpsertReviews(b *pgx.Batch, rows []foldedRow) {
	var all []domain.Review
	seen := map[string]bool{}
	for _, r := range rows {
		for _, rv := range r.reviews {
			if seen[rv.ID] {
				continue // one statement may not touch a row twice
			}
			seen[rv.ID] = true
			// The row's key, not the fact's: the row belongs to this stream.
			rv.Provider, rv.ProviderPaymentID = r.state.Provider, r.state.ProviderPaymentID
			all = append(all, rv)
		}
	}
	if len(all) == 0 {
		return
	}
	slices.SortStableFunc(all, func(a, b domain.Review) int {
		return cmp.Or(a.OpenedAt.Compare(b.OpenedAt), cmp.Compare(a.ID, b.ID))
	})
	var c reviewColumns
	for _, rv := range all {
		c.add(rv)
	}
	queueExec(b, fmt.Sprintf("upsert %d reviews", len(all)), nil, upsertReviewsSQL, c.id, c.provider, c.paymentID,
		c.reason, c.cause, c.status, c.deadline, c.openedAt, c.resolvedAt, c.resolution, c.note, c.resolvedBy)
}

// reviewColumns holds reviews column by column for unnest.
type reviewColumns struct {
	id, provider, paymentID, reason, cause, status []string
	deadline                                       []*time.Time
	openedAt                                       []time.Time
	resolvedAt                                     []*time.Time
	resolution, note, resolvedBy                   []string
}

func (c *reviewColumns) add(r domain.Review) {
	c.id = append(c.id, r.ID)
	c.provider = append(c.provider, r.Provider)
	c.paymentID = append(c.paymentID, r.ProviderPaymentID)
	c.reason = append(c.reason, r.Reason)
	c.cause = append(c.cause, r.Cause)
	c.status = append(c.status, string(r.Status))
	c.deadline = append(c.deadline, nullTime(r.Deadline))
	c.openedAt = append(c.openedAt, r.OpenedAt)
	var resolvedAt *time.Time
	if r.Resolved {
		resolvedAt = &r.ResolvedAt
	}
	c.resolvedAt = append(c.resolvedAt, resolvedAt)
	c.resolution = append(c.resolution, string(r.Resolution))
	c.note = append(c.note, r.Note)
	c.resolvedBy = append(c.resolvedBy, r.ResolvedBy)
}

// nullTime is NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// reviewColumnList is the reviews columns scanReview reads, joined with the
// review's payment (alias p).
const reviewColumnList = `r.seq, r.id, r.provider, r.provider_payment_id, r.reason, r.cause, r.status_at_open,
	r.deadline, r.opened_at, r.resolved_at, r.resolution, r.note, r.resolved_by, p.status, p.amount, p.currency`

const reviewFrom = ` FROM reviews r JOIN payments p USING (provider, provider_payment_id)`

// scanReview reads one row of reviewColumnList; it returns seq too.
func scanReview(row pgx.CollectableRow) (int64, domain.ReviewRow, error) {
	var (
		seq                              int64
		r                                domain.ReviewRow
		statusAtOpen, resolution, status string
		currency                         string
		deadline, resolvedAt             *time.Time
	)
	err := row.Scan(&seq, &r.ID, &r.Provider, &r.ProviderPaymentID, &r.Reason, &r.Cause, &statusAtOpen, &deadline,
		&r.OpenedAt, &resolvedAt, &resolution, &r.Note, &r.ResolvedBy, &status, &r.Amount, &currency)
	r.Status, r.Resolution = domain.Status(statusAtOpen), domain.Resolution(resolution)
	r.PaymentStatus, r.Currency = domain.Status(status), domain.Currency(currency)
	r.OpenedAt = r.OpenedAt.UTC()
	if deadline != nil {
		r.Deadline = deadline.UTC()
	}
	if resolvedAt != nil {
		r.Resolved, r.ResolvedAt = true, resolvedAt.UTC()
	}
	return seq, r, err
}

// Review returns one review with its payment, or a KindNotFound error.
func (q *Queries) Review(ctx context.Context, id string) (domain.ReviewRow, error) {
	const op = "projections: review"
	rows, _ := q.pool.Query(ctx, `SELECT `+reviewColumnList+reviewFrom+` WHERE r.id = $1`, id)
	r, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (domain.ReviewRow, error) {
		_, r, err := scanReview(row)
		return r, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.ReviewRow{}, &domain.Error{Kind: domain.KindNotFound, Op: op, Msg: "no such review"}
	}
	if err != nil {
		return domain.ReviewRow{}, pgerr.Wrap(op+" "+id, err)
	}
	return r, nil
}

// ListReviews returns one page of reviews, oldest first (by seq), filtered
// by state, provider and reason, each with its payment's current status and
// money. A bad state, limit or cursor is KindInvalid.
func (q *Queries) ListReviews(ctx context.Context, f domain.ReviewQuery) (domain.ReviewPage, error) {
	const op = "projections: list reviews"
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return domain.ReviewPage{}, err
	}
	var w filter
	switch f.State {
	case "":
	case "open":
		w.where("r.resolved_at IS NULL") // reviews_open_idx
	case "resolved":
		w.where("r.resolved_at IS NOT NULL")
	default:
		return domain.ReviewPage{}, domain.Invalid(op, fmt.Sprintf("state %q is not open or resolved", f.State), nil)
	}
	if f.Cursor != "" {
		after, err := decodeCursor(f.Cursor)
		if err != nil {
			return domain.ReviewPage{}, err
		}
		w.where("r.seq > " + w.arg(after))
	}
	w.equal("r.provider", f.Provider)
	w.equal("r.reason", f.Reason)
	sql := "SELECT " + reviewColumnList + reviewFrom + w.sql() + " ORDER BY r.seq LIMIT " + w.arg(limit+1)
	rows, _ := q.pool.Query(ctx, sql, w.args...)
	type seqRow struct {
		seq int64
		row domain.ReviewRow
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (seqRow, error) {
		seq, r, err := scanReview(row)
		return seqRow{seq, r}, err
	})
	if err != nil {
		return domain.ReviewPage{}, pgerr.Wrap(op, err)
	}
	var p domain.ReviewPage
	list, p.NextCursor = trimPage(list, limit, func(r seqRow) string { return encodeCursor(r.seq) })
	p.Reviews = make([]domain.ReviewRow, len(list))
	for i, r := range list {
		p.Reviews[i] = r.row
	}
	return p, nil
}

// readAuditReviews reads the reviews table into out, by payment and ID,
// in Audit's snapshot.
func readAuditReviews(ctx context.Context, tx pgx.Tx, out map[paymentKey]map[string]domain.Review) error {
	rows, _ := tx.Query(ctx, `SELECT id, provider, provider_payment_id, reason, cause, status_at_open, deadline,
		opened_at, resolved_at, resolution, note, resolved_by FROM reviews`)
	_, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
		var r domain.Review
		var status, resolution string
		var deadline, resolvedAt *time.Time
		err := row.Scan(&r.ID, &r.Provider, &r.ProviderPaymentID, &r.Reason, &r.Cause, &status, &deadline,
			&r.OpenedAt, &resolvedAt, &resolution, &r.Note, &r.ResolvedBy)
		r.Status, r.Resolution, r.OpenedAt = domain.Status(status), domain.Resolution(resolution), r.OpenedAt.UTC()
		if deadline != nil {
			r.Deadline = deadline.UTC()
		}
		if resolvedAt != nil {
			r.Resolved, r.ResolvedAt = true, resolvedAt.UTC()
		}
		k := paymentKey{r.Provider, r.ProviderPaymentID}
		if out[k] == nil {
			out[k] = map[string]domain.Review{}
		}
		out[k][r.ID] = r
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("projections: audit reviews: %w", err)
	}
	return nil
}

// matchReviews compares the payment's review rows with its folded
// reviews, and consumes the rows.
func (a auditor) matchReviews(name string, k paymentKey, folded []domain.Review) []AuditMismatch {
	rows := a.reviews[k]
	delete(a.reviews, k)
	var diffs []AuditMismatch
	for _, want := range folded {
		want.Provider, want.ProviderPaymentID = k.provider, k.id
		want.Deadline = want.Deadline.UTC().Truncate(time.Microsecond)
		want.OpenedAt = want.OpenedAt.UTC().Truncate(time.Microsecond)
		want.ResolvedAt = want.ResolvedAt.UTC().Truncate(time.Microsecond)
		got, ok := rows[want.ID]
		if !ok {
			diffs = append(diffs, AuditMismatch{name, "review", "no row", "review " + want.ID})
			continue
		}
		delete(rows, want.ID)
		if got != want {
			diffs = append(diffs, AuditMismatch{name, "review " + want.ID, fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want)})
		}
	}
	return append(diffs, extraReviews(name, rows)...)
}

// extraReviews reports review rows no review fact in the stream accounts for.
func extraReviews(name string, rows map[string]domain.Review) []AuditMismatch {
	var diffs []AuditMismatch
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		diffs = append(diffs, AuditMismatch{name, "review", "row " + id, "no such review in the stream"})
	}
	return diffs
}

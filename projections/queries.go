package projections

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

// Queries reads the payments read model.
type Queries struct {
	pool *pgxpool.Pool
}

// NewQueries returns Queries over pool.
func NewQueries(pool *pgxpool.Pool) *Queries { return &Queries{pool: pool} }

// paymentRow is a payments row as RowToStructByName reads it.
type paymentRow struct {
	ID                int64     `db:"id"`
	Provider          string    `db:"provider"`
	ProviderPaymentID string    `db:"provider_payment_id"`
	Status            string    `db:"status"`
	Currency          string    `db:"currency"`
	Amount            int64     `db:"amount"`
	AmountCaptured    int64     `db:"amount_captured"`
	AmountRefunded    int64     `db:"amount_refunded"`
	AmountDisputed    int64     `db:"amount_disputed"`
	Fee               int64     `db:"fee"`
	FeeCurrency       string    `db:"fee_currency"`
	CreatedAt         time.Time `db:"created_at"`
	UpdatedAt         time.Time `db:"updated_at"`
	EventCount        int       `db:"event_count"`
	ReviewReasons     []string  `db:"review_reasons"`
	RequiresReview    bool      `db:"requires_review"`
	Parked            bool      `db:"parked"`
}

const paymentColumnList = `id, provider, provider_payment_id, status, currency, amount, amount_captured,
	amount_refunded, amount_disputed, fee, fee_currency, created_at, updated_at, event_count, review_reasons, requires_review,
	EXISTS (SELECT 1 FROM parked_streams s WHERE s.provider = payments.provider
		AND s.provider_payment_id = payments.provider_payment_id) AS parked`

func (r paymentRow) state() domain.PaymentState {
	return domain.PaymentState{
		Provider:          r.Provider,
		ProviderPaymentID: r.ProviderPaymentID,
		Status:            domain.Status(r.Status),
		Currency:          domain.Currency(r.Currency),
		Amount:            r.Amount,
		AmountCaptured:    r.AmountCaptured,
		AmountRefunded:    r.AmountRefunded,
		AmountDisputed:    r.AmountDisputed,
		Fee:               r.Fee,
		FeeCurrency:       domain.Currency(r.FeeCurrency),
		CreatedAt:         r.CreatedAt.UTC(),
		UpdatedAt:         r.UpdatedAt.UTC(),
		EventCount:        r.EventCount,
		ReviewReasons:     nonNil(r.ReviewReasons),
		RequiresReview:    r.RequiresReview,
		Parked:            r.Parked,
	}
}

// Payment returns one payment's state, or an error wrapping
// domain.ErrUnknownPayment when the read model has no such payment.
func (q *Queries) Payment(ctx context.Context, provider, providerPaymentID string) (domain.PaymentState, error) {
	const sql = `SELECT ` + paymentColumnList + ` FROM payments
		WHERE provider = $1 AND provider_payment_id = $2`
	rows, _ := q.pool.Query(ctx, sql, provider, providerPaymentID)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[paymentRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.PaymentState{}, fmt.Errorf("projections: payment %s/%s: %w", provider, providerPaymentID, domain.ErrUnknownPayment)
	}
	if err != nil {
		return domain.PaymentState{}, pgerr.Wrap(fmt.Sprintf("projections: payment %s/%s", provider, providerPaymentID), err)
	}
	return row.state(), nil
}

// ListPayments returns a page of payments, newest first (in the order the
// projector first saw them), filtered by provider and status. Pages are
// keyset pages on the immutable row id: payments projected after a page was
// served never shift the later pages, and no payment appears twice.
func (q *Queries) ListPayments(ctx context.Context, f domain.PaymentFilter) (domain.PaymentPage, error) {
	const op = "projections: list payments"
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return domain.PaymentPage{}, err
	}
	var w filter
	if f.Cursor != "" {
		after, err := decodeCursor(f.Cursor)
		if err != nil {
			return domain.PaymentPage{}, err
		}
		w.where("id < " + w.arg(after))
	}
	w.equal("provider", f.Provider)
	if f.Status != "" {
		if !slices.Contains(domain.Statuses(), f.Status) {
			return domain.PaymentPage{}, domain.Invalid(op, fmt.Sprintf("unknown status %q", f.Status), nil)
		}
		w.equal("status", string(f.Status))
	}
	if f.RequiresReview != nil {
		if *f.RequiresReview {
			w.where("requires_review") // payments_requires_review_idx
		} else {
			w.where("NOT requires_review")
		}
	}
	listRanges(&w, f)
	// One row more than the page tells whether there is a next page.
	sql := "SELECT " + paymentColumnList + " FROM payments" + w.sql() + " ORDER BY id DESC LIMIT " + w.arg(limit+1)
	rows, _ := q.pool.Query(ctx, sql, w.args...)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[paymentRow])
	if err != nil {
		return domain.PaymentPage{}, pgerr.Wrap(op, err)
	}
	return page(list, limit), nil
}

// page turns up to limit+1 rows into a page and its cursor.
func page(list []paymentRow, limit int) domain.PaymentPage {
	var p domain.PaymentPage
	list, p.NextCursor = trimPage(list, limit, func(r paymentRow) string { return encodeCursor(r.ID) })
	p.Payments = make([]domain.PaymentState, len(list))
	for i, r := range list {
		p.Payments[i] = r.state()
	}
	return p
}

// pageLimit validates a filter's limit, applying the default for 0.
func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return domain.DefaultPageSize, nil
	case n < 0 || n > domain.MaxPageSize:
		return 0, domain.Invalid("projections: list payments",
			fmt.Sprintf("limit must be between 1 and %d", domain.MaxPageSize), nil)
	}
	return n, nil
}

// listRanges adds the date and amount bounds of f. They are checked by the
// API; a bound without its currency here is a caller's bug, refused all the
// same rather than comparing minor units of different currencies.
func listRanges(w *filter, f domain.PaymentFilter) {
	if f.CreatedFrom != nil {
		w.where("created_at >= " + w.arg(*f.CreatedFrom))
	}
	if f.CreatedTo != nil {
		w.where("created_at <= " + w.arg(*f.CreatedTo))
	}
	w.equal("currency", string(f.Currency))
	if (f.MinAmount != nil || f.MaxAmount != nil) && f.Currency == "" {
		w.where("false")
	}
	if f.MinAmount != nil {
		w.where("amount >= " + w.arg(*f.MinAmount))
	}
	if f.MaxAmount != nil {
		w.where("amount <= " + w.arg(*f.MaxAmount))
	}
}

package projections

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

// inDoubt is the predicate of payments_in_doubt_idx
// (migrations/00009_awaiting_confirmation.sql), spelled as the index spells it so
// that the planner can prove a query's WHERE implies it: the complement of
// domain.Status.Final, or known only from notifications.
const inDoubt = `(status IN ('pending', 'awaiting_confirmation', 'authorized', 'disputed') OR notified_only)`

// candidateSelect reads candidates; the rest of the query follows.
const candidateSelect = `SELECT provider, provider_payment_id, status, currency, amount, last_recorded_at FROM payments `

// candidates runs candidateSelect + rest and tags every row with trigger.
func (q *Queries) candidates(ctx context.Context, op, trigger, rest string, args ...any) ([]domain.Candidate, error) {
	rows, _ := q.pool.Query(ctx, candidateSelect+rest, args...)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Candidate, error) {
		c := domain.Candidate{Trigger: trigger}
		var status, currency string
		err := r.Scan(&c.Provider, &c.ProviderPaymentID, &status, &currency, &c.Amount, &c.LastRecordedAt)
		c.Status, c.Currency, c.LastRecordedAt = domain.Status(status), domain.Currency(currency), c.LastRecordedAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, pgerr.Wrap(op, err)
	}
	return out, nil
}

// InDoubt returns the payments in doubt (not final, or known only from
// notifications) with no fact recorded since q.QuietSince, longest quiet
// first, tagged domain.TriggerInDoubt. The WHERE repeats the partial
// index's predicate, which serves it.
func (q *Queries) InDoubt(ctx context.Context, dq domain.DoubtQuery) ([]domain.Candidate, error) {
	const op = "projections: payments in doubt"
	if dq.Limit < 0 {
		return nil, domain.Invalid(op, "limit must not be negative", nil)
	}
	rest, args := inDoubtQuery(dq)
	return q.candidates(ctx, op, domain.TriggerInDoubt, rest, args...)
}

// inDoubtQuery is InDoubt's query after candidateSelect, and its arguments.
func inDoubtQuery(dq domain.DoubtQuery) (string, []any) {
	args := []any{dq.QuietSince}
	rest := "WHERE " + inDoubt + " AND last_recorded_at < $1"
	if dq.Provider != "" {
		args = append(args, dq.Provider)
		rest += " AND provider = $2"
	}
	rest += " ORDER BY last_recorded_at, provider, provider_payment_id"
	if dq.Limit > 0 {
		args = append(args, dq.Limit)
		rest += " LIMIT $" + strconv.Itoa(len(args))
	}
	return rest, args
}

// SampleFinished draws each payment that is not in doubt and whose newest
// provider fact was recorded at or after q.FinishedSince with probability
// q.Share, longest quiet first, tagged domain.TriggerSample. A share of 0
// draws none without asking Postgres.
func (q *Queries) SampleFinished(ctx context.Context, sq domain.SampleQuery) ([]domain.Candidate, error) {
	const op = "projections: sample finished payments"
	if !(sq.Share >= 0 && sq.Share <= 1) { // NaN too
		return nil, domain.Invalid(op, fmt.Sprintf("share %v is not in [0, 1]", sq.Share), nil)
	}
	if sq.Share == 0 {
		return []domain.Candidate{}, nil
	}
	// random() is in [0, 1): a share of 1 draws every payment.
	args := []any{sq.FinishedSince, sq.Share}
	rest := "WHERE NOT " + inDoubt + " AND last_fact_at >= $1 AND random() < $2::float8"
	if !sq.QuietSince.IsZero() {
		args = append(args, sq.QuietSince)
		rest += fmt.Sprintf(" AND last_recorded_at < $%d", len(args))
	}
	if sq.Provider != "" {
		args = append(args, sq.Provider)
		rest += fmt.Sprintf(" AND provider = $%d", len(args))
	}
	rest += " ORDER BY last_recorded_at, provider, provider_payment_id"
	return q.candidates(ctx, op, domain.TriggerSample, rest, args...)
}

// DoubtTotals sums the payments in doubt quiet since quietSince (those
// InDoubt returns), per provider and currency, currencies sorted. Payments
// known only from notifications count under currency "" with amount 0.
func (q *Queries) DoubtTotals(ctx context.Context, quietSince time.Time) (map[string][]domain.DoubtTotal, error) {
	return doubtTotals(ctx, q.pool, quietSince)
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func doubtTotals(ctx context.Context, db querier, quietSince time.Time) (map[string][]domain.DoubtTotal, error) {
	const op = "projections: totals in doubt"
	rows, _ := db.Query(ctx, `SELECT provider, currency, count(*), sum(amount)::bigint, min(last_recorded_at)
		FROM payments WHERE `+inDoubt+` AND last_recorded_at < $1
		GROUP BY provider, currency ORDER BY provider, currency`, quietSince)
	out := map[string][]domain.DoubtTotal{}
	var (
		provider, currency string
		t                  domain.DoubtTotal
	)
	_, err := pgx.ForEachRow(rows, []any{&provider, &currency, &t.Payments, &t.Amount, &t.Oldest}, func() error {
		t.Currency, t.Oldest = domain.Currency(currency), t.Oldest.UTC()
		out[provider] = append(out[provider], t)
		return nil
	})
	if err != nil {
		return nil, pgerr.Wrap(op, err)
	}
	return out, nil
}

// ReconciliationSummary counts, per provider, the checks made at or after
// since by outcome (every outcome present) and sums the payments in doubt
// quiet since quietSince, read in one snapshot. A provider is listed when
// it has either; the list is sorted by name.
func (q *Queries) ReconciliationSummary(ctx context.Context, since, quietSince time.Time) (domain.ReconciliationSummary, error) {
	const op = "projections: reconciliation summary"
	sum := domain.ReconciliationSummary{Since: since, Providers: []domain.ProviderReconciliation{}}
	var (
		checks = map[string]map[domain.CheckOutcome]int64{}
		doubt  map[string][]domain.DoubtTotal
	)
	err := pgx.BeginTxFunc(ctx, q.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT provider, outcome, count(*) FROM reconciliation_checks
			WHERE checked_at >= $1 GROUP BY provider, outcome`, since)
		var (
			provider, outcome string
			n                 int64
		)
		_, err := pgx.ForEachRow(rows, []any{&provider, &outcome, &n}, func() error {
			if checks[provider] == nil {
				checks[provider] = zeroOutcomes()
			}
			checks[provider][domain.CheckOutcome(outcome)] += n
			return nil
		})
		if err != nil {
			return err
		}
		doubt, err = doubtTotals(ctx, tx, quietSince)
		return err
	})
	if err != nil {
		return domain.ReconciliationSummary{}, pgerr.Wrap(op, err)
	}
	var providers []string
	for p := range checks {
		providers = append(providers, p)
	}
	for p := range doubt {
		if checks[p] == nil {
			providers = append(providers, p)
		}
	}
	slices.Sort(providers)
	for _, p := range providers {
		line := domain.ProviderReconciliation{Provider: p, Checks: checks[p], InDoubt: doubt[p]}
		if line.Checks == nil {
			line.Checks = zeroOutcomes()
		}
		if line.InDoubt == nil {
			line.InDoubt = []domain.DoubtTotal{}
		}
		sum.Providers = append(sum.Providers, line)
	}
	return sum, nil
}

func zeroOutcomes() map[domain.CheckOutcome]int64 {
	m := make(map[domain.CheckOutcome]int64, len(domain.CheckOutcomes()))
	for _, o := range domain.CheckOutcomes() {
		m[o] = 0
	}
	return m
}

// Checks returns a page of the reconciliation log, newest first, filtered
// by provider, outcome, cause and check time (at or after q.Since). Pages
// are keyset pages on the immutable row id, as ListPayments'.
func (q *Queries) Checks(ctx context.Context, cq domain.CheckQuery) (domain.CheckPage, error) {
	const op = "projections: reconciliation checks"
	limit, err := entryLimit(op, cq.Limit)
	if err != nil {
		return domain.CheckPage{}, err
	}
	var w filter
	if cq.Cursor != "" {
		after, err := decodeCheckCursor(cq.Cursor)
		if err != nil {
			return domain.CheckPage{}, err
		}
		w.where("id < " + w.arg(after))
	}
	w.equal("provider", cq.Provider)
	if cq.Outcome != "" && !cq.Outcome.Valid() {
		return domain.CheckPage{}, domain.Invalid(op, fmt.Sprintf("unknown outcome %q", cq.Outcome), nil)
	}
	w.equal("outcome", string(cq.Outcome))
	if cq.Cause != "" && !cq.Cause.Valid() {
		return domain.CheckPage{}, domain.Invalid(op, fmt.Sprintf("unknown cause %q", cq.Cause), nil)
	}
	w.equal("cause", string(cq.Cause))
	if !cq.Since.IsZero() {
		w.where("checked_at >= " + w.arg(cq.Since))
	}
	// One row more than the page tells whether there is a next page.
	sql := "SELECT " + checkColumnList + " FROM reconciliation_checks" + w.sql() + " ORDER BY id DESC LIMIT " + w.arg(limit+1)
	rows, _ := q.pool.Query(ctx, sql, w.args...)
	type idCheck struct {
		id    int64
		check domain.ReconciliationCheck
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (idCheck, error) {
		id, c, err := scanCheck(r)
		return idCheck{id, c}, err
	})
	if err != nil {
		return domain.CheckPage{}, pgerr.Wrap(op, err)
	}
	var p domain.CheckPage
	list, p.NextCursor = trimPage(list, limit, func(c idCheck) string { return encodeCheckCursor(c.id) })
	p.Checks = make([]domain.ReconciliationCheck, len(list))
	for i, c := range list {
		p.Checks[i] = c.check
	}
	return p, nil
}

// checkCursorVersion prefixes reconciliation log cursors (see cursorVersion).
const checkCursorVersion = "r1:"

// encodeCheckCursor makes the cursor of a page of the log that ended at row
// id: "r1:<id>", base64url.
func encodeCheckCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(checkCursorVersion + strconv.FormatInt(id, 10)))
}

// decodeCheckCursor returns the row id a log cursor continues after, or a
// KindInvalid error for anything encodeCheckCursor did not make.
func decodeCheckCursor(c string) (int64, error) {
	const op, msg = "projections: reconciliation checks", "malformed cursor"
	raw, err := decodeCanonical(c)
	if err != nil {
		return 0, domain.Invalid(op, msg, err)
	}
	s, ok := strings.CutPrefix(string(raw), checkCursorVersion)
	if !ok {
		return 0, domain.Invalid(op, msg, errors.New("unknown cursor version"))
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != s {
		return 0, domain.Invalid(op, msg, errors.New("not a cursor this server made"))
	}
	return id, nil
}

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

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

// entrySelect reads entries with their lines; %s is the rest
// of the query (from WHERE on) over ledger_entries e.
const entrySelect = `SELECT e.id::text, e.provider, e.provider_payment_id, e.currency, e.effective_at,
	e.recorded_at, e.cause_event_id::text, coalesce(e.reverses::text, ''), e.accounts, e.debits, e.credits
FROM ledger_entries e
%s`

// queryEntries runs entrySelect and returns the entries, lines in chart order.
func (q *Queries) queryEntries(ctx context.Context, op, rest string, args ...any) ([]domain.LedgerEntry, error) {
	rows, _ := q.pool.Query(ctx, fmt.Sprintf(entrySelect, rest), args...)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.LedgerEntry, error) {
		var (
			e               domain.LedgerEntry
			accounts        []string
			debits, credits []int64
		)
		err := r.Scan(&e.ID, &e.Provider, &e.ProviderPaymentID, &e.Currency, &e.EffectiveAt, &e.RecordedAt,
			&e.CauseEventID, &e.Reverses, &accounts, &debits, &credits)
		e.EffectiveAt, e.RecordedAt = e.EffectiveAt.UTC(), e.RecordedAt.UTC()
		e.Lines = make([]domain.Line, len(accounts))
		for i, a := range accounts {
			e.Lines[i] = domain.Line{Account: domain.Account(a), Debit: debits[i], Credit: credits[i]}
		}
		slices.SortFunc(e.Lines, func(a, b domain.Line) int {
			return slices.Index(domain.Accounts(), a.Account) - slices.Index(domain.Accounts(), b.Account)
		})
		return e, err
	})
	if err != nil {
		return nil, pgerr.Wrap(op, err)
	}
	return out, nil
}

// PaymentLedger returns the payment's journal entries in fold order (the
// effective time, rank and key of their fact, then the order they were
// posted in), an empty slice when it has none, or an error wrapping
// domain.ErrUnknownPayment when the read model has no such payment.
func (q *Queries) PaymentLedger(ctx context.Context, provider, providerPaymentID string) ([]domain.LedgerEntry, error) {
	op := fmt.Sprintf("projections: ledger of %s/%s", provider, providerPaymentID)
	entries, err := q.queryEntries(ctx, op, `WHERE e.provider = $1 AND e.provider_payment_id = $2
		ORDER BY e.effective_at, e.fact_rank, e.fact_key, e.arrival_revision, e.seq`, provider, providerPaymentID)
	if err != nil || len(entries) > 0 {
		return entries, err
	}
	var known bool
	if err := q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM payments WHERE provider = $1 AND provider_payment_id = $2)`,
		provider, providerPaymentID).Scan(&known); err != nil {
		return nil, pgerr.Wrap(op, err)
	}
	if !known {
		return nil, fmt.Errorf("%s: %w", op, domain.ErrUnknownPayment)
	}
	return []domain.LedgerEntry{}, nil
}

// Entries returns a page of journal entries with the basis time in
// [eq.From, eq.To), filtered by provider, currency and account (an entry
// with a line on it), in (basis time, id) order. Pages are keyset pages on
// that pair, which no entry ever changes: an entry is never seen twice, and
// none stored when the first page was served is skipped.
func (q *Queries) Entries(ctx context.Context, eq domain.EntryQuery) (domain.EntryPage, error) {
	const op = "projections: ledger entries"
	col, err := basisColumn(op, eq.Basis)
	if err != nil {
		return domain.EntryPage{}, err
	}
	if err := checkFilter(op, eq.LedgerFilter); err != nil {
		return domain.EntryPage{}, err
	}
	limit, err := entryLimit(op, eq.Limit)
	if err != nil {
		return domain.EntryPage{}, err
	}
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if eq.Cursor != "" {
		at, id, err := decodeEntryCursor(eq.Cursor, basisOf(eq.Basis))
		if err != nil {
			return domain.EntryPage{}, err
		}
		where = append(where, fmt.Sprintf("(e.%s, e.id) > (%s, %s)", col, arg(at), arg(id)))
	}
	if !eq.From.IsZero() {
		where = append(where, "e."+col+" >= "+arg(eq.From))
	}
	if !eq.To.IsZero() {
		where = append(where, "e."+col+" < "+arg(eq.To))
	}
	if eq.Provider != "" {
		where = append(where, "e.provider = "+arg(eq.Provider))
	}
	if eq.Currency != "" {
		where = append(where, "e.currency = "+arg(string(eq.Currency)))
	}
	if eq.Account != "" {
		where = append(where, arg(string(eq.Account))+" = ANY (e.accounts)")
	}
	rest := "WHERE true"
	for _, w := range where {
		rest += " AND " + w
	}
	// One row more than the page tells whether there is a next page.
	rest += fmt.Sprintf(" ORDER BY e.%s, e.id LIMIT %s", col, arg(limit+1))
	entries, err := q.queryEntries(ctx, op, rest, args...)
	if err != nil {
		return domain.EntryPage{}, err
	}
	return entryPage(entries, limit, basisOf(eq.Basis)), nil
}

// basisOf applies the default basis.
func basisOf(b domain.Basis) domain.Basis {
	if b == "" {
		return domain.BasisEffective
	}
	return b
}

func entryPage(entries []domain.LedgerEntry, limit int, b domain.Basis) domain.EntryPage {
	p := domain.EntryPage{Entries: entries}
	if len(entries) > limit {
		p.Entries = entries[:limit]
		last := p.Entries[limit-1]
		at := last.EffectiveAt
		if b == domain.BasisRecorded {
			at = last.RecordedAt
		}
		p.NextCursor = encodeEntryCursor(b, at, last.ID)
	}
	return p
}

func entryLimit(op string, n int) (int, error) {
	switch {
	case n == 0:
		return domain.DefaultPageSize, nil
	case n < 0 || n > domain.MaxPageSize:
		return 0, domain.Invalid(op, fmt.Sprintf("limit must be between 1 and %d", domain.MaxPageSize), nil)
	}
	return n, nil
}

// entryCursorVersion prefixes entry cursors (see cursorVersion).
const entryCursorVersion = "e1:"

// encodeEntryCursor makes the cursor of a page of basis b that ended at the
// entry (at, id): "e1:<basis>:<unix microseconds>:<uuid>", base64url.
func encodeEntryCursor(b domain.Basis, at time.Time, id string) string {
	s := entryCursorVersion + string(b) + ":" + strconv.FormatInt(at.UnixMicro(), 10) + ":" + id
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// decodeEntryCursor returns the entry a cursor of basis b continues after,
// or a KindInvalid error for anything encodeEntryCursor did not make for b.
func decodeEntryCursor(c string, b domain.Basis) (time.Time, string, error) {
	const op, msg = "projections: ledger entries", "malformed cursor"
	raw, err := decodeCanonical(c)
	if err != nil {
		return time.Time{}, "", domain.Invalid(op, msg, err)
	}
	s, ok := strings.CutPrefix(string(raw), entryCursorVersion)
	if !ok {
		return time.Time{}, "", domain.Invalid(op, msg, errors.New("unknown cursor version"))
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 || domain.Basis(parts[0]) != b {
		return time.Time{}, "", domain.Invalid(op, msg, errors.New("not a cursor of this basis"))
	}
	us, err := strconv.ParseInt(parts[1], 10, 64)
	if y := time.UnixMicro(us).UTC().Year(); err != nil || strconv.FormatInt(us, 10) != parts[1] || y < 1 || y > 9999 {
		return time.Time{}, "", domain.Invalid(op, msg, errors.New("bad time"))
	}
	id, err := uuid.Parse(parts[2])
	if err != nil || id.String() != parts[2] {
		return time.Time{}, "", domain.Invalid(op, msg, errors.New("bad entry id"))
	}
	return time.UnixMicro(us).UTC(), parts[2], nil
}

package projections

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

// basisColumn returns the ledger_entries column of basis b ("" is the
// effective basis), or a KindInvalid error.
func basisColumn(op string, b domain.Basis) (string, error) {
	switch b {
	case domain.BasisEffective, "":
		return "effective_at", nil
	case domain.BasisRecorded:
		return "recorded_at", nil
	}
	return "", domain.Invalid(op, fmt.Sprintf("unknown basis %q", b), nil)
}

// checkFilter rejects an account outside the chart.
func checkFilter(op string, f domain.LedgerFilter) error {
	if f.Account != "" && !f.Account.Valid() {
		return domain.Invalid(op, fmt.Sprintf("unknown account %q", f.Account), nil)
	}
	return nil
}

// ledgerKey is one ledger account: (account, provider, currency).
type ledgerKey struct {
	provider string
	currency domain.Currency
	account  domain.Account
}

func compareLedgerKeys(a, b ledgerKey) int {
	if c := cmp.Compare(a.provider, b.provider); c != 0 {
		return c
	}
	if c := cmp.Compare(a.currency, b.currency); c != 0 {
		return c
	}
	return cmp.Compare(slices.Index(domain.Accounts(), a.account), slices.Index(domain.Accounts(), b.account))
}

// sum is the debits and credits of one account in one interval of sums.
type sum struct {
	interval int
	key      ledgerKey
	debits   int64
	credits  int64
}

// sumsSQL adds up lines per interval between the thresholds $3 (interval 0
// before the first, i in [$3[i], $3[i+1]), nothing from the last, $4, on):
// the running totals of every UTC day that no threshold cuts, of every hour
// of the days one does ($5) that none cuts, and the lines of the hours one
// does ($2), read from the entries. %[1]s is the basis column, %[2]s and
// %[3]s the filters on totals t and on entries t with lines l. Every part
// is an index range scan: OFFSET 0 keeps the hours' entries a scan per hour
// of the basis index, which the planner, guessing a ninth of the table for
// an hour, would otherwise trade for a sequential scan (150 ms at 1M).
const sumsSQL = `WITH s AS (
	SELECT width_bucket(t.bucket, $3::timestamptz[]) AS i, t.provider, t.currency, t.account,
		t.debits, t.credits
	FROM ledger_totals t
	WHERE t.basis = $1 AND t.unit = 'day' AND t.bucket < $4 AND t.bucket <> ALL ($5::timestamptz[]) %[2]s
	UNION ALL
	SELECT width_bucket(t.bucket, $3::timestamptz[]), t.provider, t.currency, t.account, t.debits, t.credits
	FROM unnest($5::timestamptz[]) AS d(day)
	JOIN ledger_totals t ON t.basis = $1 AND t.unit = 'hour'
		AND t.bucket >= d.day AND t.bucket < d.day + interval '24 hours'
	WHERE t.bucket < $4 AND t.bucket <> ALL ($2::timestamptz[]) %[2]s
	UNION ALL
	SELECT width_bucket(t.at, $3::timestamptz[]), t.provider, t.currency, l.account, l.debit, l.credit
	FROM unnest($2::timestamptz[]) AS h(hour)
	CROSS JOIN LATERAL (
		SELECT t.%[1]s AS at, t.provider, t.currency, t.accounts, t.debits, t.credits
		FROM ledger_entries t
		WHERE t.%[1]s >= h.hour AND t.%[1]s < h.hour + interval '1 hour' AND t.%[1]s < $4
		OFFSET 0) AS t
	CROSS JOIN LATERAL unnest(t.accounts, t.debits, t.credits) AS l(account, debit, credit)
	WHERE true %[3]s
)
SELECT i, provider, currency, account, sum(debits)::bigint, sum(credits)::bigint
FROM s GROUP BY 1, 2, 3, 4`

// sums returns the debits and credits per interval of bounds (ascending,
// see sumsSQL) and account, on basis b. Only accounts with lines appear.
func (q *Queries) sums(ctx context.Context, op string, b domain.Basis, f domain.LedgerFilter, bounds []time.Time) ([]sum, error) {
	col, err := basisColumn(op, b)
	if err != nil {
		return nil, err
	}
	hours, days := cut(bounds, time.Hour), cut(bounds, 24*time.Hour)
	args := []any{string(basisOf(b)), hours, bounds, bounds[len(bounds)-1], days}
	totals, lines := filterSQL(f, &args, "t", "l")
	var out []sum
	err = pgx.BeginTxFunc(ctx, q.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// The planner cannot know how few entries an hour holds, guesses a
		// ninth of the table, and JIT-compiles for longer (0.5-0.7 s) than
		// the query runs (BENCHMARKS.md, "Ledger balances").
		if _, err := tx.Exec(ctx, "SET LOCAL jit = off"); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, fmt.Sprintf(sumsSQL, col, totals, lines), args...)
		var err error
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (sum, error) {
			var s sum
			err := r.Scan(&s.interval, &s.key.provider, &s.key.currency, &s.key.account, &s.debits, &s.credits)
			return s, err
		})
		return err
	})
	if err != nil {
		return nil, pgerr.Wrap(op, err)
	}
	return out, nil
}

// cut returns the UTC buckets of width d (an hour or a day) that a bound
// cuts, that is, falls strictly inside. Truncate works on absolute time, so
// its hours and days are UTC's. Never nil: <> ALL (NULL) matches nothing.
func cut(bounds []time.Time, d time.Duration) []time.Time {
	out := []time.Time{}
	for _, t := range bounds {
		if b := t.Truncate(d); !b.Equal(t) && !slices.ContainsFunc(out, b.Equal) {
			out = append(out, b)
		}
	}
	return out
}

// filterSQL appends f's values to args and returns the conditions on the
// running totals and on entries e joined with lines l.
func filterSQL(f domain.LedgerFilter, args *[]any, e, l string) (totals, lines string) {
	arg := func(v any) string { *args = append(*args, v); return "$" + strconv.Itoa(len(*args)) }
	if f.Provider != "" {
		n := arg(f.Provider)
		totals += " AND t.provider = " + n
		lines += " AND " + e + ".provider = " + n
	}
	if f.Currency != "" {
		n := arg(string(f.Currency))
		totals += " AND t.currency = " + n
		lines += " AND " + e + ".currency = " + n
	}
	if f.Account != "" {
		n := arg(string(f.Account))
		totals += " AND t.account = " + n
		lines += " AND " + l + ".account = " + n
	}
	return totals, lines
}

// Balances returns the debits and credits of every ledger account up to
// q.AsOf inclusive on q.Basis, sorted by provider, currency and chart order;
// accounts without entries are left out. It reads the running totals of the
// whole hours before AsOf and the entries of AsOf's own hour, so its cost
// does not grow with the number of entries.
func (q *Queries) Balances(ctx context.Context, bq domain.BalanceQuery) ([]domain.AccountBalance, error) {
	const op = "projections: ledger balances"
	if bq.AsOf.IsZero() {
		return nil, domain.Invalid(op, "as_of is required", nil)
	}
	if err := checkFilter(op, bq.LedgerFilter); err != nil {
		return nil, err
	}
	// Times are stored to the microsecond: ≤ AsOf is < the next microsecond.
	bound := bq.AsOf.Truncate(time.Microsecond).Add(time.Microsecond)
	sums, err := q.sums(ctx, op, bq.Basis, bq.LedgerFilter, []time.Time{bound})
	if err != nil {
		return nil, err
	}
	out := make([]domain.AccountBalance, 0, len(sums))
	for _, s := range sums {
		if s.interval == 0 {
			out = append(out, domain.AccountBalance{Account: s.key.account, Provider: s.key.provider,
				Currency: s.key.currency, Debits: s.debits, Credits: s.credits})
		}
	}
	slices.SortFunc(out, func(a, b domain.AccountBalance) int {
		return compareLedgerKeys(ledgerKey{a.Provider, a.Currency, a.Account}, ledgerKey{b.Provider, b.Currency, b.Account})
	})
	return out, nil
}

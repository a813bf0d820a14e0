package projections

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
)

// LedgerAudit is what AuditLedger found.
type LedgerAudit struct {
	Entries  int // journal entries checked
	Payments int // payments rows checked
	Problems []LedgerProblem
	// Sliced says the audit covered some payments only, so the running
	// totals (ledger-wide sums) were not compared.
	Sliced bool
}

// LedgerProblem is one difference AuditLedger found.
type LedgerProblem struct {
	Payment string // provider/provider_payment_id; empty for a ledger-wide check
	Check   string // entry_balance, payment_books, currency_balance or running_totals
	Detail  string
}

// AuditLedger checks the ledger read model in one snapshot: every entry has
// lines and balances; for every payment the sum of its entries per (account,
// currency) equals the books of its payments row (domain.BooksOf); per
// currency the whole ledger's debits equal its credits; and the running
// totals equal the sums of the lines. It only reads.
func AuditLedger(ctx context.Context, pool *pgxpool.Pool) (LedgerAudit, error) {
	return AuditLedgerOf(ctx, pool, nil)
}

// AuditLedgerOf is AuditLedger of the named payments only
// (provider/provider_payment_id; nil: every payment): their entries, their
// books and the per-currency balance of their entries. The running totals
// are ledger-wide, so a slice does not compare them.
func AuditLedgerOf(ctx context.Context, pool *pgxpool.Pool, payments []string) (LedgerAudit, error) {
	rep := LedgerAudit{Sliced: payments != nil}
	checks := []func(context.Context, pgx.Tx, *LedgerAudit, []string) error{auditEntries, auditPayments, auditCurrencies}
	if !rep.Sliced {
		checks = append(checks, auditTotals)
	}
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM ledger_entries e WHERE `+inSlice, payments).Scan(&rep.Entries); err != nil {
			return err
		}
		for _, check := range checks {
			if err := check(ctx, tx, &rep, payments); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("projections: audit ledger: %w", err)
	}
	return rep, nil
}

// inSlice is the condition that the entry e is of a payment in $1, a
// text[] of provider/provider_payment_id (NULL: every payment).
const inSlice = `($1::text[] IS NULL OR e.provider || '/' || e.provider_payment_id = ANY($1::text[]))`

// problems runs q with the slice as $1, whose rows are (payment, detail),
// and adds one problem of check per row.
func problems(ctx context.Context, tx pgx.Tx, rep *LedgerAudit, check, q string, payments []string) error {
	rows, _ := tx.Query(ctx, q, payments)
	var payment, detail string
	_, err := pgx.ForEachRow(rows, []any{&payment, &detail}, func() error {
		rep.Problems = append(rep.Problems, LedgerProblem{Payment: payment, Check: check, Detail: detail})
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", check, err)
	}
	return nil
}

// auditEntries finds entries without lines, with line arrays of unequal
// lengths, a line that is not exactly one positive side, or debits and
// credits that differ. (An entry has one currency column: its lines cannot
// mix currencies.)
func auditEntries(ctx context.Context, tx pgx.Tx, rep *LedgerAudit, payments []string) error {
	return problems(ctx, tx, rep, "entry_balance", `
	SELECT e.provider || '/' || e.provider_payment_id,
		format('entry %s (%s): %s accounts, %s debits, %s credits, debits %s, credits %s, %s malformed lines',
			e.id, e.currency, cardinality(e.accounts), cardinality(e.debits), cardinality(e.credits),
			(SELECT sum(d) FROM unnest(e.debits) d), (SELECT sum(c) FROM unnest(e.credits) c),
			(SELECT count(*) FROM unnest(e.debits, e.credits) AS l(d, c) WHERE NOT ((d > 0 AND c = 0) OR (d = 0 AND c > 0))))
	FROM ledger_entries e
	WHERE `+inSlice+` AND (cardinality(e.accounts) = 0 OR cardinality(e.accounts) <> cardinality(e.debits)
		OR cardinality(e.accounts) <> cardinality(e.credits)
		OR (SELECT sum(d) FROM unnest(e.debits) d) <> (SELECT sum(c) FROM unnest(e.credits) c)
		OR EXISTS (SELECT 1 FROM unnest(e.debits, e.credits) AS l(d, c) WHERE NOT ((d > 0 AND c = 0) OR (d = 0 AND c > 0))))
	ORDER BY 1, e.id`, payments)
}

// auditCurrencies compares each currency's debits and credits.
func auditCurrencies(ctx context.Context, tx pgx.Tx, rep *LedgerAudit, payments []string) error {
	return problems(ctx, tx, rep, "currency_balance", `
	SELECT '', format('%s: debits %s, credits %s', e.currency, sum(l.debit), sum(l.credit))
	FROM ledger_entries e CROSS JOIN LATERAL unnest(e.accounts, e.debits, e.credits) AS l(account, debit, credit)
	WHERE `+inSlice+`
	GROUP BY e.currency HAVING sum(l.debit) <> sum(l.credit) ORDER BY e.currency`, payments)
}

// auditTotals compares every running total with the lines it adds up.
func auditTotals(ctx context.Context, tx pgx.Tx, rep *LedgerAudit, _ []string) error {
	return problems(ctx, tx, rep, "running_totals", `
	WITH l AS (
		SELECT e.provider, e.currency, e.effective_at, e.recorded_at, l.account, l.debit, l.credit
		FROM ledger_entries e CROSS JOIN LATERAL unnest(e.accounts, e.debits, e.credits) AS l(account, debit, credit)
	), s AS (
		SELECT b.basis, b.unit, b.bucket, l.provider, l.currency, l.account,
			sum(l.debit) AS debits, sum(l.credit) AS credits
		FROM l `+bucketsSQL+`
		GROUP BY 1, 2, 3, 4, 5, 6
	)
	SELECT '', format('%s %s %s %s/%s/%s: totals %s/%s, lines %s/%s', basis, unit, bucket AT TIME ZONE 'UTC',
		provider, currency, account, t.debits, t.credits, s.debits, s.credits)
	FROM ledger_totals t FULL JOIN s USING (basis, unit, bucket, provider, currency, account)
	WHERE $1::text[] IS NULL AND (t.debits IS DISTINCT FROM s.debits OR t.credits IS DISTINCT FROM s.credits)
	ORDER BY basis, unit, bucket, provider, currency, account`, nil)
}

// auditPayments compares the sum of every payment's entries with the books
// of its payments row.
func auditPayments(ctx context.Context, tx pgx.Tx, rep *LedgerAudit, payments []string) error {
	states, err := readPaymentStates(ctx, tx)
	if err != nil {
		return fmt.Errorf("payment_books: %w", err)
	}
	sums, err := paymentSums(ctx, tx, payments)
	if err != nil {
		return fmt.Errorf("payment_books: %w", err)
	}
	for _, s := range states {
		name := s.Provider + "/" + s.ProviderPaymentID
		if payments != nil && !slices.Contains(payments, name) {
			continue
		}
		rep.Payments++
		want := map[string]int64{}
		for _, b := range domain.BooksOf(s).Balances() {
			want[string(b.Currency)+" "+string(b.Account)] = b.Amount
		}
		got := sums[name]
		delete(sums, name)
		for _, k := range slices.Sorted(maps.Keys(unionKeys(want, got))) {
			if want[k] != got[k] {
				rep.Problems = append(rep.Problems, LedgerProblem{Payment: name, Check: "payment_books",
					Detail: fmt.Sprintf("%s: entries %d, books of the payments row %d", k, got[k], want[k])})
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		rep.Problems = append(rep.Problems, LedgerProblem{Payment: name, Check: "payment_books",
			Detail: "entries of a payment the payments table does not hold"})
	}
	return nil
}

// paymentSums returns the normal-side balance of every payment's entries
// per "currency account", keyed by provider/provider_payment_id.
func paymentSums(ctx context.Context, tx pgx.Tx, payments []string) (map[string]map[string]int64, error) {
	rows, _ := tx.Query(ctx, `SELECT e.provider || '/' || e.provider_payment_id, e.currency, l.account,
		sum(l.debit)::bigint, sum(l.credit)::bigint
		FROM ledger_entries e CROSS JOIN LATERAL unnest(e.accounts, e.debits, e.credits) AS l(account, debit, credit)
		WHERE `+inSlice+` GROUP BY 1, 2, 3`, payments)
	out := map[string]map[string]int64{}
	var (
		name, currency, account string
		debits, credits         int64
	)
	_, err := pgx.ForEachRow(rows, []any{&name, &currency, &account, &debits, &credits}, func() error {
		if out[name] == nil {
			out[name] = map[string]int64{}
		}
		if b := domain.Account(account).NormalBalance(debits, credits); b != 0 {
			out[name][currency+" "+account] = b
		}
		return nil
	})
	return out, err
}

func unionKeys(a, b map[string]int64) map[string]bool {
	u := make(map[string]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

package projections

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
)

// balanceEntries sizes BenchmarkLedgerBalances; the figure is a million.
var balanceEntries = flag.Int("balances.entries", 1_000_000, "synthetic journal entries for BenchmarkLedgerBalances")

// seedLedgerSQL writes $1 synthetic entries over 2025, spread evenly over
// 3 providers × 2 currencies, each a capture (provider_balance / sales) or,
// one in four, a refund (refunds / provider_balance), recorded up to a day
// after their effective time; then the running totals from the lines, as
// the projector keeps them.
const seedLedgerSQL = `
INSERT INTO ledger_entries (id, provider, provider_payment_id, currency, effective_at, recorded_at,
	cause_event_id, reverses, fact_key, fact_rank, arrival_revision, seq, accounts, debits, credits)
SELECT md5('entry:' || g)::uuid, (ARRAY['stripe','asaas','mercadopago'])[g % 3 + 1], 'pi_bench_' || g / 2,
	(ARRAY['USD','BRL'])[g / 3 % 2 + 1], t, t + make_interval(secs => g % 86400),
	md5('event:' || g)::uuid, NULL, 'stripe/evt_' || g, 3, g % 2, 0,
	CASE WHEN g % 4 = 3 THEN ARRAY['provider_balance', 'refunds'] ELSE ARRAY['provider_balance', 'sales'] END,
	CASE WHEN g % 4 = 3 THEN ARRAY[0, 1000 + g % 97] ELSE ARRAY[1000 + g % 97, 0] END,
	CASE WHEN g % 4 = 3 THEN ARRAY[1000 + g % 97, 0] ELSE ARRAY[0, 1000 + g % 97] END
FROM generate_series(0, $1::int - 1) AS g,
	LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => g::float8 * 31536000 / $1)) AS x(t);
INSERT INTO ledger_totals (basis, unit, bucket, provider, currency, account, debits, credits)
SELECT b.basis, b.unit, b.bucket, l.provider, l.currency, l.account, sum(l.debit), sum(l.credit)
FROM (SELECT e.provider, e.currency, e.effective_at, e.recorded_at, l.account, l.debit, l.credit
	FROM ledger_entries e CROSS JOIN LATERAL unnest(e.accounts, e.debits, e.credits) AS l(account, debit, credit)) AS l
	` + bucketsSQL + `
GROUP BY 1, 2, 3, 4, 5, 6;
ANALYZE ledger_entries; ANALYZE ledger_totals`

// BenchmarkLedgerBalances times Balances over balanceEntries entries: the
// running totals of every whole hour before as_of plus the entries of its
// own hour. The worst case is as_of at the end of the year (every bucket).
func BenchmarkLedgerBalances(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.NewPool(b)
	seed := time.Now()
	n := *balanceEntries
	for _, stmt := range splitStatements(seedLedgerSQL) {
		args := []any{n}
		if !usesArg(stmt) {
			args = nil
		}
		if _, err := pool.Exec(ctx, stmt, args...); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	var totals int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ledger_totals`).Scan(&totals); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d entries, %d running totals in %s", n, totals, time.Since(seed).Round(time.Millisecond))
	q := NewQueries(pool)
	end := time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC)
	mid := time.Date(2025, 7, 1, 12, 34, 56, 0, time.UTC)
	for _, c := range []struct {
		name string
		q    domain.BalanceQuery
	}{
		{"effective/end", domain.BalanceQuery{AsOf: end, Basis: domain.BasisEffective}},
		{"recorded/end", domain.BalanceQuery{AsOf: end, Basis: domain.BasisRecorded}},
		{"effective/mid", domain.BalanceQuery{AsOf: mid, Basis: domain.BasisEffective}},
		{"effective/end/provider+currency", domain.BalanceQuery{AsOf: end, Basis: domain.BasisEffective,
			LedgerFilter: domain.LedgerFilter{Provider: "asaas", Currency: "BRL"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				bs, err := q.Balances(ctx, c.q)
				if err != nil || len(bs) == 0 {
					b.Fatalf("Balances = %d, %v", len(bs), err)
				}
			}
		})
	}
	// Daily over the whole year: every Kathmandu midnight cuts a UTC hour.
	for _, zone := range []string{"UTC", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("daily/365d/"+zone, func(b *testing.B) {
			dq := domain.DailyQuery{From: time.Date(2025, 1, 1, 0, 0, 0, 0, loc), To: time.Date(2025, 12, 31, 0, 0, 0, 0, loc), Location: loc}
			for b.Loop() {
				ds, err := q.Daily(ctx, dq)
				if err != nil || len(ds) == 0 {
					b.Fatalf("Daily = %d, %v", len(ds), err)
				}
			}
		})
	}
}

func splitStatements(s string) []string {
	var out []string
	for _, stmt := range strings.Split(s, ";") {
		if strings.TrimSpace(stmt) != "" {
			out = append(out, stmt)
		}
	}
	return out
}

func usesArg(stmt string) bool { return strings.Contains(stmt, "$1") }

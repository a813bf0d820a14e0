package projections

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/payledger/payledger/domain"
)

// Daily returns, for every calendar day of dq.Location from dq.From through
// dq.To and every account with an entry effective by that day's end, the
// day's debits and credits and the closing balance on the account's normal
// side (since the beginning of time), sorted by day, provider, currency and
// chart order. Day boundaries are the zone's midnights, whatever its offset
// (+05:45 included): whole UTC hours come from the running totals, the hours
// a midnight cuts from the entries.
func (q *Queries) Daily(ctx context.Context, dq domain.DailyQuery) ([]domain.DayBalance, error) {
	const op = "projections: ledger daily"
	if err := checkFilter(op, dq.LedgerFilter); err != nil {
		return nil, err
	}
	bounds, err := dayBounds(op, dq)
	if err != nil {
		return nil, err
	}
	sums, err := q.sums(ctx, op, domain.BasisEffective, dq.LedgerFilter, bounds)
	if err != nil {
		return nil, err
	}
	days := len(bounds) - 1
	type account struct {
		first           int     // the first interval with lines: 0 before From, i for day i-1
		debits, credits []int64 // per interval
	}
	accounts := map[ledgerKey]*account{}
	for _, s := range sums {
		a := accounts[s.key]
		if a == nil {
			a = &account{first: s.interval, debits: make([]int64, days+1), credits: make([]int64, days+1)}
			accounts[s.key] = a
		}
		a.first = min(a.first, s.interval)
		a.debits[s.interval] += s.debits
		a.credits[s.interval] += s.credits
	}
	keys := make([]ledgerKey, 0, len(accounts))
	for k := range accounts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareLedgerKeys)
	var out []domain.DayBalance
	for i := 1; i <= days; i++ {
		day := bounds[i-1].In(dq.Location).Format(time.DateOnly)
		for _, k := range keys {
			a := accounts[k]
			// Cumulative: interval i adds to the closing of day i-1.
			a.debits[i] += a.debits[i-1]
			a.credits[i] += a.credits[i-1]
			if a.first > i {
				continue
			}
			d, c := a.debits[i]-a.debits[i-1], a.credits[i]-a.credits[i-1]
			out = append(out, domain.DayBalance{Day: day, Account: k.account, Provider: k.provider,
				Currency: k.currency, Debits: d, Credits: c, ClosingBalance: k.account.NormalBalance(a.debits[i], a.credits[i])})
		}
	}
	return out, nil
}

// dayBounds returns the midnights of dq.Location from dq.From's day through
// the day after dq.To's, or a KindInvalid error for a nonsensical range.
// Midnights are rebuilt from the calendar dates, so a day that begins at
// 01:00 (a DST change at midnight) is still whole.
func dayBounds(op string, dq domain.DailyQuery) ([]time.Time, error) {
	if dq.Location == nil {
		return nil, domain.Invalid(op, "no time zone", nil)
	}
	if dq.From.IsZero() || dq.To.IsZero() {
		return nil, domain.Invalid(op, "from and to are required", nil)
	}
	fy, fm, fd := dq.From.In(dq.Location).Date()
	ty, tm, td := dq.To.In(dq.Location).Date()
	last := time.Date(ty, tm, td, 0, 0, 0, 0, time.UTC)
	first := time.Date(fy, fm, fd, 0, 0, 0, 0, time.UTC)
	n := int(last.Sub(first).Hours()/24) + 1 // civil days: UTC has no DST
	switch {
	case n < 1:
		return nil, domain.Invalid(op, "from is after to", nil)
	case n > domain.MaxDailyDays:
		return nil, domain.Invalid(op, fmt.Sprintf("at most %d days per query", domain.MaxDailyDays), nil)
	}
	bounds := make([]time.Time, n+1)
	for i := range bounds {
		bounds[i] = time.Date(fy, fm, fd+i, 0, 0, 0, 0, dq.Location)
	}
	return bounds, nil
}

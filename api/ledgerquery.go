package api

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
)

// The ledger routes' parameters. A route refuses any other name, so a
// misspelt filter (curency=USD) is a 400, not a wider answer read as the
// filtered one.
var (
	balanceParams = []string{"as_of", "basis", "provider", "currency", "account"}
	dailyParams   = []string{"from", "to", "tz", "provider", "currency", "account"}
	entryParams   = []string{"from", "to", "basis", "provider", "currency", "account", "limit", "cursor"}
)

// dayLayout is the daily route's from and to: a calendar date.
const dayLayout = "2006-01-02"

// parseBalanceQuery validates GET /v1/ledger/balances; as_of defaults to now.
func parseBalanceQuery(q url.Values, known []string, now time.Time) (domain.BalanceQuery, error) {
	const op = "api: ledger balances"
	var out domain.BalanceQuery
	if err := checkParams(op, q, balanceParams); err != nil {
		return out, err
	}
	f, err := parseLedgerFilter(op, q, known)
	if err != nil {
		return out, err
	}
	out.LedgerFilter, out.AsOf = f, now
	if s := q.Get("as_of"); s != "" {
		if out.AsOf, err = parseInstant(op, "as_of", s); err != nil {
			return out, err
		}
	}
	out.Basis, err = parseBasis(op, q.Get("basis"))
	return out, err
}

// parseDailyQuery validates GET /v1/ledger/daily: from and to are required
// dates, both inclusive, at most domain.MaxDailyDays apart, read in tz.
func parseDailyQuery(q url.Values, known []string) (domain.DailyQuery, error) {
	const op = "api: ledger daily"
	var out domain.DailyQuery
	if err := checkParams(op, q, dailyParams); err != nil {
		return out, err
	}
	f, err := parseLedgerFilter(op, q, known)
	if err != nil {
		return out, err
	}
	loc, err := parseZone(op, q.Get("tz"))
	if err != nil {
		return out, err
	}
	from, err := parseDay(op, "from", q.Get("from"), loc)
	if err != nil {
		return out, err
	}
	to, err := parseDay(op, "to", q.Get("to"), loc)
	if err != nil {
		return out, err
	}
	switch n := calendarDays(from, to); {
	case n < 1:
		return out, domain.Invalid(op, fmt.Sprintf("from %s is after to %s", q.Get("from"), q.Get("to")), nil)
	case n > domain.MaxDailyDays:
		return out, domain.Invalid(op, fmt.Sprintf("from %s to %s is %d days; at most %d per query",
			q.Get("from"), q.Get("to"), n, domain.MaxDailyDays), nil)
	}
	return domain.DailyQuery{LedgerFilter: f, From: from, To: to, Location: loc}, nil
}

// parseEntryQuery validates GET /v1/ledger/entries: from and to are
// optional instants bounding [from, to) on basis.
func parseEntryQuery(q url.Values, known []string) (domain.EntryQuery, error) {
	const op = "api: ledger entries"
	var out domain.EntryQuery
	if err := checkParams(op, q, entryParams); err != nil {
		return out, err
	}
	f, err := parseLedgerFilter(op, q, known)
	if err != nil {
		return out, err
	}
	out.LedgerFilter, out.Cursor = f, q.Get("cursor")
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"from", &out.From}, {"to", &out.To}} {
		if s := q.Get(b.name); s != "" {
			if *b.t, err = parseInstant(op, b.name, s); err != nil {
				return out, err
			}
		}
	}
	if !out.From.IsZero() && !out.To.IsZero() && !out.From.Before(out.To) {
		return out, domain.Invalid(op, fmt.Sprintf("from %s is not before to %s; the range is [from, to)",
			q.Get("from"), q.Get("to")), nil)
	}
	if out.Basis, err = parseBasis(op, q.Get("basis")); err != nil {
		return out, err
	}
	out.Limit, err = parseLimit(op, q.Get("limit"))
	return out, err
}

// checkParams refuses names outside allowed and repeated parameters (taking
// one of two values silently could answer a question nobody asked). An empty
// value counts as absent, as on /v1/payments.
func checkParams(op string, q url.Values, allowed []string) error {
	for name, vals := range q {
		if !slices.Contains(allowed, name) {
			return domain.Invalid(op, fmt.Sprintf("unknown query parameter %q; this route takes %v", name, allowed), nil)
		}
		if len(vals) > 1 {
			return domain.Invalid(op, fmt.Sprintf("query parameter %q given more than once", name), nil)
		}
	}
	return nil
}

// parseLedgerFilter reads provider, currency and account. A provider the
// server does not know is refused: its empty answer would read as zero.
func parseLedgerFilter(op string, q url.Values, known []string) (domain.LedgerFilter, error) {
	var f domain.LedgerFilter
	if p := q.Get("provider"); p != "" {
		if !slices.Contains(known, p) {
			return f, domain.Invalid(op, fmt.Sprintf("provider %q is not one of %v", p, known), nil)
		}
		f.Provider = p
	}
	if c := q.Get("currency"); c != "" {
		cur, err := domain.NewCurrency(c)
		if err != nil {
			return f, fmt.Errorf("%s: %w", op, err)
		}
		f.Currency = cur
	}
	if a := domain.Account(q.Get("account")); a != "" {
		if !a.Valid() {
			return f, domain.Invalid(op, fmt.Sprintf("account %q is not one of %v", a, domain.Accounts()), nil)
		}
		f.Account = a
	}
	return f, nil
}

// parseBasis reads basis; absent means effective.
func parseBasis(op, s string) (domain.Basis, error) {
	if s == "" {
		return domain.BasisEffective, nil
	}
	if b := domain.Basis(s); b.Valid() {
		return b, nil
	}
	return "", domain.Invalid(op, fmt.Sprintf("basis %q is not %q or %q", s, domain.BasisEffective, domain.BasisRecorded), nil)
}

// parseInstant reads an RFC 3339 time with its offset ("2025-03-31T23:59:59Z",
// "2025-03-31T20:59:59-03:00"), fractional seconds allowed.
func parseInstant(op, name, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, domain.Invalid(op, fmt.Sprintf("%s %q is not an RFC 3339 time such as 2025-03-31T23:59:59Z", name, s), err)
	}
	return t, nil
}

// parseDay reads a required YYYY-MM-DD date as its midnight in loc.
func parseDay(op, name, s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, domain.Invalid(op, fmt.Sprintf("%s is required (YYYY-MM-DD)", name), nil)
	}
	d, err := time.ParseInLocation(dayLayout, s, loc)
	if err != nil {
		return time.Time{}, domain.Invalid(op, fmt.Sprintf("%s %q is not a date YYYY-MM-DD", name, s), err)
	}
	return d, nil
}

// calendarDays counts the dates from through to, both included (0 or less
// when from is after to). It counts dates, not 24-hour spans, so a DST
// change inside the range does not shift it.
func calendarDays(from, to time.Time) int {
	civil := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	return int(civil(to).Sub(civil(from))/(24*time.Hour)) + 1
}

// maxZoneLen bounds tz: the longest IANA name is about 30 bytes.
const maxZoneLen = 64

// parseZone reads an IANA zone name; absent means UTC. Only the characters
// of IANA names reach time.LoadLocation (it reads files by that name), and
// "Local" is refused: the server's own zone is nobody's business day.
func parseZone(op, s string) (*time.Location, error) {
	if s == "" {
		return time.UTC, nil
	}
	bad := func(err error) (*time.Location, error) {
		return nil, domain.Invalid(op, fmt.Sprintf("tz %q is not an IANA time zone such as America/Sao_Paulo", s), err)
	}
	if len(s) > maxZoneLen || s == "Local" || s[0] == '/' || s[0] == '-' {
		return bad(nil)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+') {
			return bad(nil)
		}
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return bad(err)
	}
	return loc, nil
}

// parseLimit reads a page size; absent is 0, the reader's default.
func parseLimit(op, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > domain.MaxPageSize {
		return 0, domain.Invalid(op, fmt.Sprintf("limit %q must be an integer from 1 to %d", s, domain.MaxPageSize), err)
	}
	return n, nil
}

package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// FuzzLedgerQuery drives the ledger parameter parsers and the Accept
// negotiation with arbitrary input. Whatever comes in, they must not panic,
// must refuse with a KindInvalid error that has a message, and must accept
// only queries inside the reader's contract: a known basis, account and
// provider, an upper-case currency, a daily range of 1 to
// domain.MaxDailyDays days in a real zone, an entry range with from before
// to, a limit from 0 to domain.MaxPageSize. The seed corpus is in
// testdata/fuzz/FuzzLedgerQuery.
func FuzzLedgerQuery(f *testing.F) {
	f.Add("as_of=2025-03-31T23:59:59Z&basis=recorded&provider=stripe&currency=usd&account=sales", "text/csv")
	f.Add("from=2025-03-01&to=2025-03-31&tz=America/Sao_Paulo", "application/json, text/csv;q=0.5")
	f.Add("from=2025-03-01T00:00:00-03:00&to=2025-04-01T00:00:00Z&limit=500&cursor=c_1", "*/*")
	f.Add("tz=../../etc/passwd&from=2025-02-29", "text/*;q=")
	known := []string{"stripe", "mercadopago", "asaas", "pagarme"}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	f.Fuzz(func(t *testing.T, rawQuery, accept string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/ledger/entries", nil)
		req.Header.Set("Accept", accept)
		_ = wantsCSV(req)
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		b, err := parseBalanceQuery(q, known, now)
		checkParsed(t, "balances", err, func() { checkFilter(t, b.LedgerFilter, known); checkBasis(t, b.Basis) })
		d, err := parseDailyQuery(q, known)
		checkParsed(t, "daily", err, func() {
			checkFilter(t, d.LedgerFilter, known)
			if n := calendarDays(d.From, d.To); d.Location == nil || n < 1 || n > domain.MaxDailyDays ||
				d.From.Location() != d.Location || d.To.Location() != d.Location {
				t.Fatalf("daily query out of contract: %+v (%d days)", d, n)
			}
		})
		e, err := parseEntryQuery(q, known)
		checkParsed(t, "entries", err, func() {
			checkFilter(t, e.LedgerFilter, known)
			checkBasis(t, e.Basis)
			if e.Limit < 0 || e.Limit > domain.MaxPageSize || !e.From.IsZero() && !e.To.IsZero() && !e.From.Before(e.To) {
				t.Fatalf("entry query out of contract: %+v", e)
			}
		})
	})
}

func checkParsed(t *testing.T, what string, err error, ok func()) {
	t.Helper()
	if err == nil {
		ok()
		return
	}
	if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
		t.Fatalf("%s: error %v is not a client error with a message", what, err)
	}
}

func checkFilter(t *testing.T, f domain.LedgerFilter, known []string) {
	t.Helper()
	if f.Account != "" && !f.Account.Valid() {
		t.Fatalf("account %q", f.Account)
	}
	if f.Currency != "" {
		if c, err := domain.NewCurrency(string(f.Currency)); err != nil || c != f.Currency {
			t.Fatalf("currency %q", f.Currency)
		}
	}
	if f.Provider != "" {
		found := false
		for _, k := range known {
			found = found || k == f.Provider
		}
		if !found {
			t.Fatalf("provider %q", f.Provider)
		}
	}
}

func checkBasis(t *testing.T, b domain.Basis) {
	t.Helper()
	if !b.Valid() {
		t.Fatalf("basis %q", b)
	}
}

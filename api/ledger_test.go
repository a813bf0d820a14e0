package api

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// Fixtures look like the real thing: Stripe IDs with '_' and '-', entry and
// event IDs as the projection derives them.
var (
	sampleBalances = []domain.AccountBalance{
		{Account: domain.AccountProviderBalance, Provider: "stripe", Currency: "USD", Debits: 2000, Credits: 2150},
		{Account: domain.AccountSales, Provider: "stripe", Currency: "USD", Credits: 2000},
		{Account: domain.AccountFees, Provider: "stripe", Currency: "USD", Debits: 150},
		{Account: domain.AccountSales, Provider: "stripe", Currency: "JPY", Credits: 2000},
		{Account: domain.AccountRefunds, Provider: "mercadopago", Currency: "BHD", Debits: 1500, Credits: 1},
	}
	sampleDays = []domain.DayBalance{
		{Day: "2025-03-01", Account: domain.AccountProviderBalance, Provider: "stripe", Currency: "USD",
			Debits: 2000, ClosingBalance: 2000},
		{Day: "2025-03-02", Account: domain.AccountProviderBalance, Provider: "stripe", Currency: "USD",
			Credits: 2150, ClosingBalance: -150},
		{Day: "2025-03-02", Account: domain.AccountSales, Provider: "stripe", Currency: "JPY",
			Credits: 2000, ClosingBalance: 2000},
	}
	sampleEntries = []domain.LedgerEntry{
		{ID: "le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1", Provider: "stripe", ProviderPaymentID: "pi_3Mtw-Bq_2eZvKYlo",
			Currency: "USD", EffectiveAt: time.Date(2025, 3, 1, 9, 0, 0, 0, time.FixedZone("BRT", -3*3600)),
			RecordedAt: time.Date(2025, 3, 1, 12, 0, 1, 250_000_000, time.UTC), CauseEventID: "5b0c8a3e-6f1d-5a8e-9c41-2d7e0f3b9a10",
			Lines: []domain.Line{{Account: domain.AccountProviderBalance, Debit: 2000}, {Account: domain.AccountSales, Credit: 2000}}},
		{ID: "le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-2", Provider: "stripe", ProviderPaymentID: "pi_3Mtw-Bq_2eZvKYlo",
			Currency: "USD", EffectiveAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
			RecordedAt: time.Date(2025, 3, 2, 8, 0, 0, 0, time.UTC), CauseEventID: "9d1e44b0-2c3f-5e7a-8b90-0a1b2c3d4e5f",
			Reverses: "le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1",
			Lines:    []domain.Line{{Account: domain.AccountProviderBalance, Credit: 2000}, {Account: domain.AccountSales, Debit: 2000}}},
	}
)

// ledgerEnv is a server whose ledger reader answers the samples.
func ledgerEnv(t *testing.T) (*testEnv, *fakeLedger) {
	t.Helper()
	env := newEnv(t)
	env.cfg.LedgerProviders = []string{"stripe", "mercadopago", "asaas", "pagarme"}
	fl := &fakeLedger{
		BalancesFn: func(context.Context, domain.BalanceQuery) ([]domain.AccountBalance, error) {
			return sampleBalances, nil
		},
		DailyFn: func(context.Context, domain.DailyQuery) ([]domain.DayBalance, error) { return sampleDays, nil },
		EntriesFn: func(_ context.Context, q domain.EntryQuery) (domain.EntryPage, error) {
			page := domain.EntryPage{Entries: sampleEntries}
			if q.Cursor == "" && q.Limit == len(sampleEntries) { // more to come only for a page of exactly these
				page.NextCursor = "c_2"
			}
			return page, nil
		},
	}
	env.deps.Ledger = fl
	return env, fl
}

func TestLedgerBalancesQuery(t *testing.T) {
	asOf := time.Date(2025, 3, 31, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		query string
		want  domain.BalanceQuery
	}{
		{"", domain.BalanceQuery{AsOf: testNow, Basis: domain.BasisEffective}},
		{"as_of=&basis=&provider=&currency=&account=", domain.BalanceQuery{AsOf: testNow, Basis: domain.BasisEffective}},
		{"as_of=2025-03-31T23:59:59Z&basis=recorded", domain.BalanceQuery{AsOf: asOf, Basis: domain.BasisRecorded}},
		{"as_of=2025-03-31T20:59:59-03:00", domain.BalanceQuery{AsOf: asOf, Basis: domain.BasisEffective}},
		{"as_of=2025-03-31T23:59:59.5Z", domain.BalanceQuery{AsOf: asOf.Add(500 * time.Millisecond), Basis: domain.BasisEffective}},
		{"provider=stripe&currency=usd&account=sales&basis=effective", domain.BalanceQuery{AsOf: testNow, Basis: domain.BasisEffective,
			LedgerFilter: domain.LedgerFilter{Provider: "stripe", Currency: "USD", Account: domain.AccountSales}}},
		{"currency=Brl&account=provider_balance", domain.BalanceQuery{AsOf: testNow, Basis: domain.BasisEffective,
			LedgerFilter: domain.LedgerFilter{Currency: "BRL", Account: domain.AccountProviderBalance}}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			env, fl := ledgerEnv(t)
			res := serve(t, env.server(t), get("/v1/ledger/balances?"+tc.query, readToken))
			if res.status != 200 || len(fl.balanceQs) != 1 {
				t.Fatalf("got %d (%d queries) %s", res.status, len(fl.balanceQs), res.raw)
			}
			got := fl.balanceQs[0]
			if !got.AsOf.Equal(tc.want.AsOf) {
				t.Errorf("as_of = %v, want %v", got.AsOf, tc.want.AsOf)
			}
			got.AsOf, tc.want.AsOf = time.Time{}, time.Time{}
			if got != tc.want {
				t.Errorf("query = %+v, want %+v", got, tc.want)
			}
			if res.body["as_of"] != formatTime(fl.balanceQs[0].AsOf) || res.body["basis"] != string(tc.want.Basis) {
				t.Errorf("echo: %s", res.raw)
			}
		})
	}
}

// The body names every field; rows come sorted by provider, currency and
// chart order whatever order the reader returned them in.
func TestLedgerBalancesBody(t *testing.T) {
	env, _ := ledgerEnv(t)
	res := serve(t, env.server(t), get("/v1/ledger/balances?as_of=2025-03-31T20:59:59-03:00", readToken))
	want := `{"as_of":"2025-03-31T23:59:59Z","basis":"effective","balances":[` +
		`{"account":"refunds","provider":"mercadopago","currency":"BHD","normal":"debit","debits":1500,"credits":1,"balance":1499},` +
		`{"account":"sales","provider":"stripe","currency":"JPY","normal":"credit","debits":0,"credits":2000,"balance":2000},` +
		`{"account":"provider_balance","provider":"stripe","currency":"USD","normal":"debit","debits":2000,"credits":2150,"balance":-150},` +
		`{"account":"sales","provider":"stripe","currency":"USD","normal":"credit","debits":0,"credits":2000,"balance":2000},` +
		`{"account":"fees","provider":"stripe","currency":"USD","normal":"debit","debits":150,"credits":0,"balance":150}]}` + "\n"
	if res.status != 200 || string(res.raw) != want {
		t.Errorf("got %d\n%s\nwant\n%s", res.status, res.raw, want)
	}

	env.deps.Ledger = &fakeLedger{BalancesFn: func(context.Context, domain.BalanceQuery) ([]domain.AccountBalance, error) { return nil, nil }}
	env.deps.Registry = nil // a second server; metrics register once per registry
	empty := serve(t, env.server(t), get("/v1/ledger/balances?basis=recorded", readToken))
	if want := `{"as_of":"2025-03-01T12:00:00Z","basis":"recorded","balances":[]}` + "\n"; string(empty.raw) != want {
		t.Errorf("no entries: %s, want %s", empty.raw, want)
	}
}

func TestLedgerDailyQuery(t *testing.T) {
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	day := func(y int, m time.Month, d int, loc *time.Location) time.Time {
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	}
	tests := []struct {
		query string
		want  domain.DailyQuery
	}{
		{"from=2025-03-01&to=2025-03-31", domain.DailyQuery{From: day(2025, 3, 1, time.UTC), To: day(2025, 3, 31, time.UTC), Location: time.UTC}},
		{"from=2025-03-01&to=2025-03-01&tz=", domain.DailyQuery{From: day(2025, 3, 1, time.UTC), To: day(2025, 3, 1, time.UTC), Location: time.UTC}},
		{"from=2025-03-01&to=2025-03-31&tz=America/Sao_Paulo&provider=asaas&currency=brl&account=fees",
			domain.DailyQuery{From: day(2025, 3, 1, sp), To: day(2025, 3, 31, sp), Location: sp,
				LedgerFilter: domain.LedgerFilter{Provider: "asaas", Currency: "BRL", Account: domain.AccountFees}}},
		{"from=2024-02-01&to=2025-03-06&tz=Asia/Tokyo", // 400 days, across a leap day
			domain.DailyQuery{From: day(2024, 2, 1, tokyo), To: day(2025, 3, 6, tokyo), Location: tokyo}},
		{"from=2024-11-01&to=2024-11-30&tz=UTC", domain.DailyQuery{From: day(2024, 11, 1, time.UTC), To: day(2024, 11, 30, time.UTC), Location: time.UTC}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			env, fl := ledgerEnv(t)
			res := serve(t, env.server(t), get("/v1/ledger/daily?"+tc.query, readToken))
			if res.status != 200 || len(fl.dailyQs) != 1 {
				t.Fatalf("got %d (%d queries) %s", res.status, len(fl.dailyQs), res.raw)
			}
			got := fl.dailyQs[0]
			if !got.From.Equal(tc.want.From) || !got.To.Equal(tc.want.To) || got.Location.String() != tc.want.Location.String() ||
				got.From.Location().String() != tc.want.Location.String() || got.LedgerFilter != tc.want.LedgerFilter {
				t.Errorf("query = %+v (from %v, to %v)\nwant %+v", got, got.From, got.To, tc.want)
			}
		})
	}
}

func TestLedgerDailyBody(t *testing.T) {
	env, _ := ledgerEnv(t)
	res := serve(t, env.server(t), get("/v1/ledger/daily?from=2025-03-01&to=2025-03-02", readToken))
	want := `{"days":[` +
		`{"day":"2025-03-01","account":"provider_balance","provider":"stripe","currency":"USD","debits":2000,"credits":0,"closing_balance":2000},` +
		`{"day":"2025-03-02","account":"sales","provider":"stripe","currency":"JPY","debits":0,"credits":2000,"closing_balance":2000},` +
		`{"day":"2025-03-02","account":"provider_balance","provider":"stripe","currency":"USD","debits":0,"credits":2150,"closing_balance":-150}]}` + "\n"
	if res.status != 200 || string(res.raw) != want {
		t.Errorf("got %d\n%s\nwant\n%s", res.status, res.raw, want)
	}
}

func TestLedgerEntriesQuery(t *testing.T) {
	from := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		query string
		want  domain.EntryQuery
	}{
		{"", domain.EntryQuery{Basis: domain.BasisEffective}},
		{"from=2025-03-01T00:00:00Z&to=2025-04-01T00:00:00Z", domain.EntryQuery{From: from, To: to, Basis: domain.BasisEffective}},
		{"from=2025-02-28T21:00:00-03:00&basis=recorded&limit=500&cursor=c_abc", domain.EntryQuery{From: from,
			Basis: domain.BasisRecorded, Limit: 500, Cursor: "c_abc"}},
		{"to=2025-04-01T00:00:00Z&limit=1&provider=pagarme&currency=BRL&account=chargebacks", domain.EntryQuery{To: to,
			Basis: domain.BasisEffective, Limit: 1,
			LedgerFilter: domain.LedgerFilter{Provider: "pagarme", Currency: "BRL", Account: domain.AccountChargebacks}}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			env, fl := ledgerEnv(t)
			res := serve(t, env.server(t), get("/v1/ledger/entries?"+tc.query, readToken))
			if res.status != 200 || len(fl.entryQs) != 1 {
				t.Fatalf("got %d (%d queries) %s", res.status, len(fl.entryQs), res.raw)
			}
			got := fl.entryQs[0]
			if !got.From.Equal(tc.want.From) || !got.To.Equal(tc.want.To) {
				t.Errorf("range [%v, %v), want [%v, %v)", got.From, got.To, tc.want.From, tc.want.To)
			}
			got.From, got.To, tc.want.From, tc.want.To = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			if got != tc.want {
				t.Errorf("query = %+v, want %+v", got, tc.want)
			}
		})
	}
}

const sampleEntriesJSON = `[` +
	`{"id":"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1","provider":"stripe","provider_payment_id":"pi_3Mtw-Bq_2eZvKYlo",` +
	`"currency":"USD","effective_at":"2025-03-01T12:00:00Z","recorded_at":"2025-03-01T12:00:01.25Z",` +
	`"cause_event_id":"5b0c8a3e-6f1d-5a8e-9c41-2d7e0f3b9a10","reverses":null,` +
	`"lines":[{"account":"provider_balance","debit":2000,"credit":0},{"account":"sales","debit":0,"credit":2000}]},` +
	`{"id":"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-2","provider":"stripe","provider_payment_id":"pi_3Mtw-Bq_2eZvKYlo",` +
	`"currency":"USD","effective_at":"2025-03-01T12:00:00Z","recorded_at":"2025-03-02T08:00:00Z",` +
	`"cause_event_id":"9d1e44b0-2c3f-5e7a-8b90-0a1b2c3d4e5f","reverses":"le_0d6f2c1a-stripe-pi_3Mtw-Bq_2eZvKYlo-1",` +
	`"lines":[{"account":"provider_balance","debit":0,"credit":2000},{"account":"sales","debit":2000,"credit":0}]}]`

func TestLedgerEntriesBody(t *testing.T) {
	env, fl := ledgerEnv(t)
	srv := env.server(t)
	res := serve(t, srv, get("/v1/ledger/entries?limit=2", readToken))
	if want := `{"entries":` + sampleEntriesJSON + `,"next_cursor":"c_2"}` + "\n"; res.status != 200 || string(res.raw) != want {
		t.Errorf("got %d\n%s\nwant\n%s", res.status, res.raw, want)
	}
	fl.EntriesFn = func(context.Context, domain.EntryQuery) (domain.EntryPage, error) { return domain.EntryPage{}, nil }
	last := serve(t, srv, get("/v1/ledger/entries?cursor=c_last", readToken))
	if want := `{"entries":[],"next_cursor":""}` + "\n"; string(last.raw) != want {
		t.Errorf("last page: %s, want %s", last.raw, want)
	}
}

func TestPaymentLedger(t *testing.T) {
	env := newEnv(t)
	var gotProvider, gotID string
	env.deps.Ledger = &fakeLedger{PaymentLedgerFn: func(_ context.Context, provider, id string) ([]domain.LedgerEntry, error) {
		gotProvider, gotID = provider, id
		switch id {
		case "pi_3Mtw-Bq_2eZvKYlo":
			return sampleEntries, nil
		case "pi_pending_1":
			return nil, nil
		}
		return nil, fmt.Errorf("projections: payment ledger %s: %w", id, domain.ErrUnknownPayment)
	}}
	srv := env.server(t)

	res := serve(t, srv, get("/v1/payments/stripe/pi_3Mtw-Bq_2eZvKYlo/ledger", readToken))
	if want := `{"entries":` + sampleEntriesJSON + `,"next_cursor":""}` + "\n"; res.status != 200 || string(res.raw) != want {
		t.Errorf("got %d\n%s\nwant\n%s", res.status, res.raw, want)
	}
	if gotProvider != "stripe" || gotID != "pi_3Mtw-Bq_2eZvKYlo" {
		t.Errorf("reader asked for %s/%s", gotProvider, gotID)
	}
	pending := serve(t, srv, get("/v1/payments/stripe/pi_pending_1/ledger", readToken))
	if want := `{"entries":[],"next_cursor":""}` + "\n"; pending.status != 200 || string(pending.raw) != want {
		t.Errorf("payment without entries: %d %s", pending.status, pending.raw)
	}
	missing := serve(t, srv, get("/v1/payments/stripe/pi_nope/ledger", readToken))
	if missing.status != 404 || missing.errorMessage() != "unknown payment" {
		t.Errorf("unknown payment: %d %s", missing.status, missing.raw)
	}
	// CSV is not offered here: the Accept header does not change the answer.
	csvReq := get("/v1/payments/stripe/pi_3Mtw-Bq_2eZvKYlo/ledger", readToken)
	csvReq.Header.Set("Accept", "text/csv")
	if res := serve(t, srv, csvReq); res.status != 200 || res.header.Get("Content-Type") != "application/json" {
		t.Errorf("Accept: text/csv: %d %q", res.status, res.header.Get("Content-Type"))
	}
}

// Every bad parameter is a 400 with the error body, and the reader is never
// asked: an empty 200 would read as zero balances.
func TestLedgerBadParameters(t *testing.T) {
	long := strings.Repeat("A", 65)
	tests := []struct{ path, query, inMessage string }{
		{"balances", "basis=booked", `basis "booked"`},
		{"balances", "basis=Effective", `basis "Effective"`},
		{"balances", "account=cash", `account "cash"`},
		{"balances", "account=SALES", `account "SALES"`},
		{"balances", "provider=paypal", `provider "paypal"`},
		{"balances", "provider=Stripe", `provider "Stripe"`},
		{"balances", "currency=US", "three-letter"},
		{"balances", "currency=US1", "three-letter"},
		{"balances", "currency=usdx", "three-letter"},
		{"balances", "as_of=2025-03-31", "RFC 3339"},
		{"balances", "as_of=2025-03-31T23:59:59", "RFC 3339"},
		{"balances", "as_of=1743465599", "RFC 3339"},
		{"balances", "as_of=2025-02-30T00:00:00Z", "RFC 3339"},
		{"balances", "as_of=2025-03-31T23:59:59Z&as_of=2025-04-01T00:00:00Z", "more than once"},
		{"balances", "curency=USD", `unknown query parameter "curency"`},
		{"balances", "from=2025-03-01", `unknown query parameter "from"`},
		{"daily", "", "from is required"},
		{"daily", "from=2025-03-01", "to is required"},
		{"daily", "to=2025-03-01", "from is required"},
		{"daily", "from=2025-03-02&to=2025-03-01", "after"},
		{"daily", "from=2024-02-01&to=2025-03-07", "401 days"},
		{"daily", "from=0001-01-01&to=9999-12-31", "days"},
		{"daily", "from=2025-3-1&to=2025-03-31", "YYYY-MM-DD"},
		{"daily", "from=2025-03-01T00:00:00Z&to=2025-03-31", "YYYY-MM-DD"},
		{"daily", "from=2025-02-29&to=2025-03-31", "YYYY-MM-DD"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=Mars/Olympus_Mons", "tz"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=Local", "tz"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=../../etc/passwd", "tz"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=/etc/localtime", "tz"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=America", "tz"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=" + long, "tz"},
		{"daily", "from=2025-03-01&to=2025-03-31&tz=UTC&tz=UTC", "more than once"},
		{"daily", "from=2025-03-01&to=2025-03-31&basis=recorded", `unknown query parameter "basis"`},
		{"daily", "from=2025-03-01&to=2025-03-31&account=cash", `account "cash"`},
		{"entries", "limit=0", "limit"},
		{"entries", "limit=501", "limit"},
		{"entries", "limit=-1", "limit"},
		{"entries", "limit=ten", "limit"},
		{"entries", "limit=1.5", "limit"},
		{"entries", "from=2025-04-01T00:00:00Z&to=2025-03-01T00:00:00Z", "not before"},
		{"entries", "from=2025-04-01T00:00:00Z&to=2025-04-01T00:00:00Z", "not before"},
		{"entries", "from=2025-04-01T03:00:00Z&to=2025-04-01T00:00:00-03:00", "not before"},
		{"entries", "from=yesterday", "RFC 3339"},
		{"entries", "to=2025-04-01", "RFC 3339"},
		{"entries", "basis=recorded&basis=effective", "more than once"},
		{"entries", "basis=both", `basis "both"`},
		{"entries", "cursor=a&cursor=b", "more than once"},
		{"entries", "tz=UTC", `unknown query parameter "tz"`},
		{"entries", "account=fee", `account "fee"`},
	}
	for _, tc := range tests {
		for _, accept := range []string{"", "text/csv"} {
			t.Run(tc.path+"?"+tc.query+"/"+accept, func(t *testing.T) {
				env, fl := ledgerEnv(t)
				req := get("/v1/ledger/"+tc.path+"?"+tc.query, readToken)
				req.Header.Set("Accept", accept)
				res := serve(t, env.server(t), req)
				if res.status != 400 || res.errorCode() != "invalid" || !strings.Contains(res.errorMessage(), tc.inMessage) {
					t.Errorf("got %d %s, want 400 invalid mentioning %q", res.status, res.raw, tc.inMessage)
				}
				if fl.calls() != 0 {
					t.Errorf("the reader was asked %d times", fl.calls())
				}
			})
		}
	}
}

// The reader's errors keep their kinds, as JSON whatever the Accept header:
// a bad cursor is 400, an unreachable database 503, a bug 500.
func TestLedgerReaderErrors(t *testing.T) {
	badCursor := fmt.Errorf("projections: entries: %w", domain.Invalid("projections: cursor", "malformed cursor", errors.New("base64")))
	down := domain.Unavailable("projections: balances", "database down", errors.New("dial tcp 10.0.0.7:5432: refused"))
	tests := []struct {
		name    string
		path    string
		err     error
		status  int
		message string
	}{
		{"bad cursor", "/v1/ledger/entries?cursor=%25%25", badCursor, 400, "malformed cursor"},
		{"bad cursor, export", "/v1/ledger/entries?cursor=zz", badCursor, 400, "malformed cursor"},
		{"entries down", "/v1/ledger/entries", down, 503, msgUnavailable},
		{"balances down", "/v1/ledger/balances", down, 503, msgUnavailable},
		{"daily bug", "/v1/ledger/daily?from=2025-03-01&to=2025-03-01", errors.New("scan: unexpected NULL"), 500, msgInternal},
		{"payment ledger down", "/v1/payments/stripe/pi_1/ledger", down, 503, msgUnavailable},
	}
	for _, tc := range tests {
		for _, accept := range []string{"", "text/csv"} {
			t.Run(tc.name+"/"+accept, func(t *testing.T) {
				env := newEnv(t)
				env.deps.Ledger = &fakeLedger{
					BalancesFn: func(context.Context, domain.BalanceQuery) ([]domain.AccountBalance, error) { return nil, tc.err },
					DailyFn:    func(context.Context, domain.DailyQuery) ([]domain.DayBalance, error) { return nil, tc.err },
					EntriesFn: func(context.Context, domain.EntryQuery) (domain.EntryPage, error) {
						return domain.EntryPage{}, tc.err
					},
					PaymentLedgerFn: func(context.Context, string, string) ([]domain.LedgerEntry, error) { return nil, tc.err },
				}
				req := get(tc.path, readToken)
				req.Header.Set("Accept", accept)
				res := serve(t, env.server(t), req)
				if res.status != tc.status || res.errorMessage() != tc.message {
					t.Errorf("got %d %s, want %d %q", res.status, res.raw, tc.status, tc.message)
				}
			})
		}
	}
}

// The ledger routes are /v1 routes: a bearer token is required.
func TestLedgerNeedsToken(t *testing.T) {
	env, fl := ledgerEnv(t)
	srv := env.server(t)
	for _, path := range []string{"/v1/ledger/balances", "/v1/ledger/daily?from=2025-03-01&to=2025-03-01",
		"/v1/ledger/entries", "/v1/payments/stripe/pi_1/ledger"} {
		for _, token := range []string{"", "tok_wrong"} {
			if res := serve(t, srv, get(path, token)); res.status != 401 {
				t.Errorf("%s with token %q: %d", path, token, res.status)
			}
		}
	}
	if fl.calls() != 0 {
		t.Errorf("the reader was asked %d times", fl.calls())
	}
}

// Without LedgerProviders the configured providers are the known ones.
func TestLedgerProvidersDefault(t *testing.T) {
	env, _ := ledgerEnv(t)
	env.cfg.LedgerProviders = nil
	srv := env.server(t)
	if res := serve(t, srv, get("/v1/ledger/balances?provider="+fakeName, readToken)); res.status != 200 {
		t.Errorf("configured provider: %d %s", res.status, res.raw)
	}
	if res := serve(t, srv, get("/v1/ledger/balances?provider=stripe", readToken)); res.status != 400 {
		t.Errorf("provider not configured: %d %s", res.status, res.raw)
	}
}

// The parsers never hand a reader an out-of-contract query; the fuzz test
// checks the same on arbitrary input.
func TestLedgerParsersDirect(t *testing.T) {
	q, err := parseEntryQuery(url.Values{"limit": {"500"}}, nil)
	if err != nil || q.Limit != 500 || q.Basis != domain.BasisEffective {
		t.Errorf("parseEntryQuery = %+v, %v", q, err)
	}
	d, err := parseDailyQuery(url.Values{"from": {"2025-03-01"}, "to": {"2025-03-01"}}, nil)
	if err != nil || !reflect.DeepEqual(d.Location, time.UTC) || calendarDays(d.From, d.To) != 1 {
		t.Errorf("parseDailyQuery = %+v, %v", d, err)
	}
}

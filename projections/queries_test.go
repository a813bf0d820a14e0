package projections

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
)

func TestQueriesPayment(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	p := pay{"stripe", "pi_3Qq-r_1"}
	a.apply(a.messages(p.created("evt_1", 0, 4200)))
	q := NewQueries(pool)

	got, err := q.Payment(t.Context(), p.provider, p.id)
	if err != nil {
		t.Fatal(err)
	}
	want := state(p, domain.StatusPending, 4200, 0, 0, 0, 1, 0, 0)
	if !sameState(got, want) || got.ReviewReasons == nil {
		t.Errorf("Payment = %+v, want %+v with non-nil review reasons", got, want)
	}

	for _, tt := range []struct{ provider, id string }{{"stripe", "pi_unknown"}, {"adyen", p.id}} {
		_, err := q.Payment(t.Context(), tt.provider, tt.id)
		if !errors.Is(err, domain.ErrUnknownPayment) || domain.KindOf(err) != domain.KindNotFound {
			t.Errorf("Payment(%s, %s) err = %v, want ErrUnknownPayment", tt.provider, tt.id, err)
		}
	}
}

// seedPayments projects n payments of lifecycle per provider, and returns
// the applier to add more.
func seedPayments(t *testing.T, pool *pgxpool.Pool, n int, providers ...string) *applier {
	t.Helper()
	a := newApplier(t, pool)
	var evs []domain.Event
	for i := range n {
		for _, prov := range providers {
			evs = append(evs, lifecycle(prov, i)...)
		}
	}
	a.apply(a.messages(evs...))
	return a
}

func TestListPaymentsPagesStableUnderConcurrentInserts(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := seedPayments(t, pool, 20, "stripe")
	q := NewQueries(pool)
	existing := map[string]bool{}
	first, err := q.ListPayments(t.Context(), domain.PaymentFilter{Limit: domain.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range first.Payments {
		existing[p.ProviderPaymentID] = true
	}

	// Walk with limit 3 while a runner projects new payments and updates
	// existing ones between every two pages.
	feed := a.feed
	r := NewRunner(testConfig(a.r.cfg.Name, nil), pool, feed)
	start(t, r)
	seen := map[string]int{}
	cursor, pages, extra := "", 0, 100
	for {
		page, err := q.ListPayments(t.Context(), domain.PaymentFilter{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Payments) > 3 {
			t.Fatalf("page of %d payments, limit 3", len(page.Payments))
		}
		for _, p := range page.Payments {
			seen[p.ProviderPaymentID]++
		}
		pages++
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
		evs := lifecycle("stripe", extra)
		old := pay{"stripe", page.Payments[0].ProviderPaymentID}
		evs = append(evs, old.refunded(fmt.Sprintf("evt_r%d", extra), 5*time.Hour, 1_000_000, 1))
		extra++
		feed.add(evs...)
		waitPosition(t, r, feed.checkpoint())
	}
	for id := range existing {
		if seen[id] != 1 {
			t.Errorf("pre-existing payment %s seen %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("payment %s seen %d times", id, n)
		}
	}
	if pages != 7 {
		t.Errorf("walked %d pages of 3 over 20 payments, want 7", pages)
	}
}

func TestListPaymentsFilters(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedPayments(t, pool, 60, "stripe", "adyen")
	q := NewQueries(pool)
	all := foldAll(t, func() []domain.Event {
		var evs []domain.Event
		for i := range 60 {
			evs = append(evs, lifecycle("stripe", i)...)
			evs = append(evs, lifecycle("adyen", i)...)
		}
		return evs
	}())
	tests := []struct {
		name   string
		filter domain.PaymentFilter
	}{
		{"all, default limit", domain.PaymentFilter{}},
		{"provider", domain.PaymentFilter{Provider: "adyen", Limit: 7}},
		{"status", domain.PaymentFilter{Status: domain.StatusConfirmed, Limit: 4}},
		{"provider and status", domain.PaymentFilter{Provider: "stripe", Status: domain.StatusRefunded, Limit: 3}},
		{"no match", domain.PaymentFilter{Provider: "paypal"}},
		{"created range", domain.PaymentFilter{CreatedFrom: ptrTime(t0.Add(10 * time.Second)), CreatedTo: ptrTime(t0.Add(29 * time.Second)), Limit: 6}},
		{"currency and amounts", domain.PaymentFilter{Currency: "USD", MinAmount: ptrInt(1010), MaxAmount: ptrInt(1040), Limit: 5}},
		{"amount without currency", domain.PaymentFilter{MinAmount: ptrInt(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := 0
			for _, s := range all {
				if matches(tt.filter, s) {
					want++
				}
			}
			limit := tt.filter.Limit
			if limit == 0 {
				limit = domain.DefaultPageSize
			}
			f, got, lastID := tt.filter, 0, ""
			for {
				page, err := q.ListPayments(t.Context(), f)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Payments) > limit || (page.NextCursor != "" && len(page.Payments) != limit) {
					t.Errorf("page of %d payments with next cursor %q, limit %d", len(page.Payments), page.NextCursor, limit)
				}
				for _, p := range page.Payments {
					if !matches(f, p) {
						t.Errorf("payment %+v does not match %+v", p, f)
					}
					if !sameState(p, all[p.Provider+"/"+p.ProviderPaymentID]) {
						t.Errorf("payment %+v differs from its fold", p)
					}
					lastID = p.ProviderPaymentID
					got++
				}
				if page.NextCursor == "" {
					break
				}
				f.Cursor = page.NextCursor
			}
			if got != want {
				t.Errorf("listed %d payments (last %s), want %d", got, lastID, want)
			}
		})
	}
}

func TestListPaymentsNewestFirst(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	for i := range 4 {
		a.apply(a.messages(lifecycle("stripe", i)...))
	}
	page, err := NewQueries(pool).ListPayments(t.Context(), domain.PaymentFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range page.Payments {
		if want := lifecycle("stripe", 3-i)[0].EventMeta().ProviderPaymentID; p.ProviderPaymentID != want {
			t.Errorf("payment %d = %s, want %s", i, p.ProviderPaymentID, want)
		}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestListPaymentsRejectsBadInput(t *testing.T) {
	pool := pgtest.NewPool(t)
	q := NewQueries(pool)
	tests := []struct {
		name   string
		filter domain.PaymentFilter
	}{
		{"negative limit", domain.PaymentFilter{Limit: -1}},
		{"limit over max", domain.PaymentFilter{Limit: domain.MaxPageSize + 1}},
		{"cursor not base64", domain.PaymentFilter{Cursor: "!!"}},
		{"cursor without version", domain.PaymentFilter{Cursor: b64("123")}},
		{"cursor of another version", domain.PaymentFilter{Cursor: b64("p9:123")}},
		{"cursor not a number", domain.PaymentFilter{Cursor: b64("p1:abc")}},
		{"cursor zero", domain.PaymentFilter{Cursor: b64("p1:0")}},
		{"cursor negative", domain.PaymentFilter{Cursor: b64("p1:-5")}},
		{"cursor not canonical", domain.PaymentFilter{Cursor: b64("p1:+12")}},
		{"cursor padded", domain.PaymentFilter{Cursor: encodeCursor(12) + "="}},
		{"unknown status", domain.PaymentFilter{Status: "paid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := q.ListPayments(t.Context(), tt.filter)
			if domain.KindOf(err) != domain.KindInvalid {
				t.Errorf("err = %v (kind %s), want kind invalid", err, domain.KindOf(err))
			}
		})
	}
	if got, err := decodeCursor(encodeCursor(1234567)); err != nil || got != 1234567 {
		t.Errorf("cursor round trip = %d, %v", got, err)
	}
}

// TestQueriesUnavailable: a read model that cannot be reached is an outage
// (503, retry later), not an internal error.
func TestQueriesUnavailable(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), "postgres://postgres@127.0.0.1:1/payledger?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	q := NewQueries(pool)
	_, err = q.Payment(t.Context(), "stripe", "pi_1")
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("Payment = %v, want domain.ErrUnavailable", err)
	}
	_, err = q.ListPayments(t.Context(), domain.PaymentFilter{})
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("ListPayments = %v, want domain.ErrUnavailable", err)
	}
}

// matches is PaymentFilter's meaning, written out for the test.
func matches(f domain.PaymentFilter, s domain.PaymentState) bool {
	amountOK := func(bound *int64, ok func(int64) bool) bool { return bound == nil || f.Currency != "" && ok(*bound) }
	return (f.Provider == "" || s.Provider == f.Provider) && (f.Status == "" || s.Status == f.Status) &&
		(f.CreatedFrom == nil || !s.CreatedAt.Before(*f.CreatedFrom)) && (f.CreatedTo == nil || !s.CreatedAt.After(*f.CreatedTo)) &&
		(f.Currency == "" || s.Currency == f.Currency) &&
		amountOK(f.MinAmount, func(b int64) bool { return s.Amount >= b }) && amountOK(f.MaxAmount, func(b int64) bool { return s.Amount <= b })
}

func ptrTime(t time.Time) *time.Time { return &t }
func ptrInt(n int64) *int64          { return &n }

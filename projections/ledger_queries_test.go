package projections

import (
	"fmt"
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // the zones below exist on every machine

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
)

// TestLedgerBalancesAndDaily: three captures around the Kathmandu midnight
// (18:15 UTC, +05:45) that cuts the UTC hour 18:00, and one the next day.
func TestLedgerBalancesAndDaily(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	q := NewQueries(pool)
	pa, pb, pc := pay{"stripe", "pi_d-a"}, pay{"stripe", "pi_d-b"}, pay{"stripe", "pi_d-c"}
	other := pay{"asaas", "pay_d_1"}
	a.apply(a.messages(pa.succeeded("evt_1", 6*time.Hour+10*time.Minute, 1000), // 18:10 UTC, 23:55 in Kathmandu
		pb.succeeded("evt_1", 6*time.Hour+20*time.Minute, 2000), // 18:20 UTC, 00:05 next day
		pc.succeeded("evt_1", 15*time.Hour, 4000),               // 03:00 UTC on Mar 2
		pc.refunded("evt_2", 15*time.Hour+30*time.Minute, 4000, 1500),
		other.succeeded("evt_1", time.Hour, 300)))

	for _, tt := range []struct {
		name string
		q    domain.BalanceQuery
		want []string
	}{
		{"before everything", domain.BalanceQuery{AsOf: t0, LedgerFilter: domain.LedgerFilter{Provider: "stripe"}}, []string{}},
		{"at the first capture, inclusive", domain.BalanceQuery{AsOf: t0.Add(6*time.Hour + 10*time.Minute),
			LedgerFilter: domain.LedgerFilter{Provider: "stripe"}}, []string{"USD provider_balance 1000", "USD sales 1000"}},
		{"a microsecond before it", domain.BalanceQuery{AsOf: t0.Add(6*time.Hour + 10*time.Minute - time.Microsecond),
			LedgerFilter: domain.LedgerFilter{Provider: "stripe"}}, []string{}},
		{"on the hour", domain.BalanceQuery{AsOf: t0.Add(7 * time.Hour), Basis: domain.BasisEffective,
			LedgerFilter: domain.LedgerFilter{Provider: "stripe"}}, []string{"USD provider_balance 3000", "USD sales 3000"}},
		{"all, one account", domain.BalanceQuery{AsOf: far, LedgerFilter: domain.LedgerFilter{Account: domain.AccountSales}},
			[]string{"USD sales 300", "USD sales 7000"}},
		{"final, recorded", domain.BalanceQuery{AsOf: far, Basis: domain.BasisRecorded,
			LedgerFilter: domain.LedgerFilter{Provider: "stripe", Currency: "USD"}},
			[]string{"USD provider_balance 5500", "USD sales 7000", "USD refunds 1500"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.Balances(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if g := bal(got); !slices.Equal(g, tt.want) {
				t.Errorf("balances %q, want %q", g, tt.want)
			}
		})
	}

	zone := func(name string) *time.Location {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatalf("zone %s: %v", name, err)
		}
		return l
	}
	day := func(loc *time.Location, d int) time.Time { return time.Date(2025, 3, d, 0, 0, 0, 0, loc) }
	row := func(d int, acc domain.Account, debits, credits, closing int64) string {
		return fmt.Sprintf("2025-03-%02d %s %d/%d %d", d, acc, debits, credits, closing)
	}
	for _, tt := range []struct {
		name     string
		loc      *time.Location
		from, to int
		want     []string
	}{{
		name: "Kathmandu, +05:45", loc: zone("Asia/Kathmandu"), from: 1, to: 3,
		want: []string{
			row(1, domain.AccountProviderBalance, 1000, 0, 1000), row(1, domain.AccountSales, 0, 1000, 1000),
			row(2, domain.AccountProviderBalance, 6000, 1500, 5500), row(2, domain.AccountSales, 0, 6000, 7000),
			row(2, domain.AccountRefunds, 1500, 0, 1500),
			row(3, domain.AccountProviderBalance, 0, 0, 5500), row(3, domain.AccountSales, 0, 0, 7000),
			row(3, domain.AccountRefunds, 0, 0, 1500),
		},
	}, {
		name: "UTC, from before the first entry", loc: time.UTC, from: 1, to: 2,
		want: []string{
			row(1, domain.AccountProviderBalance, 3000, 0, 3000), row(1, domain.AccountSales, 0, 3000, 3000),
			row(2, domain.AccountProviderBalance, 4000, 1500, 5500), row(2, domain.AccountSales, 0, 4000, 7000),
			row(2, domain.AccountRefunds, 1500, 0, 1500),
		},
	}, {
		name: "New York, -05:00, a day without activity", loc: zone("America/New_York"), from: 2, to: 2,
		want: []string{
			row(2, domain.AccountProviderBalance, 0, 0, 5500), row(2, domain.AccountSales, 0, 0, 7000),
			row(2, domain.AccountRefunds, 0, 0, 1500),
		},
	}, {
		name: "Kathmandu, one day", loc: zone("Asia/Kathmandu"), from: 1, to: 1,
		want: []string{row(1, domain.AccountProviderBalance, 1000, 0, 1000), row(1, domain.AccountSales, 0, 1000, 1000)},
	}} {
		t.Run("daily "+tt.name, func(t *testing.T) {
			got, err := q.Daily(t.Context(), domain.DailyQuery{LedgerFilter: domain.LedgerFilter{Provider: "stripe"},
				From: day(tt.loc, tt.from), To: day(tt.loc, tt.to), Location: tt.loc})
			if err != nil {
				t.Fatal(err)
			}
			var g []string
			for _, d := range got {
				if d.Provider != "stripe" || d.Currency != "USD" {
					t.Errorf("row of another provider or currency: %+v", d)
				}
				g = append(g, fmt.Sprintf("%s %s %d/%d %d", d.Day, d.Account, d.Debits, d.Credits, d.ClosingBalance))
			}
			if !slices.Equal(g, tt.want) {
				t.Errorf("daily\n got %q\nwant %q", g, tt.want)
			}
		})
	}
}

func TestLedgerQueriesRejectNonsense(t *testing.T) {
	pool := pgtest.NewPool(t)
	q := NewQueries(pool)
	utc := func(d int) time.Time { return time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC) }
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"balances: unknown basis", func() error {
			_, err := q.Balances(t.Context(), domain.BalanceQuery{AsOf: far, Basis: "booked"})
			return err
		}},
		{"balances: unknown account", func() error {
			_, err := q.Balances(t.Context(), domain.BalanceQuery{AsOf: far, LedgerFilter: domain.LedgerFilter{Account: "cash"}})
			return err
		}},
		{"balances: no as_of", func() error { _, err := q.Balances(t.Context(), domain.BalanceQuery{}); return err }},
		{"daily: from after to", func() error {
			_, err := q.Daily(t.Context(), domain.DailyQuery{From: utc(3), To: utc(2), Location: time.UTC})
			return err
		}},
		{"daily: too long", func() error {
			_, err := q.Daily(t.Context(), domain.DailyQuery{From: utc(1), To: utc(1).AddDate(0, 0, domain.MaxDailyDays), Location: time.UTC})
			return err
		}},
		{"daily: no zone", func() error {
			_, err := q.Daily(t.Context(), domain.DailyQuery{From: utc(1), To: utc(1)})
			return err
		}},
		{"entries: bad cursor", func() error {
			_, err := q.Entries(t.Context(), domain.EntryQuery{Cursor: "bm9wZQ"})
			return err
		}},
		{"entries: cursor of the other basis", func() error {
			_, err := q.Entries(t.Context(), domain.EntryQuery{Basis: domain.BasisRecorded,
				Cursor: encodeEntryCursor(domain.BasisEffective, t0, "6ba7b810-9dad-11d1-80b4-00c04fd430c8")})
			return err
		}},
		{"entries: limit", func() error {
			_, err := q.Entries(t.Context(), domain.EntryQuery{Limit: domain.MaxPageSize + 1})
			return err
		}},
		{"entries: basis", func() error { _, err := q.Entries(t.Context(), domain.EntryQuery{Basis: "x"}); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); domain.KindOf(err) != domain.KindInvalid {
				t.Errorf("err = %v (kind %v), want KindInvalid", err, domain.KindOf(err))
			}
		})
	}
	if got, err := q.Daily(t.Context(), domain.DailyQuery{From: utc(1), To: utc(1).AddDate(0, 0, domain.MaxDailyDays-1),
		Location: time.UTC}); err != nil || len(got) != 0 {
		t.Errorf("daily over %d days of an empty ledger = %v, %v; want nothing", domain.MaxDailyDays, got, err)
	}
}

// TestLedgerEntriesPages: pages see every entry once while entries are
// added between them, on both bases and with filters.
func TestLedgerEntriesPages(t *testing.T) {
	pool := pgtest.NewPool(t)
	a := newApplier(t, pool)
	q := NewQueries(pool)
	a.apply(a.messages(workload(30)...))
	for _, tt := range []struct {
		name string
		q    domain.EntryQuery
		sql  string // the entries it must return, from ledger_entries e
	}{
		{"effective", domain.EntryQuery{Limit: 7}, `true`},
		{"recorded, window", domain.EntryQuery{Limit: 5, Basis: domain.BasisRecorded,
			From: time.Date(2025, 3, 2, 0, 0, 0, 40_000, time.UTC), To: time.Date(2025, 3, 2, 0, 0, 0, 150_000, time.UTC)},
			`recorded_at >= '2025-03-02 00:00:00.00004Z' AND recorded_at < '2025-03-02 00:00:00.00015Z'`},
		{"asaas refunds", domain.EntryQuery{Limit: 3, LedgerFilter: domain.LedgerFilter{Provider: "asaas",
			Account: domain.AccountRefunds, Currency: "USD"}},
			`provider = 'asaas' AND currency = 'USD' AND 'refunds' = ANY (accounts)`},
		{"fees in BRL", domain.EntryQuery{LedgerFilter: domain.LedgerFilter{Currency: "BRL"}}, `currency = 'BRL'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for id := range dump(t, pool, `SELECT id::text, '' FROM ledger_entries e WHERE `+tt.sql) {
				want = append(want, id)
			}
			slices.Sort(want)
			seen := map[string]int{}
			cur := tt.q
			for pages := 0; ; pages++ {
				p, err := q.Entries(t.Context(), cur)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range p.Entries {
					seen[e.ID]++
					if len(e.Lines) < 2 {
						t.Errorf("entry %s has %d lines", e.ID, len(e.Lines))
					}
				}
				if p.NextCursor == "" {
					break
				}
				// New entries, effective and recorded after and before the page.
				n := pay{"stripe", fmt.Sprintf("pi_page-%s-%d", tt.name, pages)}
				a.apply(a.messages(n.succeeded("evt_1", time.Duration(pages)*time.Second, 100),
					n.refunded("evt_2", 30*time.Hour, 100, 50)))
				cur.Cursor = p.NextCursor
			}
			for _, id := range want {
				if seen[id] != 1 {
					t.Errorf("entry %s seen %d times", id, seen[id])
				}
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("entry %s seen %d times", id, n)
				}
			}
			if len(want) == 0 {
				t.Error("the filter matches no entry: the case tests nothing")
			}
		})
	}
}

func FuzzDecodeEntryCursor(f *testing.F) {
	f.Add(encodeEntryCursor(domain.BasisEffective, t0, "6ba7b810-9dad-11d1-80b4-00c04fd430c8"), "effective")
	f.Add(encodeEntryCursor(domain.BasisRecorded, time.Unix(0, 0), "6ba7b810-9dad-11d1-80b4-00c04fd430c8"), "recorded")
	f.Add("ZTE6ZWZmZWN0aXZlOjE6eA", "effective")
	f.Add("", "effective")
	f.Fuzz(func(t *testing.T, c, basis string) {
		at, id, err := decodeEntryCursor(c, domain.Basis(basis))
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("error of kind %v: %v", domain.KindOf(err), err)
			}
			return
		}
		if again := encodeEntryCursor(domain.Basis(basis), at, id); again != c {
			t.Fatalf("cursor %q decodes to (%s, %s), which encodes to %q", c, at, id, again)
		}
	})
}

package verdict

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

func bal(account, provider, currency string, debits, credits int64) readapi.Balance {
	normal := truth.Chart()[truth.Account(account)]
	return readapi.Balance{Account: account, Provider: provider, Currency: currency, Normal: normal,
		Debits: debits, Credits: credits, Balance: onSide(normal, debits, credits)}
}

func TestCompareBooks(t *testing.T) {
	want := truth.Books{
		{Account: truth.Sales, Provider: "stripe", Currency: "USD"}:           1000,
		{Account: truth.Fees, Provider: "stripe", Currency: "USD"}:            59,
		{Account: truth.ProviderBalance, Provider: "stripe", Currency: "USD"}: 941,
	}
	right := []readapi.Balance{bal("sales", "stripe", "USD", 0, 1000), bal("fees", "stripe", "USD", 59, 0),
		bal("provider_balance", "stripe", "USD", 1000, 59)}
	with := func(f func([]readapi.Balance) []readapi.Balance) []readapi.Balance { return f(slices.Clone(right)) }
	tests := []struct {
		name string
		got  []readapi.Balance
		want []string
	}{
		{"equal", right, nil},
		{"equal, reversals in debits and credits", with(func(b []readapi.Balance) []readapi.Balance {
			b[0] = bal("sales", "stripe", "USD", 500, 1500)
			return b
		}), nil},
		{"a zero account the truth does not have", append(slices.Clone(right), bal("refunds", "stripe", "USD", 300, 300)), nil},
		{"fee missing", right[:1], []string{"provider_balance stripe/USD: want 941, absent from the answer",
			"fees stripe/USD: want 59, absent from the answer"}},
		{"fee short", with(func(b []readapi.Balance) []readapi.Balance {
			b[1], b[2] = bal("fees", "stripe", "USD", 50, 0), bal("provider_balance", "stripe", "USD", 1000, 50)
			return b
		}), []string{"provider_balance stripe/USD: want 941, got 950 (+9)", "fees stripe/USD: want 59, got 50 (-9)"}},
		{"an account the truth does not have", append(slices.Clone(right), bal("chargebacks", "pagarme", "BRL", 700, 0)),
			[]string{"chargebacks pagarme/BRL: want 0, got 700 (+700)"}},
		{"wrong normal side", with(func(b []readapi.Balance) []readapi.Balance {
			b[0].Normal = "debit"
			return b
		}), []string{`sales stripe/USD: normal side "debit", the chart says "credit"`}},
		{"balance not on its side", with(func(b []readapi.Balance) []readapi.Balance {
			b[1].Debits = 60
			return b
		}), []string{"fees stripe/USD: balance 59 is not debits 60, credits 0 on the debit side"}},
		{"not in the chart", append(slices.Clone(right), readapi.Balance{Account: "cash", Provider: "stripe", Currency: "USD", Normal: "debit"}),
			[]string{"cash stripe/USD: not an account of the chart"}},
		{"listed twice", append(slices.Clone(right), bal("fees", "stripe", "USD", 0, 0)),
			[]string{"fees stripe/USD: listed twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompareBooks(want, tt.got, nil); !slices.Equal(got, tt.want) {
				t.Errorf("differences\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestCompareBooksBaseline: on a ledger that already had books, what the
// run added is compared.
func TestCompareBooksBaseline(t *testing.T) {
	want := truth.Books{{Account: truth.Sales, Provider: "asaas", Currency: "BRL"}: 900,
		{Account: truth.ProviderBalance, Provider: "asaas", Currency: "BRL"}: 900}
	base := []readapi.Balance{bal("sales", "asaas", "BRL", 0, 100), bal("provider_balance", "asaas", "BRL", 100, 0),
		bal("fees", "stripe", "USD", 30, 0)}
	got := []readapi.Balance{bal("sales", "asaas", "BRL", 0, 1000), bal("provider_balance", "asaas", "BRL", 1000, 0),
		bal("fees", "stripe", "USD", 30, 0)}
	if d := CompareBooks(want, got, base); d != nil {
		t.Errorf("differences %q", d)
	}
	if d := CompareBooks(want, got[:2], base); !slices.Equal(d, []string{"fees stripe/USD: want 0, got -30 (-30)"}) {
		t.Errorf("an account gone since the baseline: %q", d)
	}
}

func TestSameBalances(t *testing.T) {
	a := []readapi.Balance{bal("sales", "asaas", "BRL", 0, 900), bal("provider_balance", "asaas", "BRL", 900, 0)}
	if d := SameBalances(a, slices.Clone(a)); d != nil {
		t.Errorf("same: %q", d)
	}
	b := []readapi.Balance{bal("sales", "asaas", "BRL", 100, 1000), a[1]}
	want := []string{"sales asaas/BRL: was debits 0, credits 900, balance 900; now 100, 1000, 900"}
	if d := SameBalances(a, b); !slices.Equal(d, want) {
		t.Errorf("debits and credits moved: %q", d)
	}
	if d := SameBalances(a, a[:1]); len(d) != 1 || !strings.HasPrefix(d[0], "provider_balance asaas/BRL") {
		t.Errorf("an account gone: %q", d)
	}
}

// fakeLedger serves the read API paysim's ledger checks use: balances
// (now, and as of a moment on the recorded basis) and one payment whose
// read model catches up with its stream after a few reads.
type fakeLedger struct {
	mu       sync.Mutex
	now      func(reads int) []readapi.Balance // balances as answered now, by read number
	recorded func(at time.Time) []readapi.Balance
	reads    int
	behind   atomic.Int64 // payment reads left before the read model catches up
	code     int          // non-zero: every balances read answers this
}

func (f *fakeLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok" {
		w.WriteHeader(401)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/ledger/balances" && f.code != 0:
		w.WriteHeader(f.code)
	case r.URL.Path == "/v1/ledger/balances" && r.URL.Query().Get("basis") == "recorded":
		at, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("as_of"))
		if err != nil {
			w.WriteHeader(400)
			return
		}
		writeBalances(w, f.recorded(at))
	case r.URL.Path == "/v1/ledger/balances":
		f.reads++
		writeBalances(w, f.now(f.reads))
	case strings.HasSuffix(r.URL.Path, "/events"):
		fmt.Fprint(w, `{"events":[{},{},{}]}`)
	default:
		count := 3
		if f.behind.Add(-1) >= 0 {
			count = 2
		}
		fmt.Fprintf(w, `{"status":"confirmed","event_count":%d}`, count)
	}
}

func writeBalances(w http.ResponseWriter, bs []readapi.Balance) {
	_ = json.NewEncoder(w).Encode(readapi.Balances{AsOf: "x", Basis: "y", Balances: append([]readapi.Balance{}, bs...)})
}

func client(t *testing.T, f *fakeLedger) *readapi.Client {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &readapi.Client{HTTP: srv.Client(), Ledger: srv.URL, Token: "tok"}
}

func TestCheckBooks(t *testing.T) {
	want := truth.Books{{Account: truth.Sales, Provider: "asaas", Currency: "BRL"}: 900,
		{Account: truth.ProviderBalance, Provider: "asaas", Currency: "BRL"}: 900}
	right := []readapi.Balance{bal("sales", "asaas", "BRL", 0, 900), bal("provider_balance", "asaas", "BRL", 900, 0)}
	ctx := context.Background()
	t.Run("converges", func(t *testing.T) {
		f := &fakeLedger{now: func(n int) []readapi.Balance {
			if n < 4 {
				return right[:1] // a fee job or a projection still behind
			}
			return right
		}}
		b := CheckBooks(ctx, client(t, f), want, nil, time.Now().Add(5*time.Second), time.Millisecond)
		if !b.OK() || b.AsOf == "" || b.Accounts != 2 || f.reads < 5 {
			t.Errorf("%+v after %d reads", b, f.reads)
		}
	})
	t.Run("never right", func(t *testing.T) {
		f := &fakeLedger{now: func(int) []readapi.Balance { return right[:1] }}
		b := CheckBooks(ctx, client(t, f), want, nil, time.Now().Add(50*time.Millisecond), time.Millisecond)
		if b.OK() || !slices.Equal(b.Differences, []string{"provider_balance asaas/BRL: want 900, absent from the answer"}) {
			t.Errorf("%+v", b)
		}
	})
	t.Run("no ledger API", func(t *testing.T) {
		f := &fakeLedger{code: 404}
		b := CheckBooks(ctx, client(t, f), want, nil, time.Now().Add(time.Minute), time.Millisecond)
		if b.OK() || b.Error != "GET /v1/ledger/balances: balances: HTTP 404" {
			t.Errorf("%+v", b)
		}
	})
}

func TestRecordedSnapshot(t *testing.T) {
	at := []readapi.Balance{bal("sales", "stripe", "EUR", 0, 500), bal("provider_balance", "stripe", "EUR", 500, 0)}
	later := []readapi.Balance{bal("sales", "stripe", "EUR", 0, 800), bal("provider_balance", "stripe", "EUR", 800, 0)}
	ps := []*truth.Payment{{Provider: "stripe", ID: "pi_1"}}
	cfg := SnapshotConfig{Workers: 2, Margin: 10 * time.Millisecond, Attempts: 3}
	tests := []struct {
		name      string
		now       func(int) []readapi.Balance
		recorded  func(time.Time, time.Time) []readapi.Balance // (as_of, end of the snapshot)
		wantOK    bool
		wantMoved bool
		wantAtT   int
		wantLater int
	}{
		{"the books as known at T never change", func(int) []readapi.Balance { return at },
			func(time.Time, time.Time) []readapi.Balance { return at }, true, false, 0, 0},
		{"the answer at T differs from balances then", func(int) []readapi.Balance { return at },
			func(time.Time, time.Time) []readapi.Balance { return later }, false, false, 2, 0},
		{"a late fact changed the books as known at T", func(int) []readapi.Balance { return at },
			func(_, end time.Time) []readapi.Balance {
				if time.Now().After(end) {
					return later
				}
				return at
			}, false, false, 0, 2},
		{"the books kept moving", func(n int) []readapi.Balance { return [][]readapi.Balance{at, later}[n%2] },
			func(time.Time, time.Time) []readapi.Balance { return at }, true, true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var end atomic.Value
			end.Store(time.Now().Add(time.Hour))
			f := &fakeLedger{now: tt.now, recorded: func(asOf time.Time) []readapi.Balance { return tt.recorded(asOf, end.Load().(time.Time)) }}
			f.behind.Store(3)
			c := client(t, f)
			cfg.Deadline = time.Now().Add(10 * time.Second)
			r := TakeSnapshot(context.Background(), c, ps, cfg)
			if r.Error != "" || f.behind.Load() > 0 {
				t.Fatalf("snapshot: %+v (read model reads left %d)", r, f.behind.Load())
			}
			end.Store(time.Now())
			r.Recheck(context.Background(), c)
			if r.OK() != tt.wantOK || r.Moved != tt.wantMoved || len(r.AtT) != tt.wantAtT || len(r.Later) != tt.wantLater || r.Accounts != 2 {
				t.Errorf("%+v", r)
			}
		})
	}
}

func TestSnapshotNotCaughtUp(t *testing.T) {
	f := &fakeLedger{now: func(int) []readapi.Balance { return nil }}
	f.behind.Store(1 << 40)
	r := TakeSnapshot(context.Background(), client(t, f), []*truth.Payment{{Provider: "stripe", ID: "pi_1"}},
		SnapshotConfig{Workers: 1, Deadline: time.Now().Add(200 * time.Millisecond)})
	if r.OK() || !strings.Contains(r.Error, "not caught up") {
		t.Errorf("%+v", r)
	}
}

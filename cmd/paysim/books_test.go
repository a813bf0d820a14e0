package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// bookLedger is a stand-in for the ledger's read side that is right by
// construction: a payment shows its final truth once every one of its
// webhooks arrived, and the books are the truth's books of those payments,
// with their history kept for the recorded basis. It checks paysim's wiring
// of the ledger check (baseline, mid-run snapshot, final comparison), not
// the ledger; TestSmoke runs the real one.
type bookLedger struct {
	mu       sync.Mutex
	byKey    map[string]*truth.Payment
	seen     map[string]map[string]bool // payment → event IDs received
	history  []booksAt
	stripe   bool  // book Stripe fees
	extra    int64 // added to one account's balance: a ledger gone wrong
	baseline truth.Books
}

type booksAt struct {
	at    time.Time
	books truth.Books
}

func newBookLedger(ps []*truth.Payment, stripeFees bool) *bookLedger {
	l := &bookLedger{byKey: map[string]*truth.Payment{}, seen: map[string]map[string]bool{}, stripe: stripeFees,
		baseline: truth.Books{{Account: truth.Sales, Provider: "stripe", Currency: "JPY"}: 5000,
			{Account: truth.ProviderBalance, Provider: "stripe", Currency: "JPY"}: 5000}}
	for _, p := range ps {
		l.byKey[p.Key()] = p
	}
	l.history = []booksAt{{time.Now(), l.baseline}}
	return l
}

func (l *bookLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	path := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/readyz":
	case path[0] == "webhooks":
		l.receive(w, r, path[1])
	case r.URL.Path == "/v1/ledger/balances":
		l.balances(w, r)
	case len(path) >= 4 && path[1] == "payments":
		l.payment(w, path[2]+"/"+path[3], len(path) == 5)
	default:
		w.WriteHeader(404)
	}
}

func (l *bookLedger) receive(w http.ResponseWriter, r *http.Request, provider string) {
	_, _ = io.Copy(io.Discard, r.Body)
	key, ev, _ := strings.Cut(r.Header.Get(deliver.EventIDHeader), ":")
	var p *truth.Payment
	for _, q := range l.byKey {
		for _, st := range q.Steps {
			if q.Provider == key && st.Webhook.EventID == ev {
				p = q
			}
		}
	}
	if p == nil || provider != key {
		w.WriteHeader(400)
		return
	}
	if l.seen[p.Key()] == nil {
		l.seen[p.Key()] = map[string]bool{}
	}
	outcome := "duplicate"
	if !l.seen[p.Key()][ev] {
		outcome = "accepted"
		l.seen[p.Key()][ev] = true
		l.post()
	}
	fmt.Fprintf(w, `{"outcome":%q}`, outcome)
}

// post records the books after an arrival.
func (l *bookLedger) post() {
	b := truth.Books{}
	for k, v := range l.baseline {
		b[k] = v
	}
	for key, got := range l.seen {
		if p := l.byKey[key]; len(got) == len(p.Steps) {
			b.Book(p, truth.LedgerOptions{StripeFees: l.stripe})
		}
	}
	for k := range b {
		if k.Account == truth.Fees {
			b[k] += l.extra
			b[truth.AccountKey{Account: truth.ProviderBalance, Provider: k.Provider, Currency: k.Currency}] -= l.extra
			break
		}
	}
	l.history = append(l.history, booksAt{time.Now(), b})
}

func (l *bookLedger) payment(w http.ResponseWriter, key string, events bool) {
	p, n := l.byKey[key], len(l.seen[key])
	if p == nil || n == 0 {
		w.WriteHeader(404)
		return
	}
	if events {
		fmt.Fprintf(w, `{"events":[%s]}`, strings.TrimSuffix(strings.Repeat("{},", n), ","))
		return
	}
	st := p.Steps[0].Truth
	if n == len(p.Steps) {
		st = p.Final()
	}
	count := n
	if p.Provider == truth.MercadoPago {
		count = n + 1 // the status observation
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": st.Status, "amount": st.Amount,
		"amount_refunded": st.Refunded, "currency": st.Currency, "event_count": count})
}

func (l *bookLedger) balances(w http.ResponseWriter, r *http.Request) {
	b := l.history[len(l.history)-1].books
	if r.URL.Query().Get("basis") == "recorded" {
		at, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("as_of"))
		if err != nil {
			w.WriteHeader(400)
			return
		}
		for _, h := range l.history {
			if !h.at.After(at) {
				b = h.books
			}
		}
	}
	out := readapi.Balances{AsOf: time.Now().UTC().Format(time.RFC3339Nano), Basis: "effective", Balances: []readapi.Balance{}}
	for _, k := range b.Keys() {
		normal := truth.Chart()[k.Account]
		x := readapi.Balance{Account: string(k.Account), Provider: k.Provider, Currency: string(k.Currency), Normal: normal, Balance: b[k]}
		if (normal == "debit") == (b[k] >= 0) {
			x.Debits = max(b[k], -b[k])
		} else {
			x.Credits = max(b[k], -b[k])
		}
		out.Balances = append(out.Balances, x)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// TestBooksCheckWiring runs paysim against bookLedger: the books check
// passes on a ledger right by construction, a snapshot is taken mid-run,
// and one wrong fee fails the run by name.
func TestBooksCheckWiring(t *testing.T) {
	for _, wrong := range []bool{false, true} {
		t.Run(fmt.Sprint("wrong=", wrong), func(t *testing.T) {
			cfg, err := parseConfig("run", []string{"--payments", "80", "--api-addr", "127.0.0.1:0", "--dup", "0.3",
				"--reorder", "0.5", "--max-delay", "1ms", "--late-delay", "0", "--lag-samples", "0", "--settle", "5s",
				"--snapshot-margin", "20ms", "--concurrency", "8"}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSim(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.close)
			l := newBookLedger(s.payments, cfg.StripeFees)
			if wrong {
				l.extra = 7
			}
			srv := httptest.NewServer(l)
			t.Cleanup(srv.Close)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := s.run(ctx, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			rep.WriteText(&text)
			b := rep.Books
			if b == nil || b.Recorded == nil || b.Baseline != 2 || b.Recorded.Accounts == 0 || !b.Recorded.OK() || rep.Matched != rep.Payments {
				t.Fatalf("books %+v\n%s", b, text.String())
			}
			if rep.OK == wrong || b.OK() == wrong || (len(b.Differences) == 2) != wrong ||
				wrong && !strings.Contains(text.String(), "got ") {
				t.Errorf("wrong=%v: report\n%s", wrong, text.String())
			}
			t.Logf("\n%s", text.String())
		})
	}
}

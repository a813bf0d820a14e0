package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
)

var _ LedgerReader = (*projections.Queries)(nil)

// TestLedgerOnPostgres runs deliveries through the real event store and
// projector, then reads the ledger routes over the real read model: the
// answers pass the OpenAPI check (serve), balances are the books of the
// payments, CSV has the JSON's rows, and the reader's own refusals are 400s.
func TestLedgerOnPostgres(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{})
	env := newEnv(t)
	env.deps.Store, env.deps.Payments, env.deps.Ledger = store, projections.NewQueries(pool), projections.NewQueries(pool)
	srv := env.server(t)
	base := testNow.Add(-48 * time.Hour).Unix()
	for _, d := range []struct {
		id, kind, pay string
		amount        int64
		cur           string
		at            int64
	}{
		{"evt_1", "created", "pi_a-1", 2000, "usd", base},
		{"evt_3", "refunded", "pi_a-1", 500, "usd", base + 7200}, // before its success
		{"evt_2", "succeeded", "pi_a-1", 2000, "usd", base + 3600},
		{"evt_4", "succeeded", "pi_b_2", 2000, "jpy", base + 60},
		{"evt_5", "succeeded", "pi_c", 1500, "bhd", base + 60},
		{"evt_6", "disputed", "pi_c", 1500, "bhd", base + 120},
	} {
		body := fmt.Appendf(nil, `{"id":%q,"type":"x","events":[{"kind":%q,"payment":%q,"amount":%d,"currency":%q,"at":%d}]}`,
			d.id, d.kind, d.pay, d.amount, d.cur, d.at)
		if res := serve(t, srv, signedWebhook(body, testNow)); res.status != 200 {
			t.Fatalf("%s: %d %s", d.id, res.status, res.raw)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- projections.NewRunner(projections.RunnerConfig{}, pool, store).Run(ctx) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res := serve(t, srv, get("/v1/payments/fakepay/pi_c", readToken))
		if res.status == 200 && res.body["status"] == "disputed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the projector did not catch up: %d %s", res.status, res.raw)
		}
	}

	balances := func(query string) map[string]float64 {
		res := serve(t, srv, get("/v1/ledger/balances?"+query, readToken))
		out := map[string]float64{}
		for _, b := range objects(t, res.body["balances"]) {
			out[fmt.Sprint(b["currency"], " ", b["account"])] = b["balance"].(float64)
		}
		return out
	}
	want := map[string]float64{"USD provider_balance": 1500, "USD sales": 2000, "USD refunds": 500,
		"JPY provider_balance": 2000, "JPY sales": 2000, "BHD provider_balance": 0, "BHD sales": 1500, "BHD disputes": 1500}
	if got := balances(""); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("balances %v, want %v", got, want)
	}
	// The recorded axis is the store's clock: everything was recorded by an
	// hour from now, nothing by a year ago.
	if got := balances("basis=recorded&as_of=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recorded balances %v, want %v", got, want)
	}
	if got := balances("basis=recorded&as_of=" + time.Now().AddDate(-1, 0, 0).UTC().Format(time.RFC3339)); len(got) != 0 {
		t.Errorf("recorded a year ago: %v", got)
	}

	res := serve(t, srv, get("/v1/payments/fakepay/pi_a-1/ledger", readToken))
	for _, e := range objects(t, res.body["entries"]) {
		var debits, credits float64
		for _, l := range objects(t, e["lines"]) {
			debits, credits = debits+l["debit"].(float64), credits+l["credit"].(float64)
		}
		if debits != credits || debits == 0 {
			t.Errorf("entry %v does not balance", e)
		}
	}
	js := serve(t, srv, get("/v1/ledger/entries?limit=500", readToken))
	req := get("/v1/ledger/entries", readToken)
	req.Header.Set("Accept", "text/csv")
	recs, err := csv.NewReader(bytes.NewReader(serve(t, srv, req).raw)).ReadAll()
	lines := 0
	for _, e := range objects(t, js.body["entries"]) {
		lines += len(objects(t, e["lines"]))
	}
	if err != nil || len(recs) != 1+lines || lines < 8 {
		t.Errorf("CSV %d records (%v), JSON %d lines", len(recs), err, lines)
	}
	if res := serve(t, srv, get("/v1/ledger/entries?cursor=garbage", readToken)); res.status != 400 {
		t.Errorf("bad cursor: %d %s", res.status, res.raw)
	}
	if res := serve(t, srv, get("/v1/payments/fakepay/pi_nope/ledger", readToken)); res.status != 404 {
		t.Errorf("unknown payment: %d %s", res.status, res.raw)
	}
}

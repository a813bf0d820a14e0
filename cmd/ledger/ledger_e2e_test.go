package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// The ledger end to end: webhooks delivered out of order through `ledger
// serve` end in the right books, on both bases, on both stores.

func TestE2ELedger(t *testing.T) { forEachBackend(t, testLedger) }

func testLedger(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	deliver := func(evs ...stripeEvent) { t.Helper(); l.deliver(t, evs...) }

	// A refund before its success: the refund's first entry (which booked
	// the capture too) is reversed when the success arrives.
	refunded := "pi_3QxLedger_refund_first"
	deliver(refundEvent("evt_lr_2", refunded, base+60, 2000, 500))
	l.waitPayment(t, refunded, statusIs("partially_refunded", 500))
	early := l.balances(t, url.Values{})
	mid := time.Now().UTC()
	time.Sleep(20 * time.Millisecond) // recorded times after mid are strictly later
	deliver(piEvent("evt_lr_1", "payment_intent.succeeded", refunded, base, 2000))
	l.waitPayment(t, refunded, func(b map[string]any) bool { return num(b["event_count"]) == 2 })

	// A dispute closed (lost) before we saw it open.
	lost := "pi_3QxLedger_dispute_lost"
	deliver(
		piEvent("evt_ll_1", "payment_intent.succeeded", lost, base, 800),
		disputeEvent("evt_ll_3", "charge.dispute.closed", lost, base+200, 800, "lost"),
		disputeEvent("evt_ll_2", "charge.dispute.created", lost, base+100, 800, "needs_response"),
	)
	l.waitPayment(t, lost, func(b map[string]any) bool { return b["status"] == "chargeback" && num(b["event_count"]) == 3 })

	// A failed payment books nothing.
	deliver(piEvent("evt_lf_1", "payment_intent.payment_failed", "pi_3QxLedger_failed", base, 999))
	l.waitPayment(t, "pi_3QxLedger_failed", statusIs("failed"))

	want := map[string]int64{
		"provider_balance/stripe/USD": 1500, "sales/stripe/USD": 2800, "refunds/stripe/USD": 500,
		"chargebacks/stripe/USD": 800,
	}
	if got := l.balances(t, url.Values{}); !equalBalances(got, want) {
		t.Fatalf("balances = %v, want %v", got, want)
	}

	// The refund-first payment's ledger: refund entry, its reversal, the
	// capture, the refund again.
	code, body := l.get(t, "/v1/payments/stripe/"+refunded+"/ledger", readToken)
	if code != http.StatusOK {
		t.Fatalf("payment ledger: %d %v", code, body)
	}
	entries := body["entries"].([]any)
	reversals := 0
	for _, e := range entries {
		if e.(map[string]any)["reverses"] != nil {
			reversals++
		}
	}
	if len(entries) != 4 || reversals != 1 {
		t.Fatalf("payment ledger has %d entries, %d reversals; want 4, 1: %v", len(entries), reversals, entries)
	}

	// The books as known at mid are what the API answered then; by
	// effective time at the refund's instant the capture is there.
	asOf := url.Values{"as_of": {mid.Format(time.RFC3339Nano)}, "basis": {"recorded"}}
	if got := l.balances(t, asOf); !equalBalances(got, early) {
		t.Fatalf("recorded basis at %s = %v, want what was answered then: %v", mid, got, early)
	}
	atRefund := url.Values{"as_of": {time.Unix(base+60, 0).UTC().Format(time.RFC3339)}, "provider": {"stripe"}}
	if got := l.balances(t, atRefund); got["sales/stripe/USD"] != 2800 || got["refunds/stripe/USD"] != 500 {
		t.Fatalf("effective basis at the refund = %v", got)
	}

	// CSV says what JSON says.
	if got := l.balancesCSV(t); !equalBalances(got, want) {
		t.Fatalf("CSV balances = %v, want %v", got, want)
	}
	if code, body := l.get(t, "/v1/ledger/balances?basis=sometimes", readToken); code != http.StatusBadRequest {
		t.Fatalf("bad basis: %d %v, want 400", code, body)
	}
}

// balances returns the ledger's balances as "account/provider/currency" → balance.
func (p *ledgerProc) balances(t testing.TB, q url.Values) map[string]int64 {
	t.Helper()
	code, body := p.get(t, "/v1/ledger/balances?"+q.Encode(), readToken)
	if code != http.StatusOK {
		t.Fatalf("balances %v: %d %v", q, code, body)
	}
	out := map[string]int64{}
	for _, b := range body["balances"].([]any) {
		m := b.(map[string]any)
		out[fmt.Sprintf("%s/%s/%s", m["account"], m["provider"], m["currency"])] = num(m["balance"])
	}
	return out
}

// balancesCSV is balances through Accept: text/csv.
func (p *ledgerProc) balancesCSV(t testing.TB) map[string]int64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.url("/v1/ledger/balances"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+readToken)
	req.Header.Set("Accept", "text/csv")
	code, _, raw := send(t, req)
	if code != http.StatusOK {
		t.Fatalf("CSV balances: %d %s", code, raw)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("CSV balances: %v: %s", err, raw)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string]int64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseInt(r[col["balance"]], 10, 64)
		if err != nil {
			t.Fatalf("CSV balance %q: %v", r[col["balance"]], err)
		}
		out[r[col["account"]]+"/"+r[col["provider"]]+"/"+r[col["currency"]]] = v
	}
	return out
}

func equalBalances(got, want map[string]int64) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k, v := range got {
		if want[k] != v {
			return false
		}
	}
	return true
}

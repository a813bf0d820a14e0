package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestE2EReviewDeadline (issue 18, "How it is checked"): a Pix payment
// that is never paid waits, the reconciler asks Asaas past the (shortened)
// deadline and still hears PENDING, so the payment reads requires_review
// with one open review; an admin resolves it (a fact in the stream, the
// review closed), a read token may not.
//
// The payment's provider time is months old (the fixtures' March 2026), so
// any deadline has passed by the first check; LEDGER_REVIEW_AFTER is short
// so the test does not lean on that.
func TestE2EReviewDeadline(t *testing.T) {
	api, base := newFakeAsaas(t)
	env := reconcileEnv(t, base)
	env["LEDGER_RECONCILE_INTERVAL"] = "1s"
	env["LEDGER_RECONCILE_AFTER"] = "1s"
	env["LEDGER_REVIEW_AFTER"] = "1s"
	l := startLedger(t, env)
	tok := map[string]string{"asaas-access-token": "asaas_e2e_token"}

	pay := "pay_rv_pix_1"
	api.set(pay, asaasObject(pay, "PENDING", "75.00"))
	if code, body := l.post(t, "/webhooks/asaas",
		asaasEvent("evt_rv&1", "PAYMENT_CREATED", pay, "2026-03-02 09:00:00", "75.00", "PENDING", "null"), tok); code != http.StatusOK {
		t.Fatalf("delivery: %d %v", code, body)
	}
	got := l.waitPayment(t, pay, func(b map[string]any) bool { return b["requires_review"] == true }, "asaas")
	if got["status"] != "awaiting_confirmation" {
		t.Errorf("status %v, want awaiting_confirmation", got["status"])
	}

	reviews := l.reviews(t, "state=open&provider=asaas")
	if len(reviews) != 1 {
		t.Fatalf("open reviews %v, want one", reviews)
	}
	r := reviews[0]
	id, _ := r["id"].(string)
	reasons, _ := r["reasons"].([]any)
	if id == "" || r["provider_payment_id"] != pay || r["status"] != "awaiting_confirmation" || num(r["amount"]) != 7500 ||
		r["currency"] != "BRL" || len(reasons) != 1 || reasons[0] != "confirmation_timeout" || r["opened_at"] == nil {
		t.Errorf("review %v", r)
	}
	// More checks (one a second) open no second review.
	time.Sleep(2500 * time.Millisecond)
	if n := len(l.reviews(t, "provider=asaas")); n != 1 {
		t.Errorf("%d reviews after more checks, want 1", n)
	}

	body, _ := json.Marshal(map[string]string{"resolution": "accepted", "note": "customer paid by TED"})
	if code, b := l.post(t, "/v1/reviews/"+url.PathEscape(id)+"/resolve", body,
		map[string]string{"Authorization": "Bearer " + readToken, "Content-Type": "application/json"}); code != http.StatusForbidden {
		t.Errorf("read token resolved: %d %v, want 403", code, b)
	}
	code, res := l.post(t, "/v1/reviews/"+url.PathEscape(id)+"/resolve", body,
		map[string]string{"Authorization": "Bearer " + adminTok, "Content-Type": "application/json"})
	if code != http.StatusOK || res["id"] != id || res["resolution"] != "accepted" || res["note"] != "customer paid by TED" ||
		res["resolved_by"] != "admin" || res["resolved_at"] == nil {
		t.Fatalf("resolve: %d %v", code, res)
	}
	var resolved int
	for _, e := range l.events(t, "asaas", pay) {
		if e["type"] == "payment.review_resolved.v1" {
			resolved++
		}
	}
	if resolved != 1 {
		t.Errorf("%d review_resolved facts in the stream, want 1", resolved)
	}
	l.waitPayment(t, pay, func(b map[string]any) bool { return b["requires_review"] == false }, "asaas")
	if open := l.reviews(t, "state=open&provider=asaas"); len(open) != 0 {
		t.Errorf("open reviews after resolving: %v", open)
	}
	if done := l.reviews(t, "state=resolved&provider=asaas"); len(done) != 1 || done[0]["id"] != id {
		t.Errorf("resolved reviews %v", done)
	}
}

// reviews reads the whole review queue with query q.
func (p *ledgerProc) reviews(t *testing.T, q string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		code, body := p.get(t, "/v1/reviews?limit=2&"+q+"&cursor="+url.QueryEscape(cursor), readToken)
		if code != http.StatusOK {
			t.Fatalf("reviews: %d %v", code, body)
		}
		list, _ := body["reviews"].([]any)
		for _, r := range list {
			out = append(out, r.(map[string]any))
		}
		cursor, _ = body["next_cursor"].(string)
		if cursor == "" {
			return out
		}
	}
}

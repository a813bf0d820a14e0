package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
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
	attResolveRules(t, l, id, res)
	attReviewFacts(t, l, pay, id)
	l.waitPayment(t, pay, func(b map[string]any) bool { return b["requires_review"] == false }, "asaas")
	if open := l.reviews(t, "state=open&provider=asaas"); len(open) != 0 {
		t.Errorf("open reviews after resolving: %v", open)
	}
	done := l.reviews(t, "state=resolved&provider=asaas")
	if len(done) != 1 || done[0]["id"] != id || done[0]["resolution"] != "accepted" || done[0]["note"] != "customer paid by TED" ||
		done[0]["resolved_by"] != "admin" || done[0]["resolved_at"] != res["resolved_at"] {
		t.Errorf("resolved reviews %v, want %s resolved as answered: %v", done, id, res)
	}
}

// attResolveRules: once resolved, the same resolution and note again is
// the same answer (a client's retry), anything else is 409, and an
// unknown review is 404.
func attResolveRules(t *testing.T, l *ledgerProc, id string, first map[string]any) {
	t.Helper()
	admin := map[string]string{"Authorization": "Bearer " + adminTok, "Content-Type": "application/json"}
	resolve := func(id, resolution, note string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]string{"resolution": resolution, "note": note})
		return l.post(t, "/v1/reviews/"+url.PathEscape(id)+"/resolve", body, admin)
	}
	if code, again := resolve(id, "accepted", "customer paid by TED"); code != http.StatusOK || !reflect.DeepEqual(again, first) {
		t.Errorf("identical re-send: %d %v, want 200 %v", code, again, first)
	}
	for _, c := range []struct{ resolution, note string }{
		{"written_off", "customer paid by TED"},
		{"accepted", "another note"},
	} {
		if code, b := resolve(id, c.resolution, c.note); code != http.StatusConflict {
			t.Errorf("resolving again as %s %q: %d %v, want 409", c.resolution, c.note, code, b)
		}
	}
	if code, b := resolve("rv_att_no_such_review", "accepted", ""); code != http.StatusNotFound {
		t.Errorf("unknown review: %d %v, want 404", code, b)
	}
}

// attReviewFacts: the stream holds the review's opening, by the
// reconciler's check that found the deadline passed (jobs/reconcile.go,
// source reconciliation), then one resolution by the operator (source
// operator) naming the admin token.
func attReviewFacts(t *testing.T, l *ledgerProc, pay, id string) {
	t.Helper()
	var facts []string
	for _, e := range l.events(t, "asaas", pay) {
		typ, _ := e["type"].(string)
		if !strings.HasPrefix(typ, "payment.review_") {
			continue
		}
		md, _ := e["metadata"].(map[string]any)
		var data map[string]any
		if raw, err := json.Marshal(e["data"]); err == nil {
			_ = json.Unmarshal(raw, &data)
		}
		if data["review_id"] != id {
			t.Errorf("%s of review %v, want %s", typ, data["review_id"], id)
		}
		facts = append(facts, fmt.Sprint(typ, " ", md["source"]))
		if typ == "payment.review_resolved.v1" && (data["resolved_by"] != "admin" || data["resolution"] != "accepted") {
			t.Errorf("resolution fact %v, want accepted by admin", data)
		}
	}
	want := []string{"payment.review_opened.v1 reconciliation", "payment.review_resolved.v1 operator"}
	if !reflect.DeepEqual(facts, want) {
		t.Errorf("review facts in the stream %v, want %v", facts, want)
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

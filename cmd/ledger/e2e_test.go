package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/providers/stripe"
)

// base is a provider timestamp for fixtures; the signature uses the real clock.
const base int64 = 1_780_000_000

func TestE2ELifecycle(t *testing.T) { forEachBackend(t, testLifecycle) }

func testLifecycle(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	now := time.Now()
	id := "pi_3QxLife-cycle_01"
	steps := []stripeEvent{
		piEvent("evt_life_1", "payment_intent.created", id, base, 4200),
		piEvent("evt_life_2", "payment_intent.processing", id, base+1, 4200),
		piEvent("evt_life_3", "payment_intent.succeeded", id, base+2, 4200),
		refundEvent("evt_life_4", id, base+10, 4200, 1000),
	}
	for _, e := range steps {
		code, body := l.webhook(t, e.body(), secretOld, now)
		if code != http.StatusOK || body["outcome"] != "accepted" {
			t.Fatalf("%s: %d %v", e.ID, code, body)
		}
		if body["stream"] != "payment-stripe-"+id || body["event_id"] == "" {
			t.Fatalf("%s: response %v", e.ID, body)
		}
	}
	got := l.waitPayment(t, id, statusIs("partially_refunded", 1000))
	want := map[string]any{"provider": "stripe", "provider_payment_id": id, "currency": "USD"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if num(got["amount"]) != 4200 || num(got["event_count"]) != 4 {
		t.Errorf("amount/event_count = %v/%v", got["amount"], got["event_count"])
	}
	if got["created_at"] != time.Unix(base, 0).UTC().Format(time.RFC3339) || got["updated_at"] != time.Unix(base+10, 0).UTC().Format(time.RFC3339) {
		t.Errorf("created_at/updated_at = %v/%v", got["created_at"], got["updated_at"])
	}

	// Full refund.
	code, _ := l.webhook(t, refundEvent("evt_life_5", id, base+20, 4200, 4200).body(), secretOld, now)
	if code != http.StatusOK {
		t.Fatalf("full refund: %d", code)
	}
	l.waitPayment(t, id, statusIs("refunded", 4200))

	// The auditor's view comes from the event store, with the raw delivery.
	code, evs := l.get(t, "/v1/payments/stripe/"+id+"/events", readToken)
	if code != http.StatusOK {
		t.Fatalf("events: %d %v", code, evs)
	}
	list, _ := evs["events"].([]any)
	if len(list) != 5 {
		t.Fatalf("events = %d, want 5", len(list))
	}
	first, _ := list[0].(map[string]any)
	for _, k := range []string{"event_id", "provider_event_id", "type", "occurred_at", "recorded_at", "revision", "data"} {
		if _, ok := first[k]; !ok {
			t.Errorf("event lacks %q: %v", k, first)
		}
	}
	if first["provider_event_id"] != "evt_life_1" || first["type"] != "payment.created.v1" || num(first["revision"]) != 0 {
		t.Errorf("first event = %v", first)
	}
}

func TestE2EDuplicateStormAndConcurrentDistinct(t *testing.T) {
	forEachBackend(t, testDuplicateStormAndConcurrentDistinct)
}

func testDuplicateStormAndConcurrentDistinct(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	now := time.Now()

	// 50 simultaneous deliveries of one event: all 200, one stored.
	id := "pi_3QxStorm_01"
	body := piEvent("evt_storm_1", "payment_intent.succeeded", id, base, 999).body()
	outcomes := concurrently(t, 50, func(int) (int, map[string]any) { return l.webhook(t, body, secretOld, now) })
	if outcomes["accepted"] != 1 || outcomes["duplicate"] != 49 {
		t.Errorf("storm outcomes = %v, want 1 accepted and 49 duplicate", outcomes)
	}
	l.waitPayment(t, id, statusIs("confirmed"))
	if n := eventCount(t, l, id); n != 1 {
		t.Errorf("storm stored %d events, want 1", n)
	}

	// 10 simultaneous distinct events for one payment: all stored.
	id2 := "pi_3QxDistinct_02"
	types := []string{"payment_intent.created", "payment_intent.processing", "payment_intent.requires_action",
		"payment_intent.processing", "payment_intent.payment_failed", "payment_intent.processing",
		"payment_intent.amount_capturable_updated", "payment_intent.processing", "payment_intent.processing",
		"payment_intent.succeeded"}
	outcomes = concurrently(t, 10, func(i int) (int, map[string]any) {
		e := piEvent(fmt.Sprintf("evt_distinct_%02d", i), types[i], id2, base+int64(i), 5000)
		return l.webhook(t, e.body(), secretOld, now)
	})
	if outcomes["accepted"] != 10 {
		t.Errorf("distinct outcomes = %v, want 10 accepted", outcomes)
	}
	l.waitPayment(t, id2, func(b map[string]any) bool { return b["status"] == "confirmed" && num(b["event_count"]) == 10 })
	if n := eventCount(t, l, id2); n != 10 {
		t.Errorf("distinct stored %d events, want 10", n)
	}
}

// concurrently runs n calls at once and counts outcomes; any non-200 fails.
func concurrently(t *testing.T, n int, call func(i int) (int, map[string]any)) map[string]int {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	outcomes := map[string]int{}
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			code, body := call(i)
			mu.Lock()
			defer mu.Unlock()
			if code != http.StatusOK {
				t.Errorf("call %d: status %d %v", i, code, body)
				return
			}
			outcomes[fmt.Sprint(body["outcome"])]++
		}(i)
	}
	close(start)
	wg.Wait()
	return outcomes
}

func eventCount(t *testing.T, l *ledgerProc, id string) int {
	t.Helper()
	code, body := l.get(t, "/v1/payments/stripe/"+id+"/events", readToken)
	if code != http.StatusOK {
		t.Fatalf("events of %s: %d %v", id, code, body)
	}
	list, _ := body["events"].([]any)
	return len(list)
}

func TestE2EOrdering(t *testing.T) { forEachBackend(t, testOrdering) }

func testOrdering(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	deliver := func(evs ...stripeEvent) { t.Helper(); l.deliver(t, evs...) }

	// A full refund delivered before the success and the creation.
	id := "pi_3QxOut-of-order"
	deliver(
		refundEvent("evt_ooo_3", id, base+60, 3000, 3000),
		piEvent("evt_ooo_2", "payment_intent.succeeded", id, base+5, 3000),
		piEvent("evt_ooo_1", "payment_intent.created", id, base, 3000),
	)
	l.waitPayment(t, id, func(b map[string]any) bool { return b["status"] == "refunded" && num(b["event_count"]) == 3 })

	// Same-second failure and success delivered in reverse: confirmed.
	id2 := "pi_3QxSame_second"
	deliver(
		piEvent("evt_ss_3", "payment_intent.succeeded", id2, base+7, 1500),
		piEvent("evt_ss_2", "payment_intent.payment_failed", id2, base+7, 1500),
		piEvent("evt_ss_1", "payment_intent.created", id2, base+7, 1500),
	)
	l.waitPayment(t, id2, func(b map[string]any) bool { return b["status"] == "confirmed" && num(b["event_count"]) == 3 })

	// Disputes: lost ends in chargeback, won returns to confirmed.
	lost, won := "pi_3QxDispute_lost", "pi_3QxDispute_won"
	deliver(
		piEvent("evt_dl_1", "payment_intent.succeeded", lost, base, 800),
		disputeEvent("evt_dl_2", "charge.dispute.created", lost, base+100, 800, "needs_response"),
		disputeEvent("evt_dl_3", "charge.dispute.closed", lost, base+200, 800, "lost"),
		piEvent("evt_dw_1", "payment_intent.succeeded", won, base, 800),
		disputeEvent("evt_dw_3", "charge.dispute.closed", won, base+200, 800, "won"),
		disputeEvent("evt_dw_2", "charge.dispute.created", won, base+100, 800, "needs_response"),
	)
	l.waitPayment(t, lost, statusIs("chargeback"))
	l.waitPayment(t, won, func(b map[string]any) bool { return b["status"] == "confirmed" && num(b["event_count"]) == 3 })

	// An open dispute is "disputed".
	open := "pi_3QxDispute_open"
	deliver(
		piEvent("evt_do_1", "payment_intent.succeeded", open, base, 800),
		disputeEvent("evt_do_2", "charge.dispute.created", open, base+100, 800, "needs_response"),
	)
	l.waitPayment(t, open, statusIs("disputed"))
}

func TestE2ERejections(t *testing.T) { forEachBackend(t, testRejections) }

func testRejections(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	now := time.Now()
	good := piEvent("evt_rej_1", "payment_intent.created", "pi_3QxRejects", base, 100).body()
	sig := func(body []byte, secret string, ts time.Time) map[string]string {
		return map[string]string{"Stripe-Signature": stripe.Sign(body, secret, ts)}
	}
	forged := bytes.Replace(good, []byte(`"amount":100`), []byte(`"amount":999`), 1)
	big := bytes.Repeat([]byte("x"), 2<<20)
	tests := []struct {
		name     string
		body     []byte
		headers  map[string]string
		wantCode int
	}{
		{"missing signature", good, nil, http.StatusBadRequest},
		{"garbage signature header", good, map[string]string{"Stripe-Signature": "nonsense"}, http.StatusBadRequest},
		{"wrong secret", good, sig(good, "whsec_attacker", now), http.StatusBadRequest},
		{"forged body", forged, sig(good, secretOld, now), http.StatusBadRequest},
		{"stale timestamp", good, sig(good, secretOld, now.Add(-10*time.Minute)), http.StatusBadRequest},
		{"signed malformed JSON", []byte(`{"id":"evt_x",`), sig([]byte(`{"id":"evt_x",`), secretOld, now), http.StatusBadRequest},
		{"2 MiB body", big, sig(big, secretOld, now), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := l.post(t, "/webhooks/stripe", tt.body, tt.headers)
			if code != tt.wantCode {
				t.Errorf("status = %d, want %d (%v)", code, tt.wantCode, body)
			}
		})
	}
	// Nothing of the rejected deliveries was stored.
	if code, _ := l.payment(t, "pi_3QxRejects"); code != http.StatusNotFound {
		t.Errorf("rejected deliveries left a payment behind: %d", code)
	}
	if code, body := l.get(t, "/v1/payments/stripe/pi_3QxRejects/events", readToken); code != http.StatusNotFound {
		t.Errorf("rejected deliveries left events behind: %d %v", code, body)
	}

	// Rotated secret: the new one verifies too.
	if code, body := l.webhook(t, good, secretNew, now); code != http.StatusOK || body["outcome"] != "accepted" {
		t.Errorf("rotated secret: %d %v", code, body)
	}
	// A type we do not track is acknowledged and ignored.
	ignored := stripeEvent{ID: "evt_cust_1", Type: "customer.created", Created: base, Object: map[string]any{"id": "cus_1", "object": "customer"}}
	if code, body := l.webhook(t, ignored.body(), secretOld, now); code != http.StatusOK || body["outcome"] != "ignored" {
		t.Errorf("ignored type: %d %v", code, body)
	}
	// Unknown providers are not open endpoints.
	if code, _ := l.post(t, "/webhooks/paypal", good, nil); code != http.StatusNotFound {
		t.Errorf("unknown provider: %d, want 404", code)
	}
}

func TestE2EStripeDisabledWithoutSecret(t *testing.T) {
	forEachBackend(t, testStripeDisabledWithoutSecret)
}

func testStripeDisabledWithoutSecret(t *testing.T, env map[string]string) {
	delete(env, "LEDGER_STRIPE_WEBHOOK_SECRETS")
	l := startLedger(t, env)
	body := piEvent("evt_dis_1", "payment_intent.created", "pi_3QxDisabled", base, 100).body()
	if code, _ := l.webhook(t, body, secretOld, time.Now()); code != http.StatusNotFound {
		t.Errorf("stripe without secret: %d, want 404", code)
	}
}

func TestE2EAuthHealthAndPagination(t *testing.T) { forEachBackend(t, testAuthHealthAndPagination) }

func testAuthHealthAndPagination(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	if code, _ := l.get(t, "/healthz", ""); code != http.StatusOK {
		t.Errorf("healthz: %d", code)
	}
	if code, body := l.get(t, "/readyz", ""); code != http.StatusOK {
		t.Errorf("readyz: %d %v", code, body)
	}
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"wrong", http.StatusUnauthorized}, {readToken, http.StatusOK}, {adminTok, http.StatusOK}} {
		if code, _ := l.get(t, "/v1/payments", tc.token); code != tc.want {
			t.Errorf("token %q: %d, want %d", tc.token, code, tc.want)
		}
	}
	if code, _ := l.get(t, "/v1/payments/stripe/pi_unknown", readToken); code != http.StatusNotFound {
		t.Errorf("unknown payment: %d, want 404", code)
	}
	for _, q := range []string{"?status=nope", "?limit=0", "?limit=-1", "?limit=abc", "?limit=100000", "?cursor=bm90LWEtY3Vyc29y", "?cursor=garbage!"} {
		if code, _ := l.get(t, "/v1/payments"+q, readToken); code != http.StatusBadRequest {
			t.Errorf("list %s: %d, want 400", q, code)
		}
	}

	now := time.Now()
	const n = 23
	for i := 0; i < n; i++ {
		typ := "payment_intent.succeeded"
		if i%3 == 0 {
			typ = "payment_intent.payment_failed"
		}
		e := piEvent(fmt.Sprintf("evt_page_%02d", i), typ, fmt.Sprintf("pi_3QxPage_%02d", i), base+int64(i), 100)
		if code, body := l.webhook(t, e.body(), secretOld, now); code != http.StatusOK {
			t.Fatalf("seed %d: %d %v", i, code, body)
		}
	}
	l.waitPayment(t, fmt.Sprintf("pi_3QxPage_%02d", n-1), statusIs("confirmed"))
	l.waitPayment(t, "pi_3QxPage_00", statusIs("failed"))

	seen := map[string]int{}
	cursor := ""
	for pages := 0; pages < 20; pages++ {
		path := "/v1/payments?provider=stripe&limit=5"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		code, body := l.get(t, path, readToken)
		if code != http.StatusOK {
			t.Fatalf("page: %d %v", code, body)
		}
		for _, p := range body["payments"].([]any) {
			seen[p.(map[string]any)["provider_payment_id"].(string)]++
		}
		// A payment created between pages must not disturb the walk.
		if pages == 1 {
			e := piEvent("evt_page_late", "payment_intent.created", "pi_3QxPage_late", base, 100)
			l.webhook(t, e.body(), secretOld, now)
		}
		cursor, _ = body["next_cursor"].(string)
		if cursor == "" {
			break
		}
	}
	for i := 0; i < n; i++ {
		if id := fmt.Sprintf("pi_3QxPage_%02d", i); seen[id] != 1 {
			t.Errorf("%s seen %d times across pages, want 1", id, seen[id])
		}
	}
	code, body := l.get(t, "/v1/payments?status=failed&limit=100", readToken)
	if code != http.StatusOK || len(body["payments"].([]any)) != 8 {
		t.Errorf("status filter: %d, %d payments, want 8", code, len(body["payments"].([]any)))
	}
}

func TestE2ERestartKeepsState(t *testing.T) { forEachBackend(t, testRestartKeepsState) }

func testRestartKeepsState(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	now := time.Now()
	id := "pi_3QxRestart_01"
	first := piEvent("evt_rs_1", "payment_intent.succeeded", id, base, 700)
	if code, body := l.webhook(t, first.body(), secretOld, now); code != http.StatusOK || body["outcome"] != "accepted" {
		t.Fatalf("first: %d %v", code, body)
	}
	l.waitPayment(t, id, statusIs("confirmed"))
	l.stop()

	l2 := startLedger(t, env)
	// A late duplicate after the restart is still a duplicate.
	if code, body := l2.webhook(t, first.body(), secretOld, time.Now()); code != http.StatusOK || body["outcome"] != "duplicate" {
		t.Errorf("late duplicate: %d %v", code, body)
	}
	refund := refundEvent("evt_rs_2", id, base+50, 700, 700)
	if code, body := l2.webhook(t, refund.body(), secretOld, time.Now()); code != http.StatusOK || body["outcome"] != "accepted" {
		t.Fatalf("refund: %d %v", code, body)
	}
	l2.waitPayment(t, id, func(b map[string]any) bool { return b["status"] == "refunded" && num(b["event_count"]) == 2 })
	if n := eventCount(t, l2, id); n != 2 {
		t.Errorf("events after restart = %d, want 2", n)
	}
}

package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestConsoleAttentionInBrowser (issue 20): an admin in headless Chromium
// resolves a review (the resolution is a fact in /events) and retries a
// dead letter (the entry reads retried in the API), on a real
// `ledger serve` whose Asaas Pix payment was never paid past its review
// deadline and whose Mercado Pago status fetch failed for good.
func TestConsoleAttentionInBrowser(t *testing.T) {
	asaasAPI, asaasBase := newFakeAsaas(t)
	const mpPay, mpPay2 = "1319876500077", "1319876500078"
	mp := &attFakeMP{state: map[string]map[string]any{
		mpPay:  mpPayment(mpPay, "approved", "accredited", "80.00", "0", "2026-03-01T11:00:00.000-03:00"),
		mpPay2: mpPayment(mpPay2, "approved", "accredited", "90.00", "0", "2026-03-01T11:05:00.000-03:00")}, failing: true}
	mpSrv := httptest.NewServer(mp)
	t.Cleanup(mpSrv.Close)
	env := reconcileEnv(t, asaasBase)
	env["LEDGER_RECONCILE_INTERVAL"], env["LEDGER_RECONCILE_AFTER"], env["LEDGER_REVIEW_AFTER"] = "1s", "1s", "1s"
	env["LEDGER_MERCADOPAGO_WEBHOOK_SECRETS"], env["LEDGER_MERCADOPAGO_ACCESS_TOKEN"] = "mp_e2e_secret", "APP_USR-e2e"
	env["LEDGER_MERCADOPAGO_API_BASE"], env["LEDGER_JOBS_MAX_ATTEMPTS"] = mpSrv.URL, "1"
	l := startLedger(t, env)

	const pay = "pay_console_pix_1"
	asaasAPI.set(pay, asaasObject(pay, "PENDING", "75.00"))
	if code, body := l.post(t, "/webhooks/asaas", asaasEvent("evt_con&1", "PAYMENT_CREATED", pay, "2026-03-02 09:00:00", "75.00", "PENDING", "null"),
		map[string]string{"asaas-access-token": "asaas_e2e_token"}); code != http.StatusOK {
		t.Fatalf("asaas delivery: %d %v", code, body)
	}
	for i, p := range []string{mpPay, mpPay2} {
		if code, body := l.mercadoPagoWebhook(t, int64(9201+i), p, "payment.created", "mp_e2e_secret"); code != http.StatusOK {
			t.Fatalf("mercado pago notification: %d %v", code, body)
		}
	}
	l.waitPayment(t, pay, func(b map[string]any) bool { return b["requires_review"] == true }, "asaas")
	waitOpen := func(n int) {
		for deadline := time.Now().Add(60 * time.Second); len(l.attDeadLetters(t, "kind=job&state=open")) != n; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("open job dead letters: %v, want %d", l.attDeadLetters(t, "kind=job&state=open"), n)
			}
		}
	}
	waitOpen(2)
	mp.heal()

	base := "http://" + l.addr
	b := newBrowser(t)
	b.step("sign in (admin)", func() {
		b.open(base + "/console/reviews")
		b.signIn(adminTok)
		if title := b.page.MustInfo().Title; !strings.HasPrefix(title, "Review queue") {
			t.Errorf("after sign-in (next=/console/reviews) the title is %q", title)
		}
	})
	b.shoot("reviews-open")
	b.step("resolve", func() {
		b.eval(`() => { document.querySelector('form.resolve select').value = 'accepted' }`)
		b.page.MustElement("form.resolve input[name=note]").MustInput("paid by TED")
		b.submit(`form.resolve button`)
		if flash := b.page.MustElement("p.ok").MustText(); !strings.Contains(flash, "resolved") {
			t.Errorf("after resolving: %q", flash)
		}
	})
	resolved := false
	for _, e := range l.events(t, "asaas", pay) {
		resolved = resolved || e["type"] == "payment.review_resolved.v1"
	}
	if !resolved {
		t.Errorf("no payment.review_resolved.v1 in /events of %s after the console resolved its review", pay)
	}
	b.step("reconciliation", func() {
		b.open(base + "/console/reconciliation")
		if n := b.eval(`() => document.querySelectorAll('section[aria-labelledby="h-log"] tbody tr').length`).Int(); n == 0 {
			t.Errorf("the reconciliation log lists no check of %s", pay)
		}
	})
	b.shoot("reconciliation-checks")
	b.step("dead letters", func() { b.open(base + "/console/dead-letters?kind=job") })
	b.shoot("dead-letters-open")
	b.step("a dead letter's detail", func() {
		b.submit(`table.list tbody tr td a[href^="/console/dead-letters/"]`)
		if text := b.page.MustElement("main").MustText(); !strings.Contains(text, "enrich_payment") || !strings.Contains(text, "500") {
			t.Errorf("the detail lacks its cause or last error:\n%s", text)
		}
	})
	b.shoot("dead-letter")
	b.step("back to the list", func() { b.open(base + "/console/dead-letters?kind=job") })
	b.step("retry one", func() {
		b.submit(`table form[action$="/retry"] button`)
		if flash := b.page.MustElement("p.ok").MustText(); !strings.Contains(flash, "retried") {
			t.Errorf("after retrying: %q", flash)
		}
	})
	waitOpen(1)
	b.step("retry the rest, confirmed", func() {
		b.submit(`form.bulk button`)
		if n := b.page.MustElement("strong.count").MustText(); n != "1" {
			t.Errorf("the confirmation counts %s dead letters, want 1", n)
		}
	})
	b.shoot("dead-letters-confirm")
	b.step("confirm", func() {
		b.submit(`form[action="/console/dead-letters/retry"] button`)
		if flash := b.page.MustElement("p.ok").MustText(); !strings.Contains(flash, "retried: 1") {
			t.Errorf("after the bulk retry: %q", flash)
		}
	})
	waitOpen(0)
	b.validateHTML()
}

package main

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// One lifecycle per Brazilian provider through the real `ledger serve`,
// signed byte for byte as each provider signs (standard library only, so the
// test does not trust our own verifiers), with duplicates and out-of-order
// delivery, ending in the right status and amounts in the read API.

// --- Mercado Pago: notifications carry no status; the ledger fetches it ----

// fakeMercadoPago serves GET /v1/payments/{id} from a mutable state and
// counts fetches.
type fakeMercadoPago struct {
	mu      sync.Mutex
	state   map[string]map[string]any
	fetches int
}

func (f *fakeMercadoPago) set(id string, p map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state[id] = p
}

func (f *fakeMercadoPago) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if r.Header.Get("Authorization") != "Bearer APP_USR-e2e" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := r.URL.Path[len("/v1/payments/"):]
	p, ok := f.state[id]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Payment not found","status":404}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p)
}

func mpPayment(id, status, detail, amount, refunded, updated string) map[string]any {
	// Amounts as JSON numbers with decimals, as Mercado Pago sends them.
	return map[string]any{"id": json.Number(id), "status": status, "status_detail": detail,
		"transaction_amount": json.Number(amount), "transaction_amount_refunded": json.Number(refunded),
		"currency_id": "BRL", "date_created": "2026-03-01T10:00:00.000-03:00", "date_last_updated": updated}
}

func (p *ledgerProc) mercadoPagoWebhook(t *testing.T, notificationID int64, paymentID, action, secret string) (int, map[string]any) {
	t.Helper()
	body := fmt.Appendf(nil, `{"id":%d,"live_mode":true,"type":"payment","date_created":"2026-03-01T10:00:%02d.000-03:00","user_id":44444,"api_version":"v1","action":%q,"data":{"id":%q}}`,
		notificationID, notificationID%60, action, paymentID)
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	reqID := fmt.Sprintf("req-%d", notificationID)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "id:%s;request-id:%s;ts:%s;", paymentID, reqID, ts)
	return p.post(t, "/webhooks/mercadopago?data.id="+paymentID+"&type=payment", body, map[string]string{
		"x-signature":  "ts=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil)),
		"x-request-id": reqID,
	})
}

func TestE2EMercadoPago(t *testing.T) {
	api := &fakeMercadoPago{state: map[string]map[string]any{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	env := baseEnv(newDB(t))
	env["LEDGER_MERCADOPAGO_WEBHOOK_SECRETS"] = "mp_old_secret,mp_e2e_secret"
	env["LEDGER_MERCADOPAGO_ACCESS_TOKEN"] = "APP_USR-e2e"
	env["LEDGER_MERCADOPAGO_API_BASE"] = srv.URL
	l := startLedger(t, env)
	id := "1319876543210"

	api.set(id, mpPayment(id, "pending", "pending_waiting_transfer", "150.10", "0", "2026-03-01T10:00:01.000-03:00"))
	if code, body := l.mercadoPagoWebhook(t, 9001, id, "payment.created", "mp_e2e_secret"); code != http.StatusOK || body["outcome"] != "accepted" {
		t.Fatalf("created: %d %v", code, body)
	}
	l.waitPayment(t, id+"", func(b map[string]any) bool {
		return b["status"] == "awaiting_confirmation" && num(b["amount"]) == 15010
	}, "mercadopago")

	// Paid, then partly refunded; the notifications arrive twice and out of order.
	api.set(id, mpPayment(id, "approved", "partially_refunded", "150.10", "50.05", "2026-03-01T11:00:00.000-03:00"))
	for _, n := range []int64{9003, 9002, 9003} {
		if code, body := l.mercadoPagoWebhook(t, n, id, "payment.updated", "mp_e2e_secret"); code != http.StatusOK {
			t.Fatalf("update %d: %d %v", n, code, body)
		}
	}
	got := l.waitPayment(t, id, func(b map[string]any) bool { return b["status"] == "partially_refunded" }, "mercadopago")
	if num(got["amount"]) != 15010 || num(got["amount_refunded"]) != 5005 || got["currency"] != "BRL" {
		t.Errorf("payment = %v", got)
	}
	// Forged signature: 400, nothing stored.
	if code, _ := l.mercadoPagoWebhook(t, 9004, id, "payment.updated", "mp_wrong_secret"); code != http.StatusBadRequest {
		t.Errorf("forged: %d, want 400", code)
	}
	// Every distinct observed state is stored once however often it was fetched.
	seen := map[string]int{}
	for _, e := range l.events(t, "mercadopago", id) {
		seen[e["type"].(string)]++
	}
	if seen["payment.status_observed.v1"] != 2 || seen["payment.notified.v1"] != 3 {
		t.Errorf("stored events by type = %v, want 3 notifications (9001-9003, one repeated) and 2 observations", seen)
	}
}

// --- Asaas: a static token; the payload carries the whole payment -----------

func asaasEvent(id, event, payID, created, value, status string, refunds string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"event":%q,"dateCreated":%q,"payment":{"object":"payment","id":%q,"dateCreated":"2026-03-02","customer":"cus_000005219613","value":%s,"netValue":%s,"billingType":"PIX","status":%q,"externalReference":"order-77","refunds":%s}}`,
		id, event, created, payID, value, value, status, refunds)
}

func TestE2EAsaas(t *testing.T) {
	env := baseEnv(newDB(t))
	env["LEDGER_ASAAS_WEBHOOK_TOKENS"] = "asaas_e2e_token"
	l := startLedger(t, env)
	pay := "pay_080225913252"
	tok := map[string]string{"asaas-access-token": "asaas_e2e_token"}
	created := asaasEvent("evt_0a1&1001", "PAYMENT_CREATED", pay, "2026-03-02 09:00:00", "250.50", "PENDING", "null")
	viewed := asaasEvent("evt_0a2&1002", "PAYMENT_CHECKOUT_VIEWED", pay, "2026-03-02 09:05:00", "250.50", "PENDING", "null")
	received := asaasEvent("evt_0a3&1003", "PAYMENT_RECEIVED", pay, "2026-03-02 09:10:00", "250.50", "RECEIVED", "null")
	partial := asaasEvent("evt_0a4&1004", "PAYMENT_PARTIALLY_REFUNDED", pay, "2026-03-03 14:00:00", "250.50", "RECEIVED",
		`[{"dateCreated":"2026-03-03 13:59:00","status":"DONE","value":50.25},{"dateCreated":"2026-03-03 13:59:30","status":"CANCELLED","value":10}]`)
	// Out of order, with duplicates.
	for _, b := range [][]byte{partial, received, created, partial, viewed, received} {
		if code, body := l.post(t, "/webhooks/asaas", b, tok); code != http.StatusOK {
			t.Fatalf("asaas delivery: %d %v", code, body)
		}
	}
	// Four deliveries, each stating a fee (netValue = value: 0): three
	// snapshots that carry it, a notification stored with a fee fact.
	got := l.waitPayment(t, pay, func(b map[string]any) bool { return num(b["event_count"]) == 5 }, "asaas")
	if got["status"] != "partially_refunded" || num(got["amount"]) != 25050 || num(got["amount_refunded"]) != 5025 || got["currency"] != "BRL" {
		t.Errorf("payment = %v", got)
	}
	if got["fee_currency"] != "BRL" || num(got["fee"]) != 0 {
		t.Errorf("fee = %v %v, want 0 BRL", got["fee"], got["fee_currency"])
	}
	// The snapshots carry the fee they state (the harness checks the answer
	// against the OpenAPI document).
	code, evs := l.get(t, "/v1/payments/asaas/"+pay+"/events", readToken)
	list, _ := evs["events"].([]any)
	if code != http.StatusOK || len(list) != 5 {
		t.Fatalf("events: %d, %d events", code, len(list))
	}
	snapshots := 0
	for _, e := range list {
		ev, _ := e.(map[string]any)
		data, _ := ev["data"].(map[string]any)
		if ev["type"] == "payment.status_observed.v1" {
			snapshots++
			if data["fee_currency"] != "BRL" || data["fee_source"] != "netValue" {
				t.Errorf("snapshot %v states no fee", data)
			}
		}
	}
	if snapshots != 3 {
		t.Errorf("%d snapshots, want 3", snapshots)
	}
	// Asaas wrote 2026-03-02 09:00:00 in São Paulo time: 12:00 UTC.
	if got["created_at"] != "2026-03-02T12:00:00Z" {
		t.Errorf("created_at = %v, want 2026-03-02T12:00:00Z (America/Sao_Paulo)", got["created_at"])
	}
	for _, h := range []map[string]string{nil, {"asaas-access-token": "asaas_e2e_tokeX"}} {
		if code, _ := l.post(t, "/webhooks/asaas", created, h); code != http.StatusUnauthorized {
			t.Errorf("bad token %v: %d, want 401", h, code)
		}
	}
}

// --- Pagar.me: RS256 signatures against a JWKS; a stream per charge ---------

type jwksServer struct {
	key *rsa.PrivateKey
	kid string
}

func (j jwksServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b64 := base64.RawURLEncoding.EncodeToString
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": j.kid,
		"n": b64(j.key.N.Bytes()), "e": b64(big.NewInt(int64(j.key.E)).Bytes()),
	}}})
}

func (j jwksServer) sign(t *testing.T, body []byte) string {
	t.Helper()
	sum := sha256.Sum256(body)
	sig, err := rsa.SignPKCS1v15(rand.Reader, j.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return "alg=RS256; kid=" + j.kid + "; signature=" + base64.RawURLEncoding.EncodeToString(sig)
}

func pagarmeCharge(hook, typ, created, charge, status string, amount, paid, canceled int64) []byte {
	return fmt.Appendf(nil, `{"id":%q,"account":{"id":"acc_e2e","name":"Loja"},"type":%q,"created_at":%q,"data":{"id":%q,"code":"PED-9","amount":%d,"paid_amount":%d,"canceled_amount":%d,"status":%q,"currency":"BRL","payment_method":"credit_card","order":{"id":"or_e2e_1","status":"paid"},"last_transaction":{"status":"captured"}}}`,
		hook, typ, created, charge, amount, paid, canceled, status)
}

func TestE2EPagarme(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := jwksServer{key: key, kid: "e2e-key-1"}
	jsrv := httptest.NewServer(jwks)
	t.Cleanup(jsrv.Close)
	env := baseEnv(newDB(t))
	env["LEDGER_PAGARME_JWKS_URL"] = jsrv.URL + "/.well-known/jwks.json"
	env["LEDGER_PAGARME_WEBHOOK_SECRETS"] = "sk_test_legacy"
	l := startLedger(t, env)
	ch := "ch_e2eW8nQx3LpT"
	deliveries := [][]byte{
		pagarmeCharge("hook_e2e_3", "charge.partial_canceled", "2026-03-04T15:00:00.000Z", ch, "paid", 12356, 12356, 2356),
		pagarmeCharge("hook_e2e_1", "charge.pending", "2026-03-04T12:00:00Z", ch, "pending", 12356, 0, 0),
		pagarmeCharge("hook_e2e_2", "charge.paid", "2026-03-04T12:01:00", ch, "paid", 12356, 12356, 0),
		pagarmeCharge("hook_e2e_3", "charge.partial_canceled", "2026-03-04T15:00:00.000Z", ch, "paid", 12356, 12356, 2356),
	}
	for _, b := range deliveries {
		if code, body := l.post(t, "/webhooks/pagarme", b, map[string]string{"X-Webhook-Asymmetric-Signature": jwks.sign(t, b)}); code != http.StatusOK {
			t.Fatalf("pagarme delivery: %d %v", code, body)
		}
	}
	got := l.waitPayment(t, ch, func(b map[string]any) bool { return num(b["event_count"]) == 3 }, "pagarme")
	if got["status"] != "partially_refunded" || num(got["amount"]) != 12356 || num(got["amount_refunded"]) != 2356 {
		t.Errorf("payment = %v", got)
	}
	// The legacy HMAC-SHA1 scheme, and a forged RS256 body.
	legacy := pagarmeCharge("hook_e2e_4", "charge.refunded", "2026-03-05T09:00:00Z", ch, "canceled", 12356, 12356, 12356)
	mac := hmac.New(sha1.New, []byte("sk_test_legacy"))
	mac.Write(legacy)
	if code, body := l.post(t, "/webhooks/pagarme", legacy, map[string]string{"X-Hub-Signature": "sha1=" + hex.EncodeToString(mac.Sum(nil))}); code != http.StatusOK {
		t.Fatalf("legacy delivery: %d %v", code, body)
	}
	l.waitPayment(t, ch, func(b map[string]any) bool { return b["status"] == "refunded" && num(b["amount_refunded"]) == 12356 }, "pagarme")
	forged := pagarmeCharge("hook_e2e_5", "charge.chargedback", "2026-03-06T09:00:00Z", ch, "chargedback", 12356, 12356, 0)
	if code, _ := l.post(t, "/webhooks/pagarme", forged, map[string]string{"X-Webhook-Asymmetric-Signature": jwks.sign(t, legacy)}); code != http.StatusBadRequest {
		t.Errorf("forged: %d, want 400", code)
	}
}

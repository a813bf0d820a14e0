package jobs

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const fakeKey = "sk_test_51QjobsFake"

// fakeAPI is a fake Stripe API serving one PaymentIntent state. A test's
// script decides, per call, to answer, fail, drop the connection or hang
// until the caller gives up.
type fakeAPI struct {
	srv *httptest.Server

	mu     sync.Mutex
	calls  int
	intent map[string]string // PaymentIntent JSON by ID
	mp     map[string]string // Mercado Pago payment JSON by ID
	bt     map[string]string // balance transaction JSON by PaymentIntent ID ("null" while there is none)
	script func(call int) action
	hung   chan struct{} // receives each time a request starts hanging
}

type action int

const (
	answer   action = iota // the current state
	drop                   // close the connection without a response
	hang                   // wait until the client goes away
	outage                 // 503
	notFound               // 404
)

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{intent: map[string]string{}, mp: map[string]string{}, bt: map[string]string{}, hung: make(chan struct{}, 16)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// set makes the API describe PaymentIntent id with the given state.
func (f *fakeAPI) set(id, status string, amount, received, refunded int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intent[id] = fmt.Sprintf(`{"id":%q,"object":"payment_intent","status":%q,"amount":%d,"amount_received":%d,`+
		`"currency":"brl","latest_charge":{"id":"ch_%s","object":"charge","amount":%d,"amount_captured":%d,`+
		`"amount_refunded":%d,"captured":true,"currency":"brl","refunded":false,"disputed":false}}`,
		id, status, amount, received, id, amount, received, refunded)
}

// setMP makes the API describe Mercado Pago payment id: decimal amounts in
// major units, as Mercado Pago sends them.
func (f *fakeAPI) setMP(id, status, detail, amount, refunded string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mp[id] = fmt.Sprintf(`{"id":%s,"status":%q,"status_detail":%q,"transaction_amount":%s,`+
		`"transaction_amount_refunded":%s,"currency_id":"BRL","date_last_updated":"2026-03-01T10:00:00.000-03:00"}`,
		id, status, detail, amount, refunded)
}

// setFee makes the API describe PaymentIntent id, when asked with its
// balance transaction expanded, as succeeded with bt (JSON; "null" while
// captured asynchronously).
func (f *fakeAPI) setFee(id, bt string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bt[id] = fmt.Sprintf(`{"id":%q,"object":"payment_intent","status":"succeeded","amount":2000,"amount_received":2000,`+
		`"currency":"eur","latest_charge":{"id":"ch_%s","object":"charge","balance_transaction":%s}}`, id, id, bt)
}

func (f *fakeAPI) setScript(s func(call int) action) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = s
}

func (f *fakeAPI) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+fakeKey {
		http.Error(w, "bad key", http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	f.calls++
	act := answer
	if f.script != nil {
		act = f.script(f.calls)
	}
	var body string
	var ok bool
	if id, isMP := strings.CutPrefix(r.URL.Path, "/v1/payments/"); isMP {
		body, ok = f.mp[id]
	} else if id, _ := strings.CutPrefix(r.URL.Path, "/v1/payment_intents/"); r.URL.Query().Get("expand[]") == "latest_charge.balance_transaction" {
		body, ok = f.bt[id]
	} else {
		body, ok = f.intent[id]
	}
	f.mu.Unlock()
	switch {
	case act == drop:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	case act == hang:
		f.hung <- struct{}{}
		<-r.Context().Done()
	case act == outage:
		http.Error(w, `{"error":{"type":"api_error"}}`, http.StatusServiceUnavailable)
	case act == notFound || !ok:
		http.Error(w, `{"error":{"code":"resource_missing"}}`, http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
}

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/payledger/payledger/eventstore"
)

// FuzzWebhook drives the webhook handler with arbitrary bodies and provider
// names behind a provider that verifies everything, so the fuzzer reaches
// parsing, validation and the command path. Whatever comes in, the handler
// must not panic, must answer JSON the OpenAPI document allows, and must
// answer 5xx only when the store failed (then exactly 503). The seed corpus is in testdata/fuzz/FuzzWebhook.
func FuzzWebhook(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","type":"payment_intent.succeeded","events":[{"kind":"succeeded","payment":"pi_1","amount":100,"currency":"usd","at":1700000000}]}`), false, fakeName)
	f.Add([]byte(`{"id":"evt_2","type":"x","events":[{"kind":"created","payment":"pi_1"},{"kind":"failed","payment":"pi_2","sub":"s"}]}`), true, fakeName)
	f.Add([]byte(`{"id":"evt_3"}`), false, "paypal")
	f.Add([]byte("\x00\xff"), false, fakeName)

	f.Fuzz(func(t *testing.T, body []byte, storeDown bool, provider string) {
		store := newMemStore()
		if storeDown {
			store.AppendFn = func(context.Context, string, eventstore.ExpectedRevision, []eventstore.EventData) (eventstore.AppendResult, error) {
				return eventstore.AppendResult{}, errors.New("postgres: connection refused")
			}
		}
		p := newFakepay(fakeSecret)
		p.VerifyFn = func(context.Context, http.Header, url.Values, []byte, time.Time) error { return nil }
		srv, err := NewServer(Config{Now: func() time.Time { return testNow }, Logger: slog.New(slog.DiscardHandler)},
			Deps{Store: store, Payments: &fakeReader{}, Ledger: &fakeLedger{}, Providers: []Provider{p}})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/webhooks/x", bytes.NewReader(body))
		req.URL.Path = "/webhooks/" + provider
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		checkContract(t, req, rec.Code, rec.Header(), rec.Body.Bytes())

		switch {
		case rec.Code == http.StatusServiceUnavailable && storeDown:
		case rec.Code >= 500:
			t.Fatalf("status %d (store down %v): %s", rec.Code, storeDown, rec.Body)
		}
		if rec.Code == http.StatusMovedPermanently { // mux cleaning a path like /webhooks/../x
			return
		}
		if !json.Valid(rec.Body.Bytes()) || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("status %d: not a JSON answer: %q", rec.Code, rec.Body)
		}
		if rec.Code == http.StatusOK && !storeDown {
			var out webhookResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			if out.Outcome == outcomeAccepted && len(store.appendCalls()) == 0 {
				t.Fatalf("accepted without an append: %s", rec.Body)
			}
		}
	})
}

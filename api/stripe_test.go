package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/stripe"
)

// The signing secrets of the Stripe tests: a rotation is in progress, so
// deliveries signed with either must verify.
const (
	stripeSecret    = "whsec_api_test_N3wS3cr3t"
	stripeOldSecret = "whsec_api_test_0ldS3cr3t"
	stripePayment   = "pi_3QxApi2eZvKYlo2C0pAy-M_1"
)

func stripeFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "stripe", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func stripeWebhook(body []byte, sig string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", bytes.NewReader(body))
	if sig != "" {
		req.Header.Set(stripe.Header, sig)
	}
	return req
}

// TestStripeWebhooks runs the real Stripe adapter behind the server, with
// live-traffic settings (default tolerance against the server clock), over
// the signed fixtures in testdata/stripe.
func TestStripeWebhooks(t *testing.T) {
	live, err := stripe.New(stripe.Config{Secrets: []string{stripeOldSecret, stripeSecret}})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t)
	env.deps.Providers = []Provider{live}
	srv := env.server(t)
	created := stripeFixture(t, "payment_intent.created.json")
	succeeded := stripeFixture(t, "payment_intent.succeeded.json")
	refunded := stripeFixture(t, "charge.refunded.json")
	sign := func(body []byte) string { return stripe.Sign(body, stripeSecret, testNow) }

	tests := []struct {
		name        string
		req         *http.Request
		wantStatus  int
		wantOutcome string
	}{
		{"created", stripeWebhook(created, sign(created)), 200, "accepted"},
		{"succeeded, signed with the old secret", stripeWebhook(succeeded, stripe.Sign(succeeded, stripeOldSecret, testNow)), 200, "accepted"},
		{"refunded", stripeWebhook(refunded, sign(refunded)), 200, "accepted"},
		{"succeeded redelivered, signed afresh", stripeWebhook(succeeded, stripe.Sign(succeeded, stripeSecret, testNow.Add(time.Minute))), 200, "duplicate"},
		{"untracked type", stripeWebhook(stripeFixture(t, "customer.created.json"), sign(stripeFixture(t, "customer.created.json"))), 200, "ignored"},
		{"forged", stripeWebhook(succeeded, stripe.Sign(succeeded, "whsec_attacker", testNow)), 400, ""},
		{"stale", stripeWebhook(succeeded, stripe.Sign(succeeded, stripeSecret, testNow.Add(-time.Hour))), 400, ""},
		{"unsigned", stripeWebhook(succeeded, ""), 400, ""},
		{"malformed header", stripeWebhook(succeeded, "t=abc,v1=zz"), 400, ""},
		{"tampered body", stripeWebhook(bytes.Replace(succeeded, []byte("5000"), []byte("9000"), 1), sign(succeeded)), 400, ""},
		{"signed but wrong field type", stripeWebhook(stripeFixture(t, "payment_intent.succeeded.bad_amount.json"),
			sign(stripeFixture(t, "payment_intent.succeeded.bad_amount.json"))), 400, ""},
		{"signed but truncated", stripeWebhook(stripeFixture(t, "truncated.json"), sign(stripeFixture(t, "truncated.json"))), 400, ""},
	}
	for _, tc := range tests { // in order: the stream builds up
		res := serve(t, srv, tc.req)
		if res.status != tc.wantStatus || (tc.wantOutcome != "" && res.body["outcome"] != tc.wantOutcome) {
			t.Errorf("%s: got %d %s, want %d %s", tc.name, res.status, res.raw, tc.wantStatus, tc.wantOutcome)
		}
		if tc.wantStatus == 400 && res.errorCode() != "invalid" {
			t.Errorf("%s: code %q", tc.name, res.errorCode())
		}
		if tc.wantOutcome == "accepted" && res.body["stream"] != "payment-stripe-"+stripePayment {
			t.Errorf("%s: stream %v", tc.name, res.body["stream"])
		}
	}
	if n := len(env.store.appendCalls()); n != 4 {
		t.Errorf("appends = %d, want 4 (3 new, 1 duplicate)", n)
	}

	t.Run("auditor re-verifies the stored deliveries", func(t *testing.T) {
		auditStoredDeliveries(t, srv, [][]byte{created, succeeded, refunded})
	})
}

// auditStoredDeliveries reads the payment's events as an auditor would and
// re-verifies each stored delivery with the Stripe adapter, tolerance off
// (the signatures are old by now, by design), from the API's answer alone.
func auditStoredDeliveries(t *testing.T, srv http.Handler, bodies [][]byte) {
	auditor, err := stripe.New(stripe.Config{Secrets: []string{stripeOldSecret, stripeSecret}, Tolerance: -1})
	if err != nil {
		t.Fatal(err)
	}
	res := serve(t, srv, get("/v1/payments/stripe/"+stripePayment+"/events", readToken))
	if res.status != 200 {
		t.Fatalf("events: %d %s", res.status, res.raw)
	}
	var body struct {
		Events []eventView `json:"events"`
	}
	if err := json.Unmarshal(res.raw, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Events) != len(bodies) {
		t.Fatalf("events = %d, want %d", len(body.Events), len(bodies))
	}
	wantStatus := []domain.Status{domain.StatusPending, domain.StatusConfirmed, domain.StatusPartiallyRefunded}
	for i, e := range body.Events {
		raw, err := base64.StdEncoding.DecodeString(e.Metadata.RawBody)
		if err != nil || !bytes.Equal(raw, bodies[i]) {
			t.Errorf("event %d: raw body differs from the delivery (%v)", i, err)
		}
		h := http.Header{}
		h.Set(stripe.Header, e.Metadata.SignatureHeader)
		if err := auditor.Verify(t.Context(), h, nil, raw, testNow.AddDate(1, 0, 0)); err != nil {
			t.Errorf("event %d: stored delivery does not re-verify: %v", i, err)
		}
		if e.StateAfter.Status != wantStatus[i] {
			t.Errorf("event %d: state_after.status = %s, want %s", i, e.StateAfter.Status, wantStatus[i])
		}
	}
	last := body.Events[len(body.Events)-1].StateAfter
	if last.Amount != 5000 || last.AmountCaptured != 5000 || last.AmountRefunded != 1500 || last.Currency != "USD" || last.EventCount != 3 {
		t.Errorf("final state = %+v", last)
	}
}

package stripe

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

const (
	testKey  = "sk_test_51Qx-status"
	testPI   = "pi_3QxStatus_a-1"
	fetchedT = "2026-01-02T03:04:05Z"
)

// fakeAPI is a fake Stripe API: it checks credentials, the pinned version
// and the expand parameter, then answers each path from a script (the last
// answer repeats) and records the calls.
type fakeAPI struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	answers map[string][]answer // by path
	calls   map[string]int
}

type answer struct {
	status     int
	body       string
	retryAfter string
	sleep      time.Duration
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, answers: map[string][]answer{}, calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) on(path string, answers ...answer) { f.answers[path] = answers }

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := f.calls[r.URL.Path]
	f.calls[r.URL.Path]++
	script := f.answers[r.URL.Path]
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Stripe-Version") != DefaultAPIVersion {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}`, http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/v1/payment_intents/") && r.URL.Query()["expand[]"][0] != "latest_charge" {
		http.Error(w, "latest_charge not expanded", http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/v1/disputes" && r.URL.Query().Get("payment_intent") == "" {
		http.Error(w, "disputes not filtered by payment intent", http.StatusBadRequest)
		return
	}
	if len(script) == 0 {
		http.Error(w, `{"error":{"code":"resource_missing"}}`, http.StatusNotFound)
		return
	}
	a := script[min(n, len(script)-1)]
	if a.sleep > 0 {
		select {
		case <-time.After(a.sleep):
		case <-r.Context().Done():
			return
		}
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

func (f *fakeAPI) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeAPI) client(t *testing.T) *StatusClient {
	t.Helper()
	now, _ := time.Parse(time.RFC3339, fetchedT)
	c, err := NewStatusClient(StatusConfig{SecretKey: testKey, Options: rest.Options{BaseURL: f.srv.URL, Timeout: 200 * time.Millisecond,
		MaxAttempts: 2, Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// intentJSON renders a PaymentIntent answer; charge is the latest_charge
// JSON value ("null", a quoted ID or an object).
func intentJSON(status string, amount, received int64, extra, charge string) string {
	return fmt.Sprintf(`{"id":%q,"object":"payment_intent","status":%q,"amount":%d,"amount_received":%d,`+
		`"currency":"brl",%s"latest_charge":%s,"metadata":{}}`, testPI, status, amount, received, extra, charge)
}

func chargeJSON(captured, refunded int64, fullyRefunded, disputed bool) string {
	return fmt.Sprintf(`{"id":"ch_3QxStatus","object":"charge","amount":2000,"amount_captured":%d,"amount_refunded":%d,`+
		`"captured":true,"currency":"brl","refunded":%t,"disputed":%t,"payment_intent":%q}`,
		captured, refunded, fullyRefunded, disputed, testPI)
}

func disputesJSON(statuses ...string) string {
	items := make([]string, len(statuses))
	for i, s := range statuses {
		items[i] = fmt.Sprintf(`{"id":"dp_%d","object":"dispute","status":%q}`, i, s)
	}
	return `{"object":"list","data":[` + strings.Join(items, ",") + `],"has_more":false}`
}

func TestFetchStatusMapping(t *testing.T) {
	const piPath, dpPath = "/v1/payment_intents/" + testPI, "/v1/disputes"
	ok := func(body string) answer { return answer{status: 200, body: body} }
	tests := []struct {
		name         string
		intent       string
		disputes     string // "" when the disputes list must not be fetched
		wantStatus   domain.Status
		wantDetail   string
		wantCaptured int64
		wantRefunded int64
	}{
		{name: "fresh requires_payment_method", intent: intentJSON("requires_payment_method", 2000, 0, "", "null"),
			wantStatus: domain.StatusPending},
		{name: "requires_payment_method after a failed attempt",
			intent:     intentJSON("requires_payment_method", 2000, 0, `"last_payment_error":{"code":"card_declined","type":"card_error"},`, `"ch_3QxFailed"`),
			wantStatus: domain.StatusFailed, wantDetail: "card_declined"},
		{name: "failed attempt without a code",
			intent:     intentJSON("requires_payment_method", 2000, 0, `"last_payment_error":{"type":"api_error"},`, "null"),
			wantStatus: domain.StatusFailed, wantDetail: "payment_error"},
		{name: "requires_confirmation", intent: intentJSON("requires_confirmation", 2000, 0, "", "null"), wantStatus: domain.StatusPending},
		{name: "requires_action", intent: intentJSON("requires_action", 2000, 0, "", "null"), wantStatus: domain.StatusAwaitingConfirmation},
		{name: "processing", intent: intentJSON("processing", 2000, 0, "", "null"), wantStatus: domain.StatusAwaitingConfirmation},
		{name: "requires_capture", intent: intentJSON("requires_capture", 2000, 0, "", chargeJSON(0, 0, false, false)),
			wantStatus: domain.StatusAuthorized},
		{name: "canceled", intent: intentJSON("canceled", 2000, 0, "", "null"), wantStatus: domain.StatusCancelled},
		{name: "succeeded", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, false)),
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000},
		{name: "succeeded, charge not expanded", intent: intentJSON("succeeded", 2000, 2000, "", `"ch_3QxStatus"`),
			wantStatus: domain.StatusConfirmed, wantCaptured: 2000},
		{name: "partially refunded", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 500, false, false)),
			wantStatus: domain.StatusPartiallyRefunded, wantCaptured: 2000, wantRefunded: 500},
		{name: "fully refunded", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 2000, true, false)),
			wantStatus: domain.StatusRefunded, wantCaptured: 2000, wantRefunded: 2000},
		{name: "partial capture fully refunded", intent: intentJSON("succeeded", 2000, 1500, "", chargeJSON(1500, 1500, true, false)),
			wantStatus: domain.StatusRefunded, wantCaptured: 1500, wantRefunded: 1500},
		{name: "open dispute", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, true)),
			disputes: disputesJSON("needs_response"), wantStatus: domain.StatusDisputed, wantDetail: "dispute_needs_response", wantCaptured: 2000},
		// An inquiry withholds nothing: the payment stays as its refunds say.
		{name: "inquiry under review", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, true)),
			disputes: disputesJSON("warning_under_review"), wantStatus: domain.StatusConfirmed, wantDetail: "dispute_warning_under_review", wantCaptured: 2000},
		{name: "inquiry needing a response", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 500, false, true)),
			disputes: disputesJSON("warning_needs_response"), wantStatus: domain.StatusPartiallyRefunded, wantDetail: "dispute_warning_needs_response",
			wantCaptured: 2000, wantRefunded: 500},
		{name: "lost dispute is a chargeback", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, true)),
			disputes: disputesJSON("lost", "won"), wantStatus: domain.StatusChargeback, wantDetail: "dispute_lost", wantCaptured: 2000},
		{name: "won dispute after a partial refund", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 300, false, true)),
			disputes: disputesJSON("won"), wantStatus: domain.StatusPartiallyRefunded, wantDetail: "dispute_won", wantCaptured: 2000, wantRefunded: 300},
		{name: "disputed charge without a listed dispute", intent: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, true)),
			disputes: disputesJSON(), wantStatus: domain.StatusDisputed, wantDetail: "dispute_unknown", wantCaptured: 2000},
		{name: "unknown status is left for review", intent: intentJSON("requires_teleport", 2000, 0, "", "null"),
			wantStatus: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			api.on(piPath, ok(tt.intent))
			if tt.disputes != "" {
				api.on(dpPath, ok(tt.disputes))
			}
			got, err := api.client(t).FetchStatus(t.Context(), testPI)
			if err != nil {
				t.Fatal(err)
			}
			want := domain.PaymentStatusObserved{
				Meta: domain.Meta{Provider: "stripe", ProviderEventID: got.ProviderEventID, ProviderEventType: "api.payment_intent",
					ProviderPaymentID: testPI, OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
				Status: tt.wantStatus, ProviderStatus: providerStatus(tt.intent), ProviderStatusDetail: tt.wantDetail,
				Amount: 2000, AmountCaptured: tt.wantCaptured, AmountRefunded: tt.wantRefunded, Currency: "BRL",
			}
			if *got != want {
				t.Errorf("observation\n got %+v\nwant %+v", *got, want)
			}
			if !strings.HasPrefix(got.ProviderEventID, "obs_") {
				t.Errorf("ProviderEventID = %q, want a content-derived obs_ ID", got.ProviderEventID)
			}
			if n := api.count(dpPath); (n > 0) != (tt.disputes != "") {
				t.Errorf("disputes fetched %d times, want fetched = %v", n, tt.disputes != "")
			}
		})
	}
}

// providerStatus extracts the status the fixture JSON carries.
func providerStatus(intent string) string {
	_, rest, _ := strings.Cut(intent, `"status":"`)
	s, _, _ := strings.Cut(rest, `"`)
	return s
}

// TestFetchStatusObservationIDs: the same state fetched twice is one fact;
// any change a payment can go through is a new one.
func TestFetchStatusObservationIDs(t *testing.T) {
	base := intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, false))
	states := map[string]string{
		"requires_action":         intentJSON("requires_action", 2000, 0, "", "null"),
		"failed attempt":          intentJSON("requires_payment_method", 2000, 0, `"last_payment_error":{"code":"card_declined"},`, "null"),
		"fresh payment method":    intentJSON("requires_payment_method", 2000, 0, "", "null"),
		"partially refunded":      intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 500, false, false)),
		"refunded more":           intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 700, false, false)),
		"another charge":          strings.Replace(base, "ch_3QxStatus", "ch_3QxOther", 1),
		"less received":           intentJSON("succeeded", 2000, 1500, "", chargeJSON(1500, 0, false, false)),
		"disputed":                intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, true)),
		"succeeded (again, same)": base,
	}
	fetch := func(body string) string {
		api := newFakeAPI(t)
		api.on("/v1/payment_intents/"+testPI, answer{status: 200, body: body})
		api.on("/v1/disputes", answer{status: 200, body: disputesJSON("needs_response")})
		got, err := api.client(t).FetchStatus(t.Context(), testPI)
		if err != nil {
			t.Fatal(err)
		}
		return got.ProviderEventID
	}
	first := fetch(base)
	seen := map[string]string{first: "succeeded"}
	for name, body := range states {
		id := fetch(body)
		if name == "succeeded (again, same)" {
			if id != first {
				t.Errorf("same state fetched twice: IDs %s and %s", first, id)
			}
			continue
		}
		if other, dup := seen[id]; dup {
			t.Errorf("states %q and %q share observation ID %s", name, other, id)
		}
		seen[id] = name
	}
}

func TestFetchStatusErrors(t *testing.T) {
	const piPath = "/v1/payment_intents/" + testPI
	okBody := intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, false))
	tests := []struct {
		name      string
		id        string
		key       string
		answers   []answer
		disputes  []answer
		wantErr   bool
		wantKind  domain.Kind
		notFound  bool
		wantCalls int
		restErr   bool // the error names provider and payment (*rest.Error)
	}{
		{name: "404 is an unknown payment", answers: []answer{{status: 404, body: `{"error":{"code":"resource_missing"}}`}},
			wantErr: true, wantKind: domain.KindNotFound, notFound: true, wantCalls: 1, restErr: true},
		{name: "429 honours Retry-After", answers: []answer{{status: 429, retryAfter: "1"}, {status: 200, body: okBody}},
			wantCalls: 2},
		{name: "5xx then ok", answers: []answer{{status: 503}, {status: 200, body: okBody}}, wantCalls: 2},
		{name: "5xx outage", answers: []answer{{status: 500, body: "oops"}},
			wantErr: true, wantKind: domain.KindUnavailable, wantCalls: 2, restErr: true},
		{name: "attempt timeout is retried", answers: []answer{{status: 200, body: okBody, sleep: 2 * time.Second}, {status: 200, body: okBody}},
			wantCalls: 2},
		{name: "wrong key is not retried", key: "sk_test_wrong", answers: []answer{{status: 200, body: okBody}},
			wantErr: true, wantKind: domain.KindUnauthorized, wantCalls: 1, restErr: true},
		{name: "malformed answer", answers: []answer{{status: 200, body: `{"id":`}},
			wantErr: true, wantKind: domain.KindInvalid, wantCalls: 1, restErr: true},
		{name: "another payment intent", answers: []answer{{status: 200, body: strings.Replace(okBody, testPI, "pi_other", 1)}},
			wantErr: true, wantKind: domain.KindInvalid, wantCalls: 1},
		{name: "no amount", answers: []answer{{status: 200, body: strings.Replace(okBody, `"amount":2000,`, "", 1)}},
			wantErr: true, wantKind: domain.KindInvalid, wantCalls: 1},
		{name: "bad currency", answers: []answer{{status: 200, body: strings.Replace(okBody, `"currency":"brl"`, `"currency":"reais"`, 1)}},
			wantErr: true, wantKind: domain.KindInvalid, wantCalls: 1},
		{name: "disputes list outage", answers: []answer{{status: 200, body: intentJSON("succeeded", 2000, 2000, "", chargeJSON(2000, 0, false, true))}},
			disputes: []answer{{status: 502}}, wantErr: true, wantKind: domain.KindUnavailable, wantCalls: 1, restErr: true},
		{name: "empty ID", id: "-", wantErr: true, wantKind: domain.KindInvalid},
		{name: "ID with a space", id: "pi_1 2", wantErr: true, wantKind: domain.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			api.on(piPath, tt.answers...)
			api.on("/v1/disputes", tt.disputes...)
			c := api.client(t)
			if tt.key != "" {
				var err error
				c, err = NewStatusClient(StatusConfig{SecretKey: tt.key, Options: rest.Options{BaseURL: api.srv.URL, MaxAttempts: 2}})
				if err != nil {
					t.Fatal(err)
				}
			}
			id := testPI
			if tt.id == "-" {
				id = ""
			} else if tt.id != "" {
				id = tt.id
			}
			got, err := c.FetchStatus(t.Context(), id)
			if (err != nil) != tt.wantErr {
				t.Fatalf("FetchStatus = %+v, %v; want error %v", got, err, tt.wantErr)
			}
			if n := api.count(piPath); n != tt.wantCalls {
				t.Errorf("payment intent fetched %d times, want %d", n, tt.wantCalls)
			}
			if err == nil {
				if got.Status != domain.StatusConfirmed {
					t.Errorf("status = %q, want confirmed", got.Status)
				}
				return
			}
			if k := domain.KindOf(err); k != tt.wantKind {
				t.Errorf("kind = %v, want %v (%v)", k, tt.wantKind, err)
			}
			if errors.Is(err, domain.ErrUnknownPayment) != tt.notFound {
				t.Errorf("errors.Is(err, ErrUnknownPayment) = %v, want %v", !tt.notFound, tt.notFound)
			}
			var re *rest.Error
			if errors.As(err, &re) != tt.restErr || (tt.restErr && (re.Provider != "stripe" || re.PaymentID != id)) {
				t.Errorf("error %v: want a *rest.Error naming stripe and %s = %v", err, id, tt.restErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the secret key: %v", err)
			}
		})
	}
}

func TestNewStatusClient(t *testing.T) {
	tests := []struct {
		name    string
		cfg     StatusConfig
		wantErr string
	}{
		{name: "defaults", cfg: StatusConfig{SecretKey: testKey}},
		{name: "no key", cfg: StatusConfig{}, wantErr: "no secret key"},
		{name: "key with a newline", cfg: StatusConfig{SecretKey: testKey + "\n"}, wantErr: "whitespace"},
		{name: "bad base URL", cfg: StatusConfig{SecretKey: testKey, Options: rest.Options{BaseURL: "api.stripe.com"}}, wantErr: "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewStatusClient(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || c.Name() != ProviderName {
					t.Fatalf("NewStatusClient = %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the secret key: %v", err)
			}
		})
	}
}

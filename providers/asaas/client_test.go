package asaas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

const (
	testAPIKey    = "$aact_YTU5YTE0M2M2N2I4MTliNzk0YTI5N2U5MzdjNWZmNDQ6OjAwMDAwMDAwMDAwMDAwNjA4NTY6OiRhYWNoXzEx"
	testUserAgent = "payledger-test/1.0"
)

var fetchedAt = time.Date(2024, 6, 14, 12, 0, 0, 0, time.FixedZone("BRT", -3*3600))

// answer is one scripted reply of the fake API.
type answer struct {
	status     int
	retryAfter string
	body       []byte
	hang       bool // block until the client gives up
}

// fakeAPI is an httptest Asaas API: it checks the request as Asaas would,
// then plays the script for the payment (the last answer repeats).
type fakeAPI struct {
	t      *testing.T
	srv    *httptest.Server
	ua     string
	mu     sync.Mutex
	script map[string][]answer // escaped path → answers
	calls  map[string]int
}

func newFakeAPI(t *testing.T, ua string) *fakeAPI {
	f := &fakeAPI{t: t, ua: ua, script: map[string][]answer{}, calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	f.mu.Lock()
	answers, scripted := f.script[path]
	i := f.calls[path]
	f.calls[path]++
	f.mu.Unlock()
	if r.Method != http.MethodGet || r.Header.Get("access_token") != testAPIKey {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"code":"invalid_access_token","description":"A chave de API fornecida é inválida"}]}`))
		return
	}
	if r.Header.Get("User-Agent") != f.ua {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if !scripted {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"errors":[{"code":"invalid_object","description":"Cobrança não encontrada."}]}`))
		return
	}
	a := answers[min(i, len(answers)-1)]
	if a.hang {
		<-r.Context().Done()
		return
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

func (f *fakeAPI) set(id string, answers ...answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script["/v3/payments/"+id] = answers
}

func (f *fakeAPI) callsFor(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls["/v3/payments/"+id]
}

// apiPayment returns testdata/api/payment.json with edits applied to its
// top-level keys (remove{} deletes).
func apiPayment(t *testing.T, e edits) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/api/payment.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	for k, v := range e {
		if _, ok := v.(remove); ok {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ok(body []byte) answer { return answer{status: http.StatusOK, body: body} }

func newClient(t *testing.T, f *fakeAPI, cfg StatusConfig) *StatusClient {
	t.Helper()
	cfg.BaseURL = f.srv.URL
	if cfg.APIKey == "" {
		cfg.APIKey = testAPIKey
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return fetchedAt }
	}
	c, err := NewStatusClient(cfg)
	if err != nil {
		t.Fatalf("NewStatusClient: %v", err)
	}
	return c
}

func TestFetchStatusEveryStatus(t *testing.T) {
	f := newFakeAPI(t, testUserAgent)
	c := newClient(t, f, StatusConfig{Options: rest.Options{UserAgent: testUserAgent}})
	tests := []struct {
		status   string
		e        edits
		want     domain.Status
		detail   string
		captured int64
		refunded int64
	}{
		{status: "PENDING", want: domain.StatusAwaitingConfirmation},
		{status: "AWAITING_RISK_ANALYSIS", want: domain.StatusAwaitingConfirmation},
		{status: "OVERDUE", want: domain.StatusAwaitingConfirmation},
		{status: "DUNNING_REQUESTED", want: domain.StatusAwaitingConfirmation, detail: "dunning_requested"},
		{status: "AUTHORIZED", want: domain.StatusAuthorized},
		{status: "CONFIRMED", want: domain.StatusConfirmed, captured: 10000},
		{status: "RECEIVED", want: domain.StatusConfirmed, detail: "received", captured: 10000},
		{status: "RECEIVED_IN_CASH", want: domain.StatusConfirmed, detail: "received_in_cash", captured: 10000},
		{status: "DUNNING_RECEIVED", want: domain.StatusConfirmed, detail: "dunning_received", captured: 10000},
		{status: "REFUND_REQUESTED", want: domain.StatusConfirmed, detail: "refund_requested", captured: 10000},
		{status: "REFUND_IN_PROGRESS", want: domain.StatusConfirmed, detail: "refund_in_progress", captured: 10000},
		{status: "REFUNDED", want: domain.StatusRefunded, captured: 10000, refunded: 10000},
		{status: "CHARGEBACK_REQUESTED", want: domain.StatusChargeback, captured: 10000},
		{status: "CHARGEBACK_DISPUTE", want: domain.StatusDisputed, captured: 10000},
		{status: "AWAITING_CHARGEBACK_REVERSAL", want: domain.StatusDisputed, captured: 10000},
		{status: "BLOCKED_BY_A_NEW_RULE", want: "asaas:BLOCKED_BY_A_NEW_RULE"},
		{status: "PENDING", e: edits{"deleted": true}, want: domain.StatusCancelled, detail: "deleted"},
		{status: "RECEIVED", e: edits{"refunds": refunds("DONE", "25.50", "PENDING", "10")},
			want: domain.StatusPartiallyRefunded, detail: "received", captured: 10000, refunded: 2550},
		{status: "RECEIVED", e: edits{"refunds": refunds("DONE", "60", "DONE", "40")},
			want: domain.StatusRefunded, detail: "received", captured: 10000, refunded: 10000},
	}
	for i, tt := range tests {
		id := "pay_" + strings.ToLower(tt.status) + "_" + string(rune('a'+i))
		t.Run(id, func(t *testing.T) {
			e := edits{"id": id, "status": tt.status}
			for k, v := range tt.e {
				e[k] = v
			}
			f.set(id, ok(apiPayment(t, e)))
			got, err := c.FetchStatus(context.Background(), id)
			if err != nil {
				t.Fatalf("FetchStatus() error = %v", err)
			}
			want := &domain.PaymentStatusObserved{
				Meta: domain.Meta{Provider: "asaas", ProviderEventType: "api.payment", ProviderPaymentID: id,
					OccurredAt: fetchedAt.UTC(),
					ProviderEventID: providers.ObservationID(id, tt.status, tt.detail,
						strconv.FormatInt(tt.refunded, 10), "", "10000", "fee", "549")},
				Status: tt.want, ProviderStatus: tt.status, ProviderStatusDetail: tt.detail,
				Amount: 10000, AmountCaptured: tt.captured, AmountRefunded: tt.refunded, Currency: "BRL",
				Fee: 549, FeeCurrency: "BRL", FeeSource: "netValue"} // value 100, netValue 94.51
			if *got != *want {
				t.Fatalf("FetchStatus() =\n %+v\nwant\n %+v", *got, *want)
			}
			if got.OccurredAt.Location() != time.UTC {
				t.Errorf("OccurredAt %v is not UTC", got.OccurredAt)
			}
		})
	}
}

// TestFetchStatusObservationID: the same state fetched twice is one fact;
// any change of status, refunds or value is a new one.
func TestFetchStatusObservationID(t *testing.T) {
	f := newFakeAPI(t, "payledger")
	now := fetchedAt
	c := newClient(t, f, StatusConfig{Options: rest.Options{Now: func() time.Time { now = now.Add(time.Minute); return now }}})
	const id = "pay_080225913252"
	fetch := func(e edits) *domain.PaymentStatusObserved {
		t.Helper()
		f.set(id, ok(apiPayment(t, e)))
		obs, err := c.FetchStatus(context.Background(), id)
		if err != nil {
			t.Fatalf("FetchStatus: %v", err)
		}
		return obs
	}
	first := fetch(nil)
	again := fetch(nil)
	if first.ProviderEventID != again.ProviderEventID || first.OccurredAt.Equal(again.OccurredAt) {
		t.Fatalf("same state: IDs %s, %s at %v, %v", first.ProviderEventID, again.ProviderEventID, first.OccurredAt, again.OccurredAt)
	}
	if !strings.HasPrefix(first.ProviderEventID, "obs_") {
		t.Fatalf("ProviderEventID %q", first.ProviderEventID)
	}
	seen := map[string]string{first.ProviderEventID: "first"}
	for name, e := range map[string]edits{
		"status":        {"status": "CONFIRMED"},
		"refund":        {"refunds": refunds("DONE", "1.00")},
		"bigger refund": {"refunds": refunds("DONE", "2.00")},
		"value":         {"value": json.Number("120.00")},
		"deleted":       {"deleted": true},
	} {
		id := fetch(e).ProviderEventID
		if prev, dup := seen[id]; dup {
			t.Errorf("%s: same ID as %s", name, prev)
		}
		seen[id] = name
	}
}

func TestFetchStatusErrors(t *testing.T) {
	const id = "pay_080225913252"
	tests := []struct {
		name      string
		id        string
		answers   []answer // nil: not scripted (404)
		cfg       StatusConfig
		wantKind  domain.Kind
		wantIs    error
		wantCalls int
		wantHTTP  int // rest.Error.Status; -1: not a *rest.Error
		wantMsg   string
	}{
		{name: "404", id: id, wantKind: domain.KindNotFound, wantIs: domain.ErrUnknownPayment, wantCalls: 1, wantHTTP: 404},
		{name: "5xx outage", id: id, answers: []answer{{status: 503, body: []byte("<html>down</html>")}},
			cfg: StatusConfig{Options: rest.Options{MaxAttempts: 2}}, wantKind: domain.KindUnavailable, wantCalls: 2, wantHTTP: 503},
		{name: "500 then 502 then 504", id: id, answers: []answer{{status: 500}, {status: 502}, {status: 504}},
			cfg: StatusConfig{Options: rest.Options{MaxAttempts: 3}}, wantKind: domain.KindUnavailable, wantCalls: 3, wantHTTP: 504},
		{name: "429 with a Retry-After too long", id: id, answers: []answer{{status: 429, retryAfter: "3600"}},
			cfg: StatusConfig{Options: rest.Options{MaxAttempts: 3}}, wantKind: domain.KindUnavailable, wantCalls: 1, wantHTTP: 429},
		{name: "timeout", id: id, answers: []answer{{hang: true}},
			cfg: StatusConfig{Options: rest.Options{MaxAttempts: 1, Timeout: 50 * time.Millisecond}}, wantKind: domain.KindUnavailable, wantCalls: 1, wantHTTP: 0},
		{name: "wrong API key is not retried", id: id, answers: []answer{ok(apiPayment(t, nil))},
			cfg: StatusConfig{APIKey: "$aact_revoked"}, wantKind: domain.KindUnauthorized, wantCalls: 1, wantHTTP: 401},
		{name: "refused User-Agent is not retried", id: id, answers: []answer{ok(apiPayment(t, nil))},
			cfg: StatusConfig{Options: rest.Options{UserAgent: "someone-else"}}, wantKind: domain.KindUnauthorized, wantCalls: 1, wantHTTP: 403},
		{name: "not JSON", id: id, answers: []answer{ok([]byte("<html>"))}, wantKind: domain.KindInvalid, wantCalls: 1, wantHTTP: 200},
		{name: "another payment", id: id, answers: []answer{ok(apiPayment(t, edits{"id": "pay_other"}))},
			wantKind: domain.KindInvalid, wantCalls: 1, wantHTTP: -1, wantMsg: `the answer is about payment "pay_other"`},
		{name: "no status", id: id, answers: []answer{ok(apiPayment(t, edits{"status": remove{}}))},
			wantKind: domain.KindInvalid, wantCalls: 1, wantHTTP: -1, wantMsg: "the answer has no status"},
		{name: "inexact value", id: id, answers: []answer{ok(apiPayment(t, edits{"value": json.Number("10.001")}))},
			wantKind: domain.KindInvalid, wantCalls: 1, wantHTTP: -1, wantMsg: "payment.value"},
		{name: "empty id", id: "", wantKind: domain.KindInvalid, wantHTTP: -1, wantMsg: "payment id is missing"},
		{name: "id with a space", id: "pay_1 2", wantKind: domain.KindInvalid, wantHTTP: -1, wantMsg: "payment id contains whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, "payledger")
			if tt.answers != nil {
				f.set(tt.id, tt.answers...)
			}
			c := newClient(t, f, tt.cfg)
			obs, err := c.FetchStatus(context.Background(), tt.id)
			if err == nil {
				t.Fatalf("FetchStatus() = %+v, want an error", obs)
			}
			if domain.KindOf(err) != tt.wantKind || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
				t.Fatalf("FetchStatus() error = %v (kind %v), want kind %v", err, domain.KindOf(err), tt.wantKind)
			}
			if got := f.callsFor(tt.id); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
			if !strings.Contains(err.Error(), "asaas") || (tt.id != "" && !strings.Contains(err.Error(), tt.id)) {
				t.Errorf("error %q does not name the provider and payment", err)
			}
			if tt.wantMsg != "" && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
			var re *rest.Error
			switch {
			case tt.wantHTTP < 0 && errors.As(err, &re):
				t.Errorf("error %v is a *rest.Error", err)
			case tt.wantHTTP >= 0 && (!errors.As(err, &re) || re.Status != tt.wantHTTP || re.PaymentID != tt.id || re.Provider != "asaas"):
				t.Errorf("error %#v, want a *rest.Error with HTTP %d", err, tt.wantHTTP)
			}
		})
	}
}

// TestFetchStatusRetryAfter: a 429 is retried after the server's
// Retry-After, and the fetch succeeds.
func TestFetchStatusRetryAfter(t *testing.T) {
	const id = "pay_080225913252"
	f := newFakeAPI(t, "payledger")
	f.set(id, answer{status: 429, retryAfter: "1", body: []byte(`{"errors":[{"code":"rate_limit"}]}`)}, ok(apiPayment(t, nil)))
	c := newClient(t, f, StatusConfig{Options: rest.Options{MaxAttempts: 2}})
	obs, err := c.FetchStatus(context.Background(), id)
	if err != nil {
		t.Fatalf("FetchStatus() error = %v", err)
	}
	if obs.Status != domain.StatusConfirmed || f.callsFor(id) != 2 {
		t.Fatalf("status %s after %d calls, want confirmed after 2", obs.Status, f.callsFor(id))
	}
}

func TestFetchStatusEscapesID(t *testing.T) {
	const id = "pay_1/../x?y"
	f := newFakeAPI(t, "payledger")
	f.set("pay_1%2F..%2Fx%3Fy", ok(apiPayment(t, edits{"id": id})))
	c := newClient(t, f, StatusConfig{})
	obs, err := c.FetchStatus(context.Background(), id)
	if err != nil || obs.ProviderPaymentID != id {
		t.Fatalf("FetchStatus(%q) = %+v, %v", id, obs, err)
	}
}

func TestFetchStatusCancelled(t *testing.T) {
	const id = "pay_080225913252"
	f := newFakeAPI(t, "payledger")
	f.set(id, answer{status: 503})
	c := newClient(t, f, StatusConfig{Options: rest.Options{MaxAttempts: 10}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.FetchStatus(ctx, id); !errors.Is(err, context.Canceled) {
		t.Fatalf("FetchStatus(cancelled) error = %v, want context.Canceled", err)
	}
}

func TestNewStatusClient(t *testing.T) {
	tests := []struct {
		name    string
		cfg     StatusConfig
		wantErr string
	}{
		{name: "defaults", cfg: StatusConfig{APIKey: testAPIKey}},
		{name: "sandbox", cfg: StatusConfig{APIKey: testAPIKey, Options: rest.Options{BaseURL: "https://api-sandbox.asaas.com/"}}},
		{name: "no key", cfg: StatusConfig{}, wantErr: "no API key"},
		{name: "key with newline", cfg: StatusConfig{APIKey: testAPIKey + "\n"}, wantErr: "API key has leading or trailing whitespace"},
		{name: "user agent with space", cfg: StatusConfig{APIKey: testAPIKey, Options: rest.Options{UserAgent: " ua"}}, wantErr: "User-Agent"},
		{name: "bad base URL", cfg: StatusConfig{APIKey: testAPIKey, Options: rest.Options{BaseURL: "api.asaas.com"}}, wantErr: "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewStatusClient(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || c.Name() != "asaas" {
					t.Fatalf("NewStatusClient() = %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewStatusClient() error = %v, want it to mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "aact") {
				t.Errorf("error %q leaks the API key", err)
			}
		})
	}
}

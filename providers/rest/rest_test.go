package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// script serves the given statuses in order (the last one repeats), each
// with an optional Retry-After, and counts the calls.
func script(t *testing.T, steps ...step) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		s := steps[min(i, len(steps)-1)]
		if r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("User-Agent") != "payledger-test" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if s.sleep > 0 {
			time.Sleep(s.sleep)
		}
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(s.body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

type step struct {
	status     int
	body       string
	retryAfter string
	sleep      time.Duration
}

func client(t *testing.T, base string) *rest.Client {
	t.Helper()
	c, err := rest.New(rest.Config{Provider: "acme", MaxRetryAfter: 2 * time.Second,
		Options: rest.Options{BaseURL: base, Timeout: 200 * time.Millisecond, MaxAttempts: 3,
			RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond, UserAgent: "payledger-test"},
		Authorize: func(r *http.Request) { r.Header.Set("Authorization", "Bearer k") }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGetJSON(t *testing.T) {
	ok := step{status: 200, body: `{"id":"pay_1","amount":123.45}`}
	tests := []struct {
		name      string
		steps     []step
		wantCalls int32
		wantKind  domain.Kind
		wantErr   bool
		notFound  bool
	}{
		{name: "ok", steps: []step{ok}, wantCalls: 1},
		{name: "5xx then ok", steps: []step{{status: 503}, {status: 502}, ok}, wantCalls: 3},
		{name: "429 honours Retry-After", steps: []step{{status: 429, retryAfter: "1"}, ok}, wantCalls: 2},
		{name: "attempt timeout is retried", steps: []step{{status: 200, sleep: 400 * time.Millisecond}, ok}, wantCalls: 2},
		{name: "5xx until out of attempts", steps: []step{{status: 500, body: "boom"}}, wantCalls: 3, wantErr: true, wantKind: domain.KindUnavailable},
		{name: "Retry-After too long fails at once", steps: []step{{status: 429, retryAfter: "3600"}}, wantCalls: 1, wantErr: true, wantKind: domain.KindUnavailable},
		{name: "404 is an unknown payment", steps: []step{{status: 404, body: `{"message":"not found"}`}}, wantCalls: 1, wantErr: true, wantKind: domain.KindNotFound, notFound: true},
		{name: "401 is not retried", steps: []step{{status: 401}}, wantCalls: 1, wantErr: true, wantKind: domain.KindUnauthorized},
		{name: "403 is not retried", steps: []step{{status: 403}}, wantCalls: 1, wantErr: true, wantKind: domain.KindUnauthorized},
		{name: "other 4xx is internal", steps: []step{{status: 400}}, wantCalls: 1, wantErr: true, wantKind: domain.KindInternal},
		{name: "bad JSON", steps: []step{{status: 200, body: `{`}}, wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := script(t, tt.steps...)
			var out struct {
				ID     string      `json:"id"`
				Amount json.Number `json:"amount"`
			}
			start := time.Now()
			err := client(t, srv.URL).GetJSON(context.Background(), "/v1/payments/pay_1", "pay_1", &out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if err == nil {
				if out.ID != "pay_1" || out.Amount.String() != "123.45" {
					t.Errorf("decoded %+v", out)
				}
				if tt.name == "429 honours Retry-After" && time.Since(start) < time.Second {
					t.Errorf("did not wait for Retry-After")
				}
				return
			}
			var re *rest.Error
			if !errors.As(err, &re) || re.Provider != "acme" || re.PaymentID != "pay_1" {
				t.Errorf("error does not name provider and payment: %v", err)
			}
			if domain.KindOf(err) != tt.wantKind {
				t.Errorf("kind = %v, want %v (%v)", domain.KindOf(err), tt.wantKind, err)
			}
			if errors.Is(err, domain.ErrUnknownPayment) != tt.notFound {
				t.Errorf("errors.Is(ErrUnknownPayment) = %v", !tt.notFound)
			}
		})
	}
}

func TestGetJSONStopsOnCancel(t *testing.T) {
	srv, calls := script(t, step{status: 503})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := client(t, srv.URL).GetJSON(ctx, "/x", "pay_1", &struct{}{})
	if err == nil || calls.Load() > 1 {
		t.Errorf("cancelled call: err %v after %d calls", err, calls.Load())
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []rest.Config{{}, {Provider: "x"},
		{Provider: "x", Options: rest.Options{BaseURL: "ftp://h"}}, {Provider: "x", DefaultBaseURL: "ftp://h"},
		{Provider: "x", Options: rest.Options{BaseURL: "not a url"}}} {
		if _, err := rest.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

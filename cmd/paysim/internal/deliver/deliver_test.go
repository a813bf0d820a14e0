package deliver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/sign"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/providers/stripe"
)

// flakyLedger answers the first fail requests with status (or by hanging
// past the client's timeout when status is 0), then 200 accepted. It checks
// every attempt's Stripe signature, as the ledger would.
type flakyLedger struct {
	t      *testing.T
	fail   int
	status int
	okCode int
	secret string
	mu     sync.Mutex
	seen   int
	times  []time.Time
}

func (f *flakyLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p, err := stripe.New(stripe.Config{Secrets: []string{f.secret}})
	if err != nil {
		f.t.Error(err)
	}
	if err := p.Verify(r.Context(), r.Header, r.URL.Query(), body, time.Now()); err != nil {
		f.t.Errorf("attempt not signed as Stripe signs: %v", err)
	}
	f.mu.Lock()
	f.seen++
	n := f.seen
	f.times = append(f.times, time.Now())
	f.mu.Unlock()
	if n <= f.fail {
		if f.status == 0 {
			<-r.Context().Done() // hang until the client gives up
			return
		}
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try later"}}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.okCode)
	_, _ = w.Write([]byte(`{"outcome":"accepted"}`))
}

func TestDeliverRetries(t *testing.T) {
	tests := []struct {
		name         string
		provider     string
		fail, status int
		okCode       int
		attempts     int
		wantAcked    bool
		wantAttempts int
	}{
		{"first attempt", truth.Stripe, 0, 503, 200, 8, true, 1},
		{"503 three times", truth.Stripe, 3, 503, 200, 8, true, 4},
		{"500 and 429", truth.Stripe, 2, 429, 200, 8, true, 3},
		{"timeouts", truth.Stripe, 2, 0, 200, 8, true, 3},
		{"400 is retried too", truth.Stripe, 1, 400, 200, 8, true, 2},
		{"budget spent", truth.Stripe, 10, 503, 200, 4, false, 4},
		{"201 acknowledges Stripe", truth.Stripe, 0, 503, 201, 2, true, 1},
		{"Asaas wants exactly 200", truth.Asaas, 0, 503, 201, 3, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creds := sign.Secrets{Stripe: "whsec_test", AsaasToken: "tok"}
			fl := &flakyLedger{t: t, fail: tt.fail, status: tt.status, okCode: tt.okCode, secret: creds.Stripe}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.provider == truth.Asaas {
					w.WriteHeader(tt.okCode)
					fl.mu.Lock()
					fl.seen++
					fl.mu.Unlock()
					return
				}
				fl.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			d := &deliverer{client: srv.Client(), ledger: srv.URL, sign: sign.New(creds, nil),
				retry: Retry{Attempts: tt.attempts, Budget: 10 * time.Second, Base: 10 * time.Millisecond, Max: 40 * time.Millisecond, Timeout: 200 * time.Millisecond},
				slots: make(chan struct{}, 1), now: time.Now}
			p := &truth.Payment{Provider: tt.provider, ID: "pi_1"}
			w := &truth.Webhook{EventID: "evt_1", Body: []byte(`{"id":"evt_1"}`)}
			rec := d.deliver(context.Background(), p, w)
			if rec.Acked != tt.wantAcked || rec.Attempts != tt.wantAttempts {
				t.Errorf("acked %v after %d attempts, want %v after %d (last error %q)", rec.Acked, rec.Attempts, tt.wantAcked, tt.wantAttempts, rec.LastError)
			}
			fl.mu.Lock()
			defer fl.mu.Unlock()
			if fl.seen != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", fl.seen, tt.wantAttempts)
			}
			if rec.Acked && rec.Outcome != "accepted" && tt.provider == truth.Stripe {
				t.Errorf("outcome %q", rec.Outcome)
			}
		})
	}
}

func TestDeliverGivesUpOnTimeBudget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(srv.Close)
	// A fake clock: each reading advances a second, so the 3 s budget ends
	// the retries long before the 100 attempts.
	var mu sync.Mutex
	now := time.Unix(1_780_000_000, 0)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
	d := &deliverer{client: srv.Client(), ledger: srv.URL, sign: sign.New(sign.Secrets{Stripe: "s"}, nil),
		retry: Retry{Attempts: 100, Budget: 3 * time.Second, Base: time.Millisecond, Max: time.Millisecond, Timeout: time.Second},
		slots: make(chan struct{}, 1), now: clock}
	rec := d.deliver(context.Background(), &truth.Payment{Provider: truth.Stripe, ID: "pi_1"}, &truth.Webhook{EventID: "e", Body: []byte(`{}`)})
	if rec.Acked || rec.Attempts >= 100 || rec.Attempts < 1 {
		t.Errorf("acked %v after %d attempts; want given up by the time budget", rec.Acked, rec.Attempts)
	}
	if rec.LastError == "" {
		t.Error("no reason recorded")
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	r := Retry{Base: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		for range 50 {
			if got := r.backoff(n); got < want/2 || got > want {
				t.Fatalf("backoff(%d) = %s, want in [%s, %s]", n, got, want/2, want)
			}
		}
	}
}

package pagarme

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

const testSecretKey = "sk_test_abcdef0123456789"

// reply is one answer of the fake Pagar.me API.
type reply struct {
	status     int
	body       string
	retryAfter string
	sleep      time.Duration
}

// fakeAPI serves GET /core/v5/charges/{id} from a script (the last reply
// repeats) after checking the Basic credentials, and records the paths.
type fakeAPI struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	paths   []string
}

func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{replies: replies}
	wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte(testSecretKey+":"))
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.EscapedPath())
		rep := f.replies[min(len(f.paths), len(f.replies))-1]
		f.mu.Unlock()
		if r.Method != http.MethodGet || r.Header.Get("Authorization") != wantAuth {
			http.Error(w, `{"message":"Authorization has been denied for this request."}`, http.StatusUnauthorized)
			return
		}
		if rep.sleep > 0 {
			select {
			case <-time.After(rep.sleep):
			case <-r.Context().Done():
				return
			}
		}
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = w.Write([]byte(rep.body))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

func newStatusClient(t *testing.T, base, key string) *StatusClient {
	t.Helper()
	c, err := NewStatusClient(StatusConfig{SecretKey: key, Options: rest.Options{BaseURL: base + "/core/v5", Timeout: 200 * time.Millisecond,
		MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond, Now: func() time.Time { return t0 }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	paidCharge = `{"id":"ch_KjN7oWvTnCeGq3p1","code":"PED-1001","amount":15990,"paid_amount":15990,"status":"paid","currency":"BRL",` +
		`"payment_method":"credit_card","created_at":"2026-01-15T12:00:00Z","updated_at":"2026-01-15T12:00:05Z",` +
		`"last_transaction":{"id":"tran_1","status":"captured","amount":15990}}`
	refundedCharge = `{"id":"ch_KjN7oWvTnCeGq3p1","amount":15990,"paid_amount":15990,"canceled_amount":15990,"status":"canceled",` +
		`"currency":"BRL","updated_at":"2026-01-20T10:30:00.000Z","last_transaction":{"id":"tran_2","status":"refunded"}}`
	partialCharge = `{"id":"ch_KjN7oWvTnCeGq3p1","amount":15990,"paid_amount":15990,"canceled_amount":5000,"status":"paid",` +
		`"updated_at":"2026-01-18T09:15:00","last_transaction":{"status":"partial_refunded"}}`
	pendingNoUpdate = `{"id":"ch_KjN7oWvTnCeGq3p1","amount":15990,"status":"pending","last_transaction":{"status":"authorized_pending_capture"}}`
)

func TestFetchStatus(t *testing.T) {
	const id = "ch_KjN7oWvTnCeGq3p1"
	ok := reply{status: 200, body: paidCharge}
	tests := []struct {
		name         string
		replies      []reply
		key          string // default testSecretKey
		id           string // default id
		emptyID      bool
		wantPath     string // default /core/v5/charges/{id}
		wantCalls    int
		wantStatus   domain.Status
		wantRefunded int64
		wantAt       time.Time
		wantKind     domain.Kind // when an error is expected
		wantErr      bool
		wantNotFound bool
	}{
		{name: "paid", replies: []reply{ok}, wantCalls: 1, wantStatus: domain.StatusConfirmed, wantAt: time.Date(2026, 1, 15, 12, 0, 5, 0, time.UTC)},
		{name: "refunded", replies: []reply{{status: 200, body: refundedCharge}}, wantCalls: 1, wantStatus: domain.StatusRefunded,
			wantRefunded: 15990, wantAt: time.Date(2026, 1, 20, 10, 30, 0, 0, time.UTC)},
		{name: "partially refunded, offset-less updated_at", replies: []reply{{status: 200, body: partialCharge}}, wantCalls: 1,
			wantStatus: domain.StatusPartiallyRefunded, wantRefunded: 5000, wantAt: time.Date(2026, 1, 18, 9, 15, 0, 0, time.UTC)},
		{name: "authorized, no updated_at: the clock", replies: []reply{{status: 200, body: pendingNoUpdate}}, wantCalls: 1,
			wantStatus: domain.StatusAuthorized, wantAt: t0},
		{name: "unreadable updated_at: the clock", replies: []reply{{status: 200, body: strings.Replace(paidCharge, "2026-01-15T12:00:05Z", "yesterday", 1)}},
			wantCalls: 1, wantStatus: domain.StatusConfirmed, wantAt: t0},
		{name: "5xx then ok", replies: []reply{{status: 502}, {status: 503}, ok}, wantCalls: 3, wantStatus: domain.StatusConfirmed,
			wantAt: time.Date(2026, 1, 15, 12, 0, 5, 0, time.UTC)},
		{name: "429 honours Retry-After", replies: []reply{{status: 429, retryAfter: "1", body: `{"message":"rate limit"}`}, ok}, wantCalls: 2,
			wantStatus: domain.StatusConfirmed, wantAt: time.Date(2026, 1, 15, 12, 0, 5, 0, time.UTC)},
		{name: "429 with a long Retry-After fails at once", replies: []reply{{status: 429, retryAfter: "3600"}}, wantCalls: 1,
			wantErr: true, wantKind: domain.KindUnavailable},
		{name: "attempt timeout is retried", replies: []reply{{status: 200, body: paidCharge, sleep: time.Second}, ok}, wantCalls: 2,
			wantStatus: domain.StatusConfirmed, wantAt: time.Date(2026, 1, 15, 12, 0, 5, 0, time.UTC)},
		{name: "outage: 5xx until out of attempts", replies: []reply{{status: 500, body: "<html>Internal Server Error</html>"}}, wantCalls: 3,
			wantErr: true, wantKind: domain.KindUnavailable},
		{name: "404 is an unknown payment", replies: []reply{{status: 404, body: `{"message":"Charge not found."}`}}, wantCalls: 1,
			wantErr: true, wantKind: domain.KindNotFound, wantNotFound: true},
		{name: "wrong key: 401 not retried", key: "sk_test_wrong", replies: []reply{ok}, wantCalls: 1, wantErr: true, wantKind: domain.KindUnauthorized},
		{name: "another charge in the answer", id: "ch_other", replies: []reply{ok}, wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid},
		{name: "decimal amount in the answer", replies: []reply{{status: 200, body: strings.Replace(paidCharge, `"amount":15990`, `"amount":159.9`, 1)}},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid},
		{name: "charge without amount", replies: []reply{{status: 200, body: `{"id":"ch_KjN7oWvTnCeGq3p1","status":"paid"}`}}, wantCalls: 1,
			wantErr: true, wantKind: domain.KindInvalid},
		{name: "ID with slashes stays one path segment", id: "ch_1/../../orders", replies: []reply{ok}, wantCalls: 1,
			wantPath: "/core/v5/charges/ch_1%2F..%2F..%2Forders", wantErr: true, wantKind: domain.KindInvalid},
		{name: "ID with a space is refused before any request", id: "ch_1 2", replies: []reply{ok}, wantCalls: 0, wantErr: true, wantKind: domain.KindInvalid},
		{name: "empty ID is refused before any request", emptyID: true, replies: []reply{ok}, wantCalls: 0, wantErr: true, wantKind: domain.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t, tt.replies...)
			key := tt.key
			if key == "" {
				key = testSecretKey
			}
			chargeID, wantPath := id, tt.wantPath
			if tt.id != "" || tt.emptyID {
				chargeID = tt.id
			}
			if wantPath == "" {
				wantPath = "/core/v5/charges/" + chargeID
			}
			c := newStatusClient(t, api.URL, key)
			ev, err := c.FetchStatus(context.Background(), chargeID)
			calls := api.calls()
			if len(calls) != tt.wantCalls {
				t.Errorf("%d calls, want %d", len(calls), tt.wantCalls)
			}
			if len(calls) > 0 && calls[0] != wantPath {
				t.Errorf("GET %s, want %s", calls[0], wantPath)
			}
			if tt.wantErr {
				if err == nil || domain.KindOf(err) != tt.wantKind {
					t.Fatalf("FetchStatus() = %+v, %v; want kind %v", ev, err, tt.wantKind)
				}
				if errors.Is(err, domain.ErrUnknownPayment) != tt.wantNotFound {
					t.Errorf("errors.Is(ErrUnknownPayment) = %v", !tt.wantNotFound)
				}
				if !strings.Contains(err.Error(), "pagarme") || (chargeID != "" && !strings.Contains(err.Error(), chargeID)) {
					t.Errorf("error %q does not name the provider and the charge", err)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("error %q leaks the secret key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FetchStatus() = %v", err)
			}
			if ev.Status != tt.wantStatus || ev.AmountRefunded != tt.wantRefunded || !ev.OccurredAt.Equal(tt.wantAt) || ev.OccurredAt.Location() != time.UTC {
				t.Errorf("FetchStatus() = %+v; want status %q refunded %d at %v", ev, tt.wantStatus, tt.wantRefunded, tt.wantAt)
			}
			m := ev.Meta
			if m.Provider != "pagarme" || m.ProviderPaymentID != id || m.ProviderEventType != "api.charge" || m.SubKey != "" ||
				!strings.HasPrefix(m.ProviderEventID, "obs_") || ev.Amount != 15990 || ev.Currency != "BRL" {
				t.Errorf("FetchStatus() meta %+v, amount %d %s", m, ev.Amount, ev.Currency)
			}
		})
	}
}

// TestFetchStatusObservationID: the same state fetched twice is one event;
// any change of what the ID covers is another.
func TestFetchStatusObservationID(t *testing.T) {
	fetch := func(body string) string {
		t.Helper()
		api := newFakeAPI(t, reply{status: 200, body: body})
		ev, err := newStatusClient(t, api.URL, testSecretKey).FetchStatus(context.Background(), "ch_KjN7oWvTnCeGq3p1")
		if err != nil {
			t.Fatal(err)
		}
		return ev.ProviderEventID
	}
	paid := fetch(paidCharge)
	if again := fetch(paidCharge); again != paid {
		t.Fatalf("same state, IDs %s and %s", paid, again)
	}
	want := providers.ObservationID("ch_KjN7oWvTnCeGq3p1", "paid", "captured", "0", "2026-01-15T12:00:05Z")
	if paid != want {
		t.Fatalf("ID %s, want %s", paid, want)
	}
	for name, body := range map[string]string{
		"refunded":             refundedCharge,
		"partial":              partialCharge,
		"later updated_at":     strings.Replace(paidCharge, "12:00:05Z", "12:00:06Z", 1),
		"transaction status":   strings.Replace(paidCharge, `"captured"`, `"chargedback"`, 1),
		"extra fields ignored": strings.Replace(paidCharge, `"code":"PED-1001"`, `"code":"PED-9"`, 1),
	} {
		if got := fetch(body); (got == paid) != (name == "extra fields ignored") {
			t.Errorf("%s: ID %s vs paid %s", name, got, paid)
		}
	}
}

func TestNewStatusClient(t *testing.T) {
	if _, err := NewStatusClient(StatusConfig{}); err == nil || !strings.Contains(err.Error(), "no secret key") {
		t.Fatalf("no key: %v", err)
	}
	if _, err := NewStatusClient(StatusConfig{SecretKey: "sk_x\n"}); err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Fatalf("key with a newline: %v", err)
	}
	_, err := NewStatusClient(StatusConfig{SecretKey: "sk_leaky", Options: rest.Options{BaseURL: "api.pagar.me"}})
	if err == nil || strings.Contains(err.Error(), "sk_leaky") {
		t.Fatalf("bad base URL: %v", err)
	}
	c, err := NewStatusClient(StatusConfig{SecretKey: "sk_x"})
	if err != nil || c.Name() != "pagarme" {
		t.Fatalf("defaults: %v, %v", c, err)
	}
	var re *rest.Error
	api := newFakeAPI(t, reply{status: 404})
	_, err = newStatusClient(t, api.URL, testSecretKey).FetchStatus(context.Background(), "ch_gone")
	if !errors.As(err, &re) || re.Provider != "pagarme" || re.PaymentID != "ch_gone" || re.Status != 404 {
		t.Fatalf("error %#v is not a *rest.Error naming provider, charge and status", err)
	}
}

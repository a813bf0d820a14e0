package mercadopago

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

const testToken = "TEST-0000000000000000-000000-00000000000000000000000000000000-000000000"

// fixedNow stamps observations without date_last_updated in tests.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// reply is one scripted answer of the fake API.
type reply struct {
	status     int
	body       string
	retryAfter string
	hang       bool // wait until the client gives up
}

// fakeAPI is Mercado Pago's payments API: it answers GET /v1/payments/{id}
// with the scripted replies in order (the last repeats), after checking the
// token, and records the paths asked for.
type fakeAPI struct {
	mu      sync.Mutex
	replies []reply
	paths   []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.EscapedPath())
	rp := f.replies[min(len(f.paths), len(f.replies))-1]
	f.mu.Unlock()
	if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer "+testToken {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"message":"invalid access token","error":"unauthorized","status":401}`)
		return
	}
	if rp.hang {
		<-r.Context().Done()
		return
	}
	if rp.retryAfter != "" {
		w.Header().Set("Retry-After", rp.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rp.status)
	_, _ = io.WriteString(w, rp.body)
}

func (f *fakeAPI) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

// serve starts a fake API with the replies and a client for it.
func serve(t *testing.T, token string, replies ...reply) (*StatusClient, *fakeAPI) {
	t.Helper()
	api := &fakeAPI{replies: replies}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c, err := NewStatusClient(StatusConfig{AccessToken: token, Options: rest.Options{BaseURL: srv.URL + "/", Timeout: time.Second,
		MaxAttempts: 3, Now: func() time.Time { return fixedNow }}})
	if err != nil {
		t.Fatal(err)
	}
	return c, api
}

// answer is a payment answer with amounts as raw JSON numbers, as Mercado
// Pago writes them.
func answer(id, status, detail, amount, refunded, currency, updated string) string {
	b := `{"id":` + id + `,"status":"` + status + `","status_detail":"` + detail + `","transaction_amount":` + amount +
		`,"transaction_amount_refunded":` + refunded + `,"currency_id":"` + currency + `"`
	if updated != "" {
		b += `,"date_last_updated":"` + updated + `"`
	}
	return b + `,"captured":true,"payer":{"id":"1"}}`
}

func TestFetchStatusMapping(t *testing.T) {
	const id = "1319876543210"
	const upd = "2026-03-01T11:00:00.250-03:00"
	updAt := time.Date(2026, 3, 1, 14, 0, 0, 250_000_000, time.UTC)
	ok := func(b string) []reply { return []reply{{status: 200, body: b}} }
	tests := []struct {
		name                       string
		replies                    []reply
		wantStatus                 domain.Status
		wantAmount, wantCaptured   int64
		wantRefunded               int64
		wantCurrency               domain.Currency
		wantAt                     time.Time
		wantDetail, wantProvStatus string
	}{
		{name: "pending", replies: ok(answer(id, "pending", "pending_waiting_transfer", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusAwaitingConfirmation, wantAmount: 15010, wantProvStatus: "pending", wantDetail: "pending_waiting_transfer"},
		{name: "in_process", replies: ok(answer(id, "in_process", "pending_contingency", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusAwaitingConfirmation, wantAmount: 15010, wantProvStatus: "in_process", wantDetail: "pending_contingency"},
		{name: "authorized", replies: ok(answer(id, "authorized", "pending_capture", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusAuthorized, wantAmount: 15010, wantProvStatus: "authorized", wantDetail: "pending_capture"},
		{name: "approved accredited", replies: ok(answer(id, "approved", "accredited", "100.10", "0", "BRL", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 10010, wantCaptured: 10010, wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "approved partially_refunded", replies: ok(answer(id, "approved", "partially_refunded", "150.10", "50.05", "BRL", upd)),
			wantStatus: domain.StatusPartiallyRefunded, wantAmount: 15010, wantCaptured: 15010, wantRefunded: 5005, wantProvStatus: "approved", wantDetail: "partially_refunded"},
		{name: "approved with a partial refund total", replies: ok(answer(id, "approved", "accredited", "150.10", "0.01", "BRL", upd)),
			wantStatus: domain.StatusPartiallyRefunded, wantAmount: 15010, wantCaptured: 15010, wantRefunded: 1, wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "approved partially_refunded before the total moved", replies: ok(answer(id, "approved", "partially_refunded", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusPartiallyRefunded, wantAmount: 15010, wantCaptured: 15010, wantProvStatus: "approved", wantDetail: "partially_refunded"},
		{name: "approved with everything refunded", replies: ok(answer(id, "approved", "partially_refunded", "150.10", "150.10", "BRL", upd)),
			wantStatus: domain.StatusRefunded, wantAmount: 15010, wantCaptured: 15010, wantRefunded: 15010, wantProvStatus: "approved", wantDetail: "partially_refunded"},
		{name: "rejected", replies: ok(answer(id, "rejected", "cc_rejected_insufficient_amount", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusFailed, wantAmount: 15010, wantProvStatus: "rejected", wantDetail: "cc_rejected_insufficient_amount"},
		{name: "cancelled (expired pix)", replies: ok(answer(id, "cancelled", "expired", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusCancelled, wantAmount: 15010, wantProvStatus: "cancelled", wantDetail: "expired"},
		{name: "refunded", replies: ok(answer(id, "refunded", "refunded", "150.10", "150.10", "BRL", upd)),
			wantStatus: domain.StatusRefunded, wantAmount: 15010, wantCaptured: 15010, wantRefunded: 15010, wantProvStatus: "refunded", wantDetail: "refunded"},
		{name: "in_mediation", replies: ok(answer(id, "in_mediation", "", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusDisputed, wantAmount: 15010, wantCaptured: 15010, wantProvStatus: "in_mediation"},
		{name: "charged_back", replies: ok(answer(id, "charged_back", "settled", "150.10", "0", "BRL", upd)),
			wantStatus: domain.StatusChargeback, wantAmount: 15010, wantCaptured: 15010, wantProvStatus: "charged_back", wantDetail: "settled"},
		{name: "unknown status passes through for review", replies: ok(answer(id, "settling", "x", "150.10", "0", "BRL", upd)),
			wantStatus: "mp:settling", wantAmount: 15010, wantProvStatus: "settling", wantDetail: "x"},
		{name: "a status spelt like ours is still unknown", replies: ok(answer(id, "confirmed", "", "150.10", "0", "BRL", upd)),
			wantStatus: "mp:confirmed", wantAmount: 15010, wantProvStatus: "confirmed"},

		// Exact decimals.
		{name: "CLP has no decimals", replies: ok(answer(id, "approved", "accredited", "1500", "0", "CLP", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 1500, wantCaptured: 1500, wantCurrency: "CLP", wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "CLP with zero decimals written", replies: ok(answer(id, "approved", "accredited", "1500.00", "0.0", "CLP", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 1500, wantCaptured: 1500, wantCurrency: "CLP", wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "integral BRL", replies: ok(answer(id, "approved", "accredited", "100", "0", "BRL", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 10000, wantCaptured: 10000, wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "one decimal", replies: ok(answer(id, "approved", "accredited", "0.1", "0", "BRL", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 10, wantCaptured: 10, wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "amounts as strings", replies: ok(answer(id, "approved", "partially_refunded", `"100.10"`, `"0.10"`, "BRL", upd)),
			wantStatus: domain.StatusPartiallyRefunded, wantAmount: 10010, wantCaptured: 10010, wantRefunded: 10, wantProvStatus: "approved", wantDetail: "partially_refunded"},
		{name: "largest exact amount", replies: ok(answer(id, "approved", "accredited", "92233720368547758.07", "0", "BRL", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 9223372036854775807, wantCaptured: 9223372036854775807, wantProvStatus: "approved", wantDetail: "accredited"},
		{name: "lower-case currency, null refund", replies: ok(answer(id, "approved", "accredited", "1.5", "null", "mxn", upd)),
			wantStatus: domain.StatusConfirmed, wantAmount: 150, wantCaptured: 150, wantCurrency: "MXN", wantProvStatus: "approved", wantDetail: "accredited"},

		// Time.
		{name: "no date_last_updated: now", replies: ok(answer(id, "pending", "", "1", "0", "BRL", "")),
			wantStatus: domain.StatusAwaitingConfirmation, wantAmount: 100, wantAt: fixedNow, wantProvStatus: "pending"},
		{name: "string id in the answer", replies: ok(answer(`"`+id+`"`, "pending", "", "1", "0", "BRL", upd)),
			wantStatus: domain.StatusAwaitingConfirmation, wantAmount: 100, wantProvStatus: "pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, api := serve(t, testToken, tt.replies...)
			got, err := c.FetchStatus(context.Background(), id)
			if err != nil {
				t.Fatalf("FetchStatus: %v", err)
			}
			if calls := api.calls(); len(calls) != 1 || calls[0] != "/v1/payments/"+id {
				t.Errorf("calls = %v", calls)
			}
			wantCur, wantAt := tt.wantCurrency, tt.wantAt
			if wantCur == "" {
				wantCur = "BRL"
			}
			if wantAt.IsZero() {
				wantAt = updAt
			}
			want := domain.PaymentStatusObserved{
				Meta: domain.Meta{Provider: "mercadopago", ProviderEventID: got.ProviderEventID, ProviderEventType: "api.payment",
					ProviderPaymentID: id, OccurredAt: wantAt},
				Status: tt.wantStatus, ProviderStatus: tt.wantProvStatus, ProviderStatusDetail: tt.wantDetail,
				Amount: tt.wantAmount, AmountCaptured: tt.wantCaptured, AmountRefunded: tt.wantRefunded, Currency: wantCur,
			}
			if *got != want {
				t.Errorf("observed = %+v\nwant       %+v", *got, want)
			}
			if !strings.HasPrefix(got.ProviderEventID, "obs_") {
				t.Errorf("ProviderEventID = %q", got.ProviderEventID)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("marshal: %v", err)
			}
			// The fold takes known statuses as they are and flags the rest.
			s := domain.Fold(got).State()
			if tt.wantStatus.Valid() != (len(s.ReviewReasons) == 0) {
				t.Errorf("fold = %s %v", s.Status, s.ReviewReasons)
			}
			if !tt.wantStatus.Valid() && (s.Status != domain.StatusPending || s.ReviewReasons[0] != domain.ReviewUnknownStatus) {
				t.Errorf("unknown status folds to %s %v", s.Status, s.ReviewReasons)
			}
		})
	}
}

func TestFetchStatusRealisticAnswer(t *testing.T) {
	b, err := os.ReadFile("testdata/api/payment_approved.json")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := serve(t, testToken, reply{status: 200, body: string(b)})
	got, err := c.FetchStatus(context.Background(), "1319876543210")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.StatusConfirmed || got.Amount != 15010 || got.AmountCaptured != 15010 || got.AmountRefunded != 0 ||
		got.Currency != "BRL" || !got.OccurredAt.Equal(time.Date(2026, 3, 1, 13, 0, 5, 512_000_000, time.UTC)) {
		t.Errorf("observed %+v", got)
	}
}

func TestFetchStatusInvalidAnswers(t *testing.T) {
	const id = "42"
	const upd = "2026-03-01T11:00:00.000-03:00"
	tests := []struct {
		name, body, wantMsg string
	}{
		{name: "too many decimals for BRL", body: answer(id, "approved", "accredited", "10.505", "0", "BRL", upd), wantMsg: `transaction_amount: amount "10.505": has more than 2 decimal places`},
		{name: "decimals for CLP", body: answer(id, "approved", "accredited", "1500.5", "0", "CLP", upd), wantMsg: "more than 0 decimal places"},
		{name: "exponent", body: answer(id, "approved", "accredited", "1e3", "0", "BRL", upd), wantMsg: "not a decimal number"},
		{name: "negative amount", body: answer(id, "approved", "accredited", "-1", "0", "BRL", upd), wantMsg: "transaction_amount is negative"},
		{name: "negative refund", body: answer(id, "approved", "accredited", "1", "-0.01", "BRL", upd), wantMsg: "transaction_amount_refunded is negative"},
		{name: "out of range", body: answer(id, "approved", "accredited", "92233720368547758.08", "0", "BRL", upd), wantMsg: "out of range"},
		{name: "no amount", body: `{"id":42,"status":"pending","currency_id":"BRL"}`, wantMsg: "transaction_amount is missing"},
		{name: "amount not a number", body: `{"id":42,"status":"pending","currency_id":"BRL","transaction_amount":"abc"}`, wantMsg: "malformed payment answer"},
		{name: "amount a boolean", body: `{"id":42,"status":"pending","currency_id":"BRL","transaction_amount":true}`, wantMsg: "transaction_amount has the wrong type"},
		{name: "no currency", body: `{"id":42,"status":"pending","transaction_amount":1}`, wantMsg: "currency_id"},
		{name: "bad currency", body: answer(id, "approved", "accredited", "1", "0", "R$", upd), wantMsg: "not a three-letter ISO 4217 code"},
		{name: "no status", body: `{"id":42,"currency_id":"BRL","transaction_amount":1}`, wantMsg: "status is missing"},
		{name: "another payment", body: answer("43", "approved", "accredited", "1", "0", "BRL", upd), wantMsg: `the answer is about payment "43", not "42"`},
		{name: "fractional id", body: answer("42.0", "approved", "accredited", "1", "0", "BRL", upd), wantMsg: "not a non-negative integer"},
		{name: "bad date", body: answer(id, "approved", "accredited", "1", "0", "BRL", "yesterday"), wantMsg: "date_last_updated"},
		{name: "not an object", body: `[1,2]`, wantMsg: "malformed payment answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, testToken, reply{status: 200, body: tt.body})
			got, err := c.FetchStatus(context.Background(), id)
			if err == nil {
				t.Fatalf("FetchStatus = %+v, want an error", got)
			}
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(domain.MessageOf(err), tt.wantMsg) {
				t.Errorf("error = %v (kind %v); want KindInvalid mentioning %q", err, domain.KindOf(err), tt.wantMsg)
			}
			if !strings.Contains(err.Error(), "mercadopago") || !strings.Contains(err.Error(), "payment 42") {
				t.Errorf("error %q does not name provider and payment", err)
			}
		})
	}
}

func TestFetchStatusFailures(t *testing.T) {
	const id = "1319876543210"
	good := reply{status: 200, body: answer(id, "approved", "accredited", "150.10", "0", "BRL", "2026-03-01T11:00:00.000-03:00")}
	tests := []struct {
		name        string
		token       string
		replies     []reply
		wantCalls   int
		wantKind    domain.Kind // ignored when wantOK
		wantOK      bool
		wantUnknown bool
		wantStatus  int // HTTP status in the *rest.Error
	}{
		{name: "404 is an unknown payment", replies: []reply{{status: 404, body: `{"message":"Payment not found","error":"not_found","status":404}`}},
			wantCalls: 1, wantKind: domain.KindNotFound, wantUnknown: true, wantStatus: 404},
		{name: "429 with Retry-After, then the answer", replies: []reply{{status: 429, retryAfter: "1", body: `{"message":"too many requests"}`}, good},
			wantCalls: 2, wantOK: true},
		{name: "one 5xx, then the answer", replies: []reply{{status: 502, body: "<html>bad gateway</html>"}, good}, wantCalls: 2, wantOK: true},
		{name: "5xx outage", replies: []reply{{status: 503, body: "down"}}, wantCalls: 3, wantKind: domain.KindUnavailable, wantStatus: 503},
		{name: "Retry-After beyond the cap fails at once", replies: []reply{{status: 429, retryAfter: "3600"}}, wantCalls: 1, wantKind: domain.KindUnavailable, wantStatus: 429},
		{name: "attempt timeout, then the answer", replies: []reply{{hang: true}, good}, wantCalls: 2, wantOK: true},
		{name: "timeouts until out of attempts", replies: []reply{{hang: true}}, wantCalls: 3, wantKind: domain.KindUnavailable},
		{name: "wrong token is not retried", token: "APP_USR-wrong", replies: []reply{good}, wantCalls: 1, wantKind: domain.KindUnauthorized, wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // several cases wait for Retry-After or timeouts
			token := tt.token
			if token == "" {
				token = testToken
			}
			c, api := serve(t, token, tt.replies...)
			got, err := c.FetchStatus(context.Background(), id)
			if n := len(api.calls()); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantOK {
				if err != nil || got.Status != domain.StatusConfirmed || got.Amount != 15010 {
					t.Fatalf("FetchStatus = %+v, %v", got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("FetchStatus = %+v, want an error", got)
			}
			var re *rest.Error
			if !errors.As(err, &re) || re.Provider != "mercadopago" || re.PaymentID != id || re.Status != tt.wantStatus {
				t.Errorf("error %v is not a *rest.Error for mercadopago payment %s with HTTP %d", err, id, tt.wantStatus)
			}
			if !strings.Contains(err.Error(), "mercadopago: fetch payment "+id) {
				t.Errorf("error %q does not name provider and payment", err)
			}
			if domain.KindOf(err) != tt.wantKind {
				t.Errorf("kind = %v, want %v (%v)", domain.KindOf(err), tt.wantKind, err)
			}
			if errors.Is(err, domain.ErrUnknownPayment) != tt.wantUnknown {
				t.Errorf("errors.Is(err, ErrUnknownPayment) = %v", !tt.wantUnknown)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error leaks the token")
			}
		})
	}
}

// TestObservationIdentity: the same state fetched twice is one fact (same
// ProviderEventID); any change of the state's parts is a new one.
func TestObservationIdentity(t *testing.T) {
	const id = "1319876543210"
	const upd = "2026-03-01T11:00:00.000-03:00"
	base := answer(id, "approved", "partially_refunded", "150.10", "50.05", "BRL", upd)
	fetch := func(body string) *domain.PaymentStatusObserved {
		t.Helper()
		c, _ := serve(t, testToken, reply{status: 200, body: body})
		got, err := c.FetchStatus(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := fetch(base)
	tests := []struct {
		name     string
		body     string
		wantSame bool
	}{
		{name: "same answer again", body: base, wantSame: true},
		{name: "same state, other unrelated fields", body: strings.Replace(base, `"payer":{"id":"1"}`, `"payer":{"id":"2"},"notification_url":"x"`, 1), wantSame: true},
		{name: "same refund written with another scale", body: answer(id, "approved", "partially_refunded", "150.10", "50.050", "BRL", upd), wantSame: true},
		{name: "same instant in another offset", body: answer(id, "approved", "partially_refunded", "150.10", "50.05", "BRL", "2026-03-01T14:00:00Z"), wantSame: true},
		{name: "status changed", body: answer(id, "refunded", "partially_refunded", "150.10", "50.05", "BRL", upd)},
		{name: "status detail changed", body: answer(id, "approved", "accredited", "150.10", "50.05", "BRL", upd)},
		{name: "refund grew", body: answer(id, "approved", "partially_refunded", "150.10", "60.05", "BRL", upd)},
		{name: "updated later", body: answer(id, "approved", "partially_refunded", "150.10", "50.05", "BRL", "2026-03-01T11:00:00.001-03:00")},
		{name: "no update time", body: answer(id, "approved", "partially_refunded", "150.10", "50.05", "BRL", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fetch(tt.body)
			if (got.ProviderEventID == first.ProviderEventID) != tt.wantSame {
				t.Errorf("ProviderEventID %s vs %s, want same=%v", got.ProviderEventID, first.ProviderEventID, tt.wantSame)
			}
			if tt.wantSame && *got != *first {
				t.Errorf("same state, different content:\n%+v\n%+v", *got, *first)
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
		{name: "defaults", cfg: StatusConfig{AccessToken: testToken}},
		{name: "no token", cfg: StatusConfig{}, wantErr: "no access token"},
		{name: "token with a newline", cfg: StatusConfig{AccessToken: "APP_USR-leaky\n"}, wantErr: "whitespace"},
		{name: "bad base URL", cfg: StatusConfig{AccessToken: testToken, Options: rest.Options{BaseURL: "ftp://api.mercadopago.com"}}, wantErr: "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewStatusClient(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || c.Name() != "mercadopago" {
					t.Fatalf("NewStatusClient = %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "leaky") {
				t.Fatalf("error = %v, want it to mention %q without the token", err, tt.wantErr)
			}
		})
	}
}

// roundTripper answers every request itself, recording it.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestStatusClientRequest checks the request itself, without a network:
// the production base URL by default, the Bearer token, the escaped ID.
func TestStatusClientRequest(t *testing.T) {
	tests := []struct {
		name, base, id, wantURL string
	}{
		{name: "default base", id: "123", wantURL: "https://api.mercadopago.com/v1/payments/123"},
		{name: "base with a path", base: "http://fake.test/mp/", id: "123", wantURL: "http://fake.test/mp/v1/payments/123"},
		{name: "ID escaped as one path segment", base: "http://fake.test", id: "a/b?c#d", wantURL: "http://fake.test/v1/payments/a%2Fb%3Fc%23d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen *http.Request
			hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
				seen = r
				return &http.Response{StatusCode: 404, Body: io.NopCloser(strings.NewReader(`{}`)), Header: http.Header{}}, nil
			})}
			c, err := NewStatusClient(StatusConfig{AccessToken: testToken, Options: rest.Options{BaseURL: tt.base, HTTPClient: hc}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.FetchStatus(context.Background(), tt.id); !errors.Is(err, domain.ErrUnknownPayment) {
				t.Fatalf("FetchStatus error = %v", err)
			}
			if seen.URL.String() != tt.wantURL || seen.Header.Get("Authorization") != "Bearer "+testToken || seen.Method != http.MethodGet {
				t.Errorf("request %s %s auth %q", seen.Method, seen.URL, seen.Header.Get("Authorization"))
			}
		})
	}
}

func TestFetchStatusBadID(t *testing.T) {
	c, api := serve(t, testToken, reply{status: 200, body: "{}"})
	for _, id := range []string{"", "1 2", strings.Repeat("1", 256), "a\x00b"} {
		if _, err := c.FetchStatus(context.Background(), id); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("FetchStatus(%q) error = %v, want KindInvalid", id, err)
		}
	}
	if n := len(api.calls()); n != 0 {
		t.Errorf("%d calls for invalid IDs", n)
	}
}

func TestFetchStatusCancelled(t *testing.T) {
	c, api := serve(t, testToken, reply{status: 503})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.FetchStatus(ctx, "1")
	if err == nil || !errors.Is(err, context.Canceled) || len(api.calls()) > 1 {
		t.Errorf("cancelled fetch: %v after %d calls", err, len(api.calls()))
	}
}

package stripe

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
	"github.com/payledger/payledger/providers/rest"
)

const feePI = "pi_3QxFee_b-2"

// feeAPI is a fake Stripe API for FetchFee: it checks credentials and the
// expansion of the balance transaction, then plays its answers in turn
// (the last one repeats).
type feeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	answers []string
	calls   int
}

func newFeeAPI(t *testing.T, answers ...string) *feeAPI {
	f := &feeAPI{answers: answers}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		n := f.calls
		f.calls++
		f.mu.Unlock()
		switch {
		case r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Stripe-Version") != DefaultAPIVersion:
			http.Error(w, `{"error":{"type":"invalid_request_error"}}`, http.StatusUnauthorized)
		case r.URL.Query()["expand[]"][0] != "latest_charge.balance_transaction":
			http.Error(w, "balance transaction not expanded", http.StatusBadRequest)
		case r.URL.Path != "/v1/payment_intents/"+feePI:
			http.Error(w, `{"error":{"code":"resource_missing"}}`, http.StatusNotFound)
		default:
			_, _ = w.Write([]byte(f.answers[min(n, len(f.answers)-1)]))
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *feeAPI) client(t *testing.T) *StatusClient {
	t.Helper()
	c, err := NewStatusClient(StatusConfig{SecretKey: testKey, Options: rest.Options{BaseURL: f.srv.URL, MaxAttempts: 1,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// feeIntentJSON is a succeeded PaymentIntent in currency whose latest charge
// has balance transaction bt (JSON, "null" while there is none).
func feeIntentJSON(currency, bt string) string {
	return `{"id":"` + feePI + `","object":"payment_intent","status":"succeeded","amount":10000,"amount_received":10000,` +
		`"currency":"` + currency + `","latest_charge":{"id":"ch_3QxFee_b-2","object":"charge","amount":10000,` +
		`"balance_transaction":` + bt + `}}`
}

// The balance transactions of the tests: a card charge with Stripe's fee
// (the shape of the spec's fee 1500 example, fee_details and all), the
// official fixture (fee 0), and a EUR charge settled in USD.
const (
	btFee1500 = `{"id":"txn_3QxFee1500","object":"balance_transaction","amount":10000,"available_on":1767409445,` +
		`"created":1767323045,"currency":"usd","description":"Stripe processing fees","exchange_rate":null,"fee":1500,` +
		`"fee_details":[{"amount":1500,"application":null,"currency":"usd","description":"Stripe processing fees","type":"stripe_fee"}],` +
		`"net":8500,"reporting_category":"charge","source":"ch_3QxFee_b-2","status":"pending","type":"charge"}`
	btFixture = `{"amount":100,"available_on":1234567890,"created":1234567890,"currency":"usd",` +
		`"description":"My First Test Charge (created for API docs)","exchange_rate":null,"fee":0,"fee_details":[],` +
		`"id":"txn_1PgaxNB7WZ01zgkWEV3TLf40","net":100,"object":"balance_transaction","reporting_category":"charge",` +
		`"source":"ch_1PgafuB7WZ01zgkWXYmPNZs8","status":"available","type":"charge","balance_type":"payments"}`
	btOtherCurrency = `{"id":"txn_3QxFeeEURtoUSD","object":"balance_transaction","amount":1234,"created":1767323100,` +
		`"currency":"usd","exchange_rate":1.234,"fee":66,"fee_details":[{"amount":66,"currency":"usd","type":"stripe_fee"}],` +
		`"net":1168,"source":"ch_3QxFee_b-2","status":"pending","type":"charge"}`
)

func wantFee(txn string, amount int64, cur domain.Currency, created int64) *domain.FeeAssessed {
	return &domain.FeeAssessed{
		Meta: domain.Meta{Provider: "stripe", ProviderEventType: "api.balance_transaction", ProviderPaymentID: feePI,
			ProviderEventID: providers.ObservationID(feePI, "fee", txn, strconv.FormatInt(amount, 10), string(cur)),
			OccurredAt:      time.Unix(created, 0).UTC()},
		Amount: amount, Currency: cur, Source: "balance_transaction " + txn,
	}
}

// TestFetchFee maps the balance transaction's fee, in its own currency and
// at its own time; without one yet it reports none.
func TestFetchFee(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   *domain.FeeAssessed // nil: not stated yet
	}{
		{name: "fee 1500 with fee_details", answer: feeIntentJSON("usd", btFee1500),
			want: wantFee("txn_3QxFee1500", 1500, "USD", 1767323045)},
		{name: "official fixture, fee 0", answer: feeIntentJSON("usd", btFixture),
			want: wantFee("txn_1PgaxNB7WZ01zgkWEV3TLf40", 0, "USD", 1234567890)},
		{name: "EUR payment settled in USD", answer: feeIntentJSON("eur", btOtherCurrency),
			want: wantFee("txn_3QxFeeEURtoUSD", 66, "USD", 1767323100)},
		{name: "asynchronous capture, balance transaction still null", answer: feeIntentJSON("usd", "null")},
		{name: "no balance_transaction field", answer: `{"id":"` + feePI + `","status":"succeeded","latest_charge":{"id":"ch_1"}}`},
		{name: "no charge yet", answer: `{"id":"` + feePI + `","status":"requires_payment_method","latest_charge":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFeeAPI(t, tt.answer).client(t)
			got, err := c.FetchFee(t.Context(), feePI)
			if err != nil {
				t.Fatalf("FetchFee: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("FetchFee =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// TestFetchFeeAppears: null while captured asynchronously, then the fee;
// fetched again, the same fact (same ID).
func TestFetchFeeAppears(t *testing.T) {
	api := newFeeAPI(t, feeIntentJSON("usd", "null"), feeIntentJSON("usd", btFee1500))
	c := api.client(t)
	first, err := c.FetchFee(t.Context(), feePI)
	if err != nil || first != nil {
		t.Fatalf("first FetchFee = %+v, %v; want not stated yet", first, err)
	}
	second, err := c.FetchFee(t.Context(), feePI)
	if err != nil || second == nil || second.Amount != 1500 {
		t.Fatalf("second FetchFee = %+v, %v; want the fee of 1500", second, err)
	}
	third, err := c.FetchFee(t.Context(), feePI)
	if err != nil || !reflect.DeepEqual(third, second) {
		t.Fatalf("third FetchFee = %+v, %v; want the same fact as the second", third, err)
	}
}

func TestFetchFeeErrors(t *testing.T) {
	tests := []struct {
		name, id, answer string
		wantKind         domain.Kind
		wantErr          error
	}{
		{name: "unknown payment intent", id: "pi_missing", answer: "{}", wantKind: domain.KindNotFound, wantErr: domain.ErrUnknownPayment},
		{name: "bad id", id: "pi 1", answer: "{}", wantKind: domain.KindInvalid},
		{name: "another payment intent", id: feePI, answer: `{"id":"pi_other"}`, wantKind: domain.KindInvalid},
		{name: "balance transaction not expanded", id: feePI, answer: feeIntentJSON("usd", `"txn_1"`), wantKind: domain.KindInvalid},
		{name: "no fee", id: feePI, answer: feeIntentJSON("usd", `{"id":"txn_1","currency":"usd","created":1}`), wantKind: domain.KindInvalid},
		{name: "negative fee", id: feePI, answer: feeIntentJSON("usd", `{"id":"txn_1","fee":-1,"currency":"usd","created":1}`), wantKind: domain.KindInvalid},
		{name: "bad currency", id: feePI, answer: feeIntentJSON("usd", `{"id":"txn_1","fee":1,"currency":"dollars","created":1}`), wantKind: domain.KindInvalid},
		{name: "no created", id: feePI, answer: feeIntentJSON("usd", `{"id":"txn_1","fee":1,"currency":"usd"}`), wantKind: domain.KindInvalid},
		{name: "no id", id: feePI, answer: feeIntentJSON("usd", `{"fee":1,"currency":"usd","created":1}`), wantKind: domain.KindInvalid},
		{name: "fee is a string", id: feePI, answer: feeIntentJSON("usd", `{"id":"txn_1","fee":"1","currency":"usd","created":1}`), wantKind: domain.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFeeAPI(t, tt.answer).client(t)
			got, err := c.FetchFee(t.Context(), tt.id)
			if err == nil {
				t.Fatalf("FetchFee = %+v, want an error", got)
			}
			if k := domain.KindOf(err); k != tt.wantKind {
				t.Errorf("FetchFee error %v: kind %v, want %v", err, k, tt.wantKind)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("FetchFee error %v does not wrap %v", err, tt.wantErr)
			}
		})
	}
}

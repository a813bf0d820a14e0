package stripe

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// meta builds the Meta Parse should produce.
func meta(evt, typ, pi string, created int64) domain.Meta {
	return domain.Meta{Provider: "stripe", ProviderEventID: evt, ProviderEventType: typ,
		ProviderPaymentID: pi, OccurredAt: time.Unix(created, 0).UTC()}
}

// TestParseTestdata maps every realistic payload in testdata/events (several
// API versions, extra fields) and the spec vector.
func TestParseTestdata(t *testing.T) {
	const dp = "dp_1P0dSpUtEdAbCdEfNoPqRsTu"
	const disputedPI = "pi_3P0dSoUtEdAbCdEf0b2C3d4E"
	closed := func(evt string, created int64, o domain.DisputeOutcome) domain.Event {
		return &domain.DisputeClosed{Meta: meta(evt, "charge.dispute.closed", disputedPI, created),
			DisputeID: dp, Outcome: o, Amount: 5000, Currency: "USD"}
	}
	tests := []struct {
		file        string
		want        domain.Event // nil: ignored
		wantIgnored string
	}{
		{file: "vectors/s1_payload.json", want: &domain.PaymentSucceeded{
			Meta:   meta("evt_test_webhook", "payment_intent.succeeded", "pi_test_123", 1700000000),
			Amount: 2000, AmountReceived: 2000, Currency: "USD"}},
		{file: "events/payment_intent.created.json", want: &domain.PaymentCreated{
			Meta:   meta("evt_1HPo8kKZ4xY2zNnA0tq9bC1d", "payment_intent.created", "pi_1HPo8kKZ4xY2zNnAq2k7Xy-Z", 1599641442),
			Amount: 4999, Currency: "EUR"}},
		{file: "events/payment_intent.processing.json", want: &domain.PaymentProcessing{
			Meta:   meta("evt_3MtwBwLkdIwHu7ix0pRoCe55", "payment_intent.processing", "pi_3MtwBwLkdIwHu7ix28a3tqPa", 1680064028),
			Amount: 10000, Currency: "EUR"}},
		{file: "events/payment_intent.requires_action.json", want: &domain.PaymentActionRequired{
			Meta:   meta("evt_3O5pQ2Bh6q8mNw1Z1kL9vRtY", "payment_intent.requires_action", "pi_3O5pQ2Bh6q8mNw1Z0aS7dF3g", 1698066510),
			Amount: 2500, Currency: "GBP"}},
		{file: "events/payment_intent.amount_capturable_updated.json", want: &domain.PaymentAuthorized{
			Meta:   meta("evt_3PL8fH2eZvKYlo2C1hJ6kPqR", "payment_intent.amount_capturable_updated", "pi_3PL8fH2eZvKYlo2C0mN4bVcX", 1718112000),
			Amount: 15000, AmountCapturable: 15000, Currency: "USD"}},
		{file: "events/payment_intent.succeeded.json", want: &domain.PaymentSucceeded{
			Meta:   meta("evt_3SbQ1x2eZvKYlo2C1qWeRtYu", "payment_intent.succeeded", "pi_3SbQ1x2eZvKYlo2C0aSdFgHj", 1785320000),
			Amount: 2000, AmountReceived: 2000, Currency: "USD"}},
		{file: "events/payment_intent.payment_failed.json", want: &domain.PaymentFailed{
			Meta:   meta("evt_1EBkQ2HlUZ6zj0o3tS5dW8xY", "payment_intent.payment_failed", "pi_1EBkQ1HlUZ6zj0o3rT4eV7wX", 1552400000),
			Amount: 3000, Currency: "JPY", Code: "card_declined", Message: "Your card has insufficient funds."}},
		{file: "events/payment_intent.canceled.json", want: &domain.PaymentCancelled{
			Meta:   meta("evt_3R9xYzAbCdEfGh1I1jKlMnOp", "payment_intent.canceled", "pi_3R9xYzAbCdEfGh1I0qRsTuVw", 1744000000),
			Amount: 1000, Currency: "BRL", Reason: "abandoned"}},
		{file: "events/charge.refunded.json", want: &domain.PaymentRefunded{
			Meta:           meta("evt_3Q1aBcDeFgHiJkLm1NoPqRsT", "charge.refunded", "pi_3Q1aBcDeFgHiJkLm0f5G6h7I", 1728000000),
			AmountRefunded: 1500, AmountCaptured: 5000, Currency: "USD"}},
		{file: "events/charge.refunded.before_amount_captured.json", want: &domain.PaymentRefunded{
			Meta:           meta("evt_1Fj2kLmNoPqRsTuV9wXyZaBc", "charge.refunded", "pi_1Fj2kKmNoPqRsTuVlMnOpQrS", 1575000000),
			AmountRefunded: 7500, AmountCaptured: 7500, Currency: "CAD"}},
		{file: "events/charge.refunded.legacy_charges_api.json", wantIgnored: "charge ch_17Qw5d2eZvKYlo2CzXy9AbCd has no payment_intent"},
		{file: "events/charge.dispute.created.json", want: &domain.DisputeOpened{
			Meta:      meta("evt_3P0dSpUtEdAbCdEf1GhIjKlM", "charge.dispute.created", disputedPI, 1714000000),
			DisputeID: dp, Amount: 5000, Currency: "USD", Reason: "fraudulent"}},
		{file: "events/charge.dispute.created.warning_needs_response.json", want: &domain.InquiryOpened{
			Meta:      meta("evt_3P0iNqUiRyAbCdEf1GhIjKlM", "charge.dispute.created", "pi_3P0iNqUiRyAbCdEf0b2C3d4E", 1714100000),
			DisputeID: "dp_1P0iNqUiRyAbCdEfNoPqRsTu", Amount: 5000, Currency: "USD", Reason: "fraudulent"}},
		{file: "events/charge.updated.balance_transaction.json", want: &domain.PaymentNotified{
			Meta:   meta("evt_3SbQ1x2eZvKYlo2C1uPdAtEd", "charge.updated", "pi_3SbQ1x2eZvKYlo2C0aSdFgHj", 1785320042),
			Action: "balance_transaction txn_3SbQ1x2eZvKYlo2C0bAlTrX1"}},
		{file: "events/charge.updated.metadata.json", wantIgnored: "did not change its balance transaction"},
		{file: "events/charge.dispute.closed.won.json", want: closed("evt_3P2cLoSeDWoN000001aBcDe", 1716000000, domain.DisputeWon)},
		{file: "events/charge.dispute.closed.lost.json", want: closed("evt_3P2cLoSeDLoSt00001aBcDe", 1716100000, domain.DisputeLost)},
		{file: "events/charge.dispute.closed.warning_closed.json", want: closed("evt_3P2cLoSeDWaRn00001aBcDe", 1716200000, domain.DisputeWon)},
		{file: "events/charge.dispute.closed.prevented.json", want: closed("evt_3P2cLoSeDPrEv00001aBcDe", 1716300000, domain.DisputeWon)},
		{file: "events/charge.dispute.created.legacy_charges_api.json", wantIgnored: "dispute dp_1CqD1sPuTeLeGaCyHiJkLmNo has no payment_intent"},
		{file: "events/customer.created.json", wantIgnored: "event type customer.created is not tracked"},
		{file: "events/charge.succeeded.json", wantIgnored: "event type charge.succeeded is not tracked"},
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			sig := Sign(body, vectorSecret, time.Unix(vectorT, 0))
			n, err := p.Parse(t.Context(), headerOf(sig), nil, body)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if n.Provider != "stripe" || n.ProviderEventID == "" || n.ProviderEventType == "" || n.SignatureHeader != sig {
				t.Errorf("notification identity = %q %q %q %q", n.Provider, n.ProviderEventID, n.ProviderEventType, n.SignatureHeader)
			}
			if tt.want == nil {
				if len(n.Events) != 0 || !strings.Contains(n.IgnoredReason, tt.wantIgnored) {
					t.Fatalf("Parse = %d events, reason %q; want ignored with %q", len(n.Events), n.IgnoredReason, tt.wantIgnored)
				}
				return
			}
			if n.IgnoredReason != "" || len(n.Events) != 1 {
				t.Fatalf("Parse = %d events, reason %q; want one event", len(n.Events), n.IgnoredReason)
			}
			if !reflect.DeepEqual(n.Events[0], tt.want) {
				t.Errorf("event\n got  %#v\n want %#v", n.Events[0], tt.want)
			}
			m := tt.want.EventMeta()
			if n.ProviderEventID != m.ProviderEventID || n.ProviderEventType != m.ProviderEventType {
				t.Errorf("notification identity %q %q, want %q %q", n.ProviderEventID, n.ProviderEventType, m.ProviderEventID, m.ProviderEventType)
			}
		})
	}
	files, _ := filepath.Glob("testdata/events/*.json")
	for _, f := range files {
		if rel, _ := filepath.Rel("testdata", f); !seen[rel] {
			t.Errorf("%s has no case in this table", f)
		}
	}
}

// evt wraps a data.object in an otherwise valid envelope.
func evt(typ, object string) string {
	return `{"id":"evt_1","object":"event","api_version":"2024-06-20","created":1700000000,"type":"` + typ +
		`","data":{"object":` + object + `}}`
}

// TestParseVariants covers shapes the testdata files do not.
func TestParseVariants(t *testing.T) {
	tests := []struct {
		name string
		body string
		want domain.Event
	}{
		{name: "no api_version and no object field",
			body: `{"id":"evt_1","created":1700000000,"type":"payment_intent.created","data":{"object":{"id":"pi_1","amount":5,"currency":"usd"}}}`,
			want: &domain.PaymentCreated{Meta: meta("evt_1", "payment_intent.created", "pi_1", 1700000000), Amount: 5, Currency: "USD"}},
		{name: "upper-case currency", body: evt("payment_intent.created", `{"id":"pi_1","amount":5,"currency":"USD"}`),
			want: &domain.PaymentCreated{Meta: meta("evt_1", "payment_intent.created", "pi_1", 1700000000), Amount: 5, Currency: "USD"}},
		{name: "zero amount", body: evt("payment_intent.created", `{"id":"pi_1","amount":0,"currency":"usd"}`),
			want: &domain.PaymentCreated{Meta: meta("evt_1", "payment_intent.created", "pi_1", 1700000000), Currency: "USD"}},
		{name: "failed with null last_payment_error", body: evt("payment_intent.payment_failed", `{"id":"pi_1","amount":5,"currency":"usd","last_payment_error":null}`),
			want: &domain.PaymentFailed{Meta: meta("evt_1", "payment_intent.payment_failed", "pi_1", 1700000000), Amount: 5, Currency: "USD"}},
		{name: "canceled with null reason", body: evt("payment_intent.canceled", `{"id":"pi_1","amount":5,"currency":"usd","cancellation_reason":null}`),
			want: &domain.PaymentCancelled{Meta: meta("evt_1", "payment_intent.canceled", "pi_1", 1700000000), Amount: 5, Currency: "USD"}},
		{name: "succeeded before amount_received existed", body: evt("payment_intent.succeeded", `{"id":"pi_1","amount":5,"currency":"usd"}`),
			want: &domain.PaymentSucceeded{Meta: meta("evt_1", "payment_intent.succeeded", "pi_1", 1700000000), Amount: 5, Currency: "USD"}},
		{name: "refund with expanded payment_intent",
			body: evt("charge.refunded", `{"id":"ch_1","amount":9,"amount_captured":9,"amount_refunded":9,"currency":"eur","payment_intent":{"id":"pi_9","object":"payment_intent"}}`),
			want: &domain.PaymentRefunded{Meta: meta("evt_1", "charge.refunded", "pi_9", 1700000000), AmountRefunded: 9, AmountCaptured: 9, Currency: "EUR"}},
		{name: "uncaptured charge without amount_captured",
			body: evt("charge.refunded", `{"id":"ch_1","amount":9,"amount_refunded":9,"captured":false,"currency":"eur","payment_intent":"pi_9"}`),
			want: &domain.PaymentRefunded{Meta: meta("evt_1", "charge.refunded", "pi_9", 1700000000), AmountRefunded: 9, Currency: "EUR"}},
		{name: "dispute closed with an unexpected status counts as won",
			body: evt("charge.dispute.closed", `{"id":"dp_1","amount":3,"currency":"usd","payment_intent":"pi_1","status":"charge_refunded"}`),
			want: &domain.DisputeClosed{Meta: meta("evt_1", "charge.dispute.closed", "pi_1", 1700000000), DisputeID: "dp_1", Outcome: domain.DisputeWon, Amount: 3, Currency: "USD"}},
		{name: "inquiry under review",
			body: evt("charge.dispute.created", `{"id":"dp_1","amount":3,"currency":"brl","payment_intent":"pi_1","status":"warning_under_review","reason":"general"}`),
			want: &domain.InquiryOpened{Meta: meta("evt_1", "charge.dispute.created", "pi_1", 1700000000), DisputeID: "dp_1", Amount: 3, Currency: "BRL", Reason: "general"}},
		{name: "charge.updated without previous_attributes, balance transaction expanded",
			body: evt("charge.updated", `{"id":"ch_1","payment_intent":"pi_1","balance_transaction":{"id":"txn_1","object":"balance_transaction"}}`),
			want: &domain.PaymentNotified{Meta: meta("evt_1", "charge.updated", "pi_1", 1700000000), Action: "balance_transaction txn_1"}},
		{name: "id of exactly 255 bytes", body: evt("payment_intent.created", `{"id":"pi_`+strings.Repeat("x", 252)+`","amount":5,"currency":"usd"}`),
			want: &domain.PaymentCreated{Meta: meta("evt_1", "payment_intent.created", "pi_"+strings.Repeat("x", 252), 1700000000), Amount: 5, Currency: "USD"}},
		{name: "last second of year 9999",
			body: `{"id":"evt_1","created":253402300799,"type":"payment_intent.created","data":{"object":{"id":"pi_1","amount":5,"currency":"usd"}}}`,
			want: &domain.PaymentCreated{Meta: meta("evt_1", "payment_intent.created", "pi_1", 253402300799), Amount: 5, Currency: "USD"}},
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), nil, nil, []byte(tt.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(n.Events) != 1 || !reflect.DeepEqual(n.Events[0], tt.want) {
				t.Fatalf("Parse = %#v (ignored %q), want %#v", n.Events, n.IgnoredReason, tt.want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	pi := func(fields string) string { return evt("payment_intent.succeeded", `{`+fields+`}`) }
	tests := []struct {
		name    string
		body    string
		wantMsg string
	}{
		{name: "empty body", body: ``, wantMsg: "malformed event JSON"},
		{name: "not JSON", body: `evt_1`, wantMsg: "malformed event JSON: invalid JSON at byte 1"},
		{name: "truncated", body: evt("payment_intent.created", `{"id":"pi_1"`), wantMsg: "malformed event JSON"},
		{name: "trailing garbage", body: evt("customer.created", `{}`) + `x`, wantMsg: "malformed event JSON"},
		{name: "array", body: `[]`, wantMsg: "malformed event JSON"},
		{name: "id is a number", body: `{"id":1,"type":"customer.created","created":1,"data":{"object":{}}}`, wantMsg: "malformed event JSON: id has the wrong type (number, want a string)"},
		{name: "null", body: `null`, wantMsg: "id is missing"},
		{name: "empty object", body: `{}`, wantMsg: "id is missing"},
		{name: "id with a space", body: `{"id":"evt 1","type":"customer.created","created":1,"data":{"object":{}}}`, wantMsg: "id contains whitespace"},
		{name: "id with a newline", body: `{"id":"evt_1\n","type":"customer.created","created":1,"data":{"object":{}}}`, wantMsg: "id contains whitespace"},
		{name: "id too long", body: `{"id":"` + strings.Repeat("e", 256) + `","type":"customer.created","created":1,"data":{"object":{}}}`, wantMsg: "id is longer than 255 bytes"},
		{name: "no type", body: `{"id":"evt_1","created":1,"data":{"object":{}}}`, wantMsg: "type is missing"},
		{name: "no created", body: `{"id":"evt_1","type":"customer.created","data":{"object":{}}}`, wantMsg: "created is missing"},
		{name: "null created", body: `{"id":"evt_1","type":"customer.created","created":null,"data":{"object":{}}}`, wantMsg: "created is missing"},
		{name: "zero created", body: `{"id":"evt_1","type":"customer.created","created":0,"data":{"object":{}}}`, wantMsg: "created is not a positive Unix timestamp"},
		{name: "negative created", body: `{"id":"evt_1","type":"customer.created","created":-1,"data":{"object":{}}}`, wantMsg: "created is not a positive"},
		{name: "string created", body: `{"id":"evt_1","type":"customer.created","created":"1700000000","data":{"object":{}}}`, wantMsg: "created is not a positive"},
		{name: "fractional created", body: `{"id":"evt_1","type":"customer.created","created":1.7e9,"data":{"object":{}}}`, wantMsg: "created is not a positive"},
		{name: "created after year 9999", body: `{"id":"evt_1","type":"customer.created","created":253402300800,"data":{"object":{}}}`, wantMsg: "created is after the year 9999"},
		{name: "no data", body: `{"id":"evt_1","type":"customer.created","created":1}`, wantMsg: "data.object is missing or not an object"},
		{name: "null data.object", body: evt("customer.created", `null`), wantMsg: "data.object is missing or not an object"},
		{name: "array data.object", body: evt("customer.created", `[]`), wantMsg: "data.object is missing or not an object"},
		{name: "string data.object", body: evt("customer.created", `"cus_1"`), wantMsg: "data.object is missing or not an object"},
		{name: "thin event", body: `{"id":"evt_1","object":"v2.core.event","type":"v1.billing.meter.error_report_triggered","created":"2024-09-17T06:20:52.246Z"}`, wantMsg: "thin events"},
		{name: "not an event", body: `{"id":"pi_1","object":"payment_intent","amount":5}`, wantMsg: `object "payment_intent" is not a Stripe event`},

		{name: "payment intent without id", body: pi(`"amount":5,"currency":"usd"`), wantMsg: "data.object.id is missing"},
		{name: "payment intent id with a tab", body: pi(`"id":"pi\t1","amount":5,"currency":"usd"`), wantMsg: "data.object.id contains whitespace"},
		{name: "payment intent id with zero-width space", body: pi(`"id":"pi_\u200b1","amount":5,"currency":"usd"`), wantMsg: "non-printable"},
		{name: "payment intent id too long", body: pi(`"id":"pi_` + strings.Repeat("x", 253) + `","amount":5,"currency":"usd"`), wantMsg: "data.object.id is longer than 255 bytes"},
		{name: "no amount", body: pi(`"id":"pi_1","currency":"usd"`), wantMsg: "data.object.amount is missing"},
		{name: "null amount", body: pi(`"id":"pi_1","amount":null,"currency":"usd"`), wantMsg: "data.object.amount is missing"},
		{name: "negative amount", body: pi(`"id":"pi_1","amount":-5,"currency":"usd"`), wantMsg: "data.object.amount is negative"},
		{name: "negative amount_received", body: pi(`"id":"pi_1","amount":5,"amount_received":-1,"currency":"usd"`), wantMsg: "data.object.amount_received is negative"},
		{name: "negative amount_capturable", body: pi(`"id":"pi_1","amount":5,"amount_capturable":-1,"currency":"usd"`), wantMsg: "data.object.amount_capturable is negative"},
		{name: "string amount", body: pi(`"id":"pi_1","amount":"5","currency":"usd"`), wantMsg: "malformed payment_intent object: data.object.amount has the wrong type (string, want an integer in range)"},
		{name: "fractional amount", body: pi(`"id":"pi_1","amount":5.5,"currency":"usd"`), wantMsg: "malformed payment_intent object"},
		{name: "amount overflows int64", body: pi(`"id":"pi_1","amount":92233720368547758070,"currency":"usd"`), wantMsg: "malformed payment_intent object"},
		{name: "no currency", body: pi(`"id":"pi_1","amount":5`), wantMsg: "data.object.currency: currency \"\" is not a three-letter ISO 4217 code"},
		{name: "two-letter currency", body: pi(`"id":"pi_1","amount":5,"currency":"us"`), wantMsg: "data.object.currency"},
		{name: "currency with a digit", body: pi(`"id":"pi_1","amount":5,"currency":"us1"`), wantMsg: "data.object.currency"},
		{name: "nested field of the wrong type", body: pi(`"id":"pi_1","amount":5,"currency":"usd","last_payment_error":{"code":5}`),
			wantMsg: "data.object.last_payment_error.code has the wrong type (number, want a string)"},
		{name: "payment_intent object is a string", body: evt("payment_intent.created", `"pi_1"`), wantMsg: "data.object is missing or not an object"},

		{name: "refund without charge id", body: evt("charge.refunded", `{"amount_refunded":1,"currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.id is missing"},
		{name: "refund without amount_refunded", body: evt("charge.refunded", `{"id":"ch_1","currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.amount_refunded is missing"},
		{name: "negative refund", body: evt("charge.refunded", `{"id":"ch_1","amount_refunded":-1,"currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.amount_refunded is negative"},
		{name: "negative amount_captured", body: evt("charge.refunded", `{"id":"ch_1","amount_captured":-1,"amount_refunded":1,"currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.amount_captured is negative"},
		{name: "refund payment_intent with space", body: evt("charge.refunded", `{"id":"ch_1","amount_refunded":1,"currency":"usd","payment_intent":"pi 1"}`), wantMsg: "data.object.payment_intent contains whitespace"},
		{name: "refund payment_intent is a number", body: evt("charge.refunded", `{"id":"ch_1","amount_refunded":1,"currency":"usd","payment_intent":7}`), wantMsg: "malformed charge object: data.object.payment_intent has the wrong type (number, want a string)"},
		{name: "refund without currency", body: evt("charge.refunded", `{"id":"ch_1","amount_refunded":1,"payment_intent":"pi_1"}`), wantMsg: "data.object.currency"},

		{name: "charge.updated without charge id", body: evt("charge.updated", `{"payment_intent":"pi_1","balance_transaction":"txn_1"}`), wantMsg: "data.object.id is missing"},
		{name: "charge.updated balance transaction with a space", body: evt("charge.updated", `{"id":"ch_1","payment_intent":"pi_1","balance_transaction":"txn 1"}`), wantMsg: "data.object.balance_transaction contains whitespace"},
		{name: "charge.updated balance transaction is a number", body: evt("charge.updated", `{"id":"ch_1","payment_intent":"pi_1","balance_transaction":5}`), wantMsg: "malformed charge object"},

		{name: "dispute without id", body: evt("charge.dispute.created", `{"amount":1,"currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.id is missing"},
		{name: "dispute without amount", body: evt("charge.dispute.created", `{"id":"dp_1","currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.amount is missing"},
		{name: "negative dispute", body: evt("charge.dispute.created", `{"id":"dp_1","amount":-1,"currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.amount is negative"},
		{name: "closed dispute without status", body: evt("charge.dispute.closed", `{"id":"dp_1","amount":1,"currency":"usd","payment_intent":"pi_1"}`), wantMsg: "data.object.status is missing on a closed dispute"},
		{name: "dispute reason is an object", body: evt("charge.dispute.created", `{"id":"dp_1","amount":1,"currency":"usd","payment_intent":"pi_1","reason":{}}`), wantMsg: "malformed dispute object: data.object.reason has the wrong type (object, want a string)"},
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), nil, nil, []byte(tt.body))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", n)
			}
			if domain.KindOf(err) != domain.KindInvalid {
				t.Errorf("kind = %v, want invalid (%v)", domain.KindOf(err), err)
			}
			if msg := domain.MessageOf(err); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q does not say %q", msg, tt.wantMsg)
			}
		})
	}
}

package mercadopago

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// notified builds the event Parse should produce.
func notified(id, typ, payment, action string, at time.Time) *domain.PaymentNotified {
	return &domain.PaymentNotified{Meta: domain.Meta{Provider: "mercadopago", ProviderEventID: id, ProviderEventType: typ,
		ProviderPaymentID: payment, OccurredAt: at}, Action: action}
}

// body builds a payment notification with the given raw JSON id, date and
// data.id (raw JSON; empty: no data object).
func body(id, date, dataID string) []byte {
	b := `{"id":` + id + `,"live_mode":true,"type":"payment","date_created":"` + date + `","user_id":44444,"api_version":"v1","action":"payment.updated"`
	if dataID != "" {
		b += `,"data":{"id":` + dataID + `}`
	}
	return []byte(b + `}`)
}

func TestParse(t *testing.T) {
	const date = "2026-03-01T10:00:00.000-03:00"
	at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		body        []byte
		query       url.Values
		want        *domain.PaymentNotified // nil: ignored or error
		wantType    string                  // Notification.ProviderEventType when ignored
		wantIgnored string                  // part of the ignored reason
		wantErr     string                  // part of the KindInvalid message
	}{
		{name: "spec vector", body: vectorBody(t), query: queryOf(vectorDataID),
			want: notified("12345", "payment", "999999999", "payment.created", time.Date(2015, 3, 25, 14, 4, 58, 396_000_000, time.UTC))},
		{name: "hex string notification id", body: body(`"a47fc06844bf4e418a03aeab1479c496"`, date, `"123"`), query: queryOf("123"),
			want: notified("a47fc06844bf4e418a03aeab1479c496", "payment", "123", "payment.updated", at)},
		{name: "id above 2^53 keeps its digits", body: body(`9007199254740993`, date, `"123"`), query: queryOf("123"),
			want: notified("9007199254740993", "payment", "123", "payment.updated", at)},
		{name: "id above 2^64 keeps its digits", body: body(`123456789012345678901234567890`, date, `"123"`), query: queryOf("123"),
			want: notified("123456789012345678901234567890", "payment", "123", "payment.updated", at)},
		{name: "numeric data.id in the body", body: body(`1`, date, `98765432109876543`), query: queryOf("98765432109876543"),
			want: notified("1", "payment", "98765432109876543", "payment.updated", at)},
		{name: "no data object: the signed query names the payment", body: body(`1`, date, ""), query: queryOf("123"),
			want: notified("1", "payment", "123", "payment.updated", at)},
		{name: "null data.id", body: body(`1`, date, `null`), query: queryOf("123"),
			want: notified("1", "payment", "123", "payment.updated", at)},
		{name: "offset Z", body: body(`1`, "2026-03-01T13:00:00Z", `"123"`), query: queryOf("123"), want: notified("1", "payment", "123", "payment.updated", at)},
		{name: "offset +05:30 without fraction", body: body(`1`, "2026-03-01T18:30:00+05:30", `"123"`), query: queryOf("123"), want: notified("1", "payment", "123", "payment.updated", at)},
		{name: "offset without colon", body: body(`1`, "2026-03-01T10:00:00.000-0300", `"123"`), query: queryOf("123"), want: notified("1", "payment", "123", "payment.updated", at)},
		{name: "nanoseconds", body: body(`1`, "2026-03-01T13:00:00.123456789Z", `"123"`), query: queryOf("123"),
			want: notified("1", "payment", "123", "payment.updated", at.Add(123456789))},
		{name: "no type: the action says the topic", body: []byte(`{"id":7,"action":"payment.created","date_created":"` + date + `","data":{"id":"123"}}`),
			query: queryOf("123"), want: notified("7", "payment.created", "123", "payment.created", at)},
		{name: "no action", body: []byte(`{"id":7,"type":"payment","date_created":"` + date + `","data":{"id":"123"}}`),
			query: queryOf("123"), want: notified("7", "payment", "123", "", at)},
		{name: "unknown fields and newer envelope fields are ignored",
			body:  []byte(`{"id":7,"type":"payment","application_id":"1234","version":2,"extra":{"x":[1,2]},"date_created":"` + date + `","data":{"id":"123","more":true}}`),
			query: queryOf("123"), want: notified("7", "payment", "123", "", at)},

		// Other topics: acknowledged, not tracked.
		{name: "merchant_order", body: []byte(`{"id":"8","type":"merchant_order","data":{"id":"555"}}`), query: queryOf("555"),
			wantType: "merchant_order", wantIgnored: "merchant orders are not tracked"},
		{name: "topic_merchant_order_wh", body: []byte(`{"id":"8","type":"topic_merchant_order_wh","data":{"id":"555"}}`), query: queryOf("555"),
			wantType: "topic_merchant_order_wh", wantIgnored: "merchant orders"},
		{name: "chargebacks", body: []byte(`{"id":"8","type":"topic_chargebacks_wh","data":{"id":"555"}}`), query: queryOf("555"),
			wantType: "topic_chargebacks_wh", wantIgnored: "charged_back"},
		{name: "claims", body: []byte(`{"id":"8","type":"topic_claims_integration_wh","data":{"id":"555"}}`), query: queryOf("555"),
			wantType: "topic_claims_integration_wh", wantIgnored: "claim notifications"},
		{name: "fraud alert", body: []byte(`{"id":"8","type":"stop_delivery_op_wh","data":{"id":"555"}}`), query: queryOf("555"),
			wantType: "stop_delivery_op_wh", wantIgnored: "does not retry"},
		{name: "Orders API", body: []byte(`{"id":"8","type":"order","action":"order.processed","data":{"id":"ORD01JQ4S4KY8HWQ6NA5PXB65B3D3"}}`),
			query: queryOf("ORD01JQ4S4KY8HWQ6NA5PXB65B3D3"), wantType: "order", wantIgnored: "Orders API"},
		{name: "subscription", body: []byte(`{"id":"8","type":"subscription_preapproval","data":{"id":"2c93"}}`), query: queryOf("2c93"),
			wantType: "subscription_preapproval", wantIgnored: `topic "subscription_preapproval" is not tracked`},
		{name: "ignored topic needs no date nor data.id", body: []byte(`{"id":"8","type":"merchant_order"}`), query: nil,
			wantType: "merchant_order", wantIgnored: "merchant orders"},
		{name: "ignored topic by action", body: []byte(`{"id":"8","action":"order.processed"}`), query: nil,
			wantType: "order.processed", wantIgnored: "Orders API"},

		// Invalid.
		{name: "query and body name different payments", body: body(`1`, date, `"123"`), query: queryOf("124"), wantErr: `data.id "123" in the body differs from the signed data.id "124"`},
		{name: "re-cased body id is another id", body: body(`1`, date, `"ord01"`), query: queryOf("ORD01"), wantErr: "differs"},
		{name: "payment without data.id in the URL", body: body(`1`, date, `"123"`), query: queryOf(""), wantErr: "without data.id in the URL"},
		{name: "payment with data.id twice in the URL", body: body(`1`, date, `"123"`), query: url.Values{QueryDataID: {"123", "123"}}, wantErr: "more than once"},
		{name: "data.id with a space", body: body(`1`, date, ""), query: queryOf("12 3"), wantErr: "data.id contains whitespace"},
		{name: "data.id too long", body: body(`1`, date, ""), query: queryOf(strings.Repeat("9", 256)), wantErr: "longer than 255"},
		{name: "body data.id is an object", body: body(`1`, date, `{"x":1}`), query: queryOf("123"), wantErr: "data.id is neither a string nor a number"},
		{name: "body data.id is a fraction", body: body(`1`, date, `12.5`), query: queryOf("12.5"), wantErr: "data.id is a number but not a non-negative integer"},
		{name: "malformed JSON", body: []byte(`{"id":1,`), query: queryOf("123"), wantErr: "malformed notification JSON"},
		{name: "truncated", body: vectorBody(t)[:80], query: queryOf(vectorDataID), wantErr: "malformed notification JSON"},
		{name: "empty body", body: nil, query: queryOf("123"), wantErr: "the body is empty"},
		{name: "trailing data", body: append(vectorBody(t), []byte(` {}`)...), query: queryOf(vectorDataID), wantErr: "data after the object"},
		{name: "array", body: []byte(`[]`), query: queryOf("123"), wantErr: "malformed notification JSON"},
		{name: "null", body: []byte(`null`), query: queryOf("123"), wantErr: "id is missing"},
		{name: "no id", body: []byte(`{"type":"payment","date_created":"` + date + `","data":{"id":"123"}}`), query: queryOf("123"), wantErr: "id is missing"},
		{name: "legacy IPN body", body: []byte(`{"resource":"123","topic":"payment"}`), query: url.Values{"id": {"123"}, "topic": {"payment"}}, wantErr: "source_news=webhooks"},
		{name: "empty string id", body: body(`""`, date, `"123"`), query: queryOf("123"), wantErr: "id is missing"},
		{name: "negative id", body: body(`-1`, date, `"123"`), query: queryOf("123"), wantErr: "id is a number but not a non-negative integer"},
		{name: "exponent id", body: body(`1e3`, date, `"123"`), query: queryOf("123"), wantErr: "not a non-negative integer"},
		{name: "boolean id", body: body(`true`, date, `"123"`), query: queryOf("123"), wantErr: "id is neither a string nor a number"},
		{name: "id with a newline", body: body(`"a\nb"`, date, `"123"`), query: queryOf("123"), wantErr: "id contains whitespace"},
		{name: "numeric type", body: []byte(`{"id":1,"type":5}`), query: queryOf("123"), wantErr: "type has the wrong type"},
		{name: "no type nor action", body: []byte(`{"id":1,"data":{"id":"123"}}`), query: queryOf("123"), wantErr: "type and action are both missing"},
		{name: "type with a space", body: []byte(`{"id":1,"type":"pay ment"}`), query: queryOf("123"), wantErr: "type contains whitespace"},
		{name: "no date_created", body: []byte(`{"id":1,"type":"payment","data":{"id":"123"}}`), query: queryOf("123"), wantErr: "date_created is missing"},
		{name: "date without offset", body: body(`1`, "2026-03-01T10:00:00.000", `"123"`), query: queryOf("123"), wantErr: "not an ISO-8601 time with an offset"},
		{name: "date only", body: body(`1`, "2026-03-01", `"123"`), query: queryOf("123"), wantErr: "not an ISO-8601"},
		{name: "date before 1970", body: body(`1`, "1969-12-31T23:59:59Z", `"123"`), query: queryOf("123"), wantErr: "out of range"},
		{name: "date past the year 9999 in UTC", body: body(`1`, "9999-12-31T23:00:00-05:00", `"123"`), query: queryOf("123"), wantErr: "out of range"},
		{name: "data is a string", body: []byte(`{"id":1,"type":"payment","data":"123"}`), query: queryOf("123"), wantErr: "data has the wrong type"},
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), headers(vectorHeader, vectorRequestID), tt.query, tt.body)
			if tt.wantErr != "" {
				if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(domain.MessageOf(err), tt.wantErr) {
					t.Fatalf("Parse() = %+v, %v; want KindInvalid mentioning %q", n, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if n.Provider != "mercadopago" || n.SignatureHeader != vectorHeader {
				t.Errorf("notification %+v", n)
			}
			if tt.want == nil {
				if len(n.Events) != 0 || !strings.Contains(n.IgnoredReason, tt.wantIgnored) || n.ProviderEventType != tt.wantType || n.ProviderEventID != "8" {
					t.Fatalf("Parse() = %+v; want ignored (%q) with type %q", n, tt.wantIgnored, tt.wantType)
				}
				return
			}
			if len(n.Events) != 1 || n.IgnoredReason != "" {
				t.Fatalf("Parse() = %+v; want one event", n)
			}
			if !reflect.DeepEqual(n.Events[0], tt.want) {
				t.Errorf("event = %+v\nwant    %+v", n.Events[0], tt.want)
			}
			if n.ProviderEventID != tt.want.ProviderEventID || n.ProviderEventType != tt.want.ProviderEventType {
				t.Errorf("notification identity %q %q", n.ProviderEventID, n.ProviderEventType)
			}
			if s := domain.Fold(n.Events...).State(); s.Status != domain.StatusPending || len(s.ReviewReasons) != 0 {
				t.Errorf("folds to %+v", s)
			}
		})
	}
}

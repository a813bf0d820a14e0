package mercadopago

import (
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// withFees is answer with fee_details (raw JSON) added.
func withFees(status, amount, currency, feeDetails string) string {
	a := answer("1319876543210", status, "accredited", amount, "0", currency, "2026-03-01T11:00:00.000-03:00")
	return a[:len(a)-1] + `,"fee_details":` + feeDetails + `}`
}

// TestObserveFee: the fee is the collector's share of fee_details, the
// published example (12.34 with a 0.62 collector fee) first.
func TestObserveFee(t *testing.T) {
	published, err := os.ReadFile("testdata/api/payment_published_fee.json")
	if err != nil {
		t.Fatal(err)
	}
	realistic, err := os.ReadFile("testdata/api/payment_approved.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, body string
		want           int64
		wantCur        domain.Currency
		wantNone       bool
	}{
		{name: "published example", id: "17014025134", body: string(published), want: 62, wantCur: "BRL"},
		{name: "realistic answer", id: "1319876543210", body: string(realistic), want: 868, wantCur: "BRL"},
		{name: "payer-paid fees do not count", id: "1319876543210", body: withFees("approved", "100", "BRL",
			`[{"type":"mercadopago_fee","amount":4.99,"fee_payer":"collector"},{"type":"financing_fee","amount":7.5,"fee_payer":"payer"},`+
				`{"type":"coupon_fee","amount":1.01,"fee_payer":"collector"}]`), want: 600, wantCur: "BRL"},
		{name: "only payer fees: we pay nothing", id: "1319876543210", body: withFees("approved", "100", "BRL",
			`[{"type":"financing_fee","amount":7.5,"fee_payer":"payer"}]`), want: 0, wantCur: "BRL"},
		{name: "approved without fees", id: "1319876543210", body: withFees("approved", "100", "BRL", `[]`), want: 0, wantCur: "BRL"},
		{name: "a currency without decimals", id: "1319876543210", body: withFees("approved", "1500", "CLP",
			`[{"type":"mercadopago_fee","amount":57,"fee_payer":"collector"}]`), want: 57, wantCur: "CLP"},
		{name: "pending, fees not computed yet", id: "1319876543210", body: withFees("pending", "100", "BRL", `[]`), wantNone: true},
		{name: "no fee_details", id: "1319876543210", body: answer("1319876543210", "approved", "accredited", "100", "0", "BRL", ""), wantNone: true},
		{name: "null fee_details", id: "1319876543210", body: withFees("approved", "100", "BRL", `null`), wantNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, testToken, reply{status: 200, body: tt.body})
			facts, err := c.Observe(t.Context(), tt.id)
			if err != nil {
				t.Fatalf("Observe: %v", err)
			}
			obs, err := c.FetchStatus(t.Context(), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			want := []domain.Event{obs}
			if !tt.wantNone {
				m := obs.Meta
				m.ProviderEventID = providers.ObservationID(tt.id, "fee", strconv.FormatInt(tt.want, 10), string(tt.wantCur))
				want = append(want, &domain.FeeAssessed{Meta: m, Amount: tt.want, Currency: tt.wantCur, Source: "fee_details"})
			}
			if !reflect.DeepEqual(facts, want) {
				t.Fatalf("Observe = %+v\nwant %+v", facts, want)
			}
		})
	}
}

// TestObserveFeeIsOneFact: the same fee fetched after another change of
// the payment (a refund) is the same fact; a different fee is a new one.
func TestObserveFeeIsOneFact(t *testing.T) {
	fee := `[{"type":"mercadopago_fee","amount":0.62,"fee_payer":"collector"}]`
	first := withFees("approved", "12.34", "BRL", fee)
	refunded := answer("1319876543210", "approved", "partially_refunded", "12.34", "2", "BRL", "2026-03-02T11:00:00.000-03:00")
	refunded = refunded[:len(refunded)-1] + `,"fee_details":` + fee + `}`
	c, _ := serve(t, testToken, reply{status: 200, body: first}, reply{status: 200, body: refunded})
	a, err := c.Observe(t.Context(), "1319876543210")
	if err != nil || len(a) != 2 {
		t.Fatalf("first Observe = %+v, %v", a, err)
	}
	b, err := c.Observe(t.Context(), "1319876543210")
	if err != nil || len(b) != 2 {
		t.Fatalf("second Observe = %+v, %v", b, err)
	}
	if a[0].EventMeta().ProviderEventID == b[0].EventMeta().ProviderEventID {
		t.Errorf("the refund did not change the observation's ID")
	}
	if a[1].EventMeta().Key() != b[1].EventMeta().Key() {
		t.Errorf("the same fee got two IDs: %q and %q", a[1].EventMeta().Key(), b[1].EventMeta().Key())
	}
	if !a[1].EventMeta().OccurredAt.Equal(time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("fee dated %v, want the answer's date_last_updated", a[1].EventMeta().OccurredAt)
	}
}

func TestObserveFeeInvalid(t *testing.T) {
	tests := []struct{ name, fees string }{
		{"negative collector fee", `[{"type":"mercadopago_fee","amount":-0.62,"fee_payer":"collector"}]`},
		{"more decimals than the currency has", `[{"type":"mercadopago_fee","amount":0.625,"fee_payer":"collector"}]`},
		{"collector fee without amount", `[{"type":"mercadopago_fee","fee_payer":"collector"}]`},
		{"amount is not a number", `[{"type":"mercadopago_fee","amount":"abc","fee_payer":"collector"}]`},
		{"fee_details is an object", `{"amount":0.62}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, testToken, reply{status: 200, body: withFees("approved", "12.34", "BRL", tt.fees)})
			facts, err := c.Observe(t.Context(), "1319876543210")
			if err == nil || domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Observe = %+v, %v; want a KindInvalid error", facts, err)
			}
		})
	}
}

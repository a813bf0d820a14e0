package mercadopago

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
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
			if want := []domain.Event{obs}; !reflect.DeepEqual(facts, want) {
				t.Fatalf("Observe = %+v\nwant %+v", facts, want)
			}
			if tt.wantNone {
				if obs.StatesFee() {
					t.Fatalf("states fee %d %s, want none", obs.Fee, obs.FeeCurrency)
				}
				return
			}
			if obs.Fee != tt.want || obs.FeeCurrency != tt.wantCur || obs.FeeSource != "fee_details" {
				t.Fatalf("states fee %d %s from %q, want %d %s from fee_details", obs.Fee, obs.FeeCurrency, obs.FeeSource, tt.want, tt.wantCur)
			}
		})
	}
}

// TestObserveFeeIsPartOfTheState: the same answer fetched twice is one
// fact; the same answer with another fee is a new one, dated like it.
func TestObserveFeeIsPartOfTheState(t *testing.T) {
	first := withFees("approved", "12.34", "BRL", `[{"type":"mercadopago_fee","amount":0.62,"fee_payer":"collector"}]`)
	restated := withFees("approved", "12.34", "BRL", `[{"type":"mercadopago_fee","amount":0.70,"fee_payer":"collector"}]`)
	c, _ := serve(t, testToken, reply{status: 200, body: first}, reply{status: 200, body: first}, reply{status: 200, body: restated})
	var got []*domain.PaymentStatusObserved
	for range 3 {
		facts, err := c.Observe(t.Context(), "1319876543210")
		if err != nil || len(facts) != 1 {
			t.Fatalf("Observe = %+v, %v", facts, err)
		}
		got = append(got, facts[0].(*domain.PaymentStatusObserved))
	}
	if got[0].Key() != got[1].Key() {
		t.Errorf("the same answer got two IDs: %q and %q", got[0].Key(), got[1].Key())
	}
	if got[0].Key() == got[2].Key() || got[2].Fee != 70 {
		t.Errorf("a new fee (%d) kept the observation's ID %q", got[2].Fee, got[2].Key())
	}
	if !got[0].OccurredAt.Equal(time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("observation dated %v, want the answer's date_last_updated", got[0].OccurredAt)
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

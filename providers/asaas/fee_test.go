package asaas

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/rest"
)

// TestFeeOfPayment maps value − netValue, the published example (value 100,
// netValue 94.51) first.
func TestFeeOfPayment(t *testing.T) {
	tests := []struct {
		name, value, net string
		want             int64
		wantNone         bool
	}{
		{name: "published example", value: "100", net: "94.51", want: 549},
		{name: "two decimals both", value: "42.23", net: "41.24", want: 99},
		{name: "no fee", value: "100.00", net: "100", want: 0},
		{name: "fee above a tiny value", value: "1.00", net: "-0.99", want: 199},
		{name: "netValue above value", value: "100", net: "100.01", wantNone: true},
		{name: "no netValue", value: "100", net: "", wantNone: true},
		{name: "no value", value: "", net: "94.51", wantNone: true},
		{name: "inexact netValue", value: "100", net: "94.515", wantNone: true},
		{name: "exponent notation", value: "100", net: "9.451e1", wantNone: true},
		{name: "negative value", value: "-1", net: "-2", wantNone: true},
	}
	meta := domain.Meta{Provider: "asaas", ProviderEventID: "evt_1&1", SubKey: "fee", ProviderPaymentID: "pay_1"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := feeOf(meta, payment{ID: "pay_1", Value: json.Number(tt.value), NetValue: json.Number(tt.net)})
			if tt.wantNone {
				if got != nil {
					t.Fatalf("feeOf = %+v, want no fee", got)
				}
				return
			}
			want := &domain.FeeAssessed{Meta: meta, Amount: tt.want, Currency: "BRL", Source: "netValue"}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("feeOf = %+v, want %+v", got, want)
			}
		})
	}
}

// TestObserveStatesTheFee: the fetched payment (value 100, netValue 94.51)
// yields one observation stating a fee of 549, whose content-derived ID
// includes the fee and is the same on every fetch; a payment without
// netValue yields an observation that states no fee, and another ID.
func TestObserveStatesTheFee(t *testing.T) {
	f := newFakeAPI(t, testUserAgent)
	c := newClient(t, f, StatusConfig{Options: rest.Options{UserAgent: testUserAgent}})
	f.set("pay_080225913252", ok(apiPayment(t, nil)))
	f.set("pay_nonet", ok(apiPayment(t, edits{"id": "pay_nonet", "netValue": nil})))

	facts, err := c.Observe(t.Context(), "pay_080225913252")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := c.FetchStatus(t.Context(), "pay_080225913252")
	if err != nil {
		t.Fatal(err)
	}
	if obs.Fee != 549 || obs.FeeCurrency != "BRL" || obs.FeeSource != "netValue" {
		t.Fatalf("observation states fee %d %q from %q, want 549 BRL from netValue", obs.Fee, obs.FeeCurrency, obs.FeeSource)
	}
	if want := []domain.Event{obs}; !reflect.DeepEqual(facts, want) {
		t.Fatalf("Observe =\n %s\nwant\n %s", describeEvents(facts), describeEvents(want))
	}
	again, err := c.Observe(t.Context(), "pay_080225913252")
	if err != nil || !reflect.DeepEqual(again, facts) {
		t.Fatalf("Observe again = %s, %v: the same fee must be the same fact", describeEvents(again), err)
	}

	facts, err = c.Observe(t.Context(), "pay_nonet")
	if err != nil || len(facts) != 1 {
		t.Fatalf("Observe without netValue = %s, %v; want the observation only", describeEvents(facts), err)
	}
	if o := facts[0].(*domain.PaymentStatusObserved); o.StatesFee() {
		t.Fatalf("without netValue the observation states fee %d %s", o.Fee, o.FeeCurrency)
	}
}

func describeEvents(evs []domain.Event) string {
	b, _ := json.Marshal(evs)
	return string(b)
}

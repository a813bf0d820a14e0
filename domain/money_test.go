package domain_test

import (
	"testing"

	"github.com/payledger/payledger/domain"
)

func TestNewCurrency(t *testing.T) {
	tests := []struct {
		in      string
		want    domain.Currency
		wantErr bool
	}{
		{in: "usd", want: "USD"},
		{in: "BRL", want: "BRL"},
		{in: "Jpy", want: "JPY"},
		{in: "", wantErr: true},
		{in: "us", wantErr: true},
		{in: "usdd", wantErr: true},
		{in: "u$d", wantErr: true},
		{in: "ü1", wantErr: true},
		{in: "aſ", wantErr: true}, // upper-cases to "AS", two bytes
		{in: "ıa", wantErr: true},
		{in: "@[`", wantErr: true},
	}
	for _, tt := range tests {
		got, err := domain.NewCurrency(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("NewCurrency(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("NewCurrency(%q) error kind = %v, want invalid", tt.in, domain.KindOf(err))
		}
	}
	if domain.Currency("JPY").Exponent() != 0 || domain.Currency("USD").Exponent() != 2 || domain.Currency("KWD").Exponent() != 3 {
		t.Error("wrong currency exponents")
	}
}

func TestErrorKinds(t *testing.T) {
	err := domain.Invalid("stripe: verify", "bad signature", nil)
	if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) != "bad signature" {
		t.Errorf("kind/message = %v/%q", domain.KindOf(err), domain.MessageOf(err))
	}
	if err.Error() != "stripe: verify: bad signature" {
		t.Errorf("Error() = %q", err.Error())
	}
	if domain.KindOf(nil) != domain.KindInternal || domain.KindInternal.String() != "internal" || domain.KindTooLarge.String() != "too_large" {
		t.Error("zero kind must be internal")
	}
}

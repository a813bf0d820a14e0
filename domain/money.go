package domain

import (
	"fmt"
	"strings"
)

// Currency is an ISO 4217 alphabetic code, always upper case ("USD", "BRL").
// Providers disagree on case (Stripe sends "usd"); NewCurrency normalises.
type Currency string

// NewCurrency validates and upper-cases a three-letter code.
func NewCurrency(code string) (Currency, error) {
	if len(code) != 3 {
		return "", Invalid("currency", fmt.Sprintf("currency %q is not a three-letter ISO 4217 code", code), nil)
	}
	up := strings.ToUpper(code)
	for i := 0; i < 3; i++ {
		if up[i] < 'A' || up[i] > 'Z' {
			return "", Invalid("currency", fmt.Sprintf("currency %q is not a three-letter ISO 4217 code", code), nil)
		}
	}
	return Currency(up), nil
}

// Exponent returns the number of minor-unit digits of the currency (2 for
// USD, 0 for JPY, 3 for BHD). Amounts are stored in minor units whatever the
// exponent; this is for converting decimal provider amounts and for display.
func (c Currency) Exponent() int {
	switch c {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF",
		"UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	case "CLF", "UYW":
		return 4
	}
	return 2
}

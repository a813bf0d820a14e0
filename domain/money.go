package domain

import (
	"fmt"
	"math"
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
	// Check the bytes before upper-casing: ToUpper shortens some non-ASCII
	// runes ("ſ" to "S"), so "aſ" is three bytes before and two after.
	for i := 0; i < 3; i++ {
		if c := code[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "", Invalid("currency", fmt.Sprintf("currency %q is not a three-letter ISO 4217 code", code), nil)
		}
	}
	return Currency(strings.ToUpper(code)), nil
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

// ParseMinorUnits converts a decimal amount in major units ("123.45", as
// Mercado Pago and Asaas send them) to int64 minor units of c, exactly: no
// floating point is involved. Digits past the currency's exponent must be
// zeros ("10.500" BRL is 1050; "10.505" BRL is an error, not a rounding).
// A leading '-' is accepted; exponent notation is not.
func ParseMinorUnits(decimal string, c Currency) (int64, error) {
	const op = "money"
	bad := func(why string) error {
		return Invalid(op, fmt.Sprintf("amount %q: %s", decimal, why), nil)
	}
	s := decimal
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	if whole == "" || (hasPoint && frac == "") {
		return 0, bad("not a decimal number")
	}
	exp := c.Exponent()
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return 0, bad(fmt.Sprintf("has more than %d decimal places for %s", exp, c))
		}
		frac = frac[:exp]
	}
	frac += strings.Repeat("0", exp-len(frac))
	var v int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, bad("not a decimal number")
		}
		d := int64(r - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, bad("out of range")
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, nil
}

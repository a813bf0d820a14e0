package console

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

var funcs = template.FuncMap{
	"money":      money,
	"when":       when,
	"body":       rawBody,
	"pretty":     pretty,
	"list":       func(s ...string) []string { return s },
	"pathEscape": url.PathEscape,
	"deref": func(v any) any {
		switch p := v.(type) {
		case *string:
			return *p
		case *bool:
			return *p
		}
		return v
	},
}

// money renders minor units with the currency's decimals ("1.234,56" is
// the browser's business; the console shows 1234.56 BRL unambiguously).
func money(amount int64, currency string) string {
	exp := domain.Currency(currency).Exponent()
	neg := amount < 0
	if neg {
		amount = -amount
	}
	s := strconv.FormatInt(amount, 10)
	if exp > 0 {
		for len(s) <= exp {
			s = "0" + s
		}
		s = s[:len(s)-exp] + "." + s[len(s)-exp:]
	}
	if neg {
		s = "-" + s
	}
	if currency == "" {
		return s
	}
	return s + " " + currency
}

// when renders an RFC 3339 time as a <time> element in UTC; console.js
// shows it in the browser's zone and keeps UTC on hover.
func when(rfc3339 string) template.HTML {
	if rfc3339 == "" {
		return "-"
	}
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(rfc3339))
	}
	utc := t.UTC().Format("2006-01-02 15:04:05Z")
	return template.HTML(`<time datetime="` + template.HTMLEscapeString(t.UTC().Format(time.RFC3339Nano)) + `" title="` +
		utc + `">` + utc + `</time>`)
}

// rawBody decodes a base64 body for display (escaped by the template, so a
// body holding markup shows as text).
func rawBody(b64 string) string {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "(not base64: " + err.Error() + ")"
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") == nil {
		return out.String()
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func pretty(raw json.RawMessage) string {
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return string(raw)
	}
	return out.String()
}

package pagarme

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

const opParse = "pagarme: parse"

// Bounds on strings taken from payloads: IDs name streams and go into URLs
// and indexes; statuses are stored with every event. Pagar.me's are far
// shorter.
const (
	maxIDLen     = 255
	maxStatusLen = 64
)

func invalid(msg string) error { return domain.Invalid(opParse, msg, nil) }

// checkID validates an identifier taken from the payload: present, at most
// maxIDLen bytes, and printable without spaces, so it is safe as a stream
// name, in a URL path segment and in logs.
func checkID(field, id string) error {
	if msg := providers.IDProblem(field, id); msg != "" {
		return invalid(msg)
	}
	return nil
}

// checkStatus validates an optional status word.
func checkStatus(field, s string) error {
	if len(s) > maxStatusLen || (s != "" && !printable(s)) {
		return invalid(field + " is not a status word")
	}
	return nil
}

// printable reports whether s is valid UTF-8 of printable runes, no spaces.
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// currency validates and upper-cases a currency; Pagar.me is BRL-only and
// the field is sometimes absent, so "" is fallback.
func currency(field, code string, fallback domain.Currency) (domain.Currency, error) {
	if code == "" {
		return fallback, nil
	}
	c, err := domain.NewCurrency(code)
	if err != nil {
		return "", invalid(field + ": " + domain.MessageOf(err))
	}
	return c, nil
}

// parseTimestamp reads an ISO-8601 timestamp. One without an offset is read
// as UTC: Pagar.me's samples exist both ways and its servers' zone is not
// documented [UNVERIFIED]. The year must be within 1970..9999 in UTC: events
// are stored as JSON, which cannot hold a later instant.
func parseTimestamp(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, invalid(field + " is missing")
	}
	// The forms Pagar.me is seen to send: with an offset (Z or ±hh:mm,
	// optional fraction), with a colon-less offset, and without an offset.
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999"} {
		t, err := time.ParseInLocation(layout, s, time.UTC)
		if err != nil {
			continue
		}
		t = t.UTC()
		if y := t.Year(); y < 1970 || y > 9999 {
			return time.Time{}, invalid(field + " " + quote(s) + " is outside the years 1970..9999")
		}
		return t, nil
	}
	return time.Time{}, invalid(field + " " + quote(s) + " is not an ISO-8601 timestamp")
}

// decodeError is a KindInvalid error for a payload encoding/json rejected,
// naming the field (prefix + JSON path).
func decodeError(what, prefix string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return domain.Invalid(opParse, "malformed "+what+": "+prefix+typeErr.Field+" has the wrong type ("+typeErr.Value+")", err)
	case errors.As(err, &syntaxErr):
		return domain.Invalid(opParse, "malformed "+what+": invalid JSON at byte "+strconv.FormatInt(syntaxErr.Offset, 10), err)
	}
	return domain.Invalid(opParse, "malformed "+what, err)
}

// quote quotes a payload or header string for an error message, shortened.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

// norm folds a status word for comparison: Pagar.me's own code knows both
// "with_error" and "withError".
func norm(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "")
}

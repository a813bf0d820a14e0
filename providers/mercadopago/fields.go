package mercadopago

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// invalid is a KindInvalid error of a webhook payload or an API answer.
func invalid(msg string) error { return domain.Invalid(ProviderName, msg, nil) }

// checkID validates an identifier: present, at most maxIDLen bytes, and
// printable without spaces, so it is safe as a stream name, in a URL path
// segment and in logs.
func checkID(field, id string) error {
	if msg := providers.IDProblem(field, id); msg != "" {
		return invalid(msg)
	}
	return nil
}

// idString turns an ID decoded under UseNumber into its string form: a
// json.Number keeps its exact digits, a string is taken as is. Absent, null
// and "" are "" (the caller decides whether it is required). A number must be
// a non-negative integer: "1e3" or "12.0" would name a different ID than the
// one Mercado Pago means.
func idString(field string, v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case json.Number:
		s := v.String()
		if !allDigits(s) {
			return "", invalid(field + " is a number but not a non-negative integer")
		}
		return s, checkID(field, s)
	case string:
		if v == "" {
			return "", nil
		}
		return v, checkID(field, v)
	}
	return "", invalid(field + " is neither a string nor a number")
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Mercado Pago writes ISO-8601 with fractional seconds and an offset
// ("2015-03-25T10:04:58.396-04:00"); the second layout tolerates an offset
// without a colon.
var timeLayouts = [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"}

// epoch and maxTime bound accepted timestamps: before 1970 is not a Mercado
// Pago date, and time.Time cannot marshal (so the store cannot keep) an
// instant after the year 9999.
var (
	epoch   = time.Unix(0, 0).UTC()
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// parseTime parses a required Mercado Pago timestamp into UTC.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, invalid(field + " is missing")
	}
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		t = t.UTC()
		if t.Before(epoch) || t.After(maxTime) {
			return time.Time{}, invalid(field + " " + strconv.Quote(truncate(s)) + " is out of range")
		}
		return t, nil
	}
	return time.Time{}, invalid(field + " " + strconv.Quote(truncate(s)) + " is not an ISO-8601 time with an offset")
}

// decodeError is a KindInvalid error for a payload encoding/json rejected,
// naming the field when it can.
func decodeError(op, what string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return domain.Invalid(op, "malformed "+what+": "+typeErr.Field+" has the wrong type ("+typeErr.Value+")", err)
	case errors.As(err, &syntaxErr):
		return domain.Invalid(op, "malformed "+what+": invalid JSON at byte "+strconv.FormatInt(syntaxErr.Offset, 10), err)
	}
	return domain.Invalid(op, "malformed "+what, err)
}

// truncate shortens a payload string quoted in an error message.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

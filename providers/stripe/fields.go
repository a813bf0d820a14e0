package stripe

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
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

// amount is a named amount field, for checkAmounts.
type amount struct {
	field string
	value int64
}

// checkAmounts rejects negative amounts; Stripe never sends one, so a
// negative value means the payload is not what we think it is.
func checkAmounts(amounts ...amount) error {
	for _, a := range amounts {
		if a.value < 0 {
			return invalid(a.field + " is negative")
		}
	}
	return nil
}

// currency validates and upper-cases a Stripe currency ("usd" → "USD").
func currency(field, code string) (domain.Currency, error) {
	c, err := domain.NewCurrency(code)
	if err != nil {
		return "", invalid(field + ": " + domain.MessageOf(err))
	}
	return c, nil
}

// required returns *v or an error naming the missing field.
func required(field string, v *int64) (int64, error) {
	if v == nil {
		return 0, invalid(field + " is missing")
	}
	return *v, nil
}

// decodeError is a KindInvalid error for a payload encoding/json rejected,
// naming the field (prefix + JSON path) and what was wrong with it.
func decodeError(what, prefix string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		// The cause adds the Go type encoding/json wanted, for the logs.
		detail := prefix + typeErr.Field + " has the wrong type (" + typeErr.Value + ", want " + jsonKind(typeErr.Type) + ")"
		return domain.Invalid(opParse, "malformed "+what+": "+detail, err)
	case errors.As(err, &syntaxErr):
		return invalid("malformed " + what + ": invalid JSON at byte " + strconv.FormatInt(syntaxErr.Offset, 10) + ": " + err.Error())
	}
	return invalid("malformed " + what + ": " + err.Error())
}

// jsonKind names a Go type the way a JSON payload's author thinks of it.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer in range"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// truncate shortens a payload string quoted in an error message.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// expandableID is a reference to another Stripe object: its ID as a string,
// or the object itself when the sender expanded it (API responses, replays of
// fetched events). Webhooks send the string; accepting both costs nothing.
type expandableID string

// UnmarshalJSON accepts null, "id" or {"id": "id", …}.
func (e *expandableID) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		*e = ""
		return nil
	case len(b) > 0 && b[0] == '{':
		var obj struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		*e = expandableID(obj.ID)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*e = expandableID(s)
	return nil
}

package asaas

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

const opParse = "asaas: parse"

func invalid(msg string) error { return domain.Invalid(opParse, msg, nil) }

// checkID validates an identifier taken from the payload: present, at most
// maxIDLen bytes, and printable without spaces, so it is safe as a stream
// name, in a URL path segment and in logs. '&' (in event IDs) is fine.
func checkID(field, id string) error {
	if msg := providers.IDProblem(field, id); msg != "" {
		return invalid(msg)
	}
	return nil
}

// decodeError is a KindInvalid error for JSON that encoding/json rejected,
// naming the field when it can.
func decodeError(what string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return domain.Invalid(opParse, "malformed "+what+": "+typeErr.Field+" has the wrong type ("+typeErr.Value+")", err)
	case errors.As(err, &syntaxErr):
		return domain.Invalid(opParse, "malformed "+what+": invalid JSON at byte "+strconv.FormatInt(syntaxErr.Offset, 10), err)
	}
	return domain.Invalid(opParse, "malformed "+what, err)
}

// truncate shortens a payload string quoted in an error message.
func truncate(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

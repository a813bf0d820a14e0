package asaas

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/payledger/payledger/domain"
)

const opParse = "asaas: parse"

// maxIDLen bounds IDs: they name streams and go into URLs and indexes.
// Asaas's own IDs are far shorter.
const maxIDLen = 255

func invalid(msg string) error { return domain.Invalid(opParse, msg, nil) }

// checkID validates an identifier taken from the payload: present, at most
// maxIDLen bytes, and printable without spaces, so it is safe as a stream
// name, in a URL path segment and in logs. '&' (in event IDs) is fine.
func checkID(field, id string) error {
	switch {
	case id == "":
		return invalid(field + " is missing")
	case len(id) > maxIDLen:
		return invalid(field + " is longer than " + strconv.Itoa(maxIDLen) + " bytes")
	}
	for _, r := range id {
		if r == utf8.RuneError || r == ' ' || !unicode.IsPrint(r) {
			return invalid(field + " contains whitespace, control or non-printable characters")
		}
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

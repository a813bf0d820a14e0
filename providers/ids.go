package providers

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// MaxIDLen bounds identifiers taken from provider payloads (event, payment,
// charge IDs): they name streams and go into URLs, indexes and logs. Every
// provider's own IDs are far shorter.
const MaxIDLen = 255

// IDProblem says what is wrong with an identifier from a payload, or "" when
// it is usable: present, at most MaxIDLen bytes, valid UTF-8 of printable
// characters without spaces. field names it in the message. Provider
// packages wrap the message in their own KindInvalid error.
func IDProblem(field, id string) string {
	switch {
	case id == "":
		return field + " is missing"
	case len(id) > MaxIDLen:
		return field + " is longer than " + strconv.Itoa(MaxIDLen) + " bytes"
	}
	for _, r := range id {
		if r == utf8.RuneError || r == ' ' || !unicode.IsPrint(r) {
			return field + " contains whitespace, control or non-printable characters"
		}
	}
	return ""
}

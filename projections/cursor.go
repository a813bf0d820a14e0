package projections

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/payledger/payledger/domain"
)

// cursorVersion prefixes every cursor so that the format can change without
// misreading cursors handed out by an older payledger.
const cursorVersion = "p1:"

// encodeCursor makes the opaque cursor of a page that ended at row id. It is
// base64url so it needs no escaping in a query string.
func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + strconv.FormatInt(id, 10)))
}

// decodeCursor returns the row id a cursor continues after, or a KindInvalid
// error for anything encodeCursor did not make.
func decodeCursor(c string) (int64, error) {
	const op, msg = "projections: list payments", "malformed cursor"
	raw, err := decodeCanonical(c)
	if err != nil {
		return 0, domain.Invalid(op, msg, err)
	}
	s, ok := strings.CutPrefix(string(raw), cursorVersion)
	if !ok {
		return 0, domain.Invalid(op, msg, errors.New("unknown cursor version"))
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, domain.Invalid(op, msg, err)
	}
	if id <= 0 || strconv.FormatInt(id, 10) != s {
		return 0, domain.Invalid(op, msg, errors.New("not a cursor this server made"))
	}
	return id, nil
}

// decodeCanonical decodes a cursor's base64url, accepting only the one
// spelling the encoder makes: Go's decoder also takes line breaks and, unless
// strict, non-zero padding bits, and two strings must never name one
// position (FuzzDecodeEntryCursor found both).
func decodeCanonical(c string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return nil, err
	}
	if base64.RawURLEncoding.EncodeToString(raw) != c {
		return nil, errors.New("not in canonical base64url")
	}
	return raw, nil
}

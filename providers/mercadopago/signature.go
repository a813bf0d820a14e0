package mercadopago

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Causes of verification failures, for errors.Is: the providers sentinels
// and one of this package, under a domain.KindInvalid error. They follow the
// reasons Mercado Pago's Go SDK distinguishes.
var (
	// ErrNotSigned: the x-signature header is missing or blank.
	ErrNotSigned = providers.ErrNotSigned
	// ErrInvalidHeader: the header has no usable ts, or a ts that is not a
	// decimal integer, or more than one.
	ErrInvalidHeader = providers.ErrInvalidHeader
	// ErrInvalidQuery: the URL carries data.id more than once, so which ID
	// was signed is ambiguous.
	ErrInvalidQuery = errors.New("invalid notification query")
	// ErrNoValidSignature: no v1 signature matches any configured secret.
	ErrNoValidSignature = providers.ErrNoValidSignature
	// ErrTooOld: the signature is valid but its ts is older than MaxAge.
	ErrTooOld = providers.ErrTooOld
)

// signingScheme is the only signature version we check. Like the SDKs we
// parse any vN key so that a header announcing a newer scheme is reported
// as "no v1" rather than as malformed.
const signingScheme = "v1"

// msThreshold tells a millisecond ts from a seconds one: Mercado Pago's
// sources disagree on the unit (10-digit values in the webhook docs and in
// logs, 13-digit ones in the Orders docs), and 1e12 seconds is the year
// 33658 while 1e12 milliseconds is 2001.
const msThreshold = 1_000_000_000_000

// SignatureHeader is a parsed x-signature header.
type SignatureHeader struct {
	// TS is the ts value exactly as sent (trimmed): the manifest signs this
	// string, not a number, so it is never reformatted.
	TS string
	// Timestamp is TS as an integer, in seconds or milliseconds (see Time).
	Timestamp int64
	// Signatures are the hex-decoded v1 values, in header order.
	Signatures [][]byte
}

// Time returns the signing time: Timestamp is taken as milliseconds when it
// is at least 1e12, else as seconds.
func (h SignatureHeader) Time() time.Time {
	if h.Timestamp >= msThreshold {
		return time.UnixMilli(h.Timestamp)
	}
	return time.Unix(h.Timestamp, 0)
}

// ParseSignatureHeader parses an x-signature value such as
// "ts=1704908010,v1=c041…" with the rules of Mercado Pago's SDKs: parts split
// on ',' and their first '=', trimmed, keys lower-cased, unknown keys and
// non-hex v1 values skipped, and exactly one decimal ts. The error is
// KindInvalid wrapping ErrNotSigned, ErrInvalidHeader or ErrNoValidSignature.
func ParseSignatureHeader(h string) (SignatureHeader, error) {
	return parseSignatureHeader("mercadopago: parse signature header", h)
}

func parseSignatureHeader(op, h string) (SignatureHeader, error) {
	var sh SignatureHeader
	h = strings.TrimSpace(h)
	if h == "" {
		return sh, domain.Invalid(op, "missing "+Header+" header", ErrNotSigned)
	}
	others := 0
	for part := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(part, "=")
		key, value := strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || key == "" || value == "" {
			continue
		}
		switch {
		case key == "ts":
			if sh.TS != "" {
				return sh, domain.Invalid(op, "malformed "+Header+" header: more than one ts", ErrInvalidHeader)
			}
			t, err := parseTS(value)
			if err != nil {
				return sh, domain.Invalid(op, "malformed "+Header+" header: ts is not a decimal integer timestamp", ErrInvalidHeader)
			}
			sh.TS, sh.Timestamp = value, t
		case key == signingScheme:
			sig, err := hex.DecodeString(value)
			if err != nil {
				continue
			}
			sh.Signatures = append(sh.Signatures, sig)
		case isVersionKey(key):
			others++
		}
	}
	if sh.TS == "" {
		return sh, domain.Invalid(op, "malformed "+Header+" header: no ts", ErrInvalidHeader)
	}
	if len(sh.Signatures) == 0 {
		msg := Header + " header has no valid v1 signature"
		if others > 0 {
			msg += " (it carries only other signature versions; Mercado Pago may have introduced a new scheme)"
		}
		return sh, domain.Invalid(op, msg, ErrNoValidSignature)
	}
	return sh, nil
}

// parseTS accepts decimal digits only: no sign, no spaces, so that the
// string signed and the number checked are the same thing.
func parseTS(s string) (int64, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// isVersionKey reports whether key is "v" followed by decimal digits.
func isVersionKey(key string) bool {
	if len(key) < 2 || key[0] != 'v' {
		return false
	}
	_, err := parseTS(key[1:])
	return err == nil
}

// manifest is the string Mercado Pago signs:
// "id:{data.id};request-id:{x-request-id};ts:{ts};", with the id and
// request-id pairs left out when the value is absent (both SDKs do so).
func manifest(dataID, requestID, ts string) string {
	var b strings.Builder
	b.Grow(len(dataID) + len(requestID) + len(ts) + 24)
	if dataID != "" {
		b.WriteString("id:" + dataID + ";")
	}
	if requestID != "" {
		b.WriteString("request-id:" + requestID + ";")
	}
	b.WriteString("ts:" + ts + ";")
	return b.String()
}

// computeMAC is HMAC-SHA256 keyed with the secret's bytes over the manifest.
func computeMAC(secret []byte, m string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(m))
	return mac.Sum(nil)
}

// Sign returns an x-signature value as Mercado Pago would send it for a
// notification about dataID (empty: none) with the given x-request-id (empty:
// none) and ts (verbatim: seconds or milliseconds). Tests, the simulator and
// the docs use it.
func Sign(secret, dataID, requestID, ts string) string {
	return "ts=" + ts + "," + signingScheme + "=" + hex.EncodeToString(computeMAC([]byte(secret), manifest(dataID, requestID, ts)))
}

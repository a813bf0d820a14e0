package stripe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Causes of verification failures, for errors.Is: the providers sentinels,
// under a domain.KindInvalid error. They are the four outcomes stripe-go's
// webhook package distinguishes.
var (
	// ErrNotSigned: the Stripe-Signature header is missing or empty.
	ErrNotSigned = providers.ErrNotSigned
	// ErrInvalidHeader: the header is not t=…,v1=… as Stripe writes it.
	ErrInvalidHeader = providers.ErrInvalidHeader
	// ErrNoValidSignature: no v1 signature matches any configured secret.
	ErrNoValidSignature = providers.ErrNoValidSignature
	// ErrTooOld: the signed timestamp is older than the tolerance.
	ErrTooOld = providers.ErrTooOld
)

// signingScheme is the only signature scheme we check. v0 is a legacy
// scheme Stripe still sends in test mode; like the SDK we ignore it.
const signingScheme = "v1"

// SignatureHeader is a parsed Stripe-Signature header.
type SignatureHeader struct {
	// Timestamp is t, in Unix seconds, exactly as signed.
	Timestamp int64
	// Signatures are the hex-decoded v1 values, in header order. Stripe sends
	// several while a secret is being rolled.
	Signatures [][]byte
}

// Time returns Timestamp as a time.Time.
func (h SignatureHeader) Time() time.Time { return time.Unix(h.Timestamp, 0) }

// ParseSignatureHeader parses a Stripe-Signature value such as
// "t=1495999758,v1=ABC,v1=DEF,v0=GHI" with stripe-go's rules (items exactly
// key=value, the last int64 t wins, non-hex v1 and other keys ignored), except
// that a header without t is malformed. The error is KindInvalid wrapping
// ErrNotSigned, ErrInvalidHeader or ErrNoValidSignature.
func ParseSignatureHeader(h string) (SignatureHeader, error) {
	return parseSignatureHeader("stripe: parse signature header", h)
}

func parseSignatureHeader(op, h string) (SignatureHeader, error) {
	var sh SignatureHeader
	if h == "" {
		return sh, domain.Invalid(op, "missing "+Header+" header", ErrNotSigned)
	}
	hasT := false
	i := 0
	for item := range strings.SplitSeq(h, ",") {
		i++
		// The SDK splits on every '=', so "a=b=c" is as malformed as "ab".
		if strings.Count(item, "=") != 1 {
			return sh, domain.Invalid(op, "malformed "+Header+" header: item "+strconv.Itoa(i)+" is not key=value", ErrInvalidHeader)
		}
		key, value, _ := strings.Cut(item, "=")
		switch key {
		case "t":
			t, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return sh, domain.Invalid(op, "malformed "+Header+" header: t is not an integer Unix timestamp", ErrInvalidHeader)
			}
			sh.Timestamp, hasT = t, true
		case signingScheme:
			sig, err := hex.DecodeString(value)
			if err != nil {
				continue // as the SDK: another v1 may still match
			}
			sh.Signatures = append(sh.Signatures, sig)
		}
	}
	if !hasT {
		return sh, domain.Invalid(op, "malformed "+Header+" header: no t timestamp", ErrInvalidHeader)
	}
	if len(sh.Signatures) == 0 {
		return sh, domain.Invalid(op, Header+" header has no valid v1 signature (v0 and other schemes are not accepted)", ErrNoValidSignature)
	}
	return sh, nil
}

// Sign returns a Stripe-Signature value for body signed with secret at t, as
// Stripe would send it: "t={unix seconds},v1={hex HMAC-SHA256}". Tests, the
// simulator and the docs use it.
func Sign(body []byte, secret string, t time.Time) string {
	ts := t.Unix()
	return "t=" + strconv.FormatInt(ts, 10) + "," + signingScheme + "=" + hex.EncodeToString(computeMAC([]byte(secret), ts, body))
}

// computeMAC is Stripe's v1 signature: HMAC-SHA256 keyed with the secret's
// bytes (not base64-decoded) over the decimal timestamp, '.', and the body.
func computeMAC(secret []byte, t int64, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	var buf [21]byte // room for any int64 and the dot
	mac.Write(append(strconv.AppendInt(buf[:0], t, 10), '.'))
	mac.Write(body)
	return mac.Sum(nil)
}

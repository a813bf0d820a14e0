package stripe

import (
	"context"
	"crypto/hmac"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
)

// Verify authenticates a delivery on the raw body before anything parses it.
// It accepts when the Stripe-Signature header is well formed, its timestamp is
// no older than the tolerance at now (a timestamp in the future is accepted,
// as by the SDK), and any v1 signature matches any configured secret. Every
// failure is a domain.KindInvalid error wrapping ErrNotSigned,
// ErrInvalidHeader, ErrTooOld or ErrNoValidSignature. The query is unused:
// Stripe signs nothing there.
func (p *Provider) Verify(_ context.Context, header http.Header, _ url.Values, body []byte, now time.Time) error {
	const op = "stripe: verify"
	sh, err := parseSignatureHeader(op, header.Get(Header))
	if err != nil {
		return err
	}
	// The SDK checks the age before the MAC; so do we, so a stale delivery
	// is reported as stale whether or not its signature is still good.
	if p.tolerance >= 0 && tooOld(sh.Timestamp, now, p.tolerance) {
		return domain.Invalid(op, Header+" timestamp t="+strconv.FormatInt(sh.Timestamp, 10)+
			" is older than the "+p.tolerance.String()+" tolerance", ErrTooOld)
	}
	for _, secret := range p.secrets {
		want := computeMAC(secret, sh.Timestamp, body)
		for _, sig := range sh.Signatures {
			if hmac.Equal(want, sig) { // constant time
				return nil
			}
		}
	}
	return domain.Invalid(op, "no "+Header+" v1 signature matches a configured secret", ErrNoValidSignature)
}

// tooOld reports whether now - t > tolerance, for t in Unix seconds. It works
// in integer seconds first because time.Unix and Time.Sub overflow for
// timestamps far from now, which would turn an ancient t into a future one.
func tooOld(t int64, now time.Time, tolerance time.Duration) bool {
	nowSec := now.Unix()
	if t > nowSec {
		return false // in the future: never too old
	}
	age := uint64(nowSec) - uint64(t) // t <= nowSec, so this is the exact difference
	if age > uint64(tolerance/time.Second)+1 {
		return true
	}
	return time.Duration(age)*time.Second+time.Duration(now.Nanosecond()) > tolerance
}

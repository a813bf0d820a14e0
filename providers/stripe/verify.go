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

// Verify accepts when the Stripe-Signature header is well formed, its
// timestamp no older than the tolerance at now (a future one is accepted, as
// by the SDK), and any v1 matches any configured secret. Failures are
// KindInvalid errors wrapping ErrNotSigned, ErrInvalidHeader, ErrTooOld or
// ErrNoValidSignature.
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

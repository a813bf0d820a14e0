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
	_, err := p.verify(header, body, now)
	return err
}

// VerifyProof is Verify returning, on success, the fingerprint of the first
// configured secret that matched, for ingest to keep with the fact. It costs
// one SHA-256 of that secret more than Verify.
func (p *Provider) VerifyProof(_ context.Context, header http.Header, _ url.Values, body []byte, now time.Time) (domain.AuthProof, error) {
	i, err := p.verify(header, body, now)
	if err != nil {
		return domain.AuthProof{}, err
	}
	return domain.AuthProof{Scheme: Scheme, SecretID: domain.SecretFingerprint(string(p.secrets[i]))}, nil
}

// verify is Verify returning the index of the secret that matched.
func (p *Provider) verify(header http.Header, body []byte, now time.Time) (int, error) {
	const op = "stripe: verify"
	sh, err := parseSignatureHeader(op, header.Get(Header))
	if err != nil {
		return -1, err
	}
	// The SDK checks the age before the MAC; so do we, so a stale delivery
	// is reported as stale whether or not its signature is still good.
	if p.tolerance >= 0 && tooOld(sh.Timestamp, now, p.tolerance) {
		return -1, domain.Invalid(op, Header+" timestamp t="+strconv.FormatInt(sh.Timestamp, 10)+
			" is older than the "+p.tolerance.String()+" tolerance", ErrTooOld)
	}
	i := p.match(sh, body)
	if i < 0 {
		return -1, domain.Invalid(op, "no "+Header+" v1 signature matches a configured secret", ErrNoValidSignature)
	}
	return i, nil
}

// match returns the index of the first configured secret that any v1 of sh
// matches over body, or -1.
func (p *Provider) match(sh SignatureHeader, body []byte) int {
	for i, secret := range p.secrets {
		want := computeMAC(secret, sh.Timestamp, body)
		for _, sig := range sh.Signatures {
			if hmac.Equal(want, sig) { // constant time
				return i
			}
		}
	}
	return -1
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

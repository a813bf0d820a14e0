package pagarme

import (
	"context"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Causes of verification failures, for errors.Is: the providers sentinels
// and this package's own, under a domain error whose message gives the details.
var (
	// ErrNotSigned: no signature header that a configured scheme verifies.
	ErrNotSigned = providers.ErrNotSigned
	// ErrInvalidHeader: a signature header is not in its scheme's format.
	ErrInvalidHeader = providers.ErrInvalidHeader
	// ErrUnsupportedAlgorithm: the header names an algorithm other than
	// RS256 (asymmetric) or sha1 (legacy).
	ErrUnsupportedAlgorithm = errors.New("unsupported signature algorithm")
	// ErrUnknownKey: the kid is not in Pagar.me's key set (KindInvalid).
	ErrUnknownKey = errors.New("unknown signing key")
	// ErrKeysUnavailable: the kid is unknown and the key set cannot be
	// fetched now (KindUnavailable: Pagar.me should retry later).
	ErrKeysUnavailable = errors.New("signing keys unavailable")
	// ErrNoValidSignature: the signature does not match the body.
	ErrNoValidSignature = providers.ErrNoValidSignature
)

const opVerify = "pagarme: verify"

// Verify authenticates the raw body by the scheme precedence in
// ARCHITECTURE.md: the asymmetric header when RS256 is configured, else
// X-Hub-Signature when secrets are, else not signed. Failures are KindInvalid,
// except an unknown kid while the JWKS cannot be fetched (KindUnavailable,
// ErrKeysUnavailable); now drives the JWKS cache, which may fetch with ctx.
func (p *Provider) Verify(ctx context.Context, header http.Header, _ url.Values, body []byte, now time.Time) error {
	_, err := p.verify(ctx, header, body, now)
	return err
}

// VerifyProof is Verify returning, on success, what ingest keeps with the
// fact: for RS256 the kid and the public key (as a JWK) that verified, so the
// proof survives key rotation; for X-Hub-Signature the fingerprint of the
// first secret that matched. It costs one small JSON encoding or SHA-256.
func (p *Provider) VerifyProof(ctx context.Context, header http.Header, _ url.Values, body []byte, now time.Time) (domain.AuthProof, error) {
	v, err := p.verify(ctx, header, body, now)
	if err != nil {
		return domain.AuthProof{}, err
	}
	if v.key != nil {
		return domain.AuthProof{Scheme: SchemeRS256, KeyID: v.kid, Key: marshalJWK(v.kid, v.key)}, nil
	}
	return domain.AuthProof{Scheme: SchemeHub, SecretID: domain.SecretFingerprint(string(p.secrets[v.secret]))}, nil
}

// verified says what verified a delivery: the RS256 key and its kid, or
// else the index of the X-Hub-Signature secret.
type verified struct {
	kid    string
	key    *rsa.PublicKey
	secret int
}

// verify is Verify returning what verified the delivery.
func (p *Provider) verify(ctx context.Context, header http.Header, body []byte, now time.Time) (verified, error) {
	switch scheme, value := p.scheme(header); scheme {
	case HeaderAsymmetric:
		return p.verifyRS256(ctx, value, body, now)
	case HeaderHub:
		return p.verifyHub(value, body)
	}
	return verified{}, domain.Invalid(opVerify, p.notSignedMessage(header), ErrNotSigned)
}

// scheme picks the header that decides a delivery, by the precedence Verify
// documents, and returns its name and value ("" when none applies).
func (p *Provider) scheme(header http.Header) (string, string) {
	if v := header.Get(HeaderAsymmetric); v != "" && p.keys != nil {
		return HeaderAsymmetric, v
	}
	if v := header.Get(HeaderHub); v != "" && p.secrets != nil {
		return HeaderHub, v
	}
	return "", ""
}

// notSignedMessage says what was expected, and why a header that is present
// was not used, so a misconfiguration is easy to spot in the 400 body.
func (p *Provider) notSignedMessage(header http.Header) string {
	switch {
	case p.keys != nil && p.secrets != nil:
		return "missing " + HeaderAsymmetric + " and " + HeaderHub + " headers"
	case p.keys != nil && header.Get(HeaderHub) != "":
		return "missing " + HeaderAsymmetric + " header (" + HeaderHub + " is present but no webhook secret is configured)"
	case p.keys != nil:
		return "missing " + HeaderAsymmetric + " header"
	case header.Get(HeaderAsymmetric) != "":
		return "missing " + HeaderHub + " header (" + HeaderAsymmetric + " is present but no JWKS URL is configured)"
	}
	return "missing " + HeaderHub + " header"
}

// signatureHeader is the value of the header that decides the delivery, for
// Notification.SignatureHeader.
func (p *Provider) signatureHeader(header http.Header) string {
	_, v := p.scheme(header)
	return v
}

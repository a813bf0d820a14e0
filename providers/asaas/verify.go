package asaas

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/domain"
)

// Causes of verification failures, for errors.Is (metrics, tests). They sit
// under a domain.KindUnauthorized error.
var (
	// ErrNoToken: the asaas-access-token header is missing or empty.
	ErrNoToken = errors.New("no access token")
	// ErrWrongToken: the token matches no configured token.
	ErrWrongToken = errors.New("wrong access token")
)

// Verify authenticates a delivery by its asaas-access-token header (the
// first value, as received), comparing SHA-256 digests with every configured
// token in constant time, whatever matched. Failures are KindUnauthorized
// errors wrapping ErrNoToken or ErrWrongToken that never quote the token;
// query, body and clock are unused because Asaas signs nothing.
func (p *Provider) Verify(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) error {
	_, err := p.VerifyProof(ctx, header, query, body, now)
	return err
}

// VerifyProof is Verify returning, on success, a proof naming only the
// scheme: a static token proves nothing about the body, and its fingerprint
// would only record a credential, so nothing more is kept.
func (p *Provider) VerifyProof(_ context.Context, header http.Header, _ url.Values, _ []byte, _ time.Time) (domain.AuthProof, error) {
	if err := p.checkToken(header); err != nil {
		return domain.AuthProof{}, err
	}
	return domain.AuthProof{Scheme: Scheme}, nil
}

// checkToken is the token comparison of Verify.
func (p *Provider) checkToken(header http.Header) error {
	const op = "asaas: verify"
	got := header.Get(Header)
	if got == "" {
		return domain.Unauthorized(op, Header+" header is missing", ErrNoToken)
	}
	sum := sha256.Sum256([]byte(got))
	match := 0
	for i := range p.tokens {
		match |= subtle.ConstantTimeCompare(sum[:], p.tokens[i][:])
	}
	if match != 1 {
		return domain.Unauthorized(op, Header+" does not match a configured token", ErrWrongToken)
	}
	return nil
}

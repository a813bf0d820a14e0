package mercadopago

import (
	"context"
	"crypto/hmac"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// Verify accepts when any v1 of x-signature matches the manifest
// "id:{data.id};request-id:{x-request-id};ts:{ts};" (absent parts left out,
// data.id as received or lower-cased) under any configured secret, comparing
// every candidate in constant time; with Config.MaxAge it then rejects an
// older ts. Failures are KindInvalid errors wrapping ErrNotSigned,
// ErrInvalidHeader, ErrInvalidQuery, ErrNoValidSignature or ErrTooOld.
func (p *Provider) Verify(_ context.Context, header http.Header, query url.Values, _ []byte, now time.Time) error {
	_, err := p.verify(header, query, now)
	return err
}

// VerifyProof is Verify returning, on success, the fingerprint of the first
// configured secret that matched, for ingest to keep with the fact. It costs
// one SHA-256 of that secret more than Verify.
func (p *Provider) VerifyProof(_ context.Context, header http.Header, query url.Values, _ []byte, now time.Time) (domain.AuthProof, error) {
	i, err := p.verify(header, query, now)
	if err != nil {
		return domain.AuthProof{}, err
	}
	return domain.AuthProof{Scheme: Scheme, SecretID: domain.SecretFingerprint(string(p.secrets[i]))}, nil
}

// verify is Verify returning the index of the secret that matched.
func (p *Provider) verify(header http.Header, query url.Values, now time.Time) (int, error) {
	const op = "mercadopago: verify"
	sh, err := parseSignatureHeader(op, header.Get(Header))
	if err != nil {
		return -1, err
	}
	dataID, err := queryDataID(op, query)
	if err != nil {
		return -1, err
	}
	i := p.match(sh, dataID, strings.TrimSpace(header.Get(RequestIDHeader)))
	if i < 0 {
		return -1, domain.Invalid(op, "no "+Header+" v1 signature matches a configured secret", ErrNoValidSignature)
	}
	// The age is checked after the MAC, as in the SDK, so "too old" always
	// means an authentic delivery: the figure to look at when tuning MaxAge.
	if p.maxAge > 0 && now.Sub(sh.Time()) > p.maxAge {
		return -1, domain.Invalid(op, Header+" ts="+sh.TS+" is older than the "+p.maxAge.String()+" maximum age", ErrTooOld)
	}
	return i, nil
}

// match returns the index of the first configured secret under which any v1
// of sh signs the manifest (data.id as received or lower-cased), or -1.
// Every candidate is compared, with no early exit, so the time taken does
// not depend on which one matched.
func (p *Provider) match(sh SignatureHeader, dataID, requestID string) int {
	ids := []string{dataID}
	if lower := strings.ToLower(dataID); lower != dataID {
		ids = append(ids, lower)
	}
	matched := -1
	for i := len(p.secrets) - 1; i >= 0; i-- { // backwards: the lowest index wins
		for _, id := range ids {
			want := computeMAC(p.secrets[i], manifest(id, requestID, sh.TS))
			for _, sig := range sh.Signatures {
				if hmac.Equal(want, sig) {
					matched = i
				}
			}
		}
	}
	return matched
}

// queryDataID returns the URL's data.id, trimmed as the SDKs trim it, or ""
// when absent. A repeated data.id is rejected: only one of them can have
// been signed, and Parse must name the payment by the same one.
func queryDataID(op string, query url.Values) (string, error) {
	vals := query[QueryDataID]
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
		return strings.TrimSpace(vals[0]), nil
	}
	return "", domain.Invalid(op, "the URL carries "+QueryDataID+" more than once", ErrInvalidQuery)
}

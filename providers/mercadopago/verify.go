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
	const op = "mercadopago: verify"
	sh, err := parseSignatureHeader(op, header.Get(Header))
	if err != nil {
		return err
	}
	dataID, err := queryDataID(op, query)
	if err != nil {
		return err
	}
	requestID := strings.TrimSpace(header.Get(RequestIDHeader))
	ids := []string{dataID}
	if lower := strings.ToLower(dataID); lower != dataID {
		ids = append(ids, lower)
	}
	ok := false
	for _, secret := range p.secrets {
		for _, id := range ids {
			want := computeMAC(secret, manifest(id, requestID, sh.TS))
			for _, sig := range sh.Signatures {
				// No early exit: every candidate is compared, so the time
				// taken does not depend on which one matched.
				if hmac.Equal(want, sig) {
					ok = true
				}
			}
		}
	}
	if !ok {
		return domain.Invalid(op, "no "+Header+" v1 signature matches a configured secret", ErrNoValidSignature)
	}
	// The age is checked after the MAC, as in the SDK, so "too old" always
	// means an authentic delivery: the figure to look at when tuning MaxAge.
	if p.maxAge > 0 && now.Sub(sh.Time()) > p.maxAge {
		return domain.Invalid(op, Header+" ts="+sh.TS+" is older than the "+p.maxAge.String()+" maximum age", ErrTooOld)
	}
	return nil
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

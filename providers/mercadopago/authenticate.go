package mercadopago

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Scheme names Mercado Pago's x-signature v1 in a domain.AuthProof.
const Scheme = "mercadopago-v1"

// bodyNotSigned qualifies every verified result: the signature covers the
// manifest, so the body is tied to it only through data.id.
const bodyNotSigned = "Mercado Pago signs data.id, x-request-id and ts, not the body: " +
	"the body is checked only to name the signed data.id"

// Authenticate re-verifies a stored delivery now with the configured
// secrets, ignoring MaxAge; proof (from VerifyProof at receipt) tells a
// rotated secret from an altered delivery. The manifest needs the kept
// x-request-id header and data.id query: when nothing matches and either is
// missing, the result is unverifiable, as they may simply not have been kept.
func (p *Provider) Authenticate(header http.Header, query url.Values, body []byte, proof domain.AuthProof) domain.Authenticity {
	const op = "mercadopago: authenticate"
	sh, err := parseSignatureHeader(op, header.Get(Header))
	if err != nil {
		return providers.HeaderProblem(Header, err)
	}
	dataID, err := queryDataID(op, query)
	if err != nil {
		return providers.Failed("the kept query is not one Verify accepts (" + err.Error() + ")")
	}
	requestID := strings.TrimSpace(header.Get(RequestIDHeader))
	a := providers.AuthenticateHMAC(providers.Fingerprints(p.secrets), p.match(sh, dataID, requestID), proof.SecretID)
	switch a.Result {
	case domain.AuthVerified, domain.AuthVerifiedRotated:
		return checkBody(a, dataID, body)
	}
	if missing := missingParts(dataID, requestID); missing != "" {
		return providers.Unverifiable("no configured secret matches, and the kept delivery has no " + missing +
			", which the signed manifest includes when sent: without it the signature cannot be re-computed")
	}
	return a
}

// missingParts names the manifest parts absent from a kept delivery.
func missingParts(dataID, requestID string) string {
	var m []string
	if requestID == "" {
		m = append(m, RequestIDHeader+" header")
	}
	if dataID == "" {
		m = append(m, QueryDataID+" query parameter")
	}
	return strings.Join(m, " and ")
}

// checkBody fails a verified result whose body names another payment than
// the signed data.id, and otherwise says what the signature does not cover.
func checkBody(a domain.Authenticity, dataID string, body []byte) domain.Authenticity {
	env, err := decodeEnvelope(body)
	if err != nil {
		return providers.Failed("the signature verifies but the kept body is not a notification (" + err.Error() + ")")
	}
	if env.Data != nil {
		bid, err := idString("data.id", env.Data.ID)
		if err != nil || (bid != "" && bid != dataID && bid != strings.ToLower(dataID)) {
			return providers.Failed("the signature verifies but the kept body's data.id does not name the signed " +
				QueryDataID + " " + strconv.Quote(truncate(dataID)))
		}
	}
	if a.Reason != "" {
		a.Reason += "; "
	}
	a.Reason += bodyNotSigned
	return a
}

// KeptHeaders names the headers ingest keeps with each fact so Authenticate
// can re-verify it later: the signature and the request ID its manifest signs.
func (p *Provider) KeptHeaders() []string { return []string{Header, RequestIDHeader} }

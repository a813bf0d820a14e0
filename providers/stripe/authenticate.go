package stripe

import (
	"net/http"
	"net/url"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Scheme names Stripe's v1 signature in a domain.AuthProof.
const Scheme = "stripe-v1"

// Authenticate re-verifies a stored delivery now with the configured
// secrets, ignoring the tolerance: proof (from VerifyProof at receipt) tells
// a rotated secret from an altered body. A missing Stripe-Signature header
// is unverifiable; a malformed one failed (see providers.HeaderProblem).
func (p *Provider) Authenticate(header http.Header, _ url.Values, body []byte, proof domain.AuthProof) domain.Authenticity {
	sh, err := parseSignatureHeader("stripe: authenticate", header.Get(Header))
	if err != nil {
		return providers.HeaderProblem(Header, err)
	}
	return providers.AuthenticateHMAC(providers.Fingerprints(p.secrets), p.match(sh, body), proof.SecretID)
}

// KeptHeaders names the headers ingest keeps with each fact so Authenticate
// can re-verify it later: the signature header.
func (p *Provider) KeptHeaders() []string { return []string{Header} }

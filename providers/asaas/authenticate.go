package asaas

import (
	"net/http"
	"net/url"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// Scheme names Asaas's static access token in a domain.AuthProof.
const Scheme = "asaas-token"

// noSignature is the honest answer for every stored Asaas delivery.
const noSignature = "Asaas authenticates deliveries with a static access token (" + Header +
	"), not a signature over the body, so nothing about a stored delivery can be re-verified"

// Authenticate is always unverifiable: the token proves who sent a delivery
// when it arrived, but binds nothing in the body, so a stored one cannot be
// checked afterwards whatever is configured or kept.
func (p *Provider) Authenticate(_ http.Header, _ url.Values, _ []byte, _ domain.AuthProof) domain.Authenticity {
	return providers.Unverifiable(noSignature)
}

// KeptHeaders names the headers ingest keeps with each fact so Authenticate
// can re-verify it later: nothing: its only credential is the static access token, which must never be stored.
func (p *Provider) KeptHeaders() []string { return nil }

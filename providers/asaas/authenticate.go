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

package pagarme

import (
	"crypto/rsa"
	"net/http"
	"net/url"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

// The schemes of a Pagar.me domain.AuthProof.
const (
	// SchemeRS256: X-Webhook-Asymmetric-Signature; the proof keeps the key.
	SchemeRS256 = "pagarme-rs256"
	// SchemeHub: the legacy X-Hub-Signature HMAC-SHA1; the proof keeps the
	// secret's fingerprint.
	SchemeHub = "pagarme-hub-sha1"
)

const opAuthenticate = "pagarme: authenticate"

// Authenticate re-verifies a stored delivery now, by the scheme its proof
// names (for a fact without one, by Verify's precedence over the kept
// headers). RS256 uses the key kept with the fact, so Pagar.me rotating its
// keys never makes a delivery unverifiable; X-Hub-Signature uses the
// configured secrets and the kept fingerprint, as Stripe's scheme does.
func (p *Provider) Authenticate(header http.Header, _ url.Values, body []byte, proof domain.AuthProof) domain.Authenticity {
	switch {
	case len(proof.Key) > 0 || proof.Scheme == SchemeRS256:
		return p.authenticateRS256(header, body, proof)
	case proof.Scheme == SchemeHub || proof.SecretID != "":
		return p.authenticateHub(header, body, proof)
	}
	scheme, _ := p.scheme(header)
	switch {
	case scheme == HeaderAsymmetric || scheme == "" && header.Get(HeaderAsymmetric) != "":
		return p.authenticateRS256(header, body, proof)
	case scheme == HeaderHub || header.Get(HeaderHub) != "":
		return p.authenticateHub(header, body, proof)
	}
	return providers.Unverifiable("neither " + HeaderAsymmetric + " nor " + HeaderHub + " header was kept")
}

// authenticateHub re-computes the legacy HMAC with the configured secrets.
func (p *Provider) authenticateHub(header http.Header, body []byte, proof domain.AuthProof) domain.Authenticity {
	mac, err := parseHubHeader(opAuthenticate, header.Get(HeaderHub))
	if err != nil {
		return providers.HeaderProblem(HeaderHub, err)
	}
	return providers.AuthenticateHMAC(providers.Fingerprints(p.secrets), p.matchHub(mac, body), proof.SecretID)
}

// authenticateRS256 checks the signature with the kept key. A kept key that
// does not read, is not the header's kid, or differs from the key Pagar.me
// publishes under that kid now (when this process holds it) is failed: ingest
// writes the key it verified with, so such a key was changed afterwards.
func (p *Provider) authenticateRS256(header http.Header, body []byte, proof domain.AuthProof) domain.Authenticity {
	ah, err := parseAsymmetricHeader(opAuthenticate, header.Get(HeaderAsymmetric))
	if err != nil {
		return providers.HeaderProblem(HeaderAsymmetric, err)
	}
	if len(proof.Key) == 0 {
		return p.authenticateCached(ah, body)
	}
	kid, pub, err := signingKey(proof.Key)
	switch {
	case err != nil:
		return providers.Failed("the key kept with the fact is not an RS256 signing key (" + err.Error() + ")")
	case kid != ah.KeyID:
		return providers.Failed("the kept header names key " + quote(ah.KeyID) + " but the kept key is " + quote(kid))
	case !p.publishedOrUnknown(kid, pub):
		return providers.Failed("the key kept under " + quote(kid) + " differs from the one Pagar.me publishes under that kid")
	case verifyingKey([]*rsa.PublicKey{pub}, ah, body) == nil:
		a := providers.Failed("the signature does not verify with the kept key " + quote(kid) + ": the stored body is not what was signed")
		a.KeyID = kid
		return a
	}
	return domain.Authenticity{Result: domain.AuthVerified, KeyID: kid}
}

// publishedOrUnknown reports whether pub is among the keys this process
// holds for kid, or it holds none for kid (rotated away, or never fetched).
func (p *Provider) publishedOrUnknown(kid string, pub *rsa.PublicKey) bool {
	held := p.keys.cached(kid)
	for _, k := range held {
		if k.Equal(pub) {
			return true
		}
	}
	return len(held) == 0
}

// authenticateCached checks a fact recorded before keys were kept with the
// key set this process holds, without fetching it.
func (p *Provider) authenticateCached(ah AsymmetricHeader, body []byte) domain.Authenticity {
	keys := p.keys.cached(ah.KeyID)
	if len(keys) == 0 {
		return providers.Unverifiable("the fact was recorded before payledger kept the public key with it, and key " +
			quote(ah.KeyID) + " is not in the key set this process holds")
	}
	if verifyingKey(keys, ah, body) == nil {
		a := providers.Failed("the signature does not verify with key " + quote(ah.KeyID) + " of the key set held now")
		a.KeyID = ah.KeyID
		return a
	}
	return domain.Authenticity{Result: domain.AuthVerified, KeyID: ah.KeyID,
		Reason: "checked with key " + quote(ah.KeyID) + " of the key set held now: the fact was recorded before keys were kept with it"}
}

// KeptHeaders names the headers ingest keeps with each fact so Authenticate
// can re-verify it later: whichever signature header the delivery carries.
func (p *Provider) KeptHeaders() []string { return []string{HeaderAsymmetric, HeaderHub} }

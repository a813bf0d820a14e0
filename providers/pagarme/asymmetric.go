package pagarme

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// algRS256 is the only algorithm of the asymmetric scheme, compared exactly
// as Pagar.me's plugins do (JOSE algorithm names are case-sensitive).
const algRS256 = "RS256"

// maxKeyIDLen bounds a kid: it is quoted in errors and used as a map key.
const maxKeyIDLen = 255

// AsymmetricHeader is a parsed X-Webhook-Asymmetric-Signature header.
type AsymmetricHeader struct {
	// Algorithm is alg; ParseAsymmetricHeader accepts only "RS256".
	Algorithm string
	// KeyID is kid: which JWKS key signed.
	KeyID string
	// Signature is the decoded signature.
	Signature []byte
}

// ParseAsymmetricHeader parses "alg=RS256; kid=…; signature=<base64url>" as
// Pagar.me's plugins do (parts split on ';' and their first '=', names
// case-insensitive, padded or standard base64 accepted), but rejects a part
// without '=' or a repeated parameter, which no genuine header has. The error
// is KindInvalid wrapping ErrNotSigned, ErrInvalidHeader or
// ErrUnsupportedAlgorithm.
func ParseAsymmetricHeader(h string) (AsymmetricHeader, error) {
	return parseAsymmetricHeader("pagarme: parse "+HeaderAsymmetric, h)
}

func parseAsymmetricHeader(op, h string) (AsymmetricHeader, error) {
	var ah AsymmetricHeader
	if strings.TrimSpace(h) == "" {
		return ah, domain.Invalid(op, "missing "+HeaderAsymmetric+" header", ErrNotSigned)
	}
	malformed := func(why string) error {
		return domain.Invalid(op, "malformed "+HeaderAsymmetric+" header: "+why, ErrInvalidHeader)
	}
	params := map[string]string{}
	i := 0
	for part := range strings.SplitSeq(h, ";") {
		i++
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, value, ok := strings.Cut(part, "=")
		if !ok {
			return ah, malformed("part " + strconv.Itoa(i) + " is not key=value")
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch key {
		case "alg", "kid", "signature":
			if _, dup := params[key]; dup {
				return ah, malformed(key + " appears twice")
			}
			params[key] = value
		}
	}
	for _, key := range []string{"alg", "kid", "signature"} {
		if params[key] == "" {
			return ah, malformed("no " + key)
		}
	}
	ah.Algorithm, ah.KeyID = params["alg"], params["kid"]
	if ah.Algorithm != algRS256 {
		return ah, domain.Invalid(op, HeaderAsymmetric+" algorithm "+quote(ah.Algorithm)+" is not supported (only RS256)", ErrUnsupportedAlgorithm)
	}
	if len(ah.KeyID) > maxKeyIDLen || !printable(ah.KeyID) {
		return ah, malformed("kid is longer than " + strconv.Itoa(maxKeyIDLen) + " bytes or not printable")
	}
	sig, err := decodeBase64URL(params["signature"])
	if err != nil || len(sig) == 0 {
		return ah, malformed("signature is not base64url")
	}
	ah.Signature = sig
	return ah, nil
}

// verifyRS256 checks the asymmetric signature with the JWKS key of its kid
// and names the key that verified.
func (p *Provider) verifyRS256(ctx context.Context, value string, body []byte, now time.Time) (verified, error) {
	ah, err := parseAsymmetricHeader(opVerify, value)
	if err != nil {
		return verified{}, err
	}
	keys, err := p.keys.lookup(ctx, ah.KeyID, now)
	if err != nil {
		return verified{}, err
	}
	if k := verifyingKey(keys, ah, body); k != nil {
		return verified{kid: ah.KeyID, key: k}, nil
	}
	return verified{}, domain.Invalid(opVerify, HeaderAsymmetric+" signature does not verify with key "+quote(ah.KeyID), ErrNoValidSignature)
}

// verifyingKey returns the first of keys under which ah signs body, or nil.
func verifyingKey(keys []*rsa.PublicKey, ah AsymmetricHeader, body []byte) *rsa.PublicKey {
	digest := sha256.Sum256(body)
	for _, k := range keys {
		if rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], ah.Signature) == nil {
			return k
		}
	}
	return nil
}

// SignRS256 returns an X-Webhook-Asymmetric-Signature value for body signed
// with key under kid, as Pagar.me sends it. Tests and the simulator use it
// with a key whose public half they publish with MarshalJWKS.
func SignRS256(body []byte, key *rsa.PrivateKey, kid string) (string, error) {
	digest := sha256.Sum256(body)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return "alg=" + algRS256 + "; kid=" + kid + "; signature=" + base64.RawURLEncoding.EncodeToString(sig), nil
}

// decodeBase64URL decodes base64url with or without padding, and, like the
// PHP plugins, the standard alphabet too: the signature check decides
// authenticity, so tolerance here costs nothing.
func decodeBase64URL(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "+/") {
		return base64.RawStdEncoding.DecodeString(s)
	}
	return base64.RawURLEncoding.DecodeString(s)
}

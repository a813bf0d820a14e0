package pagarme

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
)

// RSA key sizes we accept from a JWKS. RFC 7518 requires at least 2048 bits
// for RS256; the upper bound keeps a hostile JWKS from making every
// verification expensive.
const (
	minRSABits = 2048
	maxRSABits = 8192
)

// jwk is the part of a JSON Web Key we read.
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// parseJWKS decodes {"keys":[…]} and keeps the RS256 signing keys: kty RSA,
// use "sig" or absent, alg "RS256" or absent, with a kid. Other keys (an
// encryption key, an EC key, a malformed entry) are skipped so that one odd
// entry does not disable verification; a set without a usable key is an
// error, so a wrong URL or a broken publication keeps the previous keys.
func parseJWKS(body []byte) (map[string][]*rsa.PublicKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("jwks: decode: %w", err)
	}
	keys := map[string][]*rsa.PublicKey{}
	var skipped []error
	for i, raw := range set.Keys {
		kid, pub, err := signingKey(raw)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("key %d: %w", i, err))
			continue
		}
		keys[kid] = append(keys[kid], pub)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("jwks: no usable RS256 signing key among %d: %w", len(set.Keys), errors.Join(skipped...))
	}
	return keys, nil
}

// signingKey decodes one JWK if it is an RS256 signing key.
func signingKey(raw json.RawMessage) (string, *rsa.PublicKey, error) {
	var k jwk
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", nil, err
	}
	switch {
	case k.Kid == "":
		return "", nil, errors.New("no kid")
	case k.Kty != "RSA":
		return "", nil, fmt.Errorf("kty %q is not RSA", k.Kty)
	case k.Use != "" && k.Use != "sig":
		return "", nil, fmt.Errorf("use %q is not sig", k.Use)
	case k.Alg != "" && k.Alg != algRS256:
		return "", nil, fmt.Errorf("alg %q is not RS256", k.Alg)
	}
	nb, err := decodeBase64URL(k.N)
	if err != nil {
		return "", nil, fmt.Errorf("n: %w", err)
	}
	eb, err := decodeBase64URL(k.E)
	if err != nil {
		return "", nil, fmt.Errorf("e: %w", err)
	}
	n, e := new(big.Int).SetBytes(nb), new(big.Int).SetBytes(eb)
	switch {
	case n.BitLen() < minRSABits || n.BitLen() > maxRSABits:
		return "", nil, fmt.Errorf("modulus of %d bits is outside %d..%d", n.BitLen(), minRSABits, maxRSABits)
	case n.Bit(0) == 0:
		return "", nil, errors.New("modulus is even")
	case !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0:
		return "", nil, errors.New("exponent is not an odd integer in 3..2^31-1")
	}
	return k.Kid, &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

// MarshalJWKS returns a JWKS publishing keys (by kid) as Pagar.me does:
// kty RSA, use sig, alg RS256, n and e in base64url. Tests and the simulator
// serve it in place of DefaultJWKSURL.
func MarshalJWKS(keys map[string]*rsa.PublicKey) ([]byte, error) {
	kids := make([]string, 0, len(keys))
	for kid := range keys {
		kids = append(kids, kid)
	}
	sort.Strings(kids)
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, kid := range kids {
		set.Keys = append(set.Keys, jwkOf(kid, keys[kid]))
	}
	return json.Marshal(set)
}

// jwkOf is k published under kid as Pagar.me publishes it.
func jwkOf(kid string, k *rsa.PublicKey) jwk {
	return jwk{Kty: "RSA", Use: "sig", Alg: algRS256, Kid: kid,
		N: base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())}
}

// marshalJWK encodes k as the JWK a domain.AuthProof keeps; signingKey reads
// it back. Encoding a struct of strings cannot fail.
func marshalJWK(kid string, k *rsa.PublicKey) json.RawMessage {
	b, _ := json.Marshal(jwkOf(kid, k))
	return b
}

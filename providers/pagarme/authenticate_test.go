package pagarme

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

func TestAuthenticateHub(t *testing.T) {
	body := vectorBody(t)
	proof, err := newProvider(t, Config{Secrets: []string{vectorSecret}}).VerifyProof(t.Context(), headers(HeaderHub, vectorHub), nil, body, t0)
	fp := domain.SecretFingerprint(vectorSecret)
	if err != nil || proof.SecretID != fp || proof.Scheme != SchemeHub {
		t.Fatalf("VerifyProof() = %+v, %v; want scheme %s and secret %s", proof, err, SchemeHub, fp)
	}
	altered := append([]byte(nil), body...)
	altered[len(altered)/2] ^= 0x01
	legacy := domain.AuthProof{}
	tests := []struct {
		name    string
		secrets []string
		header  string
		body    []byte
		proof   domain.AuthProof
		want    domain.AuthResult
		reason  string
	}{
		{"verifies", []string{vectorSecret}, vectorHub, body, proof, domain.AuthVerified, ""},
		{"rotated, old secret second", []string{"sk_new", vectorSecret}, vectorHub, body, proof, domain.AuthVerifiedRotated, fp},
		{"rotated away", []string{"sk_new"}, vectorHub, body, proof, domain.AuthUnverifiable, fp + ", is no longer configured"},
		{"body altered, secret still configured", []string{"sk_new", vectorSecret}, vectorHub, altered, proof, domain.AuthFailed, fp},
		{"legacy fact verifies", []string{vectorSecret}, vectorHub, body, legacy, domain.AuthVerified, ""},
		{"legacy fact, nothing matches", []string{vectorSecret}, vectorHub, altered, legacy, domain.AuthUnverifiable, "cannot be told"},
		{"header not kept", []string{vectorSecret}, "", body, proof, domain.AuthUnverifiable, "was not kept"},
		{"legacy fact, no header kept", []string{vectorSecret}, "", body, legacy, domain.AuthUnverifiable, "neither"},
		{"malformed header", []string{vectorSecret}, "sha1=zz", body, proof, domain.AuthFailed, "not a valid signature header"},
		{"weaker algorithm", []string{vectorSecret}, "md5=" + strings.Repeat("0", 32), body, proof, domain.AuthFailed, "not a valid signature header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newProvider(t, Config{Secrets: tt.secrets}).Authenticate(headers(HeaderHub, tt.header), nil, tt.body, tt.proof)
			if got.Result != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Authenticate() = %+v, want %s with a reason containing %q", got, tt.want, tt.reason)
			}
		})
	}
}

func TestAuthenticateRS256(t *testing.T) {
	keys := testKeys()
	body := vectorBody(t)
	sig := signRS256(t, body, keys[0], "kid-1")
	jwks := newJWKSServer(t, map[string]*rsa.PublicKey{"kid-1": &keys[0].PublicKey})
	before := newProvider(t, Config{JWKSURL: jwks.URL})
	proof, err := before.VerifyProof(t.Context(), headers(HeaderAsymmetric, sig), nil, body, t0)
	if err != nil || proof.Scheme != SchemeRS256 || proof.KeyID != "kid-1" || len(proof.Key) == 0 {
		t.Fatalf("VerifyProof() = %+v, %v; want the kept key kid-1", proof, err)
	}
	// Pagar.me rotates: kid-1 is withdrawn, kid-2 published; after is a
	// process that has only ever seen the new key set.
	jwks2 := newJWKSServer(t, map[string]*rsa.PublicKey{"kid-2": &keys[1].PublicKey})
	after := newProvider(t, Config{JWKSURL: jwks2.URL})
	if err := after.Verify(t.Context(), headers(HeaderAsymmetric, signRS256(t, body, keys[1], "kid-2")), nil, body, t0); err != nil {
		t.Fatalf("Verify() with the new key = %v", err)
	}
	hubOnly := newProvider(t, Config{Secrets: []string{vectorSecret}})
	altered := append([]byte(nil), body...)
	altered[len(altered)/2] ^= 0x01
	// A forger re-signs an altered body with their own key under kid-1 and
	// stores that key with the fact.
	forged := domain.AuthProof{Scheme: SchemeRS256, KeyID: "kid-1", Key: marshalJWK("kid-1", &keys[1].PublicKey)}
	otherKid := domain.AuthProof{Scheme: SchemeRS256, KeyID: "kid-2", Key: marshalJWK("kid-2", &keys[0].PublicKey)}
	tests := []struct {
		name   string
		p      *Provider
		header string
		body   []byte
		proof  domain.AuthProof
		want   domain.AuthResult
		reason string
	}{
		{"verifies with the kept key", before, sig, body, proof, domain.AuthVerified, ""},
		{"key rotated in the JWKS: kept key still verifies", after, sig, body, proof, domain.AuthVerified, ""},
		{"RS256 no longer configured: kept key still verifies", hubOnly, sig, body, proof, domain.AuthVerified, ""},
		{"body altered, kept key", after, sig, altered, proof, domain.AuthFailed, "does not verify with the kept key"},
		{"kept key replaced while kid-1 is published", before, signRS256(t, altered, keys[1], "kid-1"), altered, forged, domain.AuthFailed, "differs"},
		{"kept key of another kid", after, sig, body, otherKid, domain.AuthFailed, "kept key is"},
		{"kept key unreadable", after, sig, body, domain.AuthProof{Key: json.RawMessage(`{"kty":"EC"}`)}, domain.AuthFailed, "not an RS256"},
		{"legacy fact, key held now", before, sig, body, domain.AuthProof{}, domain.AuthVerified, "recorded before keys were kept"},
		{"legacy fact, body altered, key held now", before, sig, altered, domain.AuthProof{}, domain.AuthFailed, "key set held now"},
		{"legacy fact, key rotated away", after, sig, body, domain.AuthProof{}, domain.AuthUnverifiable, "not in the key set"},
		{"header not kept", after, "", body, proof, domain.AuthUnverifiable, "was not kept"},
		{"malformed header", after, "alg=RS256; kid=kid-1", body, proof, domain.AuthFailed, "not a valid signature header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.Authenticate(headers(HeaderAsymmetric, tt.header), nil, tt.body, tt.proof)
			if got.Result != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Authenticate() = %+v, want %s with a reason containing %q", got, tt.want, tt.reason)
			}
		})
	}
}

func FuzzAuthenticate(f *testing.F) {
	body, err := os.ReadFile("testdata/vectors/pagarme_v5_payload.json")
	if err != nil {
		f.Fatal(err)
	}
	key := testKeys()[0]
	sig, err := SignRS256(body, key, "kid-1")
	if err != nil {
		f.Fatal(err)
	}
	jwk := []byte(marshalJWK("kid-1", &key.PublicKey))
	fp := domain.SecretFingerprint(vectorSecret)
	f.Add(body, vectorHub, "", fp, []byte(nil))
	f.Add(body, "", sig, "", jwk)
	f.Add(body, vectorHub, sig, fp, jwk)
	f.Add([]byte("x"), "sha1=00", "alg=RS256; kid=k; signature=AA", "sha256:0", []byte(`{"kty":"RSA","kid":"k"}`))
	f.Fuzz(func(t *testing.T, body []byte, hub, asym, secretID string, key []byte) {
		p := newProvider(t, Config{Secrets: []string{vectorSecret}})
		h := headers(HeaderHub, hub, HeaderAsymmetric, asym)
		got := p.Authenticate(h, nil, body, domain.AuthProof{SecretID: secretID, Key: key})
		if !got.Result.Valid() || got.Result == domain.AuthVerifiedRotated {
			t.Fatalf("Authenticate() = %+v with one secret", got)
		}
		if got.Result == domain.AuthVerified && !hubSigned(h, body) && !rs256Signed(h, body, key) {
			t.Fatalf("Authenticate() = verified, but neither the HMAC nor the kept key signs the body")
		}
	})
}

// hubSigned is an oracle: the kept X-Hub-Signature is what SignHub writes.
func hubSigned(h http.Header, body []byte) bool {
	mac, err := ParseHubHeader(h.Get(HeaderHub))
	return err == nil && hex.EncodeToString(mac) == strings.TrimPrefix(SignHub(body, vectorSecret), "sha1=")
}

// rs256Signed is an oracle: the kept key verifies the kept signature.
func rs256Signed(h http.Header, body, key []byte) bool {
	ah, err := ParseAsymmetricHeader(h.Get(HeaderAsymmetric))
	if err != nil {
		return false
	}
	_, pub, err := signingKey(key)
	if err != nil {
		return false
	}
	digest := sha256.Sum256(body)
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], ah.Signature) == nil
}

package pagarme

import (
	"crypto/rsa"
	"os"
	"testing"
)

// Webhook path costs per delivery: RS256 with a cached key, the legacy HMAC,
// and mapping a two-charge order.
func BenchmarkVerifyRS256(b *testing.B) {
	body := vectorBody(b)
	key := testKeys()[0]
	srv := newJWKSServer(b, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	p := newProvider(b, Config{JWKSURL: srv.URL})
	h := headers(HeaderAsymmetric, signRS256(b, body, key, "k1"))
	for b.Loop() {
		if err := p.Verify(b.Context(), h, nil, body, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyProofRS256 is BenchmarkVerifyRS256 through VerifyProof,
// which also encodes the verifying key as the JWK kept with the fact.
func BenchmarkVerifyProofRS256(b *testing.B) {
	body := vectorBody(b)
	key := testKeys()[0]
	srv := newJWKSServer(b, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	p := newProvider(b, Config{JWKSURL: srv.URL})
	h := headers(HeaderAsymmetric, signRS256(b, body, key, "k1"))
	for b.Loop() {
		if _, err := p.VerifyProof(b.Context(), h, nil, body, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyHub(b *testing.B) {
	body := vectorBody(b)
	p := newProvider(b, Config{Secrets: []string{"sk_new", vectorSecret}})
	h := headers(HeaderHub, vectorHub)
	for b.Loop() {
		if err := p.Verify(b.Context(), h, nil, body, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseOrder(b *testing.B) {
	body, err := os.ReadFile("testdata/events/order.paid.two_charges.json")
	if err != nil {
		b.Fatal(err)
	}
	p := newProvider(b, Config{Secrets: []string{vectorSecret}})
	for b.Loop() {
		if _, err := p.Parse(b.Context(), nil, nil, body); err != nil {
			b.Fatal(err)
		}
	}
}

package api

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/providers/asaas"
	"github.com/payledger/payledger/providers/stripe"
)

var (
	_ ProofVerifier = (*stripe.Provider)(nil)
	_ HeaderKeeper  = (*stripe.Provider)(nil)
	_ ProofVerifier = (*asaas.Provider)(nil)
	_ HeaderKeeper  = (*asaas.Provider)(nil)
)

// TestWebhookKeepsProof: a verified delivery's facts keep how it was
// verified (the fingerprint of the secret that matched), its signature
// header and query, so the adapter re-verifies the stored delivery later;
// the same body altered fails.
func TestWebhookKeepsProof(t *testing.T) {
	live, err := stripe.New(stripe.Config{Secrets: []string{stripeOldSecret, stripeSecret}})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t)
	env.deps.Providers = []Provider{live}
	srv := env.server(t)
	body := stripeFixture(t, "payment_intent.succeeded.json")
	req := stripeWebhook(body, stripe.Sign(body, stripeSecret, testNow))
	req.URL.RawQuery = "source=test"
	if res := serve(t, srv, req); res.status != http.StatusOK {
		t.Fatalf("delivery: %d %s", res.status, res.raw)
	}
	recs, err := env.store.ReadStream(t.Context(), eventstore.PaymentStream("stripe", stripePayment))
	if err != nil || len(recs) == 0 {
		t.Fatalf("stored: %d events, %v", len(recs), err)
	}
	md, err := eventstore.DecodeMetadata(recs[0].Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if md.Proof == nil || md.Proof.SecretID != domain.SecretFingerprint(stripeSecret) || md.Query != "source=test" ||
		md.AuthHeaders[stripe.Header] == "" {
		t.Fatalf("metadata keeps proof %+v, query %q, headers %v", md.Proof, md.Query, md.AuthHeaders)
	}
	header := http.Header{}
	for k, v := range md.AuthHeaders {
		header.Set(k, v)
	}
	query, _ := url.ParseQuery(md.Query)
	if got := live.Authenticate(header, query, md.RawBody, *md.Proof); got.Result != domain.AuthVerifiedRotated {
		t.Errorf("re-verified: %+v, want verified_with_rotated_secret (the second configured secret signed it)", got)
	}
	altered := append([]byte{}, md.RawBody...)
	altered[len(altered)-2] ^= 1
	if got := live.Authenticate(header, query, altered, *md.Proof); got.Result != domain.AuthFailed {
		t.Errorf("altered body: %+v, want failed", got)
	}
}

// TestAsaasKeepsNoToken: Asaas's static token is never kept with a fact.
func TestAsaasKeepsNoToken(t *testing.T) {
	p, err := asaas.New(asaas.Config{Tokens: []string{"tok_never_stored"}})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(asaas.Header, "tok_never_stored")
	if kept := keptHeaders(p, h); len(kept) != 0 {
		t.Errorf("kept %v: the static token must never be stored", kept)
	}
}

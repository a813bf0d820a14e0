package pagarme

import (
	"crypto/rsa"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

var (
	_ providertest.Provider      = (*Provider)(nil)
	_ providertest.Authenticator = (*Provider)(nil)
	_ providertest.StatusFetcher = (*StatusClient)(nil)
	_ providertest.Lister        = (*StatusClient)(nil)
)

// TestContract runs the suite with both schemes configured: RS256 against a
// fake JWKS host, and the legacy HMAC with the spec's key.
func TestContract(t *testing.T) {
	key := testKeys()[0]
	srv := newJWKSServer(t, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	p := newProvider(t, Config{JWKSURL: srv.URL, Secrets: []string{vectorSecret}})
	providertest.Run(t, p, contractVectors(t, key))
}

func contractVectors(t *testing.T, key *rsa.PrivateKey) providertest.Vectors {
	body := vectorBody(t)
	rs := signRS256(t, body, key, "k1")
	sig := rs[strings.LastIndex(rs, "=")+1:]
	d := func(name, header, value string, body []byte) providertest.Delivery {
		h := http.Header{}
		if value != "" {
			h.Set(header, value)
		}
		return providertest.Delivery{Name: name, Header: h, Body: body, Now: t0}
	}
	reject := func(c providertest.Class, name, header, value string, cause error) providertest.Rejected {
		return providertest.Rejected{Delivery: d(name, header, value, body), Class: c, Kind: domain.KindInvalid, Err: cause}
	}
	spec := []domain.Event{obs{hook: "hook_test_0001", typ: "charge.paid", charge: "ch_test_0001",
		at: "2026-01-15T12:00:00Z", status: domain.StatusConfirmed, providerStatus: "paid", amount: 12356, captured: 12356}.event(t)}
	v := providertest.Vectors{
		Accepted: []providertest.Accepted{
			{Delivery: d("spec legacy vector", HeaderHub, vectorHub, body), Want: spec},
			{Delivery: d("spec body, RS256", HeaderAsymmetric, rs, body), Want: spec},
		},
		Rejected: []providertest.Rejected{
			reject(providertest.Forged, "RS256 of another body", HeaderAsymmetric, signRS256(t, []byte("{}"), key, "k1"), ErrNoValidSignature),
			reject(providertest.Forged, "another key under a known kid", HeaderAsymmetric, signRS256(t, body, testKeys()[1], "k1"), ErrNoValidSignature),
			reject(providertest.Forged, "HMAC with another key", HeaderHub, SignHub(body, "sk_other"), ErrNoValidSignature),
			reject(providertest.Truncated, "RS256 signature cut short", HeaderAsymmetric, rs[:len(rs)-4], ErrNoValidSignature),
			reject(providertest.Truncated, "HMAC cut short", HeaderHub, vectorHub[:len(vectorHub)-2], ErrInvalidHeader),
			reject(providertest.Recased, "alg lower-case", HeaderAsymmetric, "alg=rs256; kid=k1; signature="+sig, ErrUnsupportedAlgorithm),
			reject(providertest.Recased, "RS256 signature upper-cased", HeaderAsymmetric, "alg=RS256; kid=k1; signature="+strings.ToUpper(sig), ErrNoValidSignature),
			reject(providertest.Unsigned, "no signature header", HeaderHub, "", ErrNotSigned),
			reject(providertest.Malformed, "RS256 without kid", HeaderAsymmetric, "alg=RS256; signature="+sig, ErrInvalidHeader),
		},
		Exempt: map[providertest.Class]string{
			providertest.Stale: "neither scheme signs a timestamp: a replay is a duplicate the event store drops",
		},
		SignedHeaders: []string{HeaderAsymmetric, HeaderHub},
		BodySigned:    true,
		RejectKind:    domain.KindInvalid,
		Secrets:       []string{vectorSecret},
	}
	// Every testdata event, signed with the legacy scheme: those without a
	// charge to track are ignored.
	ignored := map[string]bool{"order.created.no_charges.json": true, "customer.created.json": true,
		"subscription.created.json": true, "invoice.paid.json": true}
	files, err := filepath.Glob("testdata/events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata events: %v, %d files", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dd := d(filepath.Base(f), HeaderHub, SignHub(b, vectorSecret), b)
		if ignored[filepath.Base(f)] {
			v.Ignored = append(v.Ignored, dd)
		} else {
			v.Accepted = append(v.Accepted, providertest.Accepted{Delivery: dd})
		}
	}
	return v
}

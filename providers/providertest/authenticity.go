package providertest

import (
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

// testAuthenticity: VerifyProof refuses what Verify refuses; every
// authentic delivery re-verifies with its own proof
// as v.Authenticity says, is never failed without a proof (a legacy fact),
// and no delivery derived from it by cutting or flipping a signed part
// re-verifies; with a signed body, a flipped byte is failed.
func testAuthenticity(t *testing.T, p Provider, v Vectors) {
	a, ok := p.(Authenticator)
	if !ok {
		t.Skip(p.Name() + " does not implement Authenticator (VerifyProof, Authenticate)")
	}
	want := v.Authenticity
	if want == "" {
		want = domain.AuthVerified
	}
	ds := v.Ignored
	for _, acc := range v.Accepted {
		ds = append(ds, acc.Delivery)
	}
	for _, r := range v.Rejected {
		if proof, err := a.VerifyProof(t.Context(), r.Header, r.Query, r.Body, r.Now); err == nil || !proof.IsZero() {
			t.Errorf("%s %s: VerifyProof() = %+v, %v; want no proof and the error Verify gives", r.Class, r.Name, proof, err)
		}
	}
	for _, d := range ds {
		t.Run(d.Name, func(t *testing.T) {
			proof, err := a.VerifyProof(t.Context(), d.Header, d.Query, d.Body, d.Now)
			if err != nil {
				t.Fatalf("VerifyProof() = %v, want ok", err)
			}
			if got := a.Authenticate(d.Header, d.Query, d.Body, proof); got.Result != want {
				t.Errorf("Authenticate() = %+v, want %s", got, want)
			}
			if got := a.Authenticate(d.Header, d.Query, d.Body, domain.AuthProof{}); !got.Result.Valid() || got.Result == domain.AuthFailed {
				t.Errorf("Authenticate() without a proof = %+v, want a valid result other than failed", got)
			}
			testAuthDerived(t, a, derive(d, v), proof, want == domain.AuthVerified && v.BodySigned, v.Secrets)
		})
	}
}

// testAuthDerived checks the derived deliveries with the authentic one's
// proof, stopping after a few failures.
func testAuthDerived(t *testing.T, a Authenticator, rs []Rejected, proof domain.AuthProof, bodySigned bool, secrets []string) {
	t.Helper()
	failures := 0
	for _, r := range rs {
		got := a.Authenticate(r.Header, r.Query, r.Body, proof)
		bad := !got.Result.Valid() || got.Result == domain.AuthVerified || got.Result == domain.AuthVerifiedRotated ||
			bodySigned && r.Class == Forged && got.Result != domain.AuthFailed || quotes(got.Reason, secrets)
		if bad {
			t.Errorf("%s: Authenticate() = %+v, want neither verified nor a quoted secret (failed for a flipped signed byte)", r.Name, got)
			if failures++; failures == 3 {
				t.Errorf("stopping after 3 failures")
				return
			}
		}
	}
}

// quotes reports whether s contains any of secrets.
func quotes(s string, secrets []string) bool {
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			return true
		}
	}
	return false
}

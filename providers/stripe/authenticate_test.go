package stripe

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestAuthenticate(t *testing.T) {
	body := vectorBody(t)
	good := "t=1700000000,v1=" + vectorS1
	// The proof ingest keeps: the spec vector verified with its secret, in
	// the past (the tolerance must not matter afterwards).
	proof, err := newProvider(t, Config{Secrets: []string{vectorSecret}}).
		VerifyProof(t.Context(), headerOf(good), nil, body, time.Unix(vectorT, 0))
	if err != nil {
		t.Fatalf("VerifyProof() = %v", err)
	}
	fp := domain.SecretFingerprint(vectorSecret)
	if proof.SecretID != fp || proof.Scheme != Scheme {
		t.Fatalf("VerifyProof() = %+v, want scheme %s and secret %s", proof, Scheme, fp)
	}
	altered := append([]byte(nil), body...)
	altered[len(altered)/2] ^= 0x01
	tests := []struct {
		name    string
		secrets []string
		header  string
		body    []byte
		proof   domain.AuthProof
		want    domain.AuthResult
		reason  string
	}{
		{"verifies", []string{vectorSecret}, good, body, proof, domain.AuthVerified, ""},
		{"rotated, old secret second", []string{"whsec_new", vectorSecret}, good, body, proof, domain.AuthVerifiedRotated, fp},
		{"rotated away", []string{"whsec_new"}, good, body, proof, domain.AuthUnverifiable, fp + ", is no longer configured"},
		{"body altered, secret still configured", []string{"whsec_new", vectorSecret}, good, altered, proof, domain.AuthFailed, fp},
		{"legacy fact verifies", []string{vectorSecret}, good, body, domain.AuthProof{}, domain.AuthVerified, ""},
		{"legacy fact, nothing matches", []string{vectorSecret}, good, altered, domain.AuthProof{}, domain.AuthUnverifiable, "cannot be told"},
		{"header not kept", []string{vectorSecret}, "", body, proof, domain.AuthUnverifiable, "was not kept"},
		{"malformed header", []string{vectorSecret}, "t=abc,v1=" + vectorS1, body, proof, domain.AuthFailed, "not a valid signature header"},
		{"header without v1", []string{vectorSecret}, "t=1700000000", body, proof, domain.AuthFailed, "not a valid signature header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, Config{Secrets: tt.secrets})
			got := p.Authenticate(headerOf(tt.header), nil, tt.body, tt.proof)
			if got.Result != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Authenticate() = %+v, want %s with a reason containing %q", got, tt.want, tt.reason)
			}
			for _, s := range tt.secrets {
				if strings.Contains(got.Reason, s) {
					t.Errorf("reason %q quotes a secret", got.Reason)
				}
			}
		})
	}
}

func FuzzAuthenticate(f *testing.F) {
	s1, err := os.ReadFile("testdata/vectors/s1_payload.json")
	if err != nil {
		f.Fatal(err)
	}
	fp := domain.SecretFingerprint(vectorSecret)
	f.Add(s1, "t=1700000000,v1="+vectorS1, vectorSecret, fp)
	f.Add(s1, "t=1700000000,v1="+vectorS1, "whsec_other", fp)
	f.Add(s1, "t=1700000000,v1="+strings.ToUpper(vectorS1), vectorSecret, "")
	f.Add([]byte("x"), "t=abc,v1=00", "k", "sha256:0")
	f.Add([]byte{}, "", "k", "")
	f.Fuzz(func(t *testing.T, body []byte, header, secret, recorded string) {
		if secret == "" || strings.TrimSpace(secret) != secret {
			return // New rejects these
		}
		p := newProvider(t, Config{Secrets: []string{secret}})
		got := p.Authenticate(headerOf(header), nil, body, domain.AuthProof{SecretID: recorded})
		if !got.Result.Valid() {
			t.Fatalf("Authenticate() = %+v: not a valid result", got)
		}
		// Short secrets occur in any English sentence; long ones must not.
		if got.Result == domain.AuthVerifiedRotated || (len(secret) >= 8 && strings.Contains(got.Reason, secret)) {
			t.Fatalf("Authenticate() = %+v with one secret", got)
		}
		if got.Result == domain.AuthVerified && !signedBy(header, body, secret) {
			t.Fatalf("Authenticate(%q) = verified, but no v1 is the body's HMAC under the secret", header)
		}
	})
}

// signedBy is an independent oracle: some v1 of header, lower-cased, is
// what Sign writes for body and secret at the header's t.
func signedBy(header string, body []byte, secret string) bool {
	sh, err := ParseSignatureHeader(header)
	if err != nil {
		return false
	}
	_, want, _ := strings.Cut(Sign(body, secret, sh.Time()), ",v1=")
	for _, sig := range sh.Signatures {
		if hex.EncodeToString(sig) == want {
			return true
		}
	}
	return false
}

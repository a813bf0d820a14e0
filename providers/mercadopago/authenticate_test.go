package mercadopago

import (
	"bytes"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestAuthenticate(t *testing.T) {
	body := vectorBody(t)
	at := time.Unix(1704908010, 0)
	proof, err := newProvider(t, Config{Secrets: []string{vectorSecret}, MaxAge: time.Hour}).
		VerifyProof(t.Context(), headers(vectorHeader, vectorRequestID), queryOf(vectorDataID), body, at)
	if err != nil {
		t.Fatalf("VerifyProof() = %v", err)
	}
	fp := domain.SecretFingerprint(vectorSecret)
	if proof.SecretID != fp || proof.Scheme != Scheme {
		t.Fatalf("VerifyProof() = %+v, want scheme %s and secret %s", proof, Scheme, fp)
	}
	otherPayment := bytes.Replace(body, []byte(vectorDataID), []byte("999999998"), 1)
	tests := []struct {
		name     string
		secrets  []string
		sig, rid string
		dataID   string
		body     []byte
		proof    domain.AuthProof
		want     domain.AuthResult
		reason   string
	}{
		{"verifies", []string{vectorSecret}, vectorHeader, vectorRequestID, vectorDataID, body, proof, domain.AuthVerified, "not the body"},
		{"rotated, old secret second", []string{"new_secret", vectorSecret}, vectorHeader, vectorRequestID, vectorDataID, body, proof, domain.AuthVerifiedRotated, fp},
		{"rotated away", []string{"new_secret"}, vectorHeader, vectorRequestID, vectorDataID, body, proof, domain.AuthUnverifiable, fp + ", is no longer configured"},
		{"signed data.id altered", []string{"new_secret", vectorSecret}, vectorHeader, vectorRequestID, "999999998", body, proof, domain.AuthFailed, fp},
		{"body names another payment", []string{vectorSecret}, vectorHeader, vectorRequestID, vectorDataID, otherPayment, proof, domain.AuthFailed, "does not name the signed"},
		{"body not JSON", []string{vectorSecret}, vectorHeader, vectorRequestID, vectorDataID, []byte("{"), proof, domain.AuthFailed, "not a notification"},
		{"legacy fact verifies", []string{vectorSecret}, vectorHeader, vectorRequestID, vectorDataID, body, domain.AuthProof{}, domain.AuthVerified, ""},
		{"legacy fact, nothing matches", []string{"new_secret"}, vectorHeader, vectorRequestID, vectorDataID, body, domain.AuthProof{}, domain.AuthUnverifiable, "cannot be told"},
		{"x-request-id not kept", []string{vectorSecret}, vectorHeader, "", vectorDataID, body, proof, domain.AuthUnverifiable, RequestIDHeader + " header"},
		{"data.id not kept", []string{vectorSecret}, vectorHeader, vectorRequestID, "", body, proof, domain.AuthUnverifiable, QueryDataID + " query"},
		{"x-signature not kept", []string{vectorSecret}, "", vectorRequestID, vectorDataID, body, proof, domain.AuthUnverifiable, "was not kept"},
		{"malformed x-signature", []string{vectorSecret}, "ts=abc,v1=" + vectorV1, vectorRequestID, vectorDataID, body, proof, domain.AuthFailed, "not a valid signature header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, Config{Secrets: tt.secrets})
			got := p.Authenticate(headers(tt.sig, tt.rid), queryOf(tt.dataID), tt.body, tt.proof)
			if got.Result != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("Authenticate() = %+v, want %s with a reason containing %q", got, tt.want, tt.reason)
			}
		})
	}
}

func FuzzAuthenticate(f *testing.F) {
	body, err := os.ReadFile("testdata/vectors/mp_b_payload.json")
	if err != nil {
		f.Fatal(err)
	}
	fp := domain.SecretFingerprint(vectorSecret)
	f.Add(body, vectorHeader, vectorRequestID, vectorDataID, vectorSecret, fp)
	f.Add(body, vectorHeader, vectorRequestID, vectorDataID, "other", fp)
	f.Add(body, vectorHeader, "", vectorDataID, vectorSecret, "")
	f.Add([]byte("{}"), "ts=1,v1=00", "r", "", "k", "sha256:0")
	f.Fuzz(func(t *testing.T, body []byte, sig, requestID, dataID, secret, recorded string) {
		if secret == "" || strings.TrimSpace(secret) != secret {
			return // New rejects these
		}
		p := newProvider(t, Config{Secrets: []string{secret}})
		h := headers(sig, requestID)
		q := url.Values{QueryDataID: {dataID}}
		got := p.Authenticate(h, q, body, domain.AuthProof{SecretID: recorded})
		if !got.Result.Valid() || got.Result == domain.AuthVerifiedRotated {
			t.Fatalf("Authenticate() = %+v with one secret", got)
		}
		if got.Result == domain.AuthVerified && !signedBy(sig, requestID, dataID, secret) {
			t.Fatalf("Authenticate(%q) = verified, but no v1 signs the manifest under the secret", sig)
		}
	})
}

// signedBy is an independent oracle: some v1 of sig is what Sign writes for
// the trimmed manifest parts, data.id as sent or lower-cased.
func signedBy(sig, requestID, dataID, secret string) bool {
	sh, err := ParseSignatureHeader(sig)
	if err != nil {
		return false
	}
	requestID, dataID = strings.TrimSpace(requestID), strings.TrimSpace(dataID)
	for _, id := range []string{dataID, strings.ToLower(dataID)} {
		_, want, _ := strings.Cut(Sign(secret, id, requestID, sh.TS), ",v1=")
		for _, s := range sh.Signatures {
			if hex.EncodeToString(s) == want {
				return true
			}
		}
	}
	return false
}

package pagarme

import (
	"crypto/rsa"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

// TestVerifySchemePrecedence: the asymmetric header decides when RS256 is
// configured; else X-Hub-Signature when secrets are; else not signed. The
// header that decides is the one Parse reports.
func TestVerifySchemePrecedence(t *testing.T) {
	body := vectorBody(t)
	key := testKeys()[0]
	srv := newJWKSServer(t, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	goodRS := signRS256(t, body, key, "k1")
	badRS := signRS256(t, []byte("{}"), key, "k1")
	badHub := SignHub([]byte("{}"), vectorSecret)
	both := Config{JWKSURL: srv.URL, Secrets: []string{vectorSecret}}
	rsOnly := Config{JWKSURL: srv.URL}
	hubOnly := Config{Secrets: []string{vectorSecret}}
	tests := []struct {
		name       string
		cfg        Config
		header     http.Header
		wantErr    error // nil: accepted
		wantMsg    string
		wantHeader string // Notification.SignatureHeader
	}{
		{name: "both configured, both valid: RS256 decides", cfg: both,
			header: headers(HeaderAsymmetric, goodRS, HeaderHub, vectorHub), wantHeader: goodRS},
		{name: "both configured, RS256 valid, hub forged: RS256 decides", cfg: both,
			header: headers(HeaderAsymmetric, goodRS, HeaderHub, badHub), wantHeader: goodRS},
		{name: "both configured, RS256 forged, hub valid: RS256 decides", cfg: both,
			header: headers(HeaderAsymmetric, badRS, HeaderHub, vectorHub), wantErr: ErrNoValidSignature, wantHeader: badRS},
		{name: "both configured, RS256 malformed, hub valid: RS256 decides", cfg: both,
			header: headers(HeaderAsymmetric, "alg=RS256", HeaderHub, vectorHub), wantErr: ErrInvalidHeader, wantHeader: "alg=RS256"},
		{name: "both configured, only hub", cfg: both, header: headers(HeaderHub, vectorHub), wantHeader: vectorHub},
		{name: "both configured, nothing", cfg: both, header: http.Header{}, wantErr: ErrNotSigned,
			wantMsg: "missing X-Webhook-Asymmetric-Signature and X-Hub-Signature headers"},
		{name: "hub only, asymmetric header present is not used", cfg: hubOnly,
			header: headers(HeaderAsymmetric, badRS, HeaderHub, vectorHub), wantHeader: vectorHub},
		{name: "hub only, only the asymmetric header", cfg: hubOnly, header: headers(HeaderAsymmetric, goodRS), wantErr: ErrNotSigned,
			wantMsg: "X-Webhook-Asymmetric-Signature is present but no JWKS URL is configured"},
		{name: "hub only, nothing", cfg: hubOnly, header: nil, wantErr: ErrNotSigned, wantMsg: "missing X-Hub-Signature header"},
		{name: "RS256 only, only hub", cfg: rsOnly, header: headers(HeaderHub, vectorHub), wantErr: ErrNotSigned,
			wantMsg: "X-Hub-Signature is present but no webhook secret is configured"},
		{name: "RS256 only, nothing", cfg: rsOnly, header: http.Header{}, wantErr: ErrNotSigned, wantMsg: "missing X-Webhook-Asymmetric-Signature header"},
		{name: "RS256 only, empty asymmetric header", cfg: rsOnly, header: http.Header{HeaderAsymmetric: {""}}, wantErr: ErrNotSigned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.cfg)
			err := p.Verify(t.Context(), tt.header, nil, body, t0)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Verify() = %v, want ok", err)
			case tt.wantErr != nil && (!errors.Is(err, tt.wantErr) || domain.KindOf(err) != domain.KindInvalid):
				t.Fatalf("Verify() = %v, want invalid %v", err, tt.wantErr)
			case tt.wantErr != nil && !strings.Contains(domain.MessageOf(err), tt.wantMsg):
				t.Fatalf("message %q does not say %q", domain.MessageOf(err), tt.wantMsg)
			}
			n, err := p.Parse(t.Context(), tt.header, nil, body)
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if n.SignatureHeader != tt.wantHeader {
				t.Errorf("SignatureHeader = %q, want %q", n.SignatureHeader, tt.wantHeader)
			}
		})
	}
}

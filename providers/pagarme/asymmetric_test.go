package pagarme

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

// rs256Setup serves key 0 as kid "k1" and returns a provider using it.
func rs256Setup(t *testing.T) (*Provider, *jwksServer, *rsa.PrivateKey) {
	t.Helper()
	key := testKeys()[0]
	srv := newJWKSServer(t, map[string]*rsa.PublicKey{"k1": &key.PublicKey})
	return newProvider(t, Config{JWKSURL: srv.URL}), srv, key
}

func TestVerifyRS256(t *testing.T) {
	body := vectorBody(t)
	key, other := testKeys()[0], testKeys()[1]
	good := signRS256(t, body, key, "k1")
	sig := good[strings.LastIndex(good, "=")+1:]
	stdSig := base64.StdEncoding.EncodeToString(mustDecode(t, sig))
	tests := []struct {
		name    string
		header  string
		body    []byte
		wantErr error // nil: accepted
		wantMsg string
	}{
		{name: "signed raw body", header: good, body: body},
		{name: "empty body signed", header: signRS256(t, nil, key, "k1"), body: nil},
		{name: "parts reordered", header: "signature=" + sig + "; kid=k1; alg=RS256", body: body},
		{name: "no spaces, trailing semicolon", header: "alg=RS256;kid=k1;signature=" + sig + ";", body: body},
		{name: "extra spaces", header: "  alg = RS256 ;  kid=k1 ;signature= " + sig + "  ", body: body},
		{name: "unknown parameter ignored", header: good + "; v=2", body: body},
		{name: "parameter names case-insensitive", header: "ALG=RS256; Kid=k1; Signature=" + sig, body: body},
		{name: "padded base64url", header: "alg=RS256; kid=k1; signature=" + base64.URLEncoding.EncodeToString(mustDecode(t, sig)), body: body},
		{name: "standard base64 alphabet", header: "alg=RS256; kid=k1; signature=" + stdSig, body: body},

		{name: "signature of another body", header: signRS256(t, []byte("{}"), key, "k1"), body: body,
			wantErr: ErrNoValidSignature, wantMsg: `does not verify with key "k1"`},
		{name: "trailing newline added", header: good, body: append(append([]byte{}, body...), '\n'), wantErr: ErrNoValidSignature},
		{name: "signed by another key under a known kid", header: signRS256(t, body, other, "k1"), body: body, wantErr: ErrNoValidSignature},
		{name: "truncated signature", header: good[:len(good)-4], body: body, wantErr: ErrNoValidSignature},
		{name: "unknown kid", header: signRS256(t, body, key, "k2"), body: body, wantErr: ErrUnknownKey, wantMsg: `key "k2" is not in the JWKS`},
		{name: "alg RS512", header: strings.Replace(good, "RS256", "RS512", 1), body: body, wantErr: ErrUnsupportedAlgorithm, wantMsg: "only RS256"},
		{name: "alg none", header: "alg=none; kid=k1; signature=" + sig, body: body, wantErr: ErrUnsupportedAlgorithm},
		{name: "alg HS256", header: "alg=HS256; kid=k1; signature=" + sig, body: body, wantErr: ErrUnsupportedAlgorithm},
		{name: "alg lower-case", header: "alg=rs256; kid=k1; signature=" + sig, body: body, wantErr: ErrUnsupportedAlgorithm},
		{name: "no alg", header: "kid=k1; signature=" + sig, body: body, wantErr: ErrInvalidHeader, wantMsg: "no alg"},
		{name: "no kid", header: "alg=RS256; signature=" + sig, body: body, wantErr: ErrInvalidHeader, wantMsg: "no kid"},
		{name: "empty kid", header: "alg=RS256; kid=; signature=" + sig, body: body, wantErr: ErrInvalidHeader, wantMsg: "no kid"},
		{name: "no signature", header: "alg=RS256; kid=k1", body: body, wantErr: ErrInvalidHeader, wantMsg: "no signature"},
		{name: "part without =", header: "alg=RS256; kid=k1; " + sig, body: body, wantErr: ErrInvalidHeader, wantMsg: "part 3 is not key=value"},
		{name: "kid twice", header: "alg=RS256; kid=k1; kid=k2; signature=" + sig, body: body, wantErr: ErrInvalidHeader, wantMsg: "kid appears twice"},
		{name: "comma-separated", header: "alg=RS256, kid=k1, signature=" + sig, body: body, wantErr: ErrInvalidHeader, wantMsg: "no kid"},
		{name: "signature not base64", header: "alg=RS256; kid=k1; signature=***", body: body, wantErr: ErrInvalidHeader, wantMsg: "not base64url"},
		{name: "signature only padding", header: "alg=RS256; kid=k1; signature==", body: body, wantErr: ErrInvalidHeader, wantMsg: "not base64url"},
		{name: "mixed alphabets", header: "alg=RS256; kid=k1; signature=ab-_+/", body: body, wantErr: ErrInvalidHeader},
		{name: "kid with a control character", header: "alg=RS256; kid=k\x011; signature=" + sig, body: body, wantErr: ErrInvalidHeader},
		{name: "kid too long", header: "alg=RS256; kid=" + strings.Repeat("k", 256) + "; signature=" + sig, body: body, wantErr: ErrInvalidHeader},
		{name: "only separators", header: " ; ; ", body: body, wantErr: ErrInvalidHeader},
		{name: "blank", header: "   ", body: body, wantErr: ErrNotSigned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _ := rs256Setup(t)
			err := p.Verify(t.Context(), headers(HeaderAsymmetric, tt.header), nil, tt.body, t0)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify() = %v, want ok", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Verify() = %v, want invalid %v", err, tt.wantErr)
			}
			if msg := domain.MessageOf(err); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q does not say %q", msg, tt.wantMsg)
			}
		})
	}
}

// TestVerifyRS256ForgedBody flips each byte of the vector in turn: no
// single-byte change may verify.
func TestVerifyRS256ForgedBody(t *testing.T) {
	body := vectorBody(t)
	p, _, key := rs256Setup(t)
	h := headers(HeaderAsymmetric, signRS256(t, body, key, "k1"))
	if err := p.Verify(t.Context(), h, nil, body, t0); err != nil {
		t.Fatalf("Verify(signed) = %v", err)
	}
	for i := range body {
		forged := append([]byte{}, body...)
		forged[i] ^= 0x01
		if err := p.Verify(t.Context(), h, nil, forged, t0); !errors.Is(err, ErrNoValidSignature) {
			t.Fatalf("byte %d flipped: Verify() = %v, want ErrNoValidSignature", i, err)
		}
	}
}

func TestParseAsymmetricHeader(t *testing.T) {
	ah, err := ParseAsymmetricHeader("alg=RS256; kid=kid_2025-10; signature=AQID")
	if err != nil {
		t.Fatal(err)
	}
	if ah.Algorithm != "RS256" || ah.KeyID != "kid_2025-10" || string(ah.Signature) != "\x01\x02\x03" {
		t.Fatalf("ParseAsymmetricHeader = %+v", ah)
	}
	if _, err := ParseAsymmetricHeader(""); !errors.Is(err, ErrNotSigned) {
		t.Fatalf("empty header: %v", err)
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

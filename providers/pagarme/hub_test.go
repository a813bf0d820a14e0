package pagarme

import (
	"errors"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

func TestSignHubVector(t *testing.T) {
	if got := SignHub(vectorBody(t), vectorSecret); got != vectorHub {
		t.Fatalf("SignHub(vector) = %s, want %s", got, vectorHub)
	}
}

func TestVerifyHub(t *testing.T) {
	body := vectorBody(t)
	hexMAC := strings.TrimPrefix(vectorHub, "sha1=")
	tests := []struct {
		name    string
		secrets []string // default: the vector's key
		header  string
		body    []byte
		wantErr error // nil: accepted
		wantMsg string
	}{
		{name: "spec vector", header: vectorHub, body: body},
		{name: "upper-case hex", header: "sha1=" + strings.ToUpper(hexMAC), body: body},
		{name: "upper-case algorithm", header: "SHA1=" + hexMAC, body: body},
		{name: "surrounding spaces", header: "  sha1 = " + hexMAC + " ", body: body},
		{name: "rotation: second secret matches", secrets: []string{"sk_new", vectorSecret}, header: vectorHub, body: body},
		{name: "rotation: first secret matches", secrets: []string{vectorSecret, "sk_old"}, header: vectorHub, body: body},
		{name: "empty body", header: SignHub(nil, vectorSecret), body: nil},

		{name: "forged: other secret", secrets: []string{"sk_other"}, header: vectorHub, body: body,
			wantErr: ErrNoValidSignature, wantMsg: "does not match a configured secret"},
		{name: "forged: MAC of another body", header: SignHub([]byte("{}"), vectorSecret), body: body, wantErr: ErrNoValidSignature},
		{name: "trailing newline added", header: vectorHub, body: append(append([]byte{}, body...), '\n'), wantErr: ErrNoValidSignature},
		{name: "truncated MAC", header: vectorHub[:len(vectorHub)-2], body: body, wantErr: ErrInvalidHeader, wantMsg: "not 40 hex digits"},
		{name: "MAC too long", header: vectorHub + "00", body: body, wantErr: ErrInvalidHeader},
		{name: "not hex", header: "sha1=" + strings.Repeat("zz", 20), body: body, wantErr: ErrInvalidHeader},
		{name: "no algorithm", header: hexMAC, body: body, wantErr: ErrInvalidHeader, wantMsg: "not algorithm=hex"},
		{name: "sha256 is not accepted", header: "sha256=" + hexMAC, body: body, wantErr: ErrUnsupportedAlgorithm, wantMsg: "only sha1"},
		{name: "empty algorithm", header: "=" + hexMAC, body: body, wantErr: ErrUnsupportedAlgorithm},
		{name: "two MACs", header: vectorHub + "," + vectorHub, body: body, wantErr: ErrInvalidHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := tt.secrets
			if secrets == nil {
				secrets = []string{vectorSecret}
			}
			p := newProvider(t, Config{Secrets: secrets})
			err := p.Verify(t.Context(), headers(HeaderHub, tt.header), nil, tt.body, t0)
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
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q leaks secret %q", err, s)
				}
			}
		})
	}
}

// TestVerifyHubForgedBody flips each byte of the vector in turn: no
// single-byte change may verify.
func TestVerifyHubForgedBody(t *testing.T) {
	body := vectorBody(t)
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	h := headers(HeaderHub, vectorHub)
	for i := range body {
		forged := append([]byte{}, body...)
		forged[i] ^= 0x01
		if err := p.Verify(t.Context(), h, nil, forged, t0); !errors.Is(err, ErrNoValidSignature) {
			t.Fatalf("byte %d flipped: Verify() = %v, want ErrNoValidSignature", i, err)
		}
	}
}

package asaas

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

func TestAuthenticate(t *testing.T) {
	body := payload(t, nil)
	proof, err := newProvider(t, Config{Tokens: []string{testToken}}).VerifyProof(t.Context(), tokenHeader(testToken), nil, body, time.Time{})
	if err != nil || !reflect.DeepEqual(proof, domain.AuthProof{Scheme: Scheme}) {
		t.Fatalf("VerifyProof() = %+v, %v; want only the scheme", proof, err)
	}
	altered := append([]byte(nil), body...)
	altered[0] ^= 0x01
	tests := []struct {
		name   string
		tokens []string
		header http.Header
		body   []byte
		proof  domain.AuthProof
	}{
		{"authentic delivery", []string{testToken}, tokenHeader(testToken), body, proof},
		{"token rotated away", []string{"another-token"}, tokenHeader(testToken), body, proof},
		{"body altered", []string{testToken}, tokenHeader(testToken), altered, proof},
		{"token not kept (never is)", []string{testToken}, http.Header{}, body, domain.AuthProof{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newProvider(t, Config{Tokens: tt.tokens}).Authenticate(tt.header, nil, tt.body, tt.proof)
			if got != (domain.Authenticity{Result: domain.AuthUnverifiable, Reason: noSignature}) {
				t.Errorf("Authenticate() = %+v, want unverifiable: %s", got, noSignature)
			}
		})
	}
}

func FuzzAuthenticate(f *testing.F) {
	f.Add([]byte(`{"event":"PAYMENT_RECEIVED"}`), testToken, "asaas-token", "sha256:0")
	f.Add([]byte{}, "", "", "")
	f.Fuzz(func(t *testing.T, body []byte, token, scheme, secretID string) {
		p := newProvider(t, Config{Tokens: []string{testToken}})
		got := p.Authenticate(http.Header{Header: {token}}, nil, body, domain.AuthProof{Scheme: scheme, SecretID: secretID})
		if got.Result != domain.AuthUnverifiable || got.Reason == "" {
			t.Fatalf("Authenticate() = %+v, want unverifiable with a reason", got)
		}
	})
}

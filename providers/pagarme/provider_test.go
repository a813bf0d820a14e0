package pagarme

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "legacy only", cfg: Config{Secrets: []string{vectorSecret}}},
		{name: "legacy rotation", cfg: Config{Secrets: []string{"sk_new", "sk_old"}}},
		{name: "RS256 only", cfg: Config{JWKSURL: DefaultJWKSURL}},
		{name: "RS256 over http (tests)", cfg: Config{JWKSURL: "http://127.0.0.1:1/jwks.json"}},
		{name: "both", cfg: Config{JWKSURL: DefaultJWKSURL, Secrets: []string{vectorSecret}}},
		{name: "neither", cfg: Config{}, wantErr: "no verification scheme configured"},
		{name: "empty secret", cfg: Config{Secrets: []string{"sk_a", ""}}, wantErr: "secret 2 of 2 is empty"},
		{name: "trailing space", cfg: Config{Secrets: []string{"sk_leaky "}}, wantErr: "secret 1 of 1 has leading or trailing whitespace"},
		{name: "JWKS URL without scheme", cfg: Config{JWKSURL: "hubapi.pagar.me/.well-known/jwks.json"}, wantErr: "not an http(s) URL"},
		{name: "JWKS URL of another scheme", cfg: Config{JWKSURL: "file:///etc/jwks.json"}, wantErr: "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || p == nil {
					t.Fatalf("New() = %v, %v; want a provider", p, err)
				}
				if p.Name() != "pagarme" {
					t.Errorf("Name() = %q", p.Name())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New() error = %v, want it to mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "leaky") {
				t.Errorf("New() error %q leaks the secret", err)
			}
		})
	}
}

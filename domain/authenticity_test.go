package domain_test

import (
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
)

func TestAuthResultValid(t *testing.T) {
	tests := []struct {
		r    domain.AuthResult
		want bool
	}{
		{domain.AuthVerified, true},
		{domain.AuthVerifiedRotated, true},
		{domain.AuthUnverifiable, true},
		{domain.AuthFailed, true},
		{"", false},
		{"Verified", false},
		{"ok", false},
	}
	for _, tt := range tests {
		if got := tt.r.Valid(); got != tt.want {
			t.Errorf("AuthResult(%q).Valid() = %v, want %v", tt.r, got, tt.want)
		}
	}
}

func TestSecretFingerprint(t *testing.T) {
	a := domain.SecretFingerprint("whsec_test_secret")
	tests := []struct {
		name string
		got  string
		want string
	}{
		// Pinned: stored proofs compare against it, so it must never change.
		{"pinned", a, "sha256:" + pinnedFingerprint},
		{"stable", domain.SecretFingerprint("whsec_test_secret"), a},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if b := domain.SecretFingerprint("whsec_test_secreT"); b == a {
		t.Errorf("two secrets share the fingerprint %s", a)
	}
	if strings.Contains(a, "whsec") || len(a) != len("sha256:")+16 {
		t.Errorf("fingerprint %q: want sha256: and 16 hex digits, nothing of the secret", a)
	}
}

func TestAuthProofIsZero(t *testing.T) {
	tests := []struct {
		name string
		p    domain.AuthProof
		want bool
	}{
		{"zero", domain.AuthProof{}, true},
		{"scheme only", domain.AuthProof{Scheme: "asaas-token"}, false},
		{"secret", domain.AuthProof{SecretID: "sha256:00"}, false},
		{"key", domain.AuthProof{Key: []byte(`{}`)}, false},
	}
	for _, tt := range tests {
		if got := tt.p.IsZero(); got != tt.want {
			t.Errorf("%s: IsZero() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// pinnedFingerprint is the first 16 hex digits of
// sha256("payledger secret id v1\x00whsec_test_secret"), computed with
// sha256sum.
const pinnedFingerprint = "dbeefa9d37dfc51a"

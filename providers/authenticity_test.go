package providers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

func TestAuthenticateHMAC(t *testing.T) {
	ids := providers.Fingerprints([][]byte{[]byte("new"), []byte("old")})
	gone := domain.SecretFingerprint("gone")
	tests := []struct {
		name     string
		ids      []string
		matched  int
		recorded string
		want     domain.AuthResult
		reason   string
	}{
		{"first secret", ids, 0, ids[0], domain.AuthVerified, ""},
		{"first secret, legacy fact", ids, 0, "", domain.AuthVerified, ""},
		{"second secret", ids, 1, ids[1], domain.AuthVerifiedRotated, "secret 2 (" + ids[1] + ")"},
		{"recorded secret still configured", ids, -1, ids[1], domain.AuthFailed, ids[1] + ", is still configured"},
		{"recorded secret rotated away", ids, -1, gone, domain.AuthUnverifiable, gone + ", is no longer configured"},
		{"legacy fact, nothing matches", ids, -1, "", domain.AuthUnverifiable, "cannot be told"},
		{"no secret configured", nil, -1, gone, domain.AuthUnverifiable, "no secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := providers.AuthenticateHMAC(tt.ids, tt.matched, tt.recorded)
			if got.Result != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("AuthenticateHMAC() = %+v, want %s with a reason containing %q", got, tt.want, tt.reason)
			}
		})
	}
}

func TestHeaderProblem(t *testing.T) {
	tests := []struct {
		err  error
		want domain.AuthResult
	}{
		{fmt.Errorf("x: %w", providers.ErrNotSigned), domain.AuthUnverifiable},
		{fmt.Errorf("x: %w", providers.ErrInvalidHeader), domain.AuthFailed},
		{fmt.Errorf("x: %w", providers.ErrNoValidSignature), domain.AuthFailed},
	}
	for _, tt := range tests {
		if got := providers.HeaderProblem("X-Sig", tt.err); got.Result != tt.want || got.Reason == "" {
			t.Errorf("HeaderProblem(%v) = %+v, want %s with a reason", tt.err, got, tt.want)
		}
	}
}

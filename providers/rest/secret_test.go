package rest

import (
	"strings"
	"testing"
)

func TestCheckSecret(t *testing.T) {
	tests := []struct {
		name, value, wantErr string
	}{
		{"set", "sk_live_1", ""},
		{"missing", "", "no secret key configured"},
		{"trailing newline", "sk_live_1\n", "secret key has leading or trailing whitespace"},
		{"leading space", " sk_live_1", "secret key has leading or trailing whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecret("secret key", tt.value)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("CheckSecret = %v, want %q", err, tt.wantErr)
			}
			if tt.value != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.value)) {
				t.Fatalf("error %q quotes the secret", err)
			}
		})
	}
}

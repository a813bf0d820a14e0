package stripe

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "one secret", cfg: Config{Secrets: []string{"whsec_test_secret"}}},
		{name: "rotation", cfg: Config{Secrets: []string{"whsec_new", "whsec_old"}}},
		{name: "no secret", cfg: Config{}, wantErr: "no webhook signing secret"},
		{name: "empty secret", cfg: Config{Secrets: []string{"whsec_a", ""}}, wantErr: "secret 2 of 2 is empty"},
		{name: "trailing space", cfg: Config{Secrets: []string{"whsec_leaky "}}, wantErr: "secret 1 of 1 has leading or trailing whitespace"},
		{name: "leading newline", cfg: Config{Secrets: []string{"\nwhsec_leaky"}}, wantErr: "whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || p == nil {
					t.Fatalf("New() = %v, %v; want a provider", p, err)
				}
				if p.Name() != "stripe" {
					t.Errorf("Name() = %q, want stripe", p.Name())
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

func TestNewTolerance(t *testing.T) {
	body := []byte(`{}`)
	signed := time.Unix(1700000000, 0)
	tests := []struct {
		name      string
		tolerance time.Duration
		age       time.Duration
		wantOK    bool
	}{
		{name: "zero means 300s: 300s old", tolerance: 0, age: 300 * time.Second, wantOK: true},
		{name: "zero means 300s: 301s old", tolerance: 0, age: 301 * time.Second, wantOK: false},
		{name: "custom 10s: 10s old", tolerance: 10 * time.Second, age: 10 * time.Second, wantOK: true},
		{name: "custom 10s: 11s old", tolerance: 10 * time.Second, age: 11 * time.Second, wantOK: false},
		{name: "negative disables: ten years old", tolerance: -1, age: 10 * 365 * 24 * time.Hour, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, Config{Secrets: []string{"whsec_x"}, Tolerance: tt.tolerance})
			err := p.Verify(t.Context(), headerOf(Sign(body, "whsec_x", signed)), nil, body, signed.Add(tt.age))
			if (err == nil) != tt.wantOK {
				t.Fatalf("Verify() = %v, want ok=%v", err, tt.wantOK)
			}
		})
	}
}

func newProvider(t testing.TB, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// headerOf returns request headers carrying a Stripe-Signature value.
func headerOf(sig string) http.Header {
	h := http.Header{}
	h.Set(Header, sig)
	return h
}

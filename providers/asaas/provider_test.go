package asaas

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const testToken = "whtok_7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"

func TestNew(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		name    string
		cfg     Config
		wantLoc string
		wantErr string
	}{
		{name: "one token", cfg: Config{Tokens: []string{testToken}}, wantLoc: "America/Sao_Paulo"},
		{name: "rotation", cfg: Config{Tokens: []string{"tok_new", "tok_old"}}, wantLoc: "America/Sao_Paulo"},
		{name: "own location", cfg: Config{Tokens: []string{"tok"}, Location: utc}, wantLoc: "UTC"},
		{name: "default allow-list", cfg: Config{Tokens: []string{"tok"}, AllowedIPs: DefaultAllowedIPs()}, wantLoc: "America/Sao_Paulo"},
		{name: "no token", cfg: Config{}, wantErr: "no webhook authentication token"},
		{name: "empty token", cfg: Config{Tokens: []string{"tok", ""}}, wantErr: "token 2 of 2 is empty"},
		{name: "trailing space", cfg: Config{Tokens: []string{"leaky "}}, wantErr: "token 1 of 1 has leading or trailing whitespace"},
		{name: "leading newline", cfg: Config{Tokens: []string{"\nleaky"}}, wantErr: "whitespace"},
		{name: "invalid prefix", cfg: Config{Tokens: []string{"tok"}, AllowedIPs: []netip.Prefix{{}}}, wantErr: "allowed IP prefix 1 of 1 is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || p == nil {
					t.Fatalf("New() = %v, %v; want a provider", p, err)
				}
				if p.Name() != "asaas" || p.loc.String() != tt.wantLoc {
					t.Errorf("Name() = %q, location %q; want asaas, %q", p.Name(), p.loc, tt.wantLoc)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New() error = %v, want it to mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "leaky") {
				t.Errorf("New() error %q leaks the token", err)
			}
		})
	}
}

func TestAllowSource(t *testing.T) {
	addr := netip.MustParseAddr
	official := newProvider(t, Config{Tokens: []string{"tok"}, AllowedIPs: DefaultAllowedIPs()})
	custom := newProvider(t, Config{Tokens: []string{"tok"}, AllowedIPs: []netip.Prefix{
		netip.MustParsePrefix("10.1.2.77/24"), // not masked: New masks it
		netip.MustParsePrefix("2001:db8::/32"),
	}})
	open := newProvider(t, Config{Tokens: []string{"tok"}})
	tests := []struct {
		name string
		p    *Provider
		ip   netip.Addr
		want bool
	}{
		{name: "official 52.67.12.206", p: official, ip: addr("52.67.12.206"), want: true},
		{name: "official 18.230.8.159", p: official, ip: addr("18.230.8.159"), want: true},
		{name: "official 54.94.136.112", p: official, ip: addr("54.94.136.112"), want: true},
		{name: "official 54.94.183.101", p: official, ip: addr("54.94.183.101"), want: true},
		{name: "official, IPv4-mapped IPv6", p: official, ip: addr("::ffff:52.67.12.206"), want: true},
		{name: "neighbour of an official address", p: official, ip: addr("52.67.12.207"), want: false},
		{name: "loopback not in list", p: official, ip: addr("127.0.0.1"), want: false},
		{name: "invalid address with a list", p: official, ip: netip.Addr{}, want: false},
		{name: "custom /24", p: custom, ip: addr("10.1.2.200"), want: true},
		{name: "outside custom /24", p: custom, ip: addr("10.1.3.1"), want: false},
		{name: "custom IPv6 with zone", p: custom, ip: addr("2001:db8::1%eth0"), want: true},
		{name: "outside custom IPv6", p: custom, ip: addr("2001:db9::1"), want: false},
		{name: "empty list allows all", p: open, ip: addr("203.0.113.9"), want: true},
		{name: "empty list allows invalid", p: open, ip: netip.Addr{}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.AllowSource(tt.ip); got != tt.want {
				t.Errorf("AllowSource(%v) = %v, want %v", tt.ip, got, tt.want)
			}
		})
	}
}

func TestDefaultAllowedIPsIsACopy(t *testing.T) {
	a := DefaultAllowedIPs()
	a[0] = netip.MustParsePrefix("0.0.0.0/0")
	if b := DefaultAllowedIPs(); b[0] == a[0] || len(b) != 4 {
		t.Fatalf("DefaultAllowedIPs() = %v after a caller changed its copy", b)
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

// tokenHeader returns request headers carrying an asaas-access-token.
func tokenHeader(tok string) http.Header {
	h := http.Header{}
	h.Set(Header, tok)
	return h
}

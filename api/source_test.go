package api

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// allowListProvider is fakepay with a source allow-list, as Asaas has.
type allowListProvider struct {
	*fakeProvider
	allowed netip.Prefix
}

var _ SourceChecker = allowListProvider{}

func (p allowListProvider) AllowSource(ip netip.Addr) bool { return p.allowed.Contains(ip) }

func TestWebhookSourceAllowList(t *testing.T) {
	tests := []struct {
		remote string
		want   int
	}{
		{"52.67.12.206:40000", http.StatusOK},
		{"[::ffff:52.67.12.206]:40000", http.StatusOK},
		{"203.0.113.9:40000", http.StatusUnauthorized},
		{"garbage", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.remote, func(t *testing.T) {
			env := newEnv(t)
			env.deps.Providers = []Provider{allowListProvider{newFakepay(fakeSecret), netip.MustParsePrefix("52.67.12.206/32")}}
			body := []byte(`{"id":"evt_src_1","type":"payment.succeeded","payment":"pay_src_1","amount":100}`)
			req := httptest.NewRequest(http.MethodPost, "/webhooks/"+fakeName, strings.NewReader(string(body)))
			req.Header.Set(fakeSigHeader, fakeSign(fakeSecret, testNow, body))
			req.RemoteAddr = tt.remote
			res := serve(t, env.server(t), req)
			if res.status != tt.want {
				t.Errorf("status = %d, want %d: %s", res.status, tt.want, res.raw)
			}
			if tt.want != http.StatusOK && len(env.store.streams) != 0 {
				t.Errorf("a refused source stored something")
			}
		})
	}
}

// TestWebhookVerifyUnavailableIs503: a provider that cannot check a delivery
// right now (its key server is down) gets a 503 so the provider retries,
// never a 400 that would make it drop a possibly genuine delivery.
func TestWebhookVerifyUnavailableIs503(t *testing.T) {
	env := newEnv(t)
	p := newFakepay(fakeSecret)
	p.VerifyFn = func(http.Header, url.Values, []byte, time.Time) error {
		return domain.Unavailable("fakepay: verify", "key server unreachable", nil)
	}
	env.deps.Providers = []Provider{p}
	req := httptest.NewRequest(http.MethodPost, "/webhooks/"+fakeName, strings.NewReader(`{}`))
	if res := serve(t, env.server(t), req); res.status != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503: %s", res.status, res.raw)
	}
}

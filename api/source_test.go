package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
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
	p.VerifyFn = func(context.Context, http.Header, url.Values, []byte, time.Time) error {
		return domain.Unavailable("fakepay: verify", "key server unreachable", nil)
	}
	env.deps.Providers = []Provider{p}
	req := httptest.NewRequest(http.MethodPost, "/webhooks/"+fakeName, strings.NewReader(`{}`))
	if res := serve(t, env.server(t), req); res.status != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503: %s", res.status, res.raw)
	}
}

// TestWebhookPassesRequestContext: Verify and Parse run under the request's
// context (here seen through its request ID), so a provider that calls out,
// such as Pagar.me fetching its keys, works on the caller's behalf.
func TestWebhookPassesRequestContext(t *testing.T) {
	env := newEnv(t)
	p := newFakepay(fakeSecret)
	verify, parse := p.VerifyFn, p.ParseFn
	var seen []string
	p.VerifyFn = func(ctx context.Context, h http.Header, q url.Values, b []byte, now time.Time) error {
		seen = append(seen, "verify "+requestIDFrom(ctx))
		return verify(ctx, h, q, b, now)
	}
	p.ParseFn = func(ctx context.Context, h http.Header, q url.Values, b []byte) (domain.Notification, error) {
		seen = append(seen, "parse "+requestIDFrom(ctx))
		return parse(ctx, h, q, b)
	}
	env.deps.Providers = []Provider{p}
	req := signedWebhook(succeededBody("evt_ctx-1"), testNow)
	req.Header.Set("X-Request-Id", "req-ctx-1")
	if res := serve(t, env.server(t), req); res.status != http.StatusOK {
		t.Fatalf("status = %d: %s", res.status, res.raw)
	}
	if want := []string{"verify req-ctx-1", "parse req-ctx-1"}; !slices.Equal(seen, want) {
		t.Errorf("calls = %q, want %q", seen, want)
	}
}

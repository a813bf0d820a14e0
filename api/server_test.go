package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/domain"
)

func TestRoutingErrors(t *testing.T) {
	tests := []struct {
		method, path string
		wantStatus   int
		wantCode     string
		wantAllow    string
	}{
		{"GET", "/nope", 404, "not_found", ""},
		{"GET", "/v1/nope", 404, "not_found", ""},
		{"GET", "/v1/payments/fakepay", 404, "not_found", ""},
		{"GET", "/webhooks/fakepay", 405, "method_not_allowed", "POST"},
		{"PUT", "/webhooks/paypal", 405, "method_not_allowed", "POST"},
		{"POST", "/v1/payments", 405, "method_not_allowed", "GET"},
		{"DELETE", "/v1/payments/fakepay/pi_1", 405, "method_not_allowed", "GET"},
		{"POST", "/healthz", 405, "method_not_allowed", "GET, HEAD"},
	}
	env := newEnv(t)
	srv := env.server(t)
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res := serve(t, srv, httptest.NewRequest(tc.method, tc.path, nil))
			if res.status != tc.wantStatus || res.errorCode() != tc.wantCode || res.header.Get("Allow") != tc.wantAllow {
				t.Errorf("got %d allow=%q %s", res.status, res.header.Get("Allow"), res.raw)
			}
			if res.body["request_id"] != res.header.Get("X-Request-Id") || res.header.Get("X-Request-Id") == "" {
				t.Errorf("request_id %v, header %q", res.body["request_id"], res.header.Get("X-Request-Id"))
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	env := newEnv(t)
	srv := env.server(t)
	for _, tc := range []struct {
		in   string
		keep bool
	}{
		{"req-1:abc_D.9", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"bad id", false},
		{"inject\nline", false},
		{"", false},
	} {
		req := get("/nope", "")
		req.Header.Set("X-Request-Id", tc.in)
		res := serve(t, srv, req)
		got := res.header.Get("X-Request-Id")
		if (got == tc.in) != tc.keep || got == "" || res.body["request_id"] != got {
			t.Errorf("X-Request-Id %q → %q (body %v), keep=%v", tc.in, got, res.body["request_id"], tc.keep)
		}
	}
}

func TestPanicBecomes500(t *testing.T) {
	env := newEnv(t)
	env.deps.Payments = &fakeReader{PaymentFn: func(context.Context, string, string) (domain.PaymentState, error) {
		panic("projection bug with secret detail")
	}}
	res := serve(t, env.server(t), get("/v1/payments/stripe/pi_1", readToken))
	if res.status != 500 || res.errorCode() != "internal" || res.errorMessage() != msgInternal {
		t.Errorf("got %d %s", res.status, res.raw)
	}
}

func TestMetricsEndpointOnlyWithRegistry(t *testing.T) {
	env := newEnv(t)
	env.deps.Registry = nil
	srv := env.server(t)
	if res := serve(t, srv, get("/metrics", "")); res.status != http.StatusNotFound {
		t.Errorf("GET /metrics without registry = %d, want 404", res.status)
	}
	// Webhooks still work without metrics.
	if res := serve(t, srv, signedWebhook(succeededBody("evt_nometrics"), testNow)); res.status != 200 {
		t.Errorf("webhook without registry = %d %s", res.status, res.raw)
	}
}

// A process may serve only webhooks or only the read API (LEDGER_ROLES):
// the other group's routes do not exist (404, no such route) and nothing is
// stored, while health, readiness and metrics are served whatever the roles.
func TestRouteGroups(t *testing.T) {
	tests := []struct {
		name                  string
		noWebhooks, noReadAPI bool
	}{
		{"both", false, false},
		{"webhooks only", false, true},
		{"read API only", true, false},
		{"neither", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.cfg.DisableWebhooks, env.cfg.DisableReadAPI = tc.noWebhooks, tc.noReadAPI
			srv := env.server(t)
			noRoute := func(res response) bool {
				return res.status == http.StatusNotFound && res.errorMessage() == "no such route"
			}
			res := serve(t, srv, signedWebhook(succeededBody("evt_roles"), testNow))
			if noRoute(res) != tc.noWebhooks || (!tc.noWebhooks && res.status != http.StatusOK) {
				t.Errorf("webhook = %d %s (webhooks disabled: %v)", res.status, res.raw, tc.noWebhooks)
			}
			if stored := len(env.store.appendCalls()); (stored > 0) == tc.noWebhooks {
				t.Errorf("%d appends with webhooks disabled: %v", stored, tc.noWebhooks)
			}
			for _, path := range []string{"/v1/payments", "/v1/payments/" + fakeName + "/" + testPayment,
				"/v1/payments/" + fakeName + "/" + testPayment + "/events"} {
				if res := serve(t, srv, get(path, readToken)); noRoute(res) != tc.noReadAPI {
					t.Errorf("GET %s = %d %s (read API disabled: %v)", path, res.status, res.raw, tc.noReadAPI)
				}
			}
			for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
				if res := serve(t, srv, get(path, "")); res.status != http.StatusOK {
					t.Errorf("GET %s = %d, want 200", path, res.status)
				}
			}
		})
	}
}

func TestNewServerValidation(t *testing.T) {
	dup := newFakepay(fakeSecret)
	tests := []struct {
		name    string
		edit    func(*Config, *Deps)
		wantErr string
	}{
		{"no store", func(_ *Config, d *Deps) { d.Store = nil }, "no event store"},
		{"no reader", func(_ *Config, d *Deps) { d.Payments = nil }, "no payment reader"},
		{"no ledger reader", func(_ *Config, d *Deps) { d.Ledger = nil }, "no ledger reader"},
		{"nil provider", func(_ *Config, d *Deps) { d.Providers = append(d.Providers, nil) }, "provider 1 is nil"},
		{"unnamed provider", func(_ *Config, d *Deps) { d.Providers = []Provider{&fakeProvider{}} }, "provider 0 has no name"},
		{"provider twice", func(_ *Config, d *Deps) { d.Providers = append(d.Providers, dup) }, `provider "fakepay" configured twice`},
		{"check without Run", func(_ *Config, d *Deps) { d.Checks = []Check{{Name: "pg"}} }, "check 0 needs"},
		{"check twice", func(_ *Config, d *Deps) {
			ok := func(context.Context) error { return nil }
			d.Checks = []Check{{"pg", ok}, {"pg", ok}}
		}, `check "pg" configured twice`},
		{"bad token", func(c *Config, _ *Deps) { c.Tokens = append(c.Tokens, Token{Role: "root", Value: "x"}) }, "role is not read or admin"},
		{"duplicate token", func(c *Config, _ *Deps) { c.Tokens = append(c.Tokens, Token{Role: RoleRead, Value: adminToken}) }, "same token"},
		{"negative body limit", func(c *Config, _ *Deps) { c.MaxBodyBytes = -1 }, "max body bytes"},
		{"negative attempts", func(c *Config, _ *Deps) { c.AppendAttempts = -1 }, "append attempts"},
		{"negative timeout", func(c *Config, _ *Deps) { c.WebhookTimeout = -1 }, "webhook timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			tc.edit(&env.cfg, &env.deps)
			_, err := NewServer(env.cfg, env.deps)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want containing %q", err, tc.wantErr)
			}
		})
	}

	t.Run("registry shared by two servers", func(t *testing.T) {
		env := newEnv(t)
		env.deps.Registry = prometheus.NewRegistry()
		env.server(t)
		if _, err := NewServer(env.cfg, env.deps); err == nil {
			t.Error("second server registered the same metrics without error")
		}
	})
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.MaxBodyBytes != 1<<20 || c.AppendAttempts != 5 || c.WebhookTimeout != DefaultWebhookTimeout || c.Now == nil || c.Logger == nil {
		t.Errorf("defaults = %+v", c)
	}
}

package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/providers/asaas"
	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/pagarme"
	"github.com/payledger/payledger/providers/rest"
	"github.com/payledger/payledger/providers/stripe"
)

// provider is everything cmd/ledger knows of one payment provider. Adding a
// provider is a package in providers/ plus one entry in providerTable (and
// its variables in README's table, which a test checks).
type provider struct {
	name     string
	settings func(c *Config) []setting // its LEDGER_* variables
	// webhook builds its verifier; nil and no error leaves it disabled, so
	// its endpoint answers 404: a provider is disabled, never open.
	webhook func(c Config, logger *slog.Logger) (api.Provider, error)
	// status builds the status client jobs fetch with, over hc (nil: a
	// default client); nil and no error: not configured.
	status func(c Config, hc *http.Client) (jobs.StatusFetcher, error)
	// enrich: its notifications carry no status, so every one is followed
	// by a fetch (when it has a status client).
	enrich bool
	// fees: its fee is not in its webhooks, so each success (and each
	// notification) is followed by a fee fetch, when it has a status client
	// (which must also be a jobs.FeeFetcher).
	fees bool
}

// providerTable lists every provider ledger can serve.
func providerTable() []provider {
	return []provider{stripeProvider(), mercadoPagoProvider(), asaasProvider(), pagarmeProvider()}
}

// providerNames are the names of every provider payledger has an adapter
// for, configured or not: the ledger's provider filter accepts them all.
func providerNames() []string {
	var names []string
	for _, p := range providerTable() {
		names = append(names, p.name)
	}
	return names
}

func stripeProvider() provider {
	return provider{
		name: stripe.ProviderName,
		settings: func(c *Config) []setting {
			return []setting{
				list("LEDGER_STRIPE_WEBHOOK_SECRETS", &c.StripeSecrets),
				duration("LEDGER_STRIPE_WEBHOOK_TOLERANCE", &c.StripeTolerance, 300*time.Second, time.Second),
				text("LEDGER_STRIPE_API_KEY", &c.StripeAPIKey, ""),
				httpURL("LEDGER_STRIPE_API_BASE", &c.StripeAPIBase),
			}
		},
		webhook: func(c Config, logger *slog.Logger) (api.Provider, error) {
			if len(c.StripeSecrets) == 0 {
				return nil, nil
			}
			cfg := stripe.Config{Secrets: c.StripeSecrets, Tolerance: c.StripeTolerance}
			if c.StripeAPIKey == "" {
				logger.Warn("LEDGER_STRIPE_API_KEY is empty: dispute and refund events of old Stripe API versions that name only a charge are ignored")
			} else {
				// The resolver finds the PaymentIntent of those events. It runs
				// inside the delivery, so it gives up sooner than the jobs'
				// client: Stripe redelivers a delivery answered 503.
				s, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: c.StripeAPIKey, Options: rest.Options{
					BaseURL: c.StripeAPIBase, Timeout: 5 * time.Second, MaxAttempts: 2, RetryMax: time.Second}})
				if err != nil {
					return nil, err
				}
				cfg.Resolver = s
			}
			p, err := stripe.New(cfg)
			return p, err
		},
		status: func(c Config, hc *http.Client) (jobs.StatusFetcher, error) {
			if c.StripeAPIKey == "" {
				return nil, nil
			}
			s, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: c.StripeAPIKey,
				Options: rest.Options{BaseURL: c.StripeAPIBase, HTTPClient: hc}})
			return s, err
		},
		// The balance transaction's fee, fetched after each success when
		// LEDGER_STRIPE_API_KEY is set.
		fees: true,
	}
}

func mercadoPagoProvider() provider {
	return provider{
		name: mercadopago.ProviderName,
		settings: func(c *Config) []setting {
			mp := &c.MercadoPago
			return []setting{
				list("LEDGER_MERCADOPAGO_WEBHOOK_SECRETS", &mp.Secrets),
				text("LEDGER_MERCADOPAGO_ACCESS_TOKEN", &mp.AccessToken, ""),
				httpURL("LEDGER_MERCADOPAGO_API_BASE", &mp.APIBase),
				duration("LEDGER_MERCADOPAGO_MAX_AGE", &mp.MaxAge, 0, 0),
			}
		},
		webhook: func(c Config, logger *slog.Logger) (api.Provider, error) {
			mp := c.MercadoPago
			if len(mp.Secrets) == 0 {
				return nil, nil
			}
			p, err := mercadopago.New(mercadopago.Config{Secrets: mp.Secrets, MaxAge: mp.MaxAge})
			if err == nil && mp.AccessToken == "" {
				// Refusing to start would drop deliveries; storing them keeps
				// every fact, but without the API their payments stay pending.
				logger.Error("LEDGER_MERCADOPAGO_ACCESS_TOKEN is empty: Mercado Pago notifications are stored but not enriched, their payments stay pending")
			}
			return p, err
		},
		status: func(c Config, hc *http.Client) (jobs.StatusFetcher, error) {
			mp := c.MercadoPago
			if len(mp.Secrets) == 0 || mp.AccessToken == "" {
				return nil, nil
			}
			s, err := mercadopago.NewStatusClient(mercadopago.StatusConfig{AccessToken: mp.AccessToken, Options: rest.Options{BaseURL: mp.APIBase, HTTPClient: hc}})
			return s, err
		},
		enrich: true,
	}
}

func asaasProvider() provider {
	return provider{
		name: asaas.ProviderName,
		settings: func(c *Config) []setting {
			as := &c.Asaas
			return []setting{
				list("LEDGER_ASAAS_WEBHOOK_TOKENS", &as.Tokens),
				{"LEDGER_ASAAS_ALLOWED_IPS", as.parseAllowedIPs},
				location("LEDGER_ASAAS_TIMEZONE", &as.Location, "America/Sao_Paulo"),
				text("LEDGER_ASAAS_API_KEY", &as.APIKey, ""),
				httpURL("LEDGER_ASAAS_API_BASE", &as.APIBase),
				text("LEDGER_ASAAS_USER_AGENT", &as.UserAgent, "payledger"),
			}
		},
		webhook: func(c Config, logger *slog.Logger) (api.Provider, error) {
			as := c.Asaas
			if len(as.Tokens) == 0 {
				return nil, nil
			}
			allowed := as.AllowedIPs
			if as.UseDefault {
				allowed = append(allowed, asaas.DefaultAllowedIPs()...)
			}
			p, err := asaas.New(asaas.Config{Tokens: as.Tokens, AllowedIPs: allowed, Location: as.Location})
			if err == nil && len(allowed) == 0 {
				logger.Warn("asaas webhooks accepted from any address: consider LEDGER_ASAAS_ALLOWED_IPS=default")
			}
			return p, err
		},
		status: func(c Config, hc *http.Client) (jobs.StatusFetcher, error) {
			as := c.Asaas
			if as.APIKey == "" {
				return nil, nil
			}
			s, err := asaas.NewStatusClient(asaas.StatusConfig{APIKey: as.APIKey,
				Options: rest.Options{BaseURL: as.APIBase, UserAgent: as.UserAgent, HTTPClient: hc}})
			return s, err
		},
	}
}

// parseAllowedIPs reads LEDGER_ASAAS_ALLOWED_IPS: addresses, CIDR prefixes
// and "default" (Asaas's published list).
func (as *AsaasConfig) parseAllowedIPs(raw string) error {
	for _, item := range splitList(raw) {
		if item == "default" {
			as.UseDefault = true
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return fmt.Errorf("LEDGER_ASAAS_ALLOWED_IPS: %q is not an IP address or CIDR prefix", item)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		as.AllowedIPs = append(as.AllowedIPs, p.Masked())
	}
	return nil
}

func pagarmeProvider() provider {
	return provider{
		name: pagarme.ProviderName,
		settings: func(c *Config) []setting {
			pg := &c.Pagarme
			return []setting{
				httpURL("LEDGER_PAGARME_JWKS_URL", &pg.JWKSURL),
				list("LEDGER_PAGARME_WEBHOOK_SECRETS", &pg.Secrets),
				text("LEDGER_PAGARME_API_KEY", &pg.APIKey, ""),
				httpURL("LEDGER_PAGARME_API_BASE", &pg.APIBase),
			}
		},
		webhook: func(c Config, _ *slog.Logger) (api.Provider, error) {
			pg := c.Pagarme
			if pg.JWKSURL == "" && len(pg.Secrets) == 0 {
				return nil, nil
			}
			p, err := pagarme.New(pagarme.Config{JWKSURL: pg.JWKSURL, Secrets: pg.Secrets})
			return p, err
		},
		status: func(c Config, hc *http.Client) (jobs.StatusFetcher, error) {
			if c.Pagarme.APIKey == "" {
				return nil, nil
			}
			s, err := pagarme.NewStatusClient(pagarme.StatusConfig{SecretKey: c.Pagarme.APIKey, Options: rest.Options{BaseURL: c.Pagarme.APIBase, HTTPClient: hc}})
			return s, err
		},
	}
}

// wiredProviders are the configured providers: webhook verifiers for api,
// status clients for jobs, the providers whose every notification is
// enriched by a status fetch, and those whose fees jobs fetch.
type wiredProviders struct {
	webhooks []api.Provider
	fetchers []jobs.StatusFetcher
	enrich   []string
	fees     []string
}

// wireProviders builds the adapters of every provider cfg configures. Their
// constructors only check configuration, so their errors are configuration
// errors.
func wireProviders(cfg Config, logger *slog.Logger) (wiredProviders, error) {
	var w wiredProviders
	for _, p := range providerTable() {
		if err := w.add(p, cfg, logger); err != nil {
			return w, configError(err)
		}
	}
	if len(w.webhooks) == 0 {
		logger.Warn("no provider configured: every webhook endpoint answers 404")
	}
	return w, nil
}

func (w *wiredProviders) add(p provider, cfg Config, logger *slog.Logger) error {
	hook, err := p.webhook(cfg, logger)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if hook != nil {
		w.webhooks = append(w.webhooks, hook)
	}
	fetcher, err := p.status(cfg, nil)
	if err != nil {
		return fmt.Errorf("%s status client: %w", p.name, err)
	}
	if fetcher != nil {
		w.fetchers = append(w.fetchers, fetcher)
		if p.enrich {
			w.enrich = append(w.enrich, p.name)
		}
		if p.fees {
			w.fees = append(w.fees, p.name)
		}
	}
	return nil
}

package main

import (
	"fmt"
	"log/slog"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/providers/asaas"
	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/pagarme"
	"github.com/payledger/payledger/providers/rest"
	"github.com/payledger/payledger/providers/stripe"
)

// wiredProviders are the configured providers: webhook verifiers for api,
// status clients for jobs, and which providers need every notification
// enriched by a status fetch.
type wiredProviders struct {
	webhooks []api.Provider
	fetchers []jobs.StatusFetcher
	enrich   []string
}

// buildProviders turns configuration into adapters. A provider without
// webhook credentials is not registered, so its endpoint answers 404: a
// provider is disabled, never open.
func buildProviders(cfg Config, logger *slog.Logger) (wiredProviders, error) {
	var w wiredProviders
	add := func(name string, p api.Provider, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		w.webhooks = append(w.webhooks, p)
		return nil
	}
	if len(cfg.StripeSecrets) > 0 {
		p, err := stripe.New(stripe.Config{Secrets: cfg.StripeSecrets, Tolerance: cfg.StripeTolerance})
		if err := add("stripe", p, err); err != nil {
			return w, err
		}
	}
	if cfg.StripeAPIKey != "" {
		c, err := stripe.NewStatusClient(stripe.StatusConfig{SecretKey: cfg.StripeAPIKey, Options: rest.Options{BaseURL: cfg.StripeAPIBase}})
		if err != nil {
			return w, fmt.Errorf("stripe status client: %w", err)
		}
		w.fetchers = append(w.fetchers, c)
	}
	if mp := cfg.MercadoPago; len(mp.Secrets) > 0 {
		p, err := mercadopago.New(mercadopago.Config{Secrets: mp.Secrets, MaxAge: mp.MaxAge})
		if err := add("mercadopago", p, err); err != nil {
			return w, err
		}
		if mp.AccessToken == "" {
			// Refusing to start would drop deliveries; storing them keeps
			// every fact, but without the API their payments stay pending.
			logger.Error("LEDGER_MERCADOPAGO_ACCESS_TOKEN is empty: Mercado Pago notifications are stored but not enriched, their payments stay pending")
		} else {
			c, err := mercadopago.NewStatusClient(mercadopago.StatusConfig{AccessToken: mp.AccessToken, Options: rest.Options{BaseURL: mp.APIBase}})
			if err != nil {
				return w, fmt.Errorf("mercadopago status client: %w", err)
			}
			w.fetchers = append(w.fetchers, c)
			// Its notifications carry no status: every one is followed by a fetch.
			w.enrich = append(w.enrich, mercadopago.ProviderName)
		}
	}
	if as := cfg.Asaas; len(as.Tokens) > 0 {
		allowed := as.AllowedIPs
		if as.UseDefault {
			allowed = append(allowed, asaas.DefaultAllowedIPs()...)
		}
		p, err := asaas.New(asaas.Config{Tokens: as.Tokens, AllowedIPs: allowed, Location: as.Location})
		if err := add("asaas", p, err); err != nil {
			return w, err
		}
		if len(allowed) == 0 {
			logger.Warn("asaas webhooks accepted from any address: consider LEDGER_ASAAS_ALLOWED_IPS=default")
		}
	}
	if cfg.Asaas.APIKey != "" {
		c, err := asaas.NewStatusClient(asaas.StatusConfig{APIKey: cfg.Asaas.APIKey,
			Options: rest.Options{BaseURL: cfg.Asaas.APIBase, UserAgent: cfg.Asaas.UserAgent}})
		if err != nil {
			return w, fmt.Errorf("asaas status client: %w", err)
		}
		w.fetchers = append(w.fetchers, c)
	}
	if pg := cfg.Pagarme; pg.JWKSURL != "" || len(pg.Secrets) > 0 {
		p, err := pagarme.New(pagarme.Config{JWKSURL: pg.JWKSURL, Secrets: pg.Secrets})
		if err := add("pagarme", p, err); err != nil {
			return w, err
		}
	}
	if cfg.Pagarme.APIKey != "" {
		c, err := pagarme.NewStatusClient(pagarme.StatusConfig{SecretKey: cfg.Pagarme.APIKey, Options: rest.Options{BaseURL: cfg.Pagarme.APIBase}})
		if err != nil {
			return w, fmt.Errorf("pagarme status client: %w", err)
		}
		w.fetchers = append(w.fetchers, c)
	}
	if len(w.webhooks) == 0 {
		logger.Warn("no provider configured: every webhook endpoint answers 404")
	}
	return w, nil
}

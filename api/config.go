package api

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults applied by NewServer to zero Config fields.
const (
	DefaultMaxBodyBytes   = 1 << 20 // Stripe payloads are a few KiB; 1 MiB is generous
	DefaultAppendAttempts = 5
	DefaultWebhookTimeout = 10 * time.Second
	DefaultReconcileAfter = 30 * time.Minute
)

// Config is the server's tunables. Zero fields take the defaults above.
type Config struct {
	// MaxBodyBytes caps a webhook body; a larger one is answered 413.
	MaxBodyBytes int64
	// Tokens are the bearer tokens of /v1. With none, every /v1 request is
	// refused: the read API is closed unless configured.
	Tokens []Token
	// AppendAttempts bounds the appends of one stream when the store reports a
	// concurrent write (domain.ErrConflict), counting the first one.
	AppendAttempts int
	// Now is the clock of signature tolerance checks and ReceivedAt.
	Now func() time.Time
	// Logger receives access logs and the causes of 5xx answers.
	Logger *slog.Logger
	// WebhookTimeout bounds storing one delivery, so a stuck store answers
	// 503 (and the provider retries) before the provider's own timeout.
	WebhookTimeout time.Duration
	// DisableWebhooks and DisableReadAPI leave out POST /webhooks/{provider}
	// or GET /v1/… (they answer 404, like any unknown route), for a process
	// that serves only the other, e.g. webhooks on the public ingress and
	// the read API on an internal address. /healthz, /readyz, /metrics and
	// /openapi.yaml are always served.
	DisableWebhooks bool
	DisableReadAPI  bool
	// LedgerProviders are the provider names the ledger routes' provider
	// filter accepts; any other is 400, not an empty answer that reads as
	// zero. Empty: the names of Deps.Providers. cmd/ledger passes every
	// provider it has an adapter for, so a read-only process without webhook
	// secrets, or a provider switched off, still answers for its history.
	LedgerProviders []string
	// ReconcileAfter is how long a payment that is not final stays quiet
	// before it is in doubt (LEDGER_RECONCILE_AFTER): the summary's in_doubt
	// counts payments with no fact recorded since Now() − ReconcileAfter,
	// the reconciler's own threshold.
	ReconcileAfter time.Duration
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.AppendAttempts == 0 {
		c.AppendAttempts = DefaultAppendAttempts
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.WebhookTimeout == 0 {
		c.WebhookTimeout = DefaultWebhookTimeout
	}
	if c.ReconcileAfter == 0 {
		c.ReconcileAfter = DefaultReconcileAfter
	}
	return c
}

// validate reports every problem of a defaulted Config at once.
func (c Config) validate() error {
	var errs []error
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("max body bytes %d is negative", c.MaxBodyBytes))
	}
	if c.AppendAttempts < 0 {
		errs = append(errs, fmt.Errorf("append attempts %d is negative", c.AppendAttempts))
	}
	if c.WebhookTimeout < 0 {
		errs = append(errs, fmt.Errorf("webhook timeout %s is negative", c.WebhookTimeout))
	}
	if c.ReconcileAfter < 0 {
		errs = append(errs, fmt.Errorf("reconcile after %s is negative", c.ReconcileAfter))
	}
	if err := validateTokens(c.Tokens); err != nil {
		errs = append(errs, fmt.Errorf("tokens: %w", err))
	}
	return errors.Join(errs...)
}

// validate reports every problem of Deps at once.
func (d Deps) validate() error {
	var errs []error
	if d.Store == nil {
		errs = append(errs, errors.New("no event store"))
	}
	if d.Payments == nil {
		errs = append(errs, errors.New("no payment reader"))
	}
	if d.Ledger == nil {
		errs = append(errs, errors.New("no ledger reader"))
	}
	names := make(map[string]bool, len(d.Providers))
	for i, p := range d.Providers {
		switch {
		case p == nil:
			errs = append(errs, fmt.Errorf("provider %d is nil", i))
		case p.Name() == "":
			errs = append(errs, fmt.Errorf("provider %d has no name", i))
		case names[p.Name()]:
			errs = append(errs, fmt.Errorf("provider %q configured twice", p.Name()))
		default:
			names[p.Name()] = true
		}
	}
	checks := make(map[string]bool, len(d.Checks))
	for i, c := range d.Checks {
		switch {
		case c.Name == "" || c.Run == nil:
			errs = append(errs, fmt.Errorf("check %d needs a name and a Run func", i))
		case checks[c.Name]:
			errs = append(errs, fmt.Errorf("check %q configured twice", c.Name))
		default:
			checks[c.Name] = true
		}
	}
	return errors.Join(errs...)
}

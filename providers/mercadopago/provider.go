package mercadopago

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProviderName is Mercado Pago's name in payledger: Meta.Provider, stream
// names (payment-mercadopago-{id}) and the webhook route.
const ProviderName = "mercadopago"

// Headers of a Mercado Pago webhook delivery.
const (
	// Header carries the signature: "ts=…,v1=…".
	Header = "x-signature"
	// RequestIDHeader carries the delivery's request ID, which is signed.
	RequestIDHeader = "x-request-id"
)

// QueryDataID is the query parameter Mercado Pago appends to the registered
// URL with the resource's ID ("?data.id=…&type=…"). It, not the JSON body, is
// what the signature covers.
const QueryDataID = "data.id"

// Config configures a Provider.
type Config struct {
	// Secrets are the application's webhook secrets (Your integrations →
	// Webhooks). Mercado Pago has one per application; configuring the old
	// and the new one while resetting it lets deliveries verify throughout.
	Secrets []string
	// MaxAge, when positive, rejects a delivery whose signed ts is older than
	// this at verification time. Zero turns the check off, the default: the
	// body is not signed and carries no state (the state is fetched from the
	// API), so a replayed notification can only cause a harmless re-fetch,
	// while a window would reject Mercado Pago's own retries, which keep
	// coming for hours after the first attempt. Negative is an error.
	MaxAge time.Duration
}

// Provider verifies and parses Mercado Pago webhooks. It is immutable and
// safe for concurrent use.
type Provider struct {
	secrets [][]byte
	maxAge  time.Duration // 0: off
}

// New returns a Provider for cfg. It fails when there is no secret, when a
// secret is empty or has surrounding whitespace (a stray space from an
// environment file would make every delivery fail verification), or when
// MaxAge is negative. Errors name secrets by position, never by value.
func New(cfg Config) (*Provider, error) {
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("mercadopago: new: no webhook secret configured")
	}
	if cfg.MaxAge < 0 {
		return nil, fmt.Errorf("mercadopago: new: max age %s is negative (0 turns the check off)", cfg.MaxAge)
	}
	p := &Provider{secrets: make([][]byte, 0, len(cfg.Secrets)), maxAge: cfg.MaxAge}
	for i, s := range cfg.Secrets {
		switch {
		case s == "":
			return nil, fmt.Errorf("mercadopago: new: webhook secret %d of %d is empty", i+1, len(cfg.Secrets))
		case strings.TrimSpace(s) != s:
			return nil, fmt.Errorf("mercadopago: new: webhook secret %d of %d has leading or trailing whitespace", i+1, len(cfg.Secrets))
		}
		p.secrets = append(p.secrets, []byte(s))
	}
	return p, nil
}

// Name returns "mercadopago".
func (p *Provider) Name() string { return ProviderName }

package stripe

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProviderName is Stripe's name in payledger: Meta.Provider, stream names
// (payment-stripe-pi_…) and the webhook route.
const ProviderName = "stripe"

// Header is the HTTP header that carries Stripe's webhook signature.
const Header = "Stripe-Signature"

// DefaultTolerance is how old a signature's timestamp may be, as in stripe-go.
// Stripe signs every delivery attempt afresh, so a retry is never too old.
const DefaultTolerance = 300 * time.Second

// Config configures a Provider.
type Config struct {
	// Secrets are the endpoint signing secrets ("whsec_…"). During a rotation
	// both the old and the new secret are configured; a delivery verifies when
	// any of its v1 signatures matches any of them.
	Secrets []string
	// Tolerance is the maximum age of a signature's timestamp. Zero means
	// DefaultTolerance. A negative value disables the check: only for tests
	// and for re-verifying stored deliveries, never for live traffic, because
	// it lets anyone replay a captured delivery.
	Tolerance time.Duration
	// Resolver finds the PaymentIntent of a charge.dispute.* or
	// charge.refunded event that names only a charge (old API versions),
	// usually the StatusClient. Nil: such events are ignored with a reason
	// saying an API key is needed.
	Resolver ChargeResolver
}

// Provider verifies and parses Stripe webhooks. It is immutable and safe for
// concurrent use.
type Provider struct {
	secrets   [][]byte
	tolerance time.Duration // negative: disabled
	resolver  ChargeResolver
}

// New returns a Provider for cfg. It fails when there is no secret, or when a
// secret is empty or has surrounding whitespace (a stray space from an
// environment file would otherwise make every delivery fail verification).
// Errors name secrets by position, never by value.
func New(cfg Config) (*Provider, error) {
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("stripe: new: no webhook signing secret configured")
	}
	p := &Provider{secrets: make([][]byte, 0, len(cfg.Secrets)), tolerance: cfg.Tolerance, resolver: cfg.Resolver}
	for i, s := range cfg.Secrets {
		switch {
		case s == "":
			return nil, fmt.Errorf("stripe: new: webhook signing secret %d of %d is empty", i+1, len(cfg.Secrets))
		case strings.TrimSpace(s) != s:
			return nil, fmt.Errorf("stripe: new: webhook signing secret %d of %d has leading or trailing whitespace", i+1, len(cfg.Secrets))
		}
		p.secrets = append(p.secrets, []byte(s))
	}
	if p.tolerance == 0 {
		p.tolerance = DefaultTolerance
	}
	return p, nil
}

// Name returns "stripe".
func (p *Provider) Name() string { return ProviderName }

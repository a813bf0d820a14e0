package pagarme

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ProviderName is Pagar.me's name in payledger: Meta.Provider, stream names
// (payment-pagarme-ch_…) and the webhook route.
const ProviderName = "pagarme"

// Headers that carry Pagar.me's webhook signatures.
const (
	// HeaderAsymmetric carries "alg=RS256; kid=…; signature=…".
	HeaderAsymmetric = "X-Webhook-Asymmetric-Signature"
	// HeaderHub carries the legacy "sha1=<hex>" HMAC.
	HeaderHub = "X-Hub-Signature"
)

// DefaultJWKSURL is where Pagar.me publishes its webhook signing keys, as
// used by its official plugins. Configure it (LEDGER_PAGARME_JWKS_URL) to
// enable RS256 verification.
const DefaultJWKSURL = "https://hubapi.pagar.me/.well-known/jwks.json"

// Defaults of the JWKS cache.
const (
	// DefaultJWKSTimeout bounds one JWKS fetch.
	DefaultJWKSTimeout = 5 * time.Second
	// DefaultJWKSRefetchInterval is the minimum time between two JWKS
	// fetches, whatever triggers them.
	DefaultJWKSRefetchInterval = time.Minute
	// DefaultJWKSMaxAge is how long a fetched key set is used before a
	// delivery triggers a refresh (so a key Pagar.me withdraws stops
	// verifying). A failed refresh keeps the old keys in use.
	DefaultJWKSMaxAge = time.Hour
)

// Config configures a Provider. At least one scheme must be configured.
type Config struct {
	// Secrets enable the legacy X-Hub-Signature scheme: HMAC-SHA1 keys. During
	// a rotation both the old and the new secret are configured.
	Secrets []string
	// JWKSURL enables the RS256 scheme: the JWKS holding Pagar.me's public
	// keys (DefaultJWKSURL in production; an http URL is accepted for tests).
	JWKSURL string
	// JWKSTimeout bounds one JWKS fetch (default DefaultJWKSTimeout).
	JWKSTimeout time.Duration
	// JWKSRefetchInterval is the minimum time between JWKS fetches (default
	// DefaultJWKSRefetchInterval).
	JWKSRefetchInterval time.Duration
	// JWKSMaxAge is how long a key set is trusted before a refresh (default
	// DefaultJWKSMaxAge).
	JWKSMaxAge time.Duration
	// HTTPClient fetches the JWKS (default: a new client; JWKSTimeout bounds
	// each fetch either way).
	HTTPClient *http.Client
}

// Provider verifies and parses Pagar.me webhooks. It is safe for concurrent
// use; its only mutable state is the JWKS cache.
type Provider struct {
	secrets [][]byte // nil: legacy scheme disabled
	keys    *keySet  // nil: RS256 disabled
}

// New returns a Provider for cfg. It fails when neither scheme is
// configured, when a secret is empty or has surrounding whitespace, or when
// the JWKS URL is not an http(s) URL. Errors name secrets by position, never
// by value. New does not fetch the JWKS: the first signed delivery does, so
// startup does not depend on Pagar.me.
func New(cfg Config) (*Provider, error) {
	if len(cfg.Secrets) == 0 && cfg.JWKSURL == "" {
		return nil, errors.New("pagarme: new: no verification scheme configured (neither a JWKS URL nor a webhook secret)")
	}
	p := &Provider{}
	for i, s := range cfg.Secrets {
		switch {
		case s == "":
			return nil, fmt.Errorf("pagarme: new: webhook secret %d of %d is empty", i+1, len(cfg.Secrets))
		case strings.TrimSpace(s) != s:
			return nil, fmt.Errorf("pagarme: new: webhook secret %d of %d has leading or trailing whitespace", i+1, len(cfg.Secrets))
		}
		p.secrets = append(p.secrets, []byte(s))
	}
	if cfg.JWKSURL != "" {
		u, err := url.Parse(cfg.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("pagarme: new: JWKS URL %q is not an http(s) URL", cfg.JWKSURL)
		}
		p.keys = newKeySet(cfg)
	}
	return p, nil
}

// Name returns "pagarme".
func (p *Provider) Name() string { return ProviderName }

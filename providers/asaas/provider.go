package asaas

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	// Embedded zone data: dateCreated is São Paulo wall time, and a minimal
	// container image has no /usr/share/zoneinfo to load it from.
	_ "time/tzdata"
)

// ProviderName is Asaas's name in payledger: Meta.Provider, stream names
// (payment-asaas-pay_…) and the webhook route.
const ProviderName = "asaas"

// Header is the HTTP header in which Asaas sends the webhook's
// authentication token.
const Header = "asaas-access-token"

// DefaultLocation is the zone Asaas's zone-less dateCreated is read in.
const DefaultLocation = "America/Sao_Paulo"

// Config configures a Provider.
type Config struct {
	// Tokens are the accepted webhook authentication tokens
	// (LEDGER_ASAAS_WEBHOOK_TOKENS). Several are accepted during a rotation,
	// or when several Asaas webhook configurations use different tokens.
	Tokens []string
	// AllowedIPs restricts the source addresses of deliveries; empty allows
	// every source. DefaultAllowedIPs is Asaas's published production list.
	AllowedIPs []netip.Prefix
	// Location is the zone of dateCreated; nil means DefaultLocation.
	Location *time.Location
}

// Provider verifies and parses Asaas webhooks. It is immutable and safe for
// concurrent use.
type Provider struct {
	tokens  [][sha256.Size]byte // digests: compared in constant time whatever the length
	allowed []netip.Prefix
	loc     *time.Location
}

// New returns a Provider for cfg. It fails when there is no token, when a
// token is empty or has surrounding whitespace (a stray space from an
// environment file would otherwise reject every delivery), or when an allowed
// prefix is invalid. Errors name tokens by position, never by value.
func New(cfg Config) (*Provider, error) {
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("asaas: new: no webhook authentication token configured")
	}
	p := &Provider{loc: cfg.Location}
	for i, tok := range cfg.Tokens {
		switch {
		case tok == "":
			return nil, fmt.Errorf("asaas: new: webhook token %d of %d is empty", i+1, len(cfg.Tokens))
		case strings.TrimSpace(tok) != tok:
			return nil, fmt.Errorf("asaas: new: webhook token %d of %d has leading or trailing whitespace", i+1, len(cfg.Tokens))
		}
		p.tokens = append(p.tokens, sha256.Sum256([]byte(tok)))
	}
	for i, pfx := range cfg.AllowedIPs {
		if !pfx.IsValid() {
			return nil, fmt.Errorf("asaas: new: allowed IP prefix %d of %d is invalid", i+1, len(cfg.AllowedIPs))
		}
		p.allowed = append(p.allowed, pfx.Masked())
	}
	if p.loc == nil {
		loc, err := time.LoadLocation(DefaultLocation)
		if err != nil {
			return nil, fmt.Errorf("asaas: new: load %s: %w", DefaultLocation, err)
		}
		p.loc = loc
	}
	return p, nil
}

// Name returns "asaas".
func (p *Provider) Name() string { return ProviderName }

// DefaultAllowedIPs returns the source addresses of Asaas's production
// webhooks as published in its documentation (list updated 2024-10-23).
// Operators opt in by putting them in Config.AllowedIPs; the sandbox may
// send from other addresses, and Asaas may change the list.
func DefaultAllowedIPs() []netip.Prefix {
	return []netip.Prefix{
		netip.PrefixFrom(netip.AddrFrom4([4]byte{52, 67, 12, 206}), 32),
		netip.PrefixFrom(netip.AddrFrom4([4]byte{18, 230, 8, 159}), 32),
		netip.PrefixFrom(netip.AddrFrom4([4]byte{54, 94, 136, 112}), 32),
		netip.PrefixFrom(netip.AddrFrom4([4]byte{54, 94, 183, 101}), 32),
	}
}

// AllowSource reports whether a delivery from ip may be accepted: always when
// no allow-list is configured, else when ip is in one of its prefixes. An
// IPv4 address seen through an IPv6 socket (::ffff:a.b.c.d) is compared as
// IPv4, and a zone is ignored.
func (p *Provider) AllowSource(ip netip.Addr) bool {
	if len(p.allowed) == 0 {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, pfx := range p.allowed {
		if pfx.Contains(ip) {
			return true
		}
	}
	return false
}

// Package pagarme is payledger's Pagar.me (API v5, "core v5") adapter: it
// verifies webhook deliveries (RS256 against Pagar.me's JWKS, or the legacy
// HMAC-SHA1), maps charge and order events to per-charge domain events, and
// fetches a charge's current state from the API (StatusClient), or lists
// the charges created in a window for a backfill (ListPage), mapped alike.
//
// It imports the standard library, domain, providers and providers/rest
// only. ARCHITECTURE.md ("Providers", Pagar.me) explains the scheme
// precedence, the JWKS cache and its rate limit, why an unknown key during
// a JWKS outage is 503, and why the payment is the charge.
package pagarme

// Package pagarme is payledger's Pagar.me (API v5, "core v5") adapter: it
// verifies webhook deliveries, maps charge and order events to per-charge
// domain events, and fetches a charge's current state from the API.
//
// # Authenticity
//
// Two schemes, each enabled by configuration (New fails when neither is):
//
//   - X-Webhook-Asymmetric-Signature: alg=RS256; kid=…; signature=<base64url>,
//     RSASSA-PKCS1-v1_5 with SHA-256 over the raw body, with the key of that
//     kid from a JWKS (production: DefaultJWKSURL). This is what Pagar.me's
//     official plugins verify. The JWKS is fetched lazily, cached, refreshed
//     when older than JWKSMaxAge, and refetched when a delivery names an
//     unknown kid, at most once per JWKSRefetchInterval (a minute), so forged
//     kids cannot make us hammer the JWKS host.
//   - X-Hub-Signature: sha1=<hex>, HMAC-SHA1 of the raw body with a shared
//     secret (the legacy v1–v4 postback scheme), tried with every configured
//     secret in constant time.
//
// When a delivery carries the asymmetric header and RS256 is configured,
// that header alone decides; otherwise, when legacy secrets are configured
// and X-Hub-Signature is present, that decides; otherwise it is not signed.
//
// Failures are domain.KindInvalid (400) with one exception: a delivery
// signed with a kid we do not know while the JWKS cannot be fetched is
// domain.KindUnavailable (503). It cannot be verified now but may well be
// genuine (a key rotation during a JWKS outage), and a 503 makes Pagar.me
// deliver it again later instead of dropping it. A bad signature under a
// known kid is always 400.
//
// # Mapping
//
// A Pagar.me order may have several charges and each charge is paid,
// refunded and disputed on its own, so payledger's payment is the charge:
// the stream is payment-pagarme-{ch_…}. A charge.* event (data is the
// charge) yields one domain.PaymentStatusObserved; an order.* event (data is
// the order) yields one per charge, told apart by Meta.SubKey = charge ID.
// The mapping (see chargeStatus) prefers the charge's status and amounts
// over the event type, because both webhooks and the API carry the whole
// charge and the type says only what triggered the delivery. Other entities
// (customer, subscription, invoice, …) are ignored.
//
// created_at is ISO-8601; Pagar.me's samples exist both with an offset and
// without one. A timestamp without an offset is read as UTC [UNVERIFIED in
// the spec; check a sandbox delivery].
//
// # Status API
//
// StatusClient GETs /charges/{id} with HTTP Basic auth (secret key as user,
// empty password) through providers/rest and maps the charge the same way.
//
// The package imports the standard library, domain, providers and
// providers/rest only.
package pagarme

// Package asaas is payledger's Asaas adapter: it authenticates webhook
// deliveries to POST /webhooks/asaas, maps Asaas payment events to domain
// events, and fetches a payment's current state from the Asaas API.
//
// # Security
//
// Asaas does not sign its webhooks. The only credential is the static
// authentication token defined with the webhook configuration, which Asaas
// sends verbatim in the asaas-access-token header on every call. Verify
// compares it in constant time (SHA-256 digests of equal length, so neither
// content nor length leaks through timing) with every configured token, so a
// rotation can run with the old and the new token side by side; a missing or
// wrong token is a domain.KindUnauthorized error (401). Because the token is
// a bearer secret, Parse never copies it into Notification.SignatureHeader,
// which is stored with the events and served by the audit API.
//
// A static token does not protect the body: anyone who learns it can forge
// deliveries, and nothing stops a replay. Two mitigations: serve the endpoint
// over TLS only, and restrict the sources with Config.AllowedIPs, which
// AllowSource checks against the connection's remote address (the api
// package calls it before Verify). DefaultAllowedIPs is the production list
// Asaas published (updated 2024-10-23); the sandbox may use other addresses,
// and behind a proxy the allow-list belongs on the proxy.
//
// # Delivery
//
// Asaas counts only HTTP 200 as success and pauses a webhook's queue after 15
// consecutive failures, so every accepted delivery, including an ignored one,
// must be answered 200; the api package does so.
//
// # Payload
//
// Every PAYMENT_* webhook carries the whole payment object, so a lifecycle
// event (PAYMENT_RECEIVED, PAYMENT_REFUNDED, …) becomes one
// domain.PaymentStatusObserved snapshot; an event that changes nothing
// (PAYMENT_UPDATED, PAYMENT_BANK_SLIP_VIEWED, an unknown PAYMENT_* event)
// becomes a domain.PaymentNotified fact; any other event family (TRANSFER_*,
// INVOICE_*, …) is ignored. The event id ("evt_…&…") is opaque and contains
// '&'. dateCreated has no zone; it is read in Config.Location (default
// America/Sao_Paulo). The package embeds the time zone database
// (time/tzdata) so that a minimal host without /usr/share/zoneinfo works.
// value is a decimal in reais, converted to centavos exactly; the currency is
// always BRL. Asaas adds attributes at any time, so unknown fields are
// ignored.
//
// # Status API
//
// StatusClient GETs /v3/payments/{id} with the access_token and the
// User-Agent header Asaas requires. The payment has no last-updated
// timestamp, so an observation is dated when it was fetched.
//
// The package imports the standard library, domain, providers and
// providers/rest only.
package asaas

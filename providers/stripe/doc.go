// Package stripe is payledger's Stripe webhook adapter: it verifies the
// Stripe-Signature header and maps Stripe event snapshots to domain events.
//
// Verification mirrors stripe-go's webhook package (the differential tests
// compare verdicts with it): HMAC-SHA256 over "{t}.{raw body}", any v1 matching
// any configured secret is accepted (secret rotation), and a signature older
// than the tolerance is rejected. One deliberate difference: a header without
// a t timestamp is malformed here, where the SDK, when told to ignore the
// tolerance, would verify it against the Unix time of Go's zero time.
//
// Webhooks arrive in the Stripe account's API version, whatever an SDK pins,
// so Parse decodes only the fields it reads, with its own small structs, and
// ignores api_version and every other field.
//
// The package imports the standard library, domain, providers and providers/rest only; stripe-go is used
// by tests alone.
package stripe

// Package stripe is payledger's Stripe adapter: it verifies the
// Stripe-Signature header of a webhook, maps Stripe event snapshots to
// domain events, and fetches a PaymentIntent's state and its fee (the latest
// charge's balance transaction) from the API (StatusClient).
//
// It imports the standard library, domain, providers and providers/rest
// only; stripe-go is used by tests alone, as the oracle of the differential
// tests. ARCHITECTURE.md ("Providers", Stripe) explains where and why
// verification follows the SDK.
package stripe

// Package stripe is payledger's Stripe adapter: it verifies the
// Stripe-Signature header of a webhook, maps Stripe event snapshots to
// domain events, and talks to the API (StatusClient): a PaymentIntent's
// state and its fee (the latest charge's balance transaction), a charge's
// PaymentIntent for old-version events that name only the charge
// (ChargeResolver), and pages of events for a backfill (ListPage), mapped
// by the same code as webhooks so the store dedups one against the other.
//
// It imports the standard library, domain, providers and providers/rest
// only; stripe-go is used by tests alone, as the oracle of the differential
// tests. ARCHITECTURE.md ("Providers", Stripe) explains where and why
// verification follows the SDK.
package stripe

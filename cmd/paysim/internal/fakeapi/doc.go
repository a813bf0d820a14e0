// Package fakeapi serves the providers' status and list APIs and Pagar.me's
// JWKS from paysim's ground truth, so the ledger's status fetches,
// reconciliation, backfill and key lookups are answered as the real
// providers would: a payment is visible once its first webhook is sent and
// shows the state after the latest step sent so far (Advance), as a
// provider's state runs ahead of its webhooks. Webhooks paysim withholds
// (--drop, --outage) still advance it: the provider knows, only the
// delivery is missing.
//
// Routes, each prefix being the API base the ledger is configured with:
// /stripe/v1/payment_intents/{id} (expand[]: the fee; null on the first
// fetch of a FeeLate payment), /stripe/v1/disputes?payment_intent=,
// /stripe/v1/events (created[gte|gt|lt|lte], type or types[], limit,
// starting_after or ending_before: the webhook events themselves, newest
// first), /stripe/v1/charges/{id} (its payment_intent);
// /mercadopago/v1/payments/{id} and /search (range, begin_date, end_date,
// sort, criteria, offset, limit); /asaas/v3/payments/{id} and the list
// (dateCreated and paymentDate [ge]/[le], offset, limit);
// /pagarme/core/v5/charges/{id} and the list (created_since/_until, page,
// size); /.well-known/jwks.json. The shapes, limits and error envelopes
// follow ../shared/specs/provider-apis.md; list.go says what each list
// filters on.
//
// It imports truth and providers/pagarme (the JWKS encoding) only.
package fakeapi

// Package fakeapi serves the providers' status APIs and Pagar.me's JWKS from
// paysim's ground truth, so the ledger's status fetches and key lookups are
// answered as the real providers would: a payment is visible once its first
// webhook is sent and shows the state after the latest step sent so far
// (Advance), as a provider's state runs ahead of its webhooks.
//
// Routes: GET /stripe/v1/payment_intents/{id} (expand[]=latest_charge and
// latest_charge.balance_transaction: the fee; null on the first fetch of a
// FeeLate payment), /stripe/v1/disputes?payment_intent=,
// /mercadopago/v1/payments/{id} (with fee_details), /asaas/v3/payments/{id},
// /pagarme/core/v5/charges/{id} and /.well-known/jwks.json, each prefix
// being the API base the ledger is configured with.
//
// It imports truth and providers/pagarme (the JWKS encoding) only.
package fakeapi

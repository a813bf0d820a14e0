// Package sign authenticates paysim's webhooks as each provider does, per
// attempt, through the provider packages' own Sign helpers (Stripe-Signature,
// Mercado Pago's x-signature manifest, Asaas's token, Pagar.me's RS256), and
// owns the Pagar.me signing key (LoadKey) and its kid.
//
// RS256 signatures are computed once per body and, with Presign, on every
// core before a run's clock starts: a provider signs on its own machines.
//
// It imports the providers' signing helpers and truth; never the ledger's
// api, store or projections.
package sign

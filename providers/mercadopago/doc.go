// Package mercadopago is payledger's Mercado Pago adapter: it verifies and
// parses webhook notifications (Provider) and fetches a payment's current
// state from the API (StatusClient).
//
// A notification carries no state, so Parse turns a payment notification
// into one domain.PaymentNotified and a background job (jobs) calls
// Observe, which returns a domain.PaymentStatusObserved stating the fee the
// payment's collector fee_details state, with a provider event ID derived
// from what was observed (providers.ObservationID). ListPage lists the
// payments updated in a window for a backfill, each mapped as Observe maps
// it, so a payment already fetched is a duplicate.
//
// It imports the standard library, domain, providers and providers/rest
// only; Mercado Pago's SDK is not used (it decodes amounts into float64).
// ARCHITECTURE.md ("Providers", Mercado Pago) explains the signed manifest,
// why there is no freshness window by default, the data.id casing and the
// status mapping.
package mercadopago

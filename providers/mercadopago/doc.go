// Package mercadopago is payledger's Mercado Pago adapter: it verifies and
// parses webhook notifications (Provider) and fetches a payment's current
// state from the API (StatusClient).
//
// # Notification, then fetch
//
// A Mercado Pago webhook says only that something happened to a resource:
// its body is {id, type, action, date_created, data: {id}, …} with no status
// and no amount, and the signature covers neither the body nor the topic,
// only the manifest
//
//	id:{data.id from the URL};request-id:{x-request-id};ts:{ts};
//
// So ingest is in two steps:
//
//  1. The webhook. Verify checks the signature; Parse turns a "payment"
//     notification into one domain.PaymentNotified (provider event ID = the
//     notification's id, payment = the signed data.id, time = date_created),
//     which the api appends at once, so Mercado Pago gets its 200 within
//     milliseconds (it waits 22 s and retries every 15 minutes). Other topics
//     (merchant orders, chargebacks, claims, fraud alerts, Orders API, …)
//     are acknowledged and ignored with a reason.
//  2. The fetch. A background job (the jobs package, through the
//     StatusFetcher interface it declares) calls StatusClient.FetchStatus,
//     GET {base}/v1/payments/{id} with the access token, and appends the
//     answer as a domain.PaymentStatusObserved. Its ProviderEventID is
//     providers.ObservationID(payment id, status, status_detail, refunded
//     amount, date_last_updated): derived from the content, so fetching the
//     same state twice (duplicate notifications, a retried job) stores one
//     event, and any change of state is a new one. Its time is
//     date_last_updated, so out-of-order fetches fold in provider order.
//
// Because the state always comes from the API, a replayed notification can
// only cause a harmless re-fetch. That is why Verify applies no freshness
// window by default (Config.MaxAge turns one on): a window would reject
// Mercado Pago's own late retries, and the sources disagree on whether ts is
// in seconds or milliseconds (it is read as milliseconds when ≥ 1e12).
//
// Mercado Pago's sources also disagree on the case of an alphanumeric
// data.id in the manifest (documentation: lower-cased; SDKs since mid-2026:
// as sent), so Verify accepts either. Notifications of QR Code integrations
// are not signed at all and are rejected; legacy IPN deliveries
// (?topic=…&id=…) are not supported: register the URL with
// source_news=webhooks.
//
// # Amounts and statuses
//
// Amounts are decimals in major units; they are decoded as json.Number and
// converted with domain.ParseMinorUnits in the currency's exponent (BRL 2,
// CLP 0), never through float64, and an amount with more decimals than the
// currency has is an error, not a rounding. Statuses map as the spec says:
//
//	pending, in_process              → pending
//	authorized                       → authorized
//	approved                         → confirmed, or partially_refunded when
//	                                   status_detail is partially_refunded or
//	                                   0 < transaction_amount_refunded < amount,
//	                                   or refunded when the refunds cover it all
//	rejected                         → failed
//	cancelled                        → cancelled
//	refunded                         → refunded
//	in_mediation                     → disputed
//	charged_back                     → chargeback
//
// AmountCaptured is transaction_amount when money moved (approved, refunded,
// in_mediation, charged_back), else 0; AmountRefunded is
// transaction_amount_refunded. A status this package does not know is
// passed on as "mp:{status}", which is not a valid domain.Status, so the
// fold flags the payment unknown_status for a human rather than guessing.
//
// The package imports the standard library, domain, providers and
// providers/rest only; Mercado Pago's SDK is not used (it decodes amounts
// into float64).
package mercadopago

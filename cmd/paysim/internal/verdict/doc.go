// Package verdict decides whether the ledger kept its promise: it reads
// every payment back through the public read API until all match their
// final truth (status, amount, amount_refunded, currency, and the event
// count where it is known) or the settle deadline passes (Converge), and
// assembles and prints the run's Report: payments matched, wrong and
// missing with the first mismatches, webhooks delivered, duplicated,
// retried, given up and never acknowledged, the ledger's outcomes (a webhook
// "accepted" twice is a duplicate stored), ack latency and throughput.
// The ledger check (CheckBooks) compares GET /v1/ledger/balances with the
// truth's books per provider, currency and account, and the chart's normal
// sides; TakeSnapshot and Recorded.Recheck are the recorded-basis check (the
// books as known at a moment T mid-run never change). Report.OK is false on
// any wrong or missing payment, any webhook never acknowledged or accepted
// twice, and any difference in the books. With webhooks withheld (--drop,
// --outage) the event count is a floor, the report counts what was
// withheld, and Converged, one rule over GET …/events, says whether each
// matched payment converged by webhook, reconciliation or backfill.
//
// It imports truth, readapi, deliver (the delivery totals) and
// internal/backoff only; never the ledger's store, projections or database.
package verdict

// Package verdict decides whether the ledger kept its promise: it reads
// every payment back through the public read API until all match their
// final truth (status, amount, amount_refunded, currency, and the event
// count where it is known) or the settle deadline passes (Converge), and
// assembles and prints the run's Report: payments matched, wrong and
// missing with the first mismatches, webhooks delivered, duplicated,
// retried, given up and never acknowledged, the ledger's outcomes (a webhook
// "accepted" twice is a duplicate stored), ack latency and throughput.
// Report.OK is false on any wrong or missing payment, any webhook never
// acknowledged or accepted twice.
//
// It imports truth, readapi and deliver (the delivery totals) only; never
// the ledger's store, projections or database.
package verdict

// Package deliver sends paysim's webhooks to the ledger the way providers
// do, at least once: each payment's plan (Chaos: copies racing or trailing
// their original, shuffled arrival, random and late delays), a bounded
// number of requests in flight, and every non-2xx answer (Asaas: non-200)
// or timeout retried with exponential backoff and jitter until acknowledged
// or the Retry budget is spent. With a rate, an open-loop pacer starts sends
// on its own clock and counts starts that find every slot busy as late.
//
// What is timed is the target, not paysim: an attempt's ack latency runs
// from its signed request leaving to its answer read, and the pacer's clock
// starts once the first wave of sends is parked and garbage collected.
// Stats collects every send's record; Totals sums them for the report.
// Every attempt carries EventIDHeader, the identity the ledger dedupes on.
// Config.Pause holds every delivery back once, part-way, while the caller
// takes the recorded-basis snapshot. Config.Loss withholds webhooks a
// provider never sends: the final webhooks (all after the first) of a
// seeded share of payments (DropSet), and every send in an outage window;
// the provider state still advances, and Totals counts them apart
// (Unsent, Lost), never as undelivered.
//
// It declares the Signer, Provider and Sampler it is given and imports
// truth and internal/backoff only: never sign, fakeapi or lag, nor anything of the
// ledger's.
package deliver

// Package readapi is paysim's client of the ledger's public HTTP API: a
// payment from the read model (Fetch), the revision an acknowledged event
// was stored at, read from the event store through GET …/events (Revision),
// and /readyz. The read API is the contract paysim checks; it never reads
// the ledger's database.
//
// It imports truth and internal/backoff only.
package readapi

// Package readapi is paysim's client of the ledger's public HTTP API: a
// payment from the read model (Fetch), the revision an acknowledged event
// was stored at, read from the event store through GET …/events (Revision),
// how many events a stream holds (StreamLength), the ledger's balances
// (GET /v1/ledger/balances, Balances) and /readyz. The read API is the
// contract paysim checks; it never reads the ledger's database.
//
// It imports truth and internal/backoff only.
package readapi

// Package asaas is payledger's Asaas adapter: it authenticates webhook
// deliveries by their static token (and, optionally, source address), maps
// Asaas payment events to domain events, and fetches a payment's current
// state from the Asaas API (StatusClient), or lists the payments created or
// paid in a window for a backfill (ListPage), mapped alike.
//
// It imports the standard library, domain, providers and providers/rest
// only, plus time/tzdata so that dateCreated (São Paulo time) is read right
// on a host without a zone database. ARCHITECTURE.md ("Providers", Asaas)
// explains what a static token does and does not protect, and how events
// map.
package asaas

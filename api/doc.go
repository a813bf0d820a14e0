// Package api is payledger's HTTP layer: the provider webhooks (verify, map to
// domain events, append to the payment's stream) and the bearer-token read
// API over payments, their audited event history and the ledger (balances,
// daily activity, journal entries; JSON or CSV) and the reconciliation log
// and summary, the admin-only on-demand reconcile route, plus health,
// readiness and metrics endpoints (ReconcileMetrics is the reconciler's
// Prometheus observer).
//
// It imports domain, the eventstore contract package and internal/backoff
// only (internal/archtest checks it). The provider adapters, the event store
// and the read models it talks to are reached through the small interfaces
// declared in deps.go; cmd/ledger wires the real implementations. api must not import providers/*, eventstore adapters or
// projections, so the request path never depends on how they are built.
//
// Every handler has the same shape: parse, call, and either write JSON (or
// CSV, csv.go) or hand the error to writeError, which owns the single Kind →
// HTTP status table. The one status outside it is 403, a role outcome
// (requireAdmin), like 405 a routing one.
package api

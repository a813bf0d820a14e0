// Package projections builds payledger's Postgres read models (payments,
// payment_events, the ledger: ledger_entries and ledger_totals, and the
// reconciliation log: reconciliation_checks) from the
// event store's all-events feed and answers queries on them.
//
// A Runner follows eventstore.Store.SubscribeAll from the checkpoint stored
// under its versioned name ("payments_v1": renaming it means a rebuild) and
// applies each batch in one pipelined Postgres transaction: the events into
// payment_events, every affected payment re-folded with domain.Fold (this
// package never re-implements the state machine), its payments row upserted,
// its journal entries posted by domain.Journal with their running totals,
// its reconciliation checks logged,
// RunnerConfig.FollowUp's jobs inserted, and the checkpoint advanced with a
// compare-and-set. A crash replays the batch with the same result; a moved
// checkpoint stops the session and restarts from the database; an event the
// codec cannot decode, or a payment the read model rejects, parks that
// payment's stream (parked_streams, and a dead letter in DeadLetters) while
// every other payment goes on, never skipped: a retry re-projects it from the
// store. Review facts land in reviews in the same transaction. A session
// advisory lock keeps one runner per name across processes. The Sealer
// follows the same feed to hash-chain every stream (event_seals) and
// VerifyChains re-computes the chains (see "Tamper-evident streams"). Queries
// reads one payment, or pages newest first with keyset cursors, and the
// ledger: balances, daily activity, entry pages; AuditLedger checks it. It
// also selects the payments the reconciler checks (in doubt, or a sample of
// the recently finished) and pages and sums the reconciliation log.
//
// projections imports domain and eventstore, never api, jobs, a provider or
// an event store adapter: cmd/ledger passes the adapter in as a Subscriber.
// ARCHITECTURE.md ("Projections and checkpoint semantics") has the reasoning
// and BENCHMARKS.md the figures.
package projections

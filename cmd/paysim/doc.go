// Command paysim is a payment-provider simulator with its own ground truth.
// It proves the ledger's promise — nothing lost, nothing stored twice, every
// payment in the right state — under at-least-once delivery, and measures
// acknowledgement latency, throughput and end-to-end lag while doing so.
//
// Usage:
//
//	paysim env [flags]   print `export LEDGER_…=…` lines configuring a ledger for paysim
//	paysim [run] [flags] simulate against --ledger and report; `paysim run -h` lists the flags
//	paysim floor [--listen ADDR] [--database URL]
//	                     serve the one-INSERT floor bench-load compares the ledger with
//
// Exit codes: 0 when every payment matched, every webhook was acknowledged
// and stored once and the ledger's books equal the truth's (floor: a clean
// shutdown), 1 otherwise, 2 for bad flags. The books check compares GET
// /v1/ledger/balances with truth.Ledger per provider, currency and account,
// and, from a snapshot taken mid-run with deliveries held back, the books as
// of that moment on the recorded basis with the same query at the end.
// --drop and --outage withhold webhooks (the fake APIs still show the
// outcome, and list them for a backfill): such a payment must still
// converge, by the ledger's reconciliation or backfill, or the run fails.
//
// Package main holds the flags, the wiring and the subcommands only. The parts
// live in internal/, each saying in its doc what it owns, and each imports
// only parts named before it here (and internal/backoff, the module's one
// sleep): truth (the ground-truth types), gen (lifecycles), sign, fakeapi
// (provider APIs and JWKS), deliver (delivery, retries, pacing), readapi (the
// ledger's public API), verdict (convergence and the report), lag and floor.
//
// paysim imports domain, the providers' signing helpers, pgx (for the floor's
// own table) and the standard library only; never the ledger's store,
// projections or api: the read API is the contract it checks. README.md
// ("Simulate providers") shows it in use.
package main

// Package floor is `paysim floor`, the physical limit of webhook ingest,
// measured with the same harness as the ledger: an HTTP handler doing one
// INSERT … ON CONFLICT DO NOTHING per request into its own table
// (floor_events, id text PRIMARY KEY, body jsonb NOT NULL, created if
// needed) and nothing else — no verification, parsing, mapping or read side.
// It is the out-of-process twin of api's BenchmarkIngestFloor. The key comes
// in deliver.EventIDHeader ("{provider}:{event ID}", the identity the ledger
// dedupes on), so the floor parses nothing and does the same share of no-op
// inserts as the ledger does duplicate appends; it answers the ledger's
// outcomes, so paysim's counts mean the same for both.
//
// `paysim run --ack-only` drives it; scripts/bench-load.sh runs it beside
// the ledger and prints ours / floor (BENCHMARKS.md).
//
// It imports pgx (for its own table only) and deliver (the header name).
package floor

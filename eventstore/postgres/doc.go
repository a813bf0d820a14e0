// Package postgres is the default event store: every stream in one Postgres
// table, es_events, written one round trip per append (single events with
// any revision merged into shared transactions under load) and read as one
// global feed that never skips a row committed late by a slower transaction.
//
// The schema belongs to the migrations package; this package runs no DDL.
// It imports domain, eventstore and pgx, never api or projections, which
// reach it only through the eventstore.Store interface. ARCHITECTURE.md
// ("Deduplication, per store", "The no-skip feed") has the protocols and
// the operators' caveats; BENCHMARKS.md has the measurements.
//
// The project's own SQLSTATEs, raised by the append functions (each rolls
// its statement back, so nothing is written), and what Append makes of them:
//
//	ES001  es_append: part of the batch is stored already (DETAIL: its revision)  duplicate
//	ES002  es_append: a concurrent append took a revision of the batch            retry (Any), conflict
//	ES003  es_append: an event ID of the batch is stored in another stream        error
//	ES004  es_append_group: a new event could not be inserted                     one by one
//	ES005  es_append_group: a stream head is younger than the transaction         one by one
package postgres

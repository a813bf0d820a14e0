// Package postgres is the default event store: every stream in one Postgres
// table, es_events, written one round trip per append (a single event by one
// plain statement, a batch by the es_append function, appenders of one
// stream taking turns on a per-stream lock) and read as one global feed that
// never skips a row committed late by a slower transaction.
//
// The schema (table and function) belongs to the migrations package; this
// package runs no DDL. It imports domain, eventstore and pgx, never api or
// projections, which reach it only through the eventstore.Store interface.
//
// Operational caveat: the feed reads only rows of transactions older than
// the oldest transaction still running on the server (pg_snapshot_xmin). A
// session left idle in a transaction that holds a transaction ID, in any
// database of the server, stalls every subscription until it commits or
// rolls back; nothing is lost, delivery just waits. Watch
// pg_stat_activity for "idle in transaction" and set
// idle_in_transaction_session_timeout.
package postgres

// Package projections builds payledger's Postgres read models from the event
// store's all-events feed and answers queries on them.
//
// # Runner
//
// A Runner follows eventstore.Store.SubscribeAll, filtered to payment streams,
// from the position stored in projection_checkpoints under its name. It
// gathers what the subscription has ready into a batch and applies the batch
// in one Postgres transaction: the events go into payment_events (keyed by
// event ID, so applying a batch twice changes nothing), every affected
// payment is re-folded from its full history with domain.Fold (the one state
// machine payledger has; this package never re-implements it), its payments
// row is upserted, and the checkpoint advances with a compare-and-set. A crash
// anywhere replays the batch from the committed checkpoint with the same
// result. The statements are pipelined, and the runner keeps recent payments'
// histories in memory so that it need not read them back (see histories):
// a batch of known payments is one round trip, its follow-up and COMMIT.
//
// # Checkpoints
//
// The checkpoint name is the projection's identity and is versioned
// ("payments_v1"): a change to what the read models mean needs a new name (or
// Reset) and a rebuild. The checkpoint is the position of the last message
// applied; the subscription resumes strictly after it. Checkpoint-only
// messages (no event) advance it too, so an idle filtered feed does not make
// the projector re-read the whole store after a restart. The advance is
//
//	UPDATE projection_checkpoints SET position = $new WHERE name = $n AND position = $old
//
// and zero rows updated means another writer moved it (a second projector, or
// Reset): the transaction rolls back and the runner restarts from the
// database. A Postgres session advisory lock on the name keeps one active
// runner per name across processes; the compare-and-set keeps the read
// models correct even if the lock is lost.
//
// # Errors stop the projection
//
// An event the codec cannot decode (eventstore.ErrUnknownType, written by a
// newer payledger, or data that no longer parses) is never skipped: skipping
// would silently lose a fact from a payment's history. The runner applies
// the batch up to that event, logs the error at error level, and retries with
// backoff from the committed checkpoint, so the projection stays visibly stuck
// just before the event until a payledger that knows it is deployed. Store
// and database errors are retried the same way.
//
// # Follow-up work
//
// RunnerConfig.FollowUp, when set, is handed the domain events of every
// batch inside the batch's transaction, after the read-model writes and
// before the commit, so background jobs it enqueues (the jobs package's
// River queue lives in the same database) exist exactly when the batch
// committed. Its error rolls the batch back and is retried like any other.
//
// # Queries
//
// Queries reads the payments read model: one payment by provider and ID, and
// lists newest first (by the immutable row id) with keyset cursors.
//
// projections imports domain and eventstore, never api or an event store
// adapter: cmd/ledger passes the adapter in as a Subscriber.
package projections

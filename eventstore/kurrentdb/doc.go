// Package kurrentdb is the KurrentDB (EventStoreDB) eventstore.Store, built
// on the official client github.com/EventStore/EventStore-Client-Go/v4/esdb.
// It is the only payledger package that imports esdb; api and projections
// reach it through eventstore.Store, and cmd/ledger chooses it. It imports
// domain and eventstore, never api or projections.
//
// # Deduplication never trusts the server's Any
//
// KurrentDB's own idempotency is best-effort. With expected revision Any the
// server only consults a bounded, in-memory cache of recently committed
// event IDs: after the cache evicts an ID (8 MiB FIFO), after a restart or a
// leader change, a retried Any append is written again as a new event. A
// webhook redelivered an hour later would then be stored twice. Retrying
// with the current head revision is no better: an exact expected revision
// equal to the head is written without any duplicate check.
//
// So the adapter decides, and the server only guards the decision:
//
//  1. Append reads the payment stream (small by design) and, when any event
//     ID of the batch is already in it, answers Duplicate with the stored
//     copy's revision and writes nothing. This wins over the expected
//     revision, as the eventstore.Store contract says.
//  2. Otherwise it appends with an exact expectation: the revision it read
//     (NoStream for a missing stream) when the caller said Any, the caller's
//     own NoStream or Exact(n) otherwise. A concurrent writer makes the
//     server answer WrongExpectedVersion; Append then reads again and
//     decides again (a bounded number of times for Any; at once, as a
//     domain.ErrConflict, for an explicit expectation that is not a
//     duplicate).
//  3. A call that fails without an answer (Unavailable, deadline, dropped
//     connection) is retried with the same expected revision it first
//     used. If the first attempt did land, the server's check for an exact
//     or NoStream expectation below the head compares the IDs with the
//     stored events through its index, not the cache, so the retry is an
//     idempotent success even after a restart, never a second copy.
//
// Appends to one stream are also serialised within the process. Nothing on
// the wire tells a real write from the server's idempotent replay of a
// concurrent identical write, so two goroutines racing the same redelivery
// would both be told "appended". With the lock the second one reads the
// first one's event and answers Duplicate. Across processes the stream still
// holds exactly one copy; only the Duplicate flag of two simultaneous
// identical deliveries may then say "appended" twice.
//
// Event IDs are checked within the stream only: KurrentDB has no lookup by
// ID, so the same ID in another stream is stored as a new event, where the
// Postgres adapter refuses it. A payledger event ID names one provider
// event, which belongs to one payment stream, so this only shows a bug.
//
// # Reads, subscriptions, errors
//
// A missing stream reads as empty. Every other read error is returned, never
// taken for the end of the stream. SubscribeAll follows $all with a
// server-side stream-prefix filter (system streams are always excluded) and
// resubscribes transparently, with backoff, from the position of the last
// message Next returned, so a dropped connection neither loses nor repeats
// an event. Errors go through one translate function: WrongExpectedVersion
// wraps domain.ErrConflict; an unreachable or unready server wraps
// domain.ErrUnavailable, which the API answers with 503 so the provider
// retries.
//
// # Living with the client's connection handling
//
// The esdb client (v4.2.0) has three habits the adapter works around, each
// covered by a test against kurrenttest:
//   - When discovery fails (about a second of refused connections with the
//     default settings) the client closes itself for good. A Store made by
//     Open, or given Options.Redial, replaces it on the next call.
//   - Calls caught waiting inside the client at that moment wait for ever,
//     whatever their ctx. Every call therefore runs in its own goroutine and
//     is released (and retried on the replacement) once the client is known
//     to be dead; such a client is never closed, because closing it panics
//     the goroutines still stuck in it.
//   - A read whose connection is broken fails without making the client
//     rediscover the server, so reads could keep failing for minutes after
//     the server is back. The adapter then opens and closes a subscription,
//     which does go through the client's rediscovery.
package kurrentdb

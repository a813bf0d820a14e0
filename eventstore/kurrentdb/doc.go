// Package kurrentdb is the KurrentDB (EventStoreDB) eventstore.Store, built
// on the official client github.com/EventStore/EventStore-Client-Go/v4/esdb,
// and the only payledger package that imports it. api and projections reach
// it through eventstore.Store; cmd/ledger chooses it.
//
// Deduplication never trusts the server's Any (its idempotency is a bounded
// in-memory cache): Append reads the payment stream, answers Duplicate when an
// event ID of the batch is there, and otherwise appends with an exact expected
// revision, re-reading on WrongExpectedVersion. A call that got no answer is
// retried unchanged, with the same expected revision, so a write that did
// land is an idempotent success. Appends to one stream are serialised within
// the process. SubscribeAll follows $all with a server-side prefix filter and
// resubscribes from the last delivered position; one translate maps errors to
// domain.ErrConflict and domain.ErrUnavailable. The client's connection
// habits (self-closing on failed discovery, calls stuck inside it, reads that
// never rediscover) are worked around as ARCHITECTURE.md describes.
//
// It imports domain, eventstore and internal/backoff; never api, projections,
// jobs or a provider. ARCHITECTURE.md ("Deduplication, per store") has the
// reasoning; the tests run against eventstore/kurrenttest.
package kurrentdb

// Package storetest is the conformance suite of eventstore.Store: every
// adapter (Postgres for real, KurrentDB through its client) runs Run
// unchanged from its own tests, so the semantics documented on
// eventstore.Store are checked once, against every store.
//
// The suite assumes nothing about an adapter beyond that contract: positions
// are opaque and only ordered (never dense, never starting anywhere in
// particular), and the store may hold other events, because subtests run in
// parallel against one store with stream names of their own. It imports
// domain and eventstore, never an adapter.
//
// A few promises are checked here that the Store comment implies rather
// than states: a batch that repeats an ID within itself is KindInvalid; a
// duplicate reports the stored copy's revision (Redelivery); the global
// feed delivers each stream's events in revision order (NoSkip); and
// Subscription.Close tolerates a second call (its result is ignored).
package storetest

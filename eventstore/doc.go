// Package eventstore is the contract between payledger and the event stores it
// runs on: the Store interface, positions, expected revisions, stream naming,
// deterministic event IDs and the codec that turns domain events into stored
// records and back.
//
// It imports domain and github.com/google/uuid only. Adapters live in
// subpackages (postgres, kurrentdb); api and projections import this package,
// never an adapter, and cmd/ledger chooses the adapter. The conformance suite
// every adapter must pass is in storetest.
package eventstore

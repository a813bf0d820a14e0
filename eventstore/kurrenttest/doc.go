// Package kurrenttest is an in-memory KurrentDB (EventStoreDB) node for
// tests, the way pstest serves Pub/Sub: it speaks the gRPC protocol of the
// official client github.com/EventStore/EventStore-Client-Go/v4 over a real
// socket on 127.0.0.1, so code under test uses the unmodified client:
//
//	srv, err := kurrenttest.NewServer()
//	...
//	defer srv.Close()
//	cfg, err := esdb.ParseConnectionString(srv.URL())
//	client, err := esdb.NewClient(cfg)
//
// It emulates one EventStoreDB 24.10 node closely enough that the client's
// error classification and the server's idempotency traps hold, and adds
// faults (SetUnavailable, InjectFault, DropConnections, Stop/Start, Restart)
// and, for cmd/kurrenttest, an audit of its log (Tally). What it emulates and
// its known divergences from a real node are listed in ARCHITECTURE.md ("The
// in-memory node"); the semantics it honours are in shared/specs/kurrentdb.md.
//
// It imports the client's generated protocol stubs and gRPC only, nothing of
// ours; tests use the client itself.
package kurrenttest

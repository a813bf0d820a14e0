// Command kurrenttest serves eventstore/kurrenttest, the in-memory KurrentDB
// node the tests use, as a process of its own, so scripts can run `ledger
// serve` and `ledger verify` against "a KurrentDB server" on a machine that
// cannot run the real one (scripts/chaos.sh with CHAOS_BACKEND=kurrentdb).
//
//	kurrenttest [--addr 127.0.0.1:2113] [--control 127.0.0.1:2114]
//
// It prints the connection string (esdb://ADDR?tls=false) once the node
// accepts connections and serves until SIGTERM or SIGINT; both addresses must
// be loopback (no authentication, no TLS). Faults go through the loopback
// control endpoint, which answers in JSON once the fault is over:
//
//   - POST /restart?down=2s: close every connection, refuse the port for
//     `down` (at most 1m), then serve the committed data again with an empty
//     idempotency cache, as a real restart leaves it;
//   - POST /drop: close every client connection (a network blip);
//   - GET /status?prefix=payment-: connections, faults so far, and an audit
//     of the log (streams, events, event IDs stored more than once).
//
// The data lives in this process's memory: a restart must go through
// /restart, never through killing the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

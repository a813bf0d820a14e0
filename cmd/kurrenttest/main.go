// Command kurrenttest serves eventstore/kurrenttest, the in-memory KurrentDB
// node the tests use, as a process of its own, so that scripts can run
// `ledger serve` and `ledger verify` against "a KurrentDB server" on a
// machine that cannot run the real one (scripts/chaos.sh with
// CHAOS_BACKEND=kurrentdb). All server behaviour, and its known divergences
// from a real node, live in eventstore/kurrenttest; this command only
// listens, prints the connection string and injects faults on request.
//
//	kurrenttest [--addr 127.0.0.1:2113] [--control 127.0.0.1:2114]
//
// It prints the connection string (esdb://ADDR?tls=false) on stdout once the
// node accepts connections, and serves until SIGTERM or SIGINT. Both
// addresses must be loopback: the node has no authentication and no TLS.
//
// Faults are injected through a loopback HTTP control endpoint rather than
// signals, so the caller learns when a fault is over and what it did (JSON):
//
//   - POST /restart?down=2s — a node restart: every connection is closed and
//     calls in flight fail, the port refuses connections for `down` (default
//     2s, at most 1m), then the node starts again at the same address with
//     its committed data and an empty idempotency (committed-events) cache,
//     as a real KurrentDB restart leaves it. The reply comes once it serves
//     again.
//   - POST /drop — closes every client connection at once (a network blip);
//     the node keeps running.
//   - GET /status?prefix=payment- — the URL, open connections, the faults
//     applied so far, and an audit of the log that a client cannot make:
//     how many streams with that name prefix hold events, how many events
//     they hold, and how many event IDs are stored more than once.
//
// The data lives in this process's memory: killing the process (kill -9)
// loses it, which no real node does, so a restart must go through
// /restart, never through killing this process.
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

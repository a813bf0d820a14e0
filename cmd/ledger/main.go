// Command ledger runs payledger: `ledger serve` (webhooks, read API,
// projector and background jobs in one process, or the roles LEDGER_ROLES
// names), `ledger migrate` (apply the schema and exit) and `ledger verify`
// (the read-only audit).
// Configuration comes only from LEDGER_* environment variables; see README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
		os.Exit(1)
	}
}

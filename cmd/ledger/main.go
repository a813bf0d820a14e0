// Command ledger runs payledger: `ledger serve` (webhooks, read API,
// projector and background jobs in one process, or the roles LEDGER_ROLES
// names), `ledger migrate` (apply the schema and exit) and `ledger verify`
// (the read-only audit). `ledger help` lists every command, flag and exit
// status.
//
// The package is wiring only: configuration from LEDGER_* variables
// (config.go, and one entry per provider in providers.go), the command table
// (commands.go) and Main, which opens, runs and closes `serve`. The work and
// the SQL live in the packages it wires; see ARCHITECTURE.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	// The ledger's daily route takes any IANA zone (tz=America/Sao_Paulo):
	// embed the zone database so the answer does not depend on the host's.
	_ "time/tzdata"
)

func main() {
	for _, w := range unknownSettings(os.Environ()) {
		fmt.Fprintln(os.Stderr, "ledger: warning:", w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
	}
	os.Exit(exitCode(err))
}

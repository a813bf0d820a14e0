package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

const usage = `usage: ledger <command>

commands:
  serve     run the webhook ingest, the read API, the projector and the
            background jobs (LEDGER_ROLES: only some of them)
  migrate   apply database migrations and exit
  verify    check, read-only, that every payments row equals the fold of its
            stream, no event ID is stored twice and every stream has a row
            (flags: --json, --wait D to let the projector catch up first);
            exit status 1 on any problem

Configuration is read from LEDGER_* environment variables (see README.md).`

// run dispatches a command. It is main without the process: tests call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("no command")
	}
	cfg, err := configFromEnv(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	logger := newLogger(cfg, stderr)
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, logger)
	case "migrate":
		return migrate(ctx, cfg, logger)
	case "verify":
		return verify(ctx, cfg, args[1:], stdout, stderr, logger)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

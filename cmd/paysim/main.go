package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/payledger/payledger/cmd/paysim/internal/floor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches the subcommand and returns the exit code: 0 when every
// payment matched and every webhook was acknowledged, 1 otherwise, 2 for
// usage errors.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && (args[0] == "run" || args[0] == "env" || args[0] == "floor") {
		cmd, args = args[0], args[1:]
	}
	if cmd == "floor" {
		return serveFloor(ctx, args, stderr)
	}
	cfg, err := parseConfig(cmd, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if cmd == "env" {
		printEnv(stdout, cfg.env("http://"+cfg.APIAddr))
		return 0
	}
	rep, err := simulate(ctx, cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if !rep.OK {
		return 1
	}
	return 0
}

// serveFloor is `paysim floor`: 0 after a clean shutdown, 1 on failure, 2 for
// usage errors.
func serveFloor(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, err := parseFloorConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := floor.Serve(ctx, cfg, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

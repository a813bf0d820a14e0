package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// config is the command line.
type config struct {
	Addr    string // the node's gRPC address
	Control string // the control endpoint's address; empty: none
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("kurrenttest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:2113", "loopback `host:port` the node listens on (port 0: any free one)")
	fs.StringVar(&cfg.Control, "control", "127.0.0.1:2114", "loopback `host:port` of the control endpoint (empty: none)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: kurrenttest [--addr 127.0.0.1:2113] [--control 127.0.0.1:2114]

Serves an in-memory KurrentDB node (eventstore/kurrenttest) until SIGTERM or
SIGINT and prints its connection string on stdout. Faults, on the control
endpoint (replies are JSON):
  POST /restart?down=2s  restart the node: connections closed, port closed for
                         'down' (default 2s, max 1m), data kept, idempotency
                         cache emptied; replies once the node serves again
  POST /drop             close every client connection; the node keeps running
  GET  /status?prefix=P  URL, open connections, faults applied so far, and
                         streams named P*, their events, event IDs stored twice
Data lives in this process: kill -9 loses it; restart through /restart.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := loopback(cfg.Addr); err != nil {
		return cfg, fmt.Errorf("--addr: %w", err)
	}
	if cfg.Control != "" {
		if err := loopback(cfg.Control); err != nil {
			return cfg, fmt.Errorf("--control: %w", err)
		}
	}
	return cfg, nil
}

// loopback accepts a host:port whose host is a loopback IP or localhost.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address (the node has no authentication)", addr)
}

// run serves until ctx is done and returns the exit code: 0 after a clean
// shutdown, 1 when the node cannot start, 2 for usage errors.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "kurrenttest:", err)
		return 2
	}
	n, err := start(cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "kurrenttest:", err)
		return 1
	}
	fmt.Fprintln(stdout, n.srv.URL())
	<-ctx.Done()
	n.close()
	fmt.Fprintln(stderr, "kurrenttest: stopped")
	return 0
}

// node is the running server and its control endpoint.
type node struct {
	srv     *kurrenttest.Server
	ctl     *http.Server
	ctlAddr string // empty without a control endpoint
	faults  *controller
}

// start brings the node up and, when configured, its control endpoint.
func start(cfg config, logw io.Writer) (*node, error) {
	srv, err := kurrenttest.NewServerAt(cfg.Addr)
	if err != nil {
		return nil, err
	}
	n := &node{srv: srv, faults: newController(srv, logw)}
	if cfg.Control == "" {
		fmt.Fprintf(logw, "kurrenttest: serving %s (no control endpoint)\n", srv.URL())
		return n, nil
	}
	l, err := net.Listen("tcp", cfg.Control)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("control: %w", err)
	}
	n.ctlAddr = l.Addr().String()
	n.ctl = &http.Server{Handler: n.faults.routes(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = n.ctl.Serve(l) }() // returns on Close
	fmt.Fprintf(logw, "kurrenttest: serving %s; control http://%s\n", srv.URL(), n.ctlAddr)
	return n, nil
}

// close stops the control endpoint, then the node. A restart in progress
// ends early: Start fails on a closed server.
func (n *node) close() {
	if n.ctl != nil {
		_ = n.ctl.Close()
	}
	n.faults.stop()
	n.srv.Close()
}

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

	"github.com/jackc/pgx/v5/pgxpool"
)

// The floor is the physical limit of webhook ingest, measured with the same
// harness as the ledger (issue 5, item 4): an HTTP handler that does one
// INSERT … ON CONFLICT DO NOTHING per request into the same Postgres, and
// nothing else — no verification, no parsing, no mapping, no read side. It
// is the out-of-process twin of api's BenchmarkIngestFloor: the same table
// (id text PRIMARY KEY, body jsonb NOT NULL), the body stored as jsonb, and
// the key handed in a header (Paysim-Event-Id, "{provider}:{event ID}", the
// identity the ledger deduplicates on) so the floor parses nothing and does
// the same share of no-op inserts as the ledger does duplicate appends.
// `paysim run --ack-only` drives it; `scripts/bench-load.sh` runs it side by
// side with the ledger and prints ours / floor.

// floorConfig is what `paysim floor` is told by its flags.
type floorConfig struct {
	Listen   string
	Database string
}

// floorDefaultConns is the pool size when the database URL sets none: the
// ledger's default (cmd/ledger openDatabase), so the two are compared with
// as many connections each.
const floorDefaultConns = 20

func parseFloorConfig(args []string, stderr io.Writer) (floorConfig, error) {
	var c floorConfig
	fs := flag.NewFlagSet("paysim floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:8086", "listen address")
	fs.StringVar(&c.Database, "database", "postgres://postgres@127.0.0.1:5432/payledger_floor?sslmode=disable",
		"Postgres URL (pgx); the pool has "+fmt.Sprint(floorDefaultConns)+" connections unless it sets pool_max_conns")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("paysim floor: unexpected arguments %q", fs.Args())
	}
	if c.Listen == "" || c.Database == "" {
		return c, errors.New("paysim floor: --listen and --database must not be empty")
	}
	return c, nil
}

// openFloor connects and creates the floor's table if needed.
func openFloor(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("paysim floor: database: %w", err)
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, floorDefaultConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("paysim floor: database: %w", err)
	}
	const create = `CREATE TABLE IF NOT EXISTS floor_events (id text PRIMARY KEY, body jsonb NOT NULL)`
	if _, err := pool.Exec(ctx, create); err != nil {
		pool.Close()
		return nil, fmt.Errorf("paysim floor: create table: %w", err)
	}
	return pool, nil
}

// floorHandler serves POST /webhooks/{provider}: one INSERT of the body
// keyed by the Paysim-Event-Id header, answered 200 with the outcome the
// ledger would give ("accepted" or "duplicate"), so paysim's counts mean
// the same for both; and GET /readyz.
func floorHandler(pool *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks/{provider}", func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(eventIDHeader)
		if id == "" {
			http.Error(w, "missing "+eventIDHeader, http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		const insert = `INSERT INTO floor_events (id, body) VALUES ($1, $2) ON CONFLICT DO NOTHING`
		tag, err := pool.Exec(r.Context(), insert, id, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if tag.RowsAffected() == 1 {
			_, _ = io.WriteString(w, `{"outcome":"accepted"}`)
			return
		}
		_, _ = io.WriteString(w, `{"outcome":"duplicate"}`)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := pool.Ping(r.Context()); err != nil {
			http.Error(w, "database unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// runFloor is `paysim floor`: serve until ctx ends, then drain.
func runFloor(ctx context.Context, cfg floorConfig, stderr io.Writer) error {
	pool, err := openFloor(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer pool.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("paysim floor: %w", err)
	}
	// The ledger's server timeouts, for the same connection handling.
	srv := &http.Server{Handler: floorHandler(pool), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(stderr, "paysim floor: listening on %s (pool of %d connections)\n", ln.Addr(), pool.Config().MaxConns)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("paysim floor: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("paysim floor: shutdown: %w", err)
	}
	return nil
}

package floor

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
)

// Config is what `paysim floor` is told by its flags.
type Config struct {
	Listen   string
	Database string
}

// DefaultConns is the pool size when the database URL sets none: the
// ledger's default, so the two are compared with as many connections each.
const DefaultConns = 20

// Open connects and creates the floor's table if needed.
func Open(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("paysim floor: database: %w", err)
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, DefaultConns)
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

// Handler serves POST /webhooks/{provider}: one INSERT of the body
// keyed by the Paysim-Event-Id header, answered 200 with the outcome the
// ledger would give ("accepted" or "duplicate"), so paysim's counts mean
// the same for both; and GET /readyz.
func Handler(pool *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks/{provider}", func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(deliver.EventIDHeader)
		if id == "" {
			http.Error(w, "missing "+deliver.EventIDHeader, http.StatusBadRequest)
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

// Serve is `paysim floor`: serve until ctx ends, then drain.
func Serve(ctx context.Context, cfg Config, stderr io.Writer) error {
	pool, err := Open(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer pool.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("paysim floor: %w", err)
	}
	// The ledger's server timeouts, for the same connection handling.
	srv := &http.Server{Handler: Handler(pool), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
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

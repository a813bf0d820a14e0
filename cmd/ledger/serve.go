package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/migrations"
	"github.com/payledger/payledger/projections"
)

// serve runs the HTTP server, the projector and the job workers (those of
// them cfg.Roles asks for) until ctx is cancelled, then shuts down
// gracefully: in-flight requests finish, the projector stops between
// batches, running jobs finish, connections close.
func serve(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.GCPercent > 0 {
		debug.SetGCPercent(cfg.GCPercent)
	}
	pool, err := openDatabase(ctx, cfg.DatabaseURL, logger, cfg.EventStoreURL == "")
	if err != nil {
		return err
	}
	defer pool.Close()

	store, err := openEventStore(ctx, cfg, pool, func(ctx context.Context, u string) (*pgxpool.Pool, error) {
		return openDatabase(ctx, u, logger, true)
	}, logger)
	if err != nil {
		return err
	}
	defer store.close()
	// One migrator for the readiness check, not one per /readyz poll.
	schema, err := migrations.New(pool)
	if err != nil {
		return err
	}
	defer schema.Close()

	wired, err := buildProviders(cfg, logger)
	if err != nil {
		return err
	}
	background, err := jobs.New(jobs.Config{
		Pool:            pool,
		Fetchers:        wired.fetchers,
		Store:           store,
		Logger:          logger.With("component", "jobs"),
		MaxAttempts:     cfg.JobsMaxAttempts,
		RescueAfter:     cfg.JobsRescueAfter, // 0: the jobs default
		EnrichProviders: wired.enrich,
	})
	if err != nil {
		return err
	}
	roles := cfg.Roles
	if roles.API && len(cfg.Tokens) == 0 {
		logger.Warn("read API locked: LEDGER_API_TOKENS is empty, every /v1 request will get 401")
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var projectorMetrics *projections.Metrics
	if roles.Projector {
		if projectorMetrics, err = projections.NewMetrics(registry, projections.DefaultName); err != nil {
			return err
		}
	}
	handler, err := api.NewServer(api.Config{Tokens: cfg.Tokens, Logger: logger,
		DisableWebhooks: !roles.Webhooks, DisableReadAPI: !roles.API}, api.Deps{
		Store:     store,
		Payments:  projections.NewQueries(pool),
		Providers: wired.webhooks,
		Checks:    []api.Check{{Name: "database", Run: pool.Ping}, migrationsCheck(schema), {Name: "eventstore", Run: store.Ping}},
		Registry:  registry,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.HTTPAddr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("listening", "addr", ln.Addr().String(), "roles", roles.String())
	_, stopDebug, err := startDebug(cfg.DebugAddr, logger)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer stopDebug(context.WithoutCancel(ctx))

	// River stops when its start context ends, so it outlives the signal
	// and is stopped explicitly, after the projector, below. Without the
	// jobs role the client only enqueues (the projector's follow-ups) and
	// other processes work the jobs.
	stopJobs := func(context.Context) error { return nil }
	if roles.Jobs {
		if err := background.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		stopJobs = background.Stop
	}
	runCtx, stopRunner := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if roles.Projector {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runner := projections.NewRunner(projections.RunnerConfig{Logger: logger, FollowUp: background.Enqueuer(), Metrics: projectorMetrics}, pool, store)
			if err := runner.Run(runCtx); err != nil {
				logger.Error("projector stopped", "err", err)
			}
		}()
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		stopRunner()
		wg.Wait()
		_ = stopJobs(context.WithoutCancel(ctx))
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	// Order matters: stop taking requests, then stop the projector (no more
	// enqueues), then let running jobs finish (they append to the store),
	// and only then close the store and the pools (deferred above).
	err = srv.Shutdown(shutdownCtx)
	stopRunner()
	wg.Wait()
	if jerr := stopJobs(shutdownCtx); jerr != nil {
		logger.Warn("jobs did not stop cleanly", "err", jerr)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// migrate applies the schema to the read-model database (and to a separate
// Postgres event store database when one is configured).
func migrate(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if err := migrateDatabase(ctx, cfg.DatabaseURL, logger); err != nil {
		return err
	}
	if kind, _ := eventStoreKind(cfg.EventStoreURL); kind == "postgres" {
		return migrateDatabase(ctx, cfg.EventStoreURL, logger)
	}
	return nil
}

// openDatabase applies pending migrations, so `serve` never runs against an
// old schema, then opens the pool serve works with. appends says the
// Postgres event store lives in this database: every new connection then
// runs the append path once before the pool hands it out
// (postgres.WarmUp), which needs the migrated schema, so the migrations run
// on a pool of their own first.
func openDatabase(ctx context.Context, dbURL string, logger *slog.Logger, appends bool) (*pgxpool.Pool, error) {
	if err := migrateDatabase(ctx, dbURL, logger); err != nil {
		return nil, err
	}
	pcfg, err := poolConfig(dbURL)
	if err != nil {
		return nil, err
	}
	if appends {
		pcfg.AfterConnect = postgres.WarmUp
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// migrateDatabase applies pending migrations to the database at dbURL.
func migrateDatabase(ctx context.Context, dbURL string, logger *slog.Logger) error {
	pcfg, err := poolConfig(dbURL)
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer pool.Close()
	m, err := migrations.New(pool)
	if err != nil {
		return err
	}
	defer m.Close()
	n, err := m.Up(ctx)
	if err != nil {
		return fmt.Errorf("database %s: %w", redact(dbURL), err)
	}
	current, _, _ := m.Versions(ctx)
	logger.Info("migrations applied", "database", redact(dbURL), "applied", n, "version", current)
	return nil
}

// poolConfig parses dbURL with the ledger's pool defaults.
func poolConfig(dbURL string) (*pgxpool.Config, error) {
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		// pgx's default (4 on two cores) is too small: the projector holds
		// two connections, River a listener and its workers, and every
		// in-flight webhook one.
		pcfg.MaxConns = max(pcfg.MaxConns, 20)
	}
	return pcfg, nil
}

// migrationsCheck reports not-ready while the database is behind the binary's
// schema (another process may be mid-migration, or someone rolled back).
func migrationsCheck(m *migrations.Migrator) api.Check {
	return api.Check{Name: "migrations", Run: func(ctx context.Context) error {
		current, target, err := m.Versions(ctx)
		if err != nil {
			return err
		}
		if current < target {
			return fmt.Errorf("schema version %d, binary needs %d", current, target)
		}
		return nil
	}}
}

// redact hides a password in a database URL for logs.
func redact(dbURL string) string {
	if u, err := url.Parse(dbURL); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

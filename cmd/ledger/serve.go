package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/api/console"
	"github.com/payledger/payledger/jobs"
	"github.com/payledger/payledger/migrations"
	"github.com/payledger/payledger/projections"
)

// serve runs `ledger serve`: the parts cfg.Roles asks for, until ctx ends.
func serve(ctx context.Context, e *environment) error {
	m := &Main{cfg: e.cfg, logger: e.logger}
	defer m.Close()
	if err := m.Open(ctx); err != nil {
		return err
	}
	return m.Run(ctx)
}

// Main is one `ledger serve` process. Open builds its parts, Run serves
// until its context ends and then shuts them down in order, Close releases
// what Open opened. A new background part is one entry in components.
type Main struct {
	cfg    Config
	logger *slog.Logger

	pool      *pgxpool.Pool // read models, checkpoints, the job queue
	store     openedStore
	schema    *migrations.Migrator // for the readiness check, not one per /readyz poll
	providers wiredProviders
	jobs      *jobs.Jobs
	registry  *prometheus.Registry
	projector *projections.Metrics // nil without the projector role
	// reconcileMetrics observes the reconciler's checks, breakers and doubt.
	reconcileMetrics *api.ReconcileMetrics
	handler          http.Handler
	closers          []func() // what Close releases, in opening order
}

// Open opens the databases (migrating them) and the event store, and builds
// the providers, the job queue client and the HTTP handler.
func (m *Main) Open(ctx context.Context) error {
	if m.cfg.GCPercent > 0 {
		debug.SetGCPercent(m.cfg.GCPercent)
	}
	for _, step := range []func(context.Context) error{m.openStores, m.openSchema, m.openProviders, m.openMetrics, m.openJobs, m.openHandler} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close releases what Open opened, last first. Run must have returned.
func (m *Main) Close() {
	for i := len(m.closers) - 1; i >= 0; i-- {
		m.closers[i]()
	}
	m.closers = nil
}

func (m *Main) openStores(ctx context.Context) error {
	open := openPool
	if m.cfg.EventStoreURL == "" {
		open = openStorePool // the Postgres event store lives in the main database
	}
	pool, err := open(ctx, m.cfg.DatabaseURL, m.logger)
	if err != nil {
		return err
	}
	m.pool = pool
	m.closers = append(m.closers, pool.Close)
	m.store, err = openEventStore(ctx, m.cfg, pool, func(ctx context.Context, u string) (*pgxpool.Pool, error) {
		return openStorePool(ctx, u, m.logger)
	}, m.logger)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, m.store.close)
	return nil
}

func (m *Main) openSchema(context.Context) error {
	schema, err := migrations.New(m.pool)
	if err != nil {
		return err
	}
	m.schema = schema
	m.closers = append(m.closers, func() { _ = schema.Close() })
	return nil
}

// openProviders builds the configured providers' verifiers and status clients.
func (m *Main) openProviders(context.Context) error {
	var err error
	m.providers, err = wireProviders(m.cfg, m.logger)
	return err
}

// openMetrics creates the Prometheus registry and the metrics of the
// projector (with its role) and of the reconciler.
func (m *Main) openMetrics(context.Context) error {
	m.registry = prometheus.NewRegistry()
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var err error
	if m.cfg.Roles.Projector {
		if m.projector, err = projections.NewMetrics(m.registry, projections.DefaultName); err != nil {
			return err
		}
	}
	if m.reconcileMetrics, err = api.NewReconcileMetrics(m.registry, nil); err != nil {
		return err
	}
	if _, err = api.NewAttentionMetrics(m.registry, projections.NewQueries(m.pool), providerNames(), nil, m.logger); err != nil {
		return err
	}
	_, err = api.NewQueueMetrics(m.registry, func(ctx context.Context) (map[string]int, error) {
		c, err := jobs.CountUnfinished(ctx, m.pool)
		return c.ByState, err
	}, m.logger)
	return err
}

// openJobs builds the River client. Without the jobs role it is never
// started and only enqueues the projector's follow-ups for other processes.
func (m *Main) openJobs(context.Context) error {
	gate := jobs.NewGate(gateConfig(m.cfg), nil)
	rcfg, err := reconcilerConfig(m.cfg, gate, m.store, projections.NewQueries(m.pool), m.reconcileMetrics, m.logger)
	if err != nil {
		return configError(err)
	}
	m.jobs, err = jobs.New(jobs.Config{
		Reconcile:         rcfg,
		ReconcileInterval: m.cfg.Reconcile.Interval,
		Pool:              m.pool,
		Fetchers:          m.providers.fetchers,
		Store:             m.store,
		Logger:            m.logger.With("component", "jobs"),
		MaxAttempts:       m.cfg.JobsMaxAttempts,
		RescueAfter:       m.cfg.JobsRescueAfter, // 0: the jobs default
		Workers:           m.cfg.JobsWorkers,
		EnrichProviders:   m.providers.enrich,
		FeeProviders:      m.providers.fees,
		// The review sweep: it runs wherever the jobs role runs, with
		// reconciliation configured or not.
		Reviews: projections.NewQueries(m.pool),
	})
	return err
}

func (m *Main) openHandler(context.Context) error {
	roles := m.cfg.Roles
	if roles.API && len(m.cfg.Tokens) == 0 {
		m.logger.Warn("read API locked: LEDGER_API_TOKENS is empty, every /v1 request will get 401")
	}
	queries := projections.NewQueries(m.pool)
	deadLetters := projections.NewDeadLetters(m.pool)
	retrier, err := newRetrier(m.pool, m.store, deadLetters, m.providers.webhooks, m.logger)
	if err != nil {
		return err
	}
	apiServer, err := api.NewServer(api.Config{Tokens: m.cfg.Tokens, Logger: m.logger,
		DisableWebhooks: !roles.Webhooks, DisableReadAPI: !roles.API, LedgerProviders: providerNames(),
		ReconcileAfter: m.cfg.Reconcile.After}, api.Deps{
		Reconciliation:  queries,
		Reconcile:       m.jobs,
		Reviews:         queries,
		Seals:           queries,
		Rebuilds:        queries,
		DeadLetters:     deadLetters,
		DeadLetterQueue: deadLetters,
		Retrier:         retrier,
		Store:           m.store,
		Payments:        queries,
		Ledger:          queries,
		Providers:       m.providers.webhooks,
		Checks:          []api.Check{{Name: "database", Run: m.pool.Ping}, migrationsCheck(m.schema), {Name: "eventstore", Run: m.store.Ping}},
		Registry:        m.registry,
	})
	if err != nil {
		return err
	}
	m.handler, err = withConsole(m.cfg, apiServer, m.logger)
	return err
}

// withConsole mounts the browser console on /console/ in front of the API
// where the api role runs and LEDGER_CONSOLE is not off.
func withConsole(cfg Config, apiHandler http.Handler, logger *slog.Logger) (http.Handler, error) {
	if !cfg.Roles.API || !cfg.Console {
		return apiHandler, nil
	}
	tokens := make([]console.Token, len(cfg.Tokens))
	for i, t := range cfg.Tokens {
		tokens[i] = console.Token{Role: string(t.Role), Name: t.Name, Value: t.Value}
	}
	c, err := console.New(console.Config{API: apiHandler, Tokens: tokens, Logger: logger})
	if err != nil {
		return nil, err
	}
	// A prefix test, not a ServeMux: the API answers its own odd paths
	// (a ServeMux would redirect them first).
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/console":
			http.Redirect(w, r, "/console/", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, "/console/"):
			c.ServeHTTP(w, r)
		default:
			apiHandler.ServeHTTP(w, r)
		}
	}), nil
}

// Run serves HTTP and starts the background components until ctx ends.
// Then it shuts down gracefully: in-flight requests finish, the projector
// stops between batches, running jobs finish.
func (m *Main) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", m.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", m.cfg.HTTPAddr, err)
	}
	srv := &http.Server{
		Handler:           m.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn),
	}
	m.logger.Info("listening", "addr", ln.Addr().String(), "roles", m.cfg.Roles.String())
	// Serve first: a request accepted while the components start (River's
	// start takes a while) is then finished by a graceful shutdown.
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	bg, err := m.startBackground(ctx)
	if err != nil {
		_ = srv.Close()
		return err
	}
	select {
	case err := <-serveErr:
		bg.stop(context.WithoutCancel(ctx))
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	return m.shutdown(ctx, srv, bg)
}

// shutdown stops taking requests, lets in-flight ones finish, then stops
// the background components last first: the projector (no more enqueues)
// before the jobs (they append to the store). Close then closes the store
// and the pools.
func (m *Main) shutdown(ctx context.Context, srv *http.Server, bg *background) error {
	m.logger.Info("shutting down", "timeout", m.cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	bg.stop(shutdownCtx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	m.logger.Info("stopped")
	return nil
}

// newRetrier is the dead-letter retrier of serve and `ledger dead-letters`:
// collisions are re-checked through the configured providers' parsers.
func newRetrier(pool *pgxpool.Pool, store jobs.Appender, dl *projections.DeadLetters, providers []api.Provider,
	logger *slog.Logger) (*jobs.Retrier, error) {
	redelivery, err := api.NewRedelivery(api.RedeliveryConfig{Providers: providers, Store: store, DeadLetters: dl,
		Logger: logger.With("component", "redelivery")})
	if err != nil {
		return nil, err
	}
	return jobs.NewRetrier(jobs.RetrierConfig{Pool: pool, Store: store, Redeliverer: redelivery,
		Logger: logger.With("component", "retrier")})
}

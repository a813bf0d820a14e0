package api

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payledger/payledger/eventstore"
)

// Deps are the collaborators of a Server. cmd/ledger passes the real
// adapters; tests pass fakes.
type Deps struct {
	// Store receives webhook facts and serves the audit endpoint. Required.
	Store EventStore
	// Payments serves the payment read models. Required.
	Payments PaymentReader
	// Ledger serves the journal read model. Required.
	Ledger LedgerReader
	// Providers are the configured providers only: a provider missing here
	// answers 404 on its webhook route, so a disabled provider is never open.
	Providers []Provider
	// Checks are run by /readyz.
	Checks []Check
	// Reconciliation serves GET /v1/reconciliation/log and /summary, and
	// Reconcile queues POST /v1/payments/{provider}/{id}/reconcile. Either
	// may be nil: its routes are then not registered and answer 404, like
	// any route of a feature this process does not serve.
	Reconciliation ReconciliationReader
	Reconcile      ReconcileEnqueuer
	// Reviews serves GET /v1/reviews and POST /v1/reviews/{id}/resolve;
	// nil: the routes answer 404.
	Reviews ReviewReader
	// DeadLetters keeps a delivery whose event ID is stored for another
	// payment, which is then answered 200 "conflict"; nil: such a delivery
	// is answered 503, as any failure to store.
	DeadLetters DeadLetterRecorder
	// DeadLetterQueue serves GET /v1/dead-letters and /v1/dead-letters/{id},
	// and Retrier their retry routes (admin); either nil: its routes answer
	// 404.
	DeadLetterQueue DeadLetterReader
	Retrier         DeadLetterRetrier
	// Seals serves the chain proof of GET /v1/payments/{provider}/{id}/evidence;
	// nil: the route answers 404.
	Seals SealReader
	// Rebuilds says when a projection is being rebuilt, so that /v1 answers
	// carry Ledger-Projection-Rebuilding: true; nil: never.
	Rebuilds RebuildReader
	// Registry, when set, receives the server's metrics and is served on
	// GET /metrics. Nothing is registered globally.
	Registry *prometheus.Registry
}

// Server is payledger's HTTP handler. Build it with NewServer.
type Server struct {
	cfg         Config
	log         *slog.Logger
	store       EventStore
	payments    PaymentReader
	ledger      LedgerReader
	reconRead   ReconciliationReader // nil: no reconciliation read routes
	reconcile   ReconcileEnqueuer    // nil: no on-demand reconcile route
	reviews     ReviewReader         // nil: no review routes
	deadLetters DeadLetterRecorder   // nil: collisions are 503
	dlRead      DeadLetterReader     // nil: no dead-letter routes
	retrier     DeadLetterRetrier    // nil: no retry routes
	seals       SealReader           // nil: no evidence route
	rebuild     *rebuildFlag
	known       []string // provider names the ledger filters accept
	providers   map[string]Provider
	checks      []Check
	tokens      []tokenDigest
	codec       *eventstore.Codec
	recorder    *eventstore.Recorder
	metrics     *metrics // nil without a registry
	registry    *prometheus.Registry
	handler     http.Handler
}

// NewServer validates cfg and deps, applies defaults and builds the routes.
func NewServer(cfg Config, deps Deps) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("api: new server: %w", err)
	}
	if err := deps.validate(); err != nil {
		return nil, fmt.Errorf("api: new server: %w", err)
	}
	s := &Server{
		cfg:         cfg,
		log:         cfg.Logger,
		store:       deps.Store,
		payments:    deps.Payments,
		ledger:      deps.Ledger,
		reconRead:   deps.Reconciliation,
		reconcile:   deps.Reconcile,
		reviews:     deps.Reviews,
		deadLetters: deps.DeadLetters,
		dlRead:      deps.DeadLetterQueue,
		retrier:     deps.Retrier,
		seals:       deps.Seals,
		rebuild:     &rebuildFlag{reader: deps.Rebuilds},
		providers:   make(map[string]Provider, len(deps.Providers)),
		checks:      deps.Checks,
		tokens:      digestTokens(cfg.Tokens),
		codec:       eventstore.NewCodec(),
		registry:    deps.Registry,
	}
	names := make([]string, 0, len(deps.Providers))
	for _, p := range deps.Providers {
		s.providers[p.Name()] = p
		names = append(names, p.Name())
	}
	m, err := newMetrics(deps.Registry, names)
	if err != nil {
		return nil, fmt.Errorf("api: new server: %w", err)
	}
	s.metrics = m
	s.recorder = eventstore.NewRecorder(deps.Store, s.codec, cfg.AppendAttempts, m.conflictRetry)
	s.known = cfg.LedgerProviders
	if len(s.known) == 0 {
		s.known = names
	}
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

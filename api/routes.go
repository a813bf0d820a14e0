package api

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes wraps the router in the middleware every request passes, matched
// or not: request ID, then access log and panic recovery. gorilla/mux runs
// its own middleware only on matched routes, which is why these wrap the
// router instead of being registered with Use.
func (s *Server) routes() http.Handler {
	return s.withRequestID(s.observe(s.router()))
}

// router registers every route; api/openapi.yaml documents each one, and a
// test walks this router to keep the two equal.
func (s *Server) router() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	r.MethodNotAllowedHandler = s.methodNotAllowed(r)

	// HEAD too: some load balancers probe with it.
	r.HandleFunc("/healthz", s.healthz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", s.readyz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/openapi.yaml", s.openAPI).Methods(http.MethodGet)
	if s.registry != nil {
		r.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	}

	// Webhooks authenticate by the provider's signature, not a token.
	if !s.cfg.DisableWebhooks {
		r.HandleFunc("/webhooks/{provider}", s.handleWebhook).Methods(http.MethodPost)
	}

	// /v1 requires a bearer token. The routes sit on the root router, each
	// wrapped in authenticate, rather than on a PathPrefix subrouter:
	// gorilla/mux 1.8.1 subrouters forget a method mismatch when a later
	// route's copied prefix matcher succeeds, answering 404 instead of 405.
	if !s.cfg.DisableReadAPI {
		v1 := func(path string, h http.HandlerFunc) {
			r.Handle("/v1"+path, s.authenticate(s.withRebuilding(h))).Methods(http.MethodGet)
		}
		v1("/payments", s.listPayments)
		v1("/payments/{provider}/{provider_payment_id}", s.getPayment)
		v1("/payments/{provider}/{provider_payment_id}/events", s.listEvents)
		v1("/payments/{provider}/{provider_payment_id}/ledger", s.paymentLedger)
		v1("/payments/{provider}/{provider_payment_id}/replay", s.getReplay)
		if s.seals != nil {
			v1("/payments/{provider}/{provider_payment_id}/evidence", s.getEvidence)
		}
		v1("/ledger/balances", s.ledgerBalances)
		v1("/ledger/daily", s.ledgerDaily)
		v1("/ledger/entries", s.ledgerEntries)
		if s.reconRead != nil {
			v1("/reconciliation/log", s.reconciliationLog)
			v1("/reconciliation/summary", s.reconciliationSummary)
		}
		s.attentionRoutes(r, v1)
	}

	return r
}

// attentionRoutes registers the routes of what needs a person: reviews,
// dead letters and on-demand reconciliation, each only when this process
// has its collaborator. The POST routes need the admin role.
func (s *Server) attentionRoutes(r *mux.Router, v1 func(path string, h http.HandlerFunc)) {
	admin := func(path string, h http.HandlerFunc) {
		r.Handle("/v1"+path, s.authenticate(s.requireAdmin(h))).Methods(http.MethodPost)
	}
	if s.reviews != nil {
		v1("/reviews", s.listReviews)
		admin("/reviews/{id}/resolve", s.resolveReview)
	}
	if s.dlRead != nil {
		v1("/dead-letters", s.listDeadLetters)
		v1("/dead-letters/{id}", s.getDeadLetter)
		if s.retrier != nil {
			admin("/dead-letters/retry", s.retryDeadLetters)
			admin("/dead-letters/{id}/retry", s.retryDeadLetter)
		}
	}
	if s.reconcile != nil {
		admin("/payments/{provider}/{provider_payment_id}/reconcile", s.postReconcile)
	}
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, notFound("api: route", "no such route"))
}

// methodNotAllowed answers 405 with the Allow header RFC 9110 asks for,
// found by matching the same path with each method.
func (s *Server) methodNotAllowed(router *mux.Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = method
			// With a 405 handler set, Match also succeeds on a method
			// mismatch, reporting it in MatchErr.
			var m mux.RouteMatch
			if router.Match(probe, &m) && m.MatchErr == nil {
				allowed = append(allowed, method)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
		}
		s.writeErrorBody(w, r, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
	})
}

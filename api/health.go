package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// readyCheckTimeout bounds each readiness check: a load balancer polls
// /readyz often and must get an answer before its own timeout.
const readyCheckTimeout = 2 * time.Second

// healthz serves GET /healthz: the process is up. It checks nothing else,
// so an orchestrator does not restart us because Postgres is down.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// runCheck runs c with its timeout. A panicking check is reported as failed:
// it runs on its own goroutine, out of reach of the recovery middleware, and
// must not take the process down.
func runCheck(ctx context.Context, c Check) (err error) {
	ctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("check panicked: %v", v)
		}
	}()
	return c.Run(ctx)
}

type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// readyz serves GET /readyz: every check passes (200) or we are not ready to
// take traffic (503, each failing check reported as "unavailable", its cause
// logged). Checks run concurrently, each with its own timeout.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	results := make([]error, len(s.checks))
	var wg sync.WaitGroup
	for i, c := range s.checks {
		wg.Go(func() { results[i] = runCheck(r.Context(), c) })
	}
	wg.Wait()
	out := readiness{Status: "ready", Checks: make(map[string]string, len(s.checks))}
	status := http.StatusOK
	for i, c := range s.checks {
		if err := results[i]; err != nil {
			out.Status, status = "unavailable", http.StatusServiceUnavailable
			// The cause (hosts, addresses) stays in the log: /readyz is
			// unauthenticated and must not describe our network.
			out.Checks[c.Name] = "unavailable"
			s.log.LogAttrs(r.Context(), slog.LevelWarn, "api: readiness check failed",
				slog.String("request_id", requestIDFrom(r.Context())), slog.String("check", c.Name), slog.String("error", err.Error()))
			continue
		}
		out.Checks[c.Name] = "ok"
	}
	s.writeJSON(w, r, status, out)
}

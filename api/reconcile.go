package api

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
)

// The reconciliation routes' parameters; any other name is 400, as on the
// ledger routes.
var (
	checkLogParams = []string{"provider", "outcome", "cause", "since", "limit", "cursor"}
	summaryParams  = []string{"since"}
)

// DefaultSummaryWindow is how far back the summary counts checks when the
// caller gives no since.
const DefaultSummaryWindow = 24 * time.Hour

// checkList is the body of the reconciliation log. NextCursor is "" on the
// last page and always present, as for payments.
type checkList struct {
	Checks     []checkView `json:"checks"`
	NextCursor string      `json:"next_cursor"`
}

// checkView is one check. Every field is always present; the ones a check
// may lack (status_observed, provider_status, cause, event_id, error) are ""
// then, as metadata.source is on /events, so clients test one value.
type checkView struct {
	ID                string                 `json:"id"`
	Provider          string                 `json:"provider"`
	ProviderPaymentID string                 `json:"provider_payment_id"`
	CheckedAt         string                 `json:"checked_at"`
	Run               string                 `json:"run"`
	Trigger           string                 `json:"trigger"`
	StatusBefore      domain.Status          `json:"status_before"`
	StatusObserved    domain.Status          `json:"status_observed"`
	ProviderStatus    string                 `json:"provider_status"`
	StatusAfter       domain.Status          `json:"status_after"`
	Outcome           domain.CheckOutcome    `json:"outcome"`
	Cause             domain.CorrectionCause `json:"cause"`
	EventID           string                 `json:"event_id"`
	Error             string                 `json:"error"`
}

func viewCheck(c domain.ReconciliationCheck) checkView {
	return checkView{ID: c.ID, Provider: c.Provider, ProviderPaymentID: c.ProviderPaymentID,
		CheckedAt: formatTime(c.CheckedAt), Run: c.Run, Trigger: c.Trigger, StatusBefore: c.StatusBefore,
		StatusObserved: c.StatusObserved, ProviderStatus: c.ProviderStatus, StatusAfter: c.StatusAfter,
		Outcome: c.Outcome, Cause: c.Cause, EventID: c.EventID, Error: c.Error}
}

// reconciliationLog serves GET /v1/reconciliation/log, newest check first.
func (s *Server) reconciliationLog(w http.ResponseWriter, r *http.Request) {
	q, err := parseCheckQuery(r.URL.Query(), s.known)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.reconRead.Checks(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := checkList{Checks: make([]checkView, 0, len(page.Checks)), NextCursor: page.NextCursor}
	for _, c := range page.Checks {
		out.Checks = append(out.Checks, viewCheck(c))
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// parseCheckQuery validates the log's filters. An unknown provider,
// outcome or cause is refused: its empty answer would read as "no checks".
func parseCheckQuery(q url.Values, known []string) (domain.CheckQuery, error) {
	const op = "api: reconciliation log"
	var out domain.CheckQuery
	if err := checkParams(op, q, checkLogParams); err != nil {
		return out, err
	}
	if p := q.Get("provider"); p != "" {
		if !slices.Contains(known, p) {
			return out, domain.Invalid(op, fmt.Sprintf("provider %q is not one of %v", p, known), nil)
		}
		out.Provider = p
	}
	if o := domain.CheckOutcome(q.Get("outcome")); o != "" {
		if !o.Valid() {
			return out, domain.Invalid(op, fmt.Sprintf("outcome %q is not one of %v", o, domain.CheckOutcomes()), nil)
		}
		out.Outcome = o
	}
	if c := domain.CorrectionCause(q.Get("cause")); c != "" {
		if !c.Valid() {
			return out, domain.Invalid(op, fmt.Sprintf("cause %q is not one of %v", c, domain.CorrectionCauses()), nil)
		}
		out.Cause = c
	}
	var err error
	if v := q.Get("since"); v != "" {
		if out.Since, err = parseInstant(op, "since", v); err != nil {
			return out, err
		}
	}
	out.Cursor = q.Get("cursor")
	out.Limit, err = parseLimit(op, q.Get("limit"))
	return out, err
}

// summaryView is the body of the reconciliation summary.
type summaryView struct {
	Since string `json:"since"`
	// QuietSince is the in-doubt threshold: now − LEDGER_RECONCILE_AFTER.
	QuietSince string                `json:"quiet_since"`
	Providers  []providerSummaryView `json:"providers"`
}

type providerSummaryView struct {
	Provider string           `json:"provider"`
	Checks   map[string]int64 `json:"checks"` // every outcome, zeros included
	InDoubt  []doubtView      `json:"in_doubt"`
}

type doubtView struct {
	Currency         domain.Currency `json:"currency"`
	Payments         int64           `json:"payments"`
	Amount           int64           `json:"amount"`
	OldestRecordedAt string          `json:"oldest_recorded_at"`
}

// reconciliationSummary serves GET /v1/reconciliation/summary?since=: the
// checks since since (default the last 24 hours) and the money in doubt now.
func (s *Server) reconciliationSummary(w http.ResponseWriter, r *http.Request) {
	const op = "api: reconciliation summary"
	q := r.URL.Query()
	if err := checkParams(op, q, summaryParams); err != nil {
		s.writeError(w, r, err)
		return
	}
	now := s.cfg.Now()
	since := now.Add(-DefaultSummaryWindow)
	if v := q.Get("since"); v != "" {
		var err error
		if since, err = parseInstant(op, "since", v); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	quietSince := now.Add(-s.cfg.ReconcileAfter)
	sum, err := s.reconRead.ReconciliationSummary(r.Context(), since, quietSince)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, viewSummary(since, quietSince, sum))
}

// viewSummary fills in every outcome and sorts providers by name and each
// provider's doubt by currency, whatever order the reader found them in.
func viewSummary(since, quietSince time.Time, sum domain.ReconciliationSummary) summaryView {
	out := summaryView{Since: formatTime(since), QuietSince: formatTime(quietSince),
		Providers: make([]providerSummaryView, 0, len(sum.Providers))}
	for _, p := range sum.Providers {
		v := providerSummaryView{Provider: p.Provider, Checks: make(map[string]int64, len(domain.CheckOutcomes())),
			InDoubt: make([]doubtView, 0, len(p.InDoubt))}
		for _, o := range domain.CheckOutcomes() {
			v.Checks[string(o)] = p.Checks[o]
		}
		for _, d := range p.InDoubt {
			v.InDoubt = append(v.InDoubt, doubtView{Currency: d.Currency, Payments: d.Payments, Amount: d.Amount,
				OldestRecordedAt: formatTime(d.Oldest)})
		}
		slices.SortFunc(v.InDoubt, func(a, b doubtView) int { return cmp.Compare(a.Currency, b.Currency) })
		out.Providers = append(out.Providers, v)
	}
	slices.SortStableFunc(out.Providers, func(a, b providerSummaryView) int { return cmp.Compare(a.Provider, b.Provider) })
	return out
}

// reconcileAccepted is the body of a queued check.
type reconcileAccepted struct {
	JobID int64 `json:"job_id"`
}

// postReconcile serves POST /v1/payments/{provider}/{provider_payment_id}/reconcile
// (admin only): it queues one check of a payment the ledger knows and
// answers 202 with the job's ID; the check's result lands in the log. The
// request body, if any, is not read.
func (s *Server) postReconcile(w http.ResponseWriter, r *http.Request) {
	const op = "api: reconcile"
	v := mux.Vars(r)
	provider, id := v["provider"], v["provider_payment_id"]
	if !slices.Contains(s.known, provider) {
		s.writeError(w, r, notFound(op, fmt.Sprintf("unknown provider %q", provider)))
		return
	}
	// Only payments the ledger holds: a check of an unknown ID would ask
	// the provider about anything a caller types.
	if _, err := s.payments.Payment(r.Context(), provider, id); err != nil {
		s.writeError(w, r, fmt.Errorf("%s %s/%s: %w", op, provider, id, err))
		return
	}
	jobID, err := s.reconcile.EnqueueReconcile(r.Context(), provider, id)
	if err != nil {
		switch domain.KindOf(err) {
		case domain.KindConflict, domain.KindUnavailable:
			// 409: the provider has no API credentials; 503: retry later.
		default:
			// The request was checked above: any other kind is ours.
			err = &domain.Error{Kind: domain.KindInternal, Op: op, Err: err}
		}
		s.writeError(w, r, fmt.Errorf("%s %s/%s: %w", op, provider, id, err))
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, reconcileAccepted{JobID: jobID})
}

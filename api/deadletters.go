package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
)

var deadLetterListParams = []string{"kind", "cause", "provider", "state", "limit", "cursor"}

// maxRetryBody bounds a bulk retry's filter.
const maxRetryBody = 16 << 10

// DeadLetterView is one dead letter as the API and `ledger dead-letters
// --json` show it. Every field is present: retried_at is null and
// retried_by "" until the first retry. Payload, what a retry needs (the job,
// the delivery), is shown only for one entry.
type DeadLetterView struct {
	ID                int64           `json:"id"`
	Kind              string          `json:"kind"`
	Cause             string          `json:"cause"`
	Provider          string          `json:"provider"`
	ProviderPaymentID string          `json:"provider_payment_id"`
	Streams           []string        `json:"streams"`
	Attempts          int             `json:"attempts"`
	FirstFailedAt     string          `json:"first_failed_at"`
	LastFailedAt      string          `json:"last_failed_at"`
	LastError         string          `json:"last_error"`
	State             string          `json:"state"`
	Retries           int             `json:"retries"`
	RetriedAt         *string         `json:"retried_at"`
	RetriedBy         string          `json:"retried_by"`
	Payload           json.RawMessage `json:"payload,omitempty"`
}

// ViewDeadLetter is d's view; withPayload adds its payload.
func ViewDeadLetter(d domain.DeadLetter, withPayload bool) DeadLetterView {
	v := DeadLetterView{ID: d.ID, Kind: string(d.Kind), Cause: d.Cause, Provider: d.Provider,
		ProviderPaymentID: d.ProviderPaymentID, Streams: d.Streams, Attempts: d.Attempts,
		FirstFailedAt: formatTime(d.FirstFailedAt), LastFailedAt: formatTime(d.LastFailedAt), LastError: d.LastError,
		State: string(d.State), Retries: d.Retries, RetriedBy: d.RetriedBy}
	if v.Streams == nil {
		v.Streams = []string{}
	}
	if !d.RetriedAt.IsZero() {
		at := formatTime(d.RetriedAt)
		v.RetriedAt = &at
	}
	if withPayload && len(d.Payload) > 0 {
		v.Payload = d.Payload
	}
	return v
}

// deadLetterList is the body of GET /v1/dead-letters.
type deadLetterList struct {
	DeadLetters []DeadLetterView `json:"dead_letters"`
	NextCursor  string           `json:"next_cursor"`
}

// listDeadLetters serves GET /v1/dead-letters, oldest entry first.
func (s *Server) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	q, err := parseDeadLetterQuery(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.dlRead.ListDeadLetters(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := deadLetterList{DeadLetters: make([]DeadLetterView, 0, len(page.DeadLetters)), NextCursor: page.NextCursor}
	for _, d := range page.DeadLetters {
		out.DeadLetters = append(out.DeadLetters, ViewDeadLetter(d, false))
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// ParseDeadLetterFilter checks a filter's kind and state; the API and the
// CLI share it.
func ParseDeadLetterFilter(op, kind, cause, provider, state string) (domain.DeadLetterFilter, error) {
	f := domain.DeadLetterFilter{Kind: domain.DeadLetterKind(kind), Cause: cause, Provider: provider,
		State: domain.DeadLetterState(state)}
	if kind != "" && !f.Kind.Valid() {
		return f, domain.Invalid(op, fmt.Sprintf("kind %q is not one of %v", kind, domain.DeadLetterKinds()), nil)
	}
	if state != "" && !f.State.Valid() {
		return f, domain.Invalid(op, fmt.Sprintf("state %q is not open or retried", state), nil)
	}
	return f, nil
}

func parseDeadLetterQuery(q url.Values) (domain.DeadLetterQuery, error) {
	const op = "api: list dead letters"
	var out domain.DeadLetterQuery
	if err := checkParams(op, q, deadLetterListParams); err != nil {
		return out, err
	}
	f, err := ParseDeadLetterFilter(op, q.Get("kind"), q.Get("cause"), q.Get("provider"), q.Get("state"))
	if err != nil {
		return out, err
	}
	out.DeadLetterFilter, out.Cursor = f, q.Get("cursor")
	out.Limit, err = parseLimit(op, q.Get("limit"))
	return out, err
}

// deadLetterID is the route's {id}; anything but a positive integer names
// no entry (404).
func deadLetterID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id < 1 {
		return 0, notFound("api: dead letter", "no such dead letter")
	}
	return id, nil
}

// getDeadLetter serves GET /v1/dead-letters/{id}, with the payload.
func (s *Server) getDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, err := deadLetterID(r)
	if err == nil {
		var d domain.DeadLetter
		if d, err = s.dlRead.DeadLetter(r.Context(), id); err == nil {
			s.writeJSON(w, r, http.StatusOK, ViewDeadLetter(d, true))
			return
		}
	}
	s.writeError(w, r, err)
}

// retryDeadLetter serves POST /v1/dead-letters/{id}/retry (admin): 200 with
// the entry, now retried; 409 when it is not open or still collides.
func (s *Server) retryDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, err := deadLetterID(r)
	if err == nil {
		var d domain.DeadLetter
		if d, err = s.retrier.Retry(r.Context(), id, infoFrom(r.Context()).token); err == nil {
			s.writeJSON(w, r, http.StatusOK, ViewDeadLetter(d, false))
			return
		}
	}
	s.writeError(w, r, err)
}

// bulkRetryRequest is the body of POST /v1/dead-letters/retry; empty
// fields match anything.
type bulkRetryRequest struct {
	Kind     string `json:"kind"`
	Cause    string `json:"cause"`
	Provider string `json:"provider"`
}

// retryDeadLetters serves POST /v1/dead-letters/retry (admin): it retries
// the open entries the filter matches when it starts, each one once, and
// answers how many. Interrupted, it is resumed by asking again: what was
// retried is no longer open.
func (s *Server) retryDeadLetters(w http.ResponseWriter, r *http.Request) {
	const op = "api: retry dead letters"
	var in bulkRetryRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRetryBody))
	if err != nil {
		s.writeError(w, r, domain.Invalid(op, "the body is too large or unreadable", err))
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || dec.More() {
		s.writeError(w, r, domain.Invalid(op, "the body must be one JSON object with kind, cause and provider only", err))
		return
	}
	f, err := ParseDeadLetterFilter(op, in.Kind, in.Cause, in.Provider, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	n, err := s.retrier.RetryMatching(r.Context(), f, infoFrom(r.Context()).token)
	if err != nil {
		s.writeError(w, r, fmt.Errorf("%s (%d retried before the failure): %w", op, n, err))
		return
	}
	s.writeJSON(w, r, http.StatusOK, map[string]int{"retried": n})
}

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

var reviewListParams = []string{"state", "provider", "reason", "limit", "cursor"}

// maxResolveBody bounds a resolve request: the note's 4096 bytes, escaped.
const maxResolveBody = 64 << 10

// reviewList is the body of GET /v1/reviews; NextCursor is "" on the last page.
type reviewList struct {
	Reviews    []reviewView `json:"reviews"`
	NextCursor string       `json:"next_cursor"`
}

// reviewView is one review. Every field is present: resolved_at is null
// and resolution, note and resolved_by are "" while it is open; deadline is
// null unless it is a confirmation timeout.
type reviewView struct {
	ID                string          `json:"id"`
	Provider          string          `json:"provider"`
	ProviderPaymentID string          `json:"provider_payment_id"`
	Status            domain.Status   `json:"status"` // the payment's current status
	Amount            int64           `json:"amount"`
	Currency          domain.Currency `json:"currency"`
	Reasons           []string        `json:"reasons"`
	Cause             string          `json:"cause"`
	Deadline          *string         `json:"deadline"`
	OpenedAt          string          `json:"opened_at"`
	ResolvedAt        *string         `json:"resolved_at"`
	Resolution        string          `json:"resolution"`
	Note              string          `json:"note"`
	ResolvedBy        string          `json:"resolved_by"`
}

func viewReview(r domain.ReviewRow) reviewView {
	v := reviewView{ID: r.ID, Provider: r.Provider, ProviderPaymentID: r.ProviderPaymentID, Status: r.PaymentStatus,
		Amount: r.Amount, Currency: r.Currency, Reasons: []string{r.Reason}, Cause: r.Cause,
		OpenedAt: formatTime(r.OpenedAt), Resolution: string(r.Resolution), Note: r.Note, ResolvedBy: r.ResolvedBy}
	if !r.Deadline.IsZero() {
		d := formatTime(r.Deadline)
		v.Deadline = &d
	}
	if r.Resolved {
		at := formatTime(r.ResolvedAt)
		v.ResolvedAt = &at
	}
	return v
}

// listReviews serves GET /v1/reviews, oldest review first.
func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	q, err := parseReviewQuery(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.reviews.ListReviews(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := reviewList{Reviews: make([]reviewView, 0, len(page.Reviews)), NextCursor: page.NextCursor}
	for _, rv := range page.Reviews {
		out.Reviews = append(out.Reviews, viewReview(rv))
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

func parseReviewQuery(q url.Values) (domain.ReviewQuery, error) {
	const op = "api: list reviews"
	var out domain.ReviewQuery
	if err := checkParams(op, q, reviewListParams); err != nil {
		return out, err
	}
	out.State, out.Provider, out.Reason, out.Cursor = q.Get("state"), q.Get("provider"), q.Get("reason"), q.Get("cursor")
	if out.State != "" && out.State != "open" && out.State != "resolved" {
		return out, domain.Invalid(op, fmt.Sprintf("state %q is not open or resolved", out.State), nil)
	}
	var err error
	out.Limit, err = parseLimit(op, q.Get("limit"))
	return out, err
}

// resolveRequest is the body of POST /v1/reviews/{id}/resolve.
type resolveRequest struct {
	Resolution domain.Resolution `json:"resolution"`
	Note       string            `json:"note"`
}

// resolveReview serves POST /v1/reviews/{id}/resolve (admin): it folds the
// payment's stream, decides the resolution with the domain and appends its
// fact (source operator, by the token's name). The answer is built from
// the fold, not the read model, which lags.
func (s *Server) resolveReview(w http.ResponseWriter, r *http.Request) {
	const op = "api: resolve review"
	in, err := decodeResolve(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id := mux.Vars(r)["id"]
	row, err := s.reviews.Review(r.Context(), id)
	if err != nil {
		s.writeError(w, r, fmt.Errorf("%s %s: %w", op, id, err))
		return
	}
	by := infoFrom(r.Context()).token
	// Twice at most: a concurrent resolution stored first makes ours a
	// duplicate, and the second fold answers with what was stored.
	for range 2 {
		p, err := s.foldStream(r, row.Provider, row.ProviderPaymentID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		fact, err := domain.ResolveReview(p, id, in.Resolution, in.Note, by, s.cfg.Now())
		if err != nil {
			s.writeError(w, r, fmt.Errorf("%s %s: %w", op, id, err))
			return
		}
		if idx := slices.IndexFunc(p.Reviews(), func(rv domain.Review) bool { return rv.ID == id }); p.Reviews()[idx].Resolved {
			s.writeJSON(w, r, http.StatusOK, viewFolded(p, id)) // an identical retry
			return
		}
		rec, err := s.recorder.Record(r.Context(), domain.Notification{Provider: row.Provider, ProviderEventID: fact.ProviderEventID,
			ProviderEventType: domain.ReviewEventType, Events: []domain.Event{fact}},
			eventstore.Metadata{Provider: row.Provider, ProviderEventType: domain.ReviewEventType, ReceivedAt: s.cfg.Now(),
				RequestID: requestIDFrom(r.Context()), Source: eventstore.SourceOperator})
		if errors.Is(err, eventstore.ErrNotStored) {
			s.writeError(w, r, domain.Unavailable(op+" "+id, "could not store the resolution", err))
			return
		}
		if err != nil {
			s.writeError(w, r, fmt.Errorf("%s %s: %w", op, id, err))
			return
		}
		if !rec.Duplicate() {
			s.writeJSON(w, r, http.StatusOK, viewFolded(domain.Evolve(p, fact), id))
			return
		}
	}
	s.writeError(w, r, &domain.Error{Kind: domain.KindConflict, Op: op, Msg: "review is resolved already"})
}

// decodeResolve reads the body: one JSON object with known fields only.
func decodeResolve(w http.ResponseWriter, r *http.Request) (resolveRequest, error) {
	const op = "api: resolve review"
	var in resolveRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxResolveBody))
	if err != nil {
		return in, domain.Invalid(op, "the body is too large or unreadable", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, domain.Invalid(op, "the body must be a JSON object with resolution and note only", err)
	}
	if dec.More() {
		return in, domain.Invalid(op, "the body must be one JSON object", nil)
	}
	if !in.Resolution.Valid() {
		return in, domain.Invalid(op, fmt.Sprintf("resolution must be one of %v", domain.Resolutions()), nil)
	}
	if len(in.Note) > domain.MaxReviewNote {
		return in, domain.Invalid(op, fmt.Sprintf("note is longer than %d bytes", domain.MaxReviewNote), nil)
	}
	return in, nil
}

// foldStream reads and folds one payment's stream from the event store.
func (s *Server) foldStream(r *http.Request, provider, paymentID string) (domain.Payment, error) {
	_, evs, err := s.facts(r.Context(), provider, paymentID, asOf{})
	if err != nil {
		return domain.Payment{}, err
	}
	return domain.Fold(evs...), nil
}

// viewFolded is review id of p with p's current status and money.
func viewFolded(p domain.Payment, id string) reviewView {
	st := p.State()
	for _, rv := range p.Reviews() {
		if rv.ID == id {
			return viewReview(domain.ReviewRow{Review: rv, PaymentStatus: st.Status, Amount: st.Amount, Currency: st.Currency})
		}
	}
	return reviewView{ID: id, Reasons: []string{}}
}

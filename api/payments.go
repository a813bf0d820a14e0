package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
)

// getPayment serves GET /v1/payments/{provider}/{provider_payment_id}.
func (s *Server) getPayment(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	at, err := parseAsOf("api: get payment", r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !at.now() {
		// The past is folded from the store: the read model holds only now.
		_, evs, err := s.facts(r.Context(), v["provider"], v["provider_payment_id"], at)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, viewPayment(domain.Fold(evs...).State()))
		return
	}
	p, err := s.payments.Payment(r.Context(), v["provider"], v["provider_payment_id"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, viewPayment(p))
}

// paymentList is the body of a payment list. NextCursor is "" on the last
// page: it is always present, so clients test one value, never absence.
type paymentList struct {
	Payments   []paymentView `json:"payments"`
	NextCursor string        `json:"next_cursor"`
}

// listPayments serves GET /v1/payments?provider=&status=&limit=&cursor=.
func (s *Server) listPayments(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.payments.ListPayments(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := paymentList{Payments: make([]paymentView, 0, len(page.Payments)), NextCursor: page.NextCursor}
	for _, p := range page.Payments {
		out.Payments = append(out.Payments, viewPayment(p))
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// parseFilter validates the list query. An empty parameter counts as absent;
// a repeated one is refused rather than silently taking one of the values.
func parseFilter(q url.Values) (domain.PaymentFilter, error) {
	const op = "api: list payments"
	for _, name := range listParams {
		if len(q[name]) > 1 {
			return domain.PaymentFilter{}, domain.Invalid(op, fmt.Sprintf("query parameter %q given more than once", name), nil)
		}
	}
	f := domain.PaymentFilter{Provider: q.Get("provider"), Cursor: q.Get("cursor")}
	if st := q.Get("status"); st != "" {
		if !slices.Contains(domain.Statuses(), domain.Status(st)) {
			return f, domain.Invalid(op, fmt.Sprintf("status %q is not one of %v", st, domain.Statuses()), nil)
		}
		f.Status = domain.Status(st)
	}
	if v := q.Get("requires_review"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return f, domain.Invalid(op, fmt.Sprintf("requires_review %q must be true or false", v), nil)
		}
		f.RequiresReview = &b
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > domain.MaxPageSize {
			return f, domain.Invalid(op, fmt.Sprintf("limit %q must be an integer from 1 to %d", l, domain.MaxPageSize), err)
		}
		f.Limit = n
	}
	return f, parseRanges(op, q, &f)
}

// listParams are the list's query parameters.
var listParams = []string{"provider", "status", "requires_review", "limit", "cursor", "created_from", "created_to",
	"currency", "min_amount", "max_amount"}

// parseRanges reads the date and amount bounds. An amount bound needs its
// currency: minor units of two currencies do not compare.
func parseRanges(op string, q url.Values, f *domain.PaymentFilter) error {
	for name, dst := range map[string]**time.Time{"created_from": &f.CreatedFrom, "created_to": &f.CreatedTo} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return domain.Invalid(op, fmt.Sprintf("%s %q is not an RFC 3339 time such as 2026-03-01T00:00:00Z", name, v), err)
			}
			*dst = &t
		}
	}
	if f.CreatedFrom != nil && f.CreatedTo != nil && f.CreatedTo.Before(*f.CreatedFrom) {
		return domain.Invalid(op, "created_to is before created_from", nil)
	}
	if c := q.Get("currency"); c != "" {
		cur, err := domain.NewCurrency(c)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		f.Currency = cur
	}
	for name, dst := range map[string]**int64{"min_amount": &f.MinAmount, "max_amount": &f.MaxAmount} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return domain.Invalid(op, fmt.Sprintf("%s %q must be a non-negative integer of minor units", name, v), err)
			}
			if f.Currency == "" {
				return domain.Invalid(op, name+" needs currency: amounts are minor units of one currency", nil)
			}
			*dst = &n
		}
	}
	if f.MinAmount != nil && f.MaxAmount != nil && *f.MaxAmount < *f.MinAmount {
		return domain.Invalid(op, "max_amount is below min_amount", nil)
	}
	return nil
}

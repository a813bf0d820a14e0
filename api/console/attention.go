package console

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
)

type (
	review struct {
		ID                string   `json:"id"`
		Provider          string   `json:"provider"`
		ProviderPaymentID string   `json:"provider_payment_id"`
		Status            string   `json:"status"`
		Amount            int64    `json:"amount"`
		Currency          string   `json:"currency"`
		Reasons           []string `json:"reasons"`
		OpenedAt          string   `json:"opened_at"`
	}
	deadLetter struct {
		ID                int64  `json:"id"`
		Kind              string `json:"kind"`
		Cause             string `json:"cause"`
		Provider          string `json:"provider"`
		ProviderPaymentID string `json:"provider_payment_id"`
		Attempts          int    `json:"attempts"`
		FirstFailedAt     string `json:"first_failed_at"`
		LastError         string `json:"last_error"`
		State             string `json:"state"`
	}
)

// resolutions are the review resolutions the API takes.
var resolutions = []string{"accepted", "written_off", "refunded_manually", "duplicate", "other"}

type reviewsData struct {
	Reviews     []review
	Resolutions []string
	Flash       string
	NextURL     template.URL
}

// reviews serves the open queue, oldest first (the API's order).
func (c *Console) reviews(w http.ResponseWriter, r *http.Request, s *session) {
	var list struct {
		Reviews    []review `json:"reviews"`
		NextCursor string   `json:"next_cursor"`
	}
	q := url.Values{"state": {"open"}, "limit": {"100"}}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		q.Set("cursor", cur)
	}
	if err := c.getJSON(r, s, "/v1/reviews?"+q.Encode(), &list); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	d := reviewsData{Reviews: list.Reviews, Resolutions: resolutions, Flash: flash(r)}
	if list.NextCursor != "" {
		d.NextURL = template.URL("/console/reviews?cursor=" + url.QueryEscape(list.NextCursor))
	}
	c.render(w, r, http.StatusOK, "reviews", view{Title: "reviews.title", Nav: "reviews", Session: s, Data: d})
}

// resolve resolves one review through the API: the resolution becomes a
// fact in the payment's stream.
func (c *Console) resolve(w http.ResponseWriter, r *http.Request, s *session) {
	body := map[string]string{"resolution": r.PostFormValue("resolution"), "note": r.PostFormValue("note")}
	a, err := c.call(r, s, http.MethodPost, "/v1/reviews/"+url.PathEscape(r.PathValue("rid"))+"/resolve", body)
	if err == nil {
		err = decodeAnswer(a, nil)
	}
	if err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/console/reviews?done=reviews.resolved", http.StatusSeeOther)
}

type deadLettersData struct {
	DeadLetters []deadLetter
	Kind, Cause string
	Flash       string
	Count       string // how many a bulk retry retried
	NextURL     template.URL
}

// deadLetters serves the open dead letters, filtered by kind and cause.
func (c *Console) deadLetters(w http.ResponseWriter, r *http.Request, s *session) {
	var list struct {
		DeadLetters []deadLetter `json:"dead_letters"`
		NextCursor  string       `json:"next_cursor"`
	}
	d := deadLettersData{Kind: r.URL.Query().Get("kind"), Cause: r.URL.Query().Get("cause"), Flash: flash(r),
		Count: r.URL.Query().Get("n")}
	q := url.Values{"state": {"open"}, "limit": {"100"}}
	for k, v := range map[string]string{"kind": d.Kind, "cause": d.Cause, "cursor": r.URL.Query().Get("cursor")} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if err := c.getJSON(r, s, "/v1/dead-letters?"+q.Encode(), &list); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	d.DeadLetters = list.DeadLetters
	if list.NextCursor != "" {
		d.NextURL = template.URL("/console/dead-letters?" + url.Values{"kind": {d.Kind}, "cause": {d.Cause}, "cursor": {list.NextCursor}}.Encode())
	}
	c.render(w, r, http.StatusOK, "deadletters", view{Title: "dl.title", Nav: "deadletters", Session: s, Data: d})
}

// retry retries one dead letter through the API.
func (c *Console) retry(w http.ResponseWriter, r *http.Request, s *session) {
	id, err := strconv.ParseInt(r.PathValue("did"), 10, 64)
	if err != nil || id < 1 {
		c.fail(w, r, s, http.StatusNotFound, "error.not_found")
		return
	}
	a, err := c.call(r, s, http.MethodPost, "/v1/dead-letters/"+strconv.FormatInt(id, 10)+"/retry", nil)
	if err == nil {
		err = decodeAnswer(a, nil)
	}
	if err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/console/dead-letters?done=dl.retried", http.StatusSeeOther)
}

// bulkData is the confirmation of a bulk retry: what it matches now.
type bulkData struct {
	Kind, Cause string
	Matched     int
}

// bulkConfirmLimit bounds the count the confirmation walks; beyond it the
// page says "at least".
const bulkConfirmLimit = 10_000

// retryAll retries every open dead letter of a filter: the first POST
// shows how many it matches and asks again; the second (confirm=yes) asks
// the API to retry them.
func (c *Console) retryAll(w http.ResponseWriter, r *http.Request, s *session) {
	kind, cause := r.PostFormValue("kind"), r.PostFormValue("cause")
	if r.PostFormValue("confirm") != "yes" {
		n, err := c.countOpen(r, s, kind, cause)
		if err != nil {
			c.apiFailed(w, r, s, err)
			return
		}
		c.render(w, r, http.StatusOK, "bulkretry", view{Title: "dl.bulk_title", Nav: "deadletters", Session: s,
			Data: bulkData{Kind: kind, Cause: cause, Matched: n}})
		return
	}
	var out struct {
		Retried int `json:"retried"`
	}
	a, err := c.call(r, s, http.MethodPost, "/v1/dead-letters/retry", map[string]string{"kind": kind, "cause": cause, "provider": ""})
	if err == nil {
		err = decodeAnswer(a, &out)
	}
	if err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	q := url.Values{"done": {"dl.bulk_retried"}, "n": {strconv.Itoa(out.Retried)}, "kind": {kind}, "cause": {cause}}
	http.Redirect(w, r, "/console/dead-letters?"+q.Encode(), http.StatusSeeOther)
}

// countOpen counts the open dead letters of a filter, page by page.
func (c *Console) countOpen(r *http.Request, s *session, kind, cause string) (int, error) {
	n, cursor := 0, ""
	for n < bulkConfirmLimit {
		q := url.Values{"state": {"open"}, "limit": {"500"}}
		for k, v := range map[string]string{"kind": kind, "cause": cause, "cursor": cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		var page struct {
			DeadLetters []deadLetter `json:"dead_letters"`
			NextCursor  string       `json:"next_cursor"`
		}
		if err := c.getJSON(r, s, "/v1/dead-letters?"+q.Encode(), &page); err != nil {
			return 0, err
		}
		n += len(page.DeadLetters)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	return n, nil
}

// deadLetterData is one dead letter, every field and its payload.
type deadLetterData struct {
	deadLetter
	Streams   []string        `json:"streams"`
	LastAt    string          `json:"last_failed_at"`
	Retries   int             `json:"retries"`
	RetriedAt *string         `json:"retried_at"`
	RetriedBy string          `json:"retried_by"`
	Payload   json.RawMessage `json:"payload"`
}

// deadLetter serves one dead letter's detail.
func (c *Console) deadLetter(w http.ResponseWriter, r *http.Request, s *session) {
	id, err := strconv.ParseInt(r.PathValue("did"), 10, 64)
	if err != nil || id < 1 {
		c.fail(w, r, s, http.StatusNotFound, "error.not_found")
		return
	}
	var d deadLetterData
	if err := c.getJSON(r, s, "/v1/dead-letters/"+strconv.FormatInt(id, 10), &d); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	c.render(w, r, http.StatusOK, "deadletter", view{Title: "dl.detail", Nav: "deadletters", Session: s, Data: d})
}

package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payledger/payledger/domain"
)

// The API's JSON, as much of it as the pages show.
type (
	payment struct {
		Provider          string   `json:"provider"`
		ProviderPaymentID string   `json:"provider_payment_id"`
		Status            string   `json:"status"`
		Amount            int64    `json:"amount"`
		Currency          string   `json:"currency"`
		AmountCaptured    int64    `json:"amount_captured"`
		AmountRefunded    int64    `json:"amount_refunded"`
		AmountDisputed    int64    `json:"amount_disputed"`
		Fee               int64    `json:"fee"`
		FeeCurrency       *string  `json:"fee_currency"`
		CreatedAt         string   `json:"created_at"`
		UpdatedAt         string   `json:"updated_at"`
		EventCount        int      `json:"event_count"`
		ReviewReasons     []string `json:"review_reasons"`
		RequiresReview    bool     `json:"requires_review"`
		Projection        string   `json:"projection"`
	}
	paymentList struct {
		Payments   []payment `json:"payments"`
		NextCursor string    `json:"next_cursor"`
	}
	// event is what the timeline takes from /events: the raw body the
	// replay does not carry.
	event struct {
		EventID  string `json:"event_id"`
		Metadata struct {
			RawBody string `json:"raw_body"`
		} `json:"metadata"`
	}
	evidenceFact struct {
		EventID      string `json:"event_id"`
		Verification struct {
			Result string `json:"result"`
			Reason string `json:"reason"`
		} `json:"verification"`
		Chain struct {
			Intact *bool `json:"intact"`
		} `json:"chain"`
	}
)

// replayFact is one fact of GET …/replay: fold order, marks, changes and
// the entries it posts.
type replayFact struct {
	N               int    `json:"n"`
	EventID         string `json:"event_id"`
	Type            string `json:"type"`
	ProviderEventID string `json:"provider_event_id"`
	OccurredAt      string `json:"occurred_at"`
	RecordedAt      string `json:"recorded_at"`
	Source          string `json:"source"`
	Repeat          bool   `json:"repeat"`
	Late            bool   `json:"late"`
	Fields          []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"fields"`
	Changes []struct {
		Field string `json:"field"`
		From  string `json:"from"`
		To    string `json:"to"`
	} `json:"changes"`
	Entries []struct {
		Currency string `json:"currency"`
		Reversal bool   `json:"reversal"`
		Lines    []struct {
			Account string `json:"account"`
			Debit   int64  `json:"debit"`
			Credit  int64  `json:"credit"`
		} `json:"lines"`
	} `json:"entries"`
}

// fact is one row of a payment's timeline: the replay's fact, its raw body
// (from /events) and its evidence.
type fact struct {
	replayFact
	RawBody  string
	Evidence *evidenceFact
	// After is the state once this fact is folded (the replay's changes
	// applied in fold order): status and money.
	After stateAfter
}

type stateAfter struct {
	Status, Currency                          string
	Amount, Captured, Refunded, Disputed, Fee int64
}

// apply is st with the fact's changes.
func (st stateAfter) apply(f replayFact) stateAfter {
	for _, ch := range f.Changes {
		n, _ := strconv.ParseInt(ch.To, 10, 64)
		switch ch.Field {
		case "status":
			st.Status = ch.To
		case "currency":
			st.Currency = ch.To
		case "amount":
			st.Amount = n
		case "amount_captured":
			st.Captured = n
		case "amount_refunded":
			st.Refunded = n
		case "amount_disputed":
			st.Disputed = n
		case "fee":
			st.Fee = n
		}
	}
	return st
}

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	if c.session(r) == nil {
		http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/console/payments", http.StatusSeeOther)
}

func (c *Console) signinForm(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "signin", view{Title: "signin.title", Data: signinData{Next: safeNext(r.URL.Query().Get("next"))}})
}

type signinData struct {
	Next string
	Bad  bool
}

// signin exchanges a configured token for a session cookie. The token
// comes in the form's body, never in a URL.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, nil, http.StatusBadRequest, "signin.bad")
		return
	}
	next := safeNext(r.PostFormValue("next"))
	t, ok := match(c.cfg.Tokens, strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		c.render(w, r, http.StatusUnauthorized, "signin", view{Title: "signin.title", Data: signinData{Next: next, Bad: true}})
		return
	}
	nonce, err := newNonce()
	if err != nil {
		c.fail(w, r, nil, http.StatusInternalServerError, "error.internal")
		return
	}
	exp := c.cfg.Now().Add(c.cfg.SessionTTL)
	value, err := c.keys.seal(session{Token: t.Value, Role: t.Role, Name: t.Name, Nonce: nonce, Expires: exp})
	if err != nil {
		c.fail(w, r, nil, http.StatusInternalServerError, "error.internal")
		return
	}
	setCookie(w, r, value, exp)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request, _ *session) {
	setCookie(w, r, "", time.Time{})
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
}

// paymentsData is the payments page: the filter as given, and one page.
type paymentsData struct {
	Provider, ID, Status, Review string
	From, To, Currency, Min, Max string // dates (UTC days) and amounts in major units, as typed
	Statuses                     []string
	List                         paymentList
	NextURL                      template.URL
}

// apiQuery turns the page's filter into the list API's query: days become
// the UTC day's bounds, amounts in major units become minor units of the
// currency (which they need).
func (d paymentsData) apiQuery(cursor string) (url.Values, error) {
	q := url.Values{"limit": {"50"}}
	for k, v := range map[string]string{"provider": d.Provider, "status": d.Status, "cursor": cursor, "currency": d.Currency} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if d.Review == "yes" {
		q.Set("requires_review", "true")
	}
	for name, day := range map[string]string{"created_from": d.From, "created_to": d.To} {
		if day == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return nil, fmt.Errorf("%q is not a date such as 2026-03-01", day)
		}
		if name == "created_to" {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		q.Set(name, t.Format(time.RFC3339Nano))
	}
	for name, amount := range map[string]string{"min_amount": d.Min, "max_amount": d.Max} {
		if amount == "" {
			continue
		}
		if d.Currency == "" {
			return nil, errors.New("an amount needs its currency")
		}
		cur, err := domain.NewCurrency(d.Currency)
		if err != nil {
			return nil, err
		}
		minor, err := domain.ParseMinorUnits(amount, cur)
		if err != nil {
			return nil, err
		}
		q.Set(name, strconv.FormatInt(minor, 10))
	}
	return q, nil
}

var statuses = []string{"pending", "awaiting_confirmation", "authorized", "confirmed", "failed", "cancelled",
	"partially_refunded", "refunded", "disputed", "chargeback"}

// payments serves the list, or with provider and ID a jump to the payment.
func (c *Console) payments(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := paymentsData{Provider: q.Get("provider"), ID: strings.TrimSpace(q.Get("id")), Status: q.Get("status"),
		Review: q.Get("review"), From: q.Get("from"), To: q.Get("to"), Currency: strings.TrimSpace(q.Get("currency")),
		Min: strings.TrimSpace(q.Get("min")), Max: strings.TrimSpace(q.Get("max")), Statuses: statuses}
	if d.Provider != "" && d.ID != "" {
		http.Redirect(w, r, "/console/payments/"+url.PathEscape(d.Provider)+"/"+url.PathEscape(d.ID), http.StatusSeeOther)
		return
	}
	api, err := d.apiQuery(q.Get("cursor"))
	if err != nil {
		c.render(w, r, http.StatusBadRequest, "error", view{Title: "error.title", Session: s,
			Data: errorData{Status: http.StatusBadRequest, Key: "payments.bad_filter", Detail: err.Error()}})
		return
	}
	if err := c.getJSON(r, s, "/v1/payments?"+api.Encode(), &d.List); err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	if d.List.NextCursor != "" {
		next := url.Values{"provider": {d.Provider}, "status": {d.Status}, "review": {d.Review}, "from": {d.From}, "to": {d.To},
			"currency": {d.Currency}, "min": {d.Min}, "max": {d.Max}, "cursor": {d.List.NextCursor}}
		d.NextURL = template.URL("/console/payments?" + next.Encode())
	}
	c.render(w, r, http.StatusOK, "payments", view{Title: "payments.title", Nav: "payments", Session: s, Data: d})
}

// paymentData is the payment page.
type paymentData struct {
	Payment  payment
	Facts    []fact
	Entries  int
	AsOf     string
	Basis    string
	Query    string // the as-of query, for the API calls and links
	Base     string // the payment's console path
	Flash    string
	Evidence bool
}

// payment serves one payment: its header, its timeline in fold order with
// the state after each fact and the entries it caused, and its evidence.
func (c *Console) payment(w http.ResponseWriter, r *http.Request, s *session) {
	provider, id := r.PathValue("provider"), r.PathValue("id")
	base := "/v1/payments/" + url.PathEscape(provider) + "/" + url.PathEscape(id)
	d := paymentData{Base: "/console/payments/" + url.PathEscape(provider) + "/" + url.PathEscape(id),
		AsOf: r.URL.Query().Get("as_of"), Basis: r.URL.Query().Get("basis"), Flash: flash(r)}
	if d.AsOf != "" {
		v := url.Values{"as_of": {d.AsOf}}
		if d.Basis != "" {
			v.Set("basis", d.Basis)
		}
		d.Query = "?" + v.Encode()
	}
	var evs struct {
		Events []event `json:"events"`
	}
	var rep struct {
		Facts []replayFact `json:"facts"`
	}
	var ev struct {
		Facts []evidenceFact `json:"facts"`
	}
	for _, call := range []struct {
		path string
		out  any
	}{{base + d.Query, &d.Payment}, {base + "/replay" + d.Query, &rep}, {base + "/events" + d.Query, &evs}} {
		if err := c.getJSON(r, s, call.path, call.out); err != nil {
			c.apiFailed(w, r, s, err)
			return
		}
	}
	// Evidence is served only where the seals are; without it the page
	// still shows the rest.
	d.Evidence = c.getJSON(r, s, base+"/evidence", &ev) == nil
	d.Facts = timeline(rep.Facts, evs.Events, ev.Facts)
	for _, f := range d.Facts {
		d.Entries += len(f.Entries)
	}
	c.render(w, r, http.StatusOK, "payment", view{Title: "payment.title", Nav: "payments", Session: s, Data: d})
}

// timeline joins the replay's facts (already in fold order, marked) with
// their raw bodies and evidence, by event ID.
func timeline(facts []replayFact, evs []event, evidence []evidenceFact) []fact {
	bodies := make(map[string]string, len(evs))
	for _, e := range evs {
		bodies[e.EventID] = e.Metadata.RawBody
	}
	out := make([]fact, len(facts))
	var st stateAfter
	for i, f := range facts {
		st = st.apply(f) // a repeat changes nothing
		out[i] = fact{replayFact: f, RawBody: bodies[f.EventID], After: st}
		for j := range evidence {
			if evidence[j].EventID == f.EventID {
				out[i].Evidence = &evidence[j]
			}
		}
	}
	return out
}

func (c *Console) evidenceZip(w http.ResponseWriter, r *http.Request, s *session) {
	path := "/v1/payments/" + url.PathEscape(r.PathValue("provider")) + "/" + url.PathEscape(r.PathValue("id")) + "/evidence?format=zip"
	a, err := c.call(r, s, http.MethodGet, path, nil)
	if err == nil && a.status != http.StatusOK {
		err = decodeAnswer(a, nil)
	}
	if err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", a.header.Get("Content-Disposition"))
	_, _ = w.Write(a.body)
}

func (c *Console) reconcile(w http.ResponseWriter, r *http.Request, s *session) {
	p := url.PathEscape(r.PathValue("provider")) + "/" + url.PathEscape(r.PathValue("id"))
	a, err := c.call(r, s, http.MethodPost, "/v1/payments/"+p+"/reconcile", nil)
	if err == nil {
		err = decodeAnswer(a, nil)
	}
	if err != nil {
		c.apiFailed(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/console/payments/"+p+"?done=payment.reconciled", http.StatusSeeOther)
}

// flash is the message key a form's redirect names, if it is one.
func flash(r *http.Request) string {
	if k := r.URL.Query().Get("done"); messages[k] != [2]string{} {
		return k
	}
	return ""
}

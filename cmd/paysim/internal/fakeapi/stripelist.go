package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// stripeError is Stripe's error envelope for a bad request.
func stripeError(param, msg string) (int, []byte) {
	return http.StatusBadRequest, marshal(map[string]any{"error": map[string]any{
		"type": "invalid_request_error", "message": msg, "param": param}})
}

// eventFilter is what GET /v1/events selects on.
type eventFilter struct {
	gte, lt int64    // created bounds, Unix seconds: gte ≤ created < lt
	types   []string // exact names or "prefix.*" groups; empty: all
}

// match reports whether the event of r passes the filter.
func (f eventFilter) match(r ref) bool {
	s := r.p.Steps[r.step]
	c := s.At.Unix()
	if c < f.gte || c >= f.lt {
		return false
	}
	return len(f.types) == 0 || slices.ContainsFunc(f.types, func(t string) bool {
		prefix, group := strings.CutSuffix(t, "*")
		return t == s.Webhook.Type || group && strings.HasPrefix(s.Webhook.Type, prefix)
	})
}

// parseEventFilter reads created, created[gt|gte|lt|lte], type and
// types[] as Stripe documents them; on a bad one it names the parameter
// and Stripe's message.
func parseEventFilter(q url.Values) (f eventFilter, param, msg string) {
	f = eventFilter{gte: -1 << 62, lt: 1 << 62}
	for _, b := range []struct {
		param string
		set   func(int64)
	}{
		{"created", func(v int64) { f.gte, f.lt = max(f.gte, v), min(f.lt, v+1) }},
		{"created[gte]", func(v int64) { f.gte = max(f.gte, v) }},
		{"created[gt]", func(v int64) { f.gte = max(f.gte, v+1) }},
		{"created[lt]", func(v int64) { f.lt = min(f.lt, v) }},
		{"created[lte]", func(v int64) { f.lt = min(f.lt, v+1) }},
	} {
		if s := q.Get(b.param); s != "" {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return f, b.param, "Invalid integer: " + s
			}
			b.set(v)
		}
	}
	f.types = q["types[]"]
	if t := q.Get("type"); t != "" {
		if len(f.types) > 0 {
			return f, "types", "You may pass either `type` or `types`, but not both."
		}
		f.types = []string{t}
	}
	if len(f.types) > 20 {
		return f, "types", "You may pass up to 20 types."
	}
	return f, "", ""
}

// stripeLimit reads limit: 1 to 100, 10 when absent.
func stripeLimit(q url.Values) (int, bool) {
	n, ok := intParam(q, "limit", 10)
	return n, ok && n >= 1 && n <= 100
}

// stripeEvents answers GET /v1/events: the very events paysim sends as
// webhooks (same IDs and bodies), dropped and lost ones included, that
// have happened so far, newest first, with Stripe's cursors
// (starting_after: older than that event; ending_before: newer) and
// has_more.
func (a *API) stripeEvents(r *http.Request) (int, []byte) {
	q := r.URL.Query()
	f, param, msg := parseEventFilter(q)
	if msg != "" {
		return stripeError(param, msg)
	}
	limit, ok := stripeLimit(q)
	if !ok {
		return stripeError("limit", "Invalid limit: must be between 1 and 100")
	}
	after, before := q.Get("starting_after"), q.Get("ending_before")
	if after != "" && before != "" {
		return stripeError("ending_before", "You may only specify one of these parameters: starting_after, ending_before.")
	}
	picked, more, bad := a.eventPage(f, limit, after, before)
	if bad != "" {
		return stripeError(bad, "No such event: '"+q.Get(bad)+"'")
	}
	var data bytes.Buffer
	data.WriteByte('[')
	for i, e := range picked {
		if i > 0 {
			data.WriteByte(',')
		}
		data.Write(e.p.Steps[e.step].Webhook.Body)
	}
	data.WriteByte(']')
	return http.StatusOK, marshal(map[string]any{"object": "list", "url": "/v1/events", "has_more": more,
		"data": json.RawMessage(data.Bytes())})
}

// eventPage picks up to limit events passing f that have happened, after
// (older than) or before (newer than) a cursor, newest first, and whether
// more follow; bad names the cursor parameter naming no event.
func (a *API) eventPage(f eventFilter, limit int, after, before string) (picked []ref, more bool, bad string) {
	x := a.lists
	take := func(e ref) bool { // false once the page is full
		if !f.match(e) || !a.happened(e.p, e.step) {
			return true
		}
		if len(picked) == limit {
			more = true
			return false
		}
		picked = append(picked, e)
		return true
	}
	if before != "" {
		pos, ok := x.eventAt[before]
		if !ok {
			return nil, false, "ending_before"
		}
		for i := pos - 1; i >= 0 && take(x.events[i]); i-- {
		}
		slices.Reverse(picked) // the page nearest the cursor, still newest first
		return picked, more, ""
	}
	start := 0
	if after != "" {
		pos, ok := x.eventAt[after]
		if !ok {
			return nil, false, "starting_after"
		}
		start = pos + 1
	}
	for i := start; i < len(x.events) && x.events[i].p.Steps[x.events[i].step].At.Unix() >= f.gte && take(x.events[i]); i++ {
	}
	return picked, more, ""
}

// stripeCharge answers GET /v1/charges/{id}: the charge as the intent
// showed it the last time it was the intent's latest_charge (a failed
// attempt's charge stays failed), balance_transaction and payment_intent
// as IDs unless expand[] names them. What a charge-only dispute or refund
// event needs to find its PaymentIntent (§1.5 of the provider API notes).
func (a *API) stripeCharge(r *http.Request) []byte {
	id := strings.TrimSpace(r.PathValue("id"))
	var last *ref
	for _, c := range a.lists.charges[id] {
		if a.happened(c.p, c.step) {
			last = &c
		}
	}
	if last == nil {
		return nil
	}
	var pi map[string]any
	if decode(last.p.Steps[last.step].API, &pi) != nil {
		return nil
	}
	charge, _ := pi["latest_charge"].(map[string]any)
	expand := r.URL.Query()["expand[]"]
	if bt, ok := charge["balance_transaction"].(map[string]any); ok && !slices.Contains(expand, "balance_transaction") {
		charge["balance_transaction"] = bt["id"]
	}
	if slices.Contains(expand, "payment_intent") {
		_, step := a.step(truth.Stripe, last.p.ID)
		var now map[string]any
		if decode(last.p.Steps[step].API, &now) != nil {
			return nil
		}
		if lc, ok := now["latest_charge"].(map[string]any); ok {
			now["latest_charge"] = lc["id"]
		}
		charge["payment_intent"] = now
	}
	return marshal(charge)
}

// decode reads a JSON object keeping numbers exact.
func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// stripeIntent answers GET /v1/payment_intents/{id}: the intent after the
// latest step sent, with latest_charge and its balance_transaction
// expanded only as the request's expand[] asks (IDs otherwise). A payment
// with FeeLate answers balance_transaction null the first time it is
// asked for expanded, as under asynchronous capture.
func (a *API) stripeIntent(r *http.Request) []byte {
	p, step := a.step(truth.Stripe, strings.TrimSpace(r.PathValue("id")))
	if p == nil || p.Steps[step].API == nil {
		return nil
	}
	var pi map[string]any
	dec := json.NewDecoder(bytes.NewReader(p.Steps[step].API))
	dec.UseNumber() // amounts stay integers
	if err := dec.Decode(&pi); err != nil {
		return nil
	}
	expand := r.URL.Query()["expand[]"]
	charge, _ := pi["latest_charge"].(map[string]any)
	switch {
	case charge == nil:
	case !slices.Contains(expand, "latest_charge") && !slices.Contains(expand, "latest_charge.balance_transaction"):
		pi["latest_charge"] = charge["id"]
	case charge["balance_transaction"] == nil:
	case !slices.Contains(expand, "latest_charge.balance_transaction"):
		charge["balance_transaction"] = charge["balance_transaction"].(map[string]any)["id"]
	case p.FeeLate && a.firstBalanceTransaction(p):
		charge["balance_transaction"] = nil
	}
	body, err := json.Marshal(pi)
	if err != nil {
		return nil
	}
	return body
}

// firstBalanceTransaction reports whether p's balance transaction is asked
// for the first time, and remembers that it was.
func (a *API) firstBalanceTransaction(p *truth.Payment) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	first := !a.btSeen[p.Key()]
	a.btSeen[p.Key()] = true
	return first
}

// stripeDisputes answers GET /v1/disputes?payment_intent=…: the payment's
// one dispute in its status after the latest step sent, or an empty list.
func (a *API) stripeDisputes(r *http.Request) []byte {
	id := r.URL.Query().Get("payment_intent")
	p, step := a.step(truth.Stripe, id)
	if p == nil {
		return []byte(`{"object":"list","data":[],"has_more":false,"url":"/v1/disputes"}`)
	}
	var data []any
	if st := p.Steps[step].Dispute; st != "" {
		data = append(data, map[string]any{"id": "dp_1Q" + strings.TrimPrefix(id, "pi_3Q"), "object": "dispute",
			"payment_intent": id, "status": st})
	}
	body, err := json.Marshal(map[string]any{"object": "list", "data": data, "has_more": false, "url": "/v1/disputes"})
	if err != nil {
		return nil
	}
	return bytes.ReplaceAll(body, []byte(`"data":null`), []byte(`"data":[]`))
}

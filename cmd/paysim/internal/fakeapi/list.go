package fakeapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
)

// ref is one step of one payment.
type ref struct {
	p    *truth.Payment
	i    int // the payment's index in the run
	step int
}

// facts are the fields of one step's API body the list endpoints filter
// and sort on, read from the served bodies themselves so that a filter
// always agrees with what it serves.
type facts struct {
	created, updated time.Time // Mercado Pago date_created/date_last_updated, Pagar.me created_at/updated_at
	day, paidDay     string    // Asaas dateCreated and paymentDate ("" for null)
}

// index is what the list endpoints need, built once from the truth.
type index struct {
	events   []ref                      // every Stripe event, newest first
	eventAt  map[string]int             // Stripe event ID → position in events
	charges  map[string][]ref           // Stripe charge ID → steps whose intent shows it as latest_charge
	payments map[string][]ref           // provider → its payments (step unused), in run order
	facts    map[*truth.Payment][]facts // per step, for Mercado Pago, Asaas and Pagar.me
}

// newIndex reads the payments' bodies once.
func newIndex(payments []*truth.Payment) (*index, error) {
	x := &index{eventAt: map[string]int{}, charges: map[string][]ref{}, payments: map[string][]ref{},
		facts: map[*truth.Payment][]facts{}}
	for i, p := range payments {
		x.payments[p.Provider] = append(x.payments[p.Provider], ref{p: p, i: i})
		for k, step := range p.Steps {
			if err := x.add(ref{p: p, i: i, step: k}, step.API); err != nil {
				return nil, fmt.Errorf("paysim: fake API index %s step %d: %w", p.Key(), k, err)
			}
		}
	}
	// Newest first, as Stripe lists; ties in reverse creation order, so
	// the order is total and a cursor always means the same place.
	slices.SortFunc(x.events, func(a, b ref) int {
		return cmp.Or(cmp.Compare(b.p.Steps[b.step].At.Unix(), a.p.Steps[a.step].At.Unix()), cmp.Compare(b.i, a.i), cmp.Compare(b.step, a.step))
	})
	for pos, e := range x.events {
		x.eventAt[e.p.Steps[e.step].Webhook.EventID] = pos
	}
	return x, nil
}

// add indexes one step from its API body.
func (x *index) add(r ref, api []byte) error {
	var b struct {
		LatestCharge struct {
			ID string `json:"id"`
		} `json:"latest_charge"`
		DateCreated     string  `json:"date_created"`
		DateLastUpdated string  `json:"date_last_updated"`
		CreatedAt       string  `json:"created_at"`
		UpdatedAt       string  `json:"updated_at"`
		AsaasCreated    string  `json:"dateCreated"`
		PaymentDate     *string `json:"paymentDate"`
	}
	if err := json.NewDecoder(bytes.NewReader(api)).Decode(&b); err != nil {
		return err
	}
	var f facts
	var err error
	switch r.p.Provider {
	case truth.Stripe:
		x.events = append(x.events, r)
		if b.LatestCharge.ID != "" {
			x.charges[b.LatestCharge.ID] = append(x.charges[b.LatestCharge.ID], r)
		}
		return nil
	case truth.MercadoPago:
		f.created, err = time.Parse(mpLayout, b.DateCreated)
		if err == nil {
			f.updated, err = time.Parse(mpLayout, b.DateLastUpdated)
		}
	case truth.Asaas:
		f.day = b.AsaasCreated
		if b.PaymentDate != nil {
			f.paidDay = *b.PaymentDate
		}
	case truth.Pagarme:
		f.created, err = time.Parse(time.RFC3339, b.CreatedAt)
		if err == nil {
			f.updated, err = time.Parse(time.RFC3339, b.UpdatedAt)
		}
	}
	x.facts[r.p] = append(x.facts[r.p], f)
	return err
}

// mpLayout is how Mercado Pago writes its times.
const mpLayout = "2006-01-02T15:04:05.000-07:00"

// visible returns the payments of provider the provider has shown so far,
// each at the step its API shows: only what has happened is listed.
func (a *API) visible(provider string) []ref {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ref
	for _, r := range a.lists.payments[provider] {
		if step, ok := a.shown[r.p.Key()]; ok {
			r.step = step
			out = append(out, r)
		}
	}
	return out
}

// happened reports whether step of p has happened at the provider.
func (a *API) happened(p *truth.Payment, step int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	shown, ok := a.shown[p.Key()]
	return ok && step <= shown
}

// page returns rs[offset:offset+limit] (clamped) and whether more follow.
func page(rs []ref, offset, limit int) ([]ref, bool) {
	from := min(offset, len(rs))
	to := min(from+limit, len(rs))
	return rs[from:to], to < len(rs)
}

// rawList joins the API bodies of rs at their steps as a JSON array.
func rawList(rs []ref) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r.p.Steps[r.step].API)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// marshal encodes v; the values built here always encode.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

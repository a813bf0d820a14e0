package verdict

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/cmd/paysim/internal/deliver"
	"github.com/payledger/payledger/cmd/paysim/internal/readapi"
	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/domain"
)

// ev is a stored event: its provider event ID, provider_event_type,
// signed or not, when recorded, and the state it led to.
func ev(id, typ string, signed bool, at time.Time, st domain.Status) readapi.Event {
	e := readapi.Event{ProviderEventID: id, RecordedAt: at,
		StateAfter: readapi.Payment{Status: string(st), Amount: 1000, Currency: "USD"}}
	e.Metadata.ProviderEventType = typ
	if signed {
		e.Metadata.SignatureHeader = "t=1,v1=ab"
	}
	return e
}

func TestConverged(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	stripe := &truth.Payment{Provider: truth.Stripe, ID: "pi_1", Steps: []truth.Step{
		{Webhook: truth.Webhook{EventID: "evt_1"}, Truth: truth.State{Status: domain.StatusPending, Amount: 1000, Currency: "USD"}},
		{Webhook: truth.Webhook{EventID: "evt_2"}, Truth: truth.State{Status: domain.StatusConfirmed, Amount: 1000, Currency: "USD"}},
	}}
	mp := &truth.Payment{Provider: truth.MercadoPago, ID: "1", Steps: stripe.Steps}
	created := ev("evt_1", "payment_intent.created", true, t0, domain.StatusPending)
	tests := []struct {
		name   string
		p      *truth.Payment
		unsent []string
		events []readapi.Event
		want   Route
	}{
		{"nothing withheld", stripe, nil, nil, ByWebhook},
		{"withheld event backfilled", stripe, []string{"evt_2"},
			[]readapi.Event{created, ev("evt_2", "payment_intent.succeeded", false, t0.Add(time.Minute), domain.StatusConfirmed)}, ByBackfill},
		{"observation", stripe, []string{"evt_2"},
			[]readapi.Event{created, ev("obs_1", "api.payment_intent", false, t0.Add(time.Minute), domain.StatusConfirmed)}, ByReconciliation},
		{"observation, then the backfill repeats the outcome", stripe, []string{"evt_2"},
			[]readapi.Event{created, ev("obs_1", "api.payment_intent", false, t0.Add(time.Minute), domain.StatusConfirmed),
				ev("evt_2", "payment_intent.succeeded", false, t0.Add(2*time.Minute), domain.StatusConfirmed)}, ByReconciliation},
		{"a lost copy, another delivered", stripe, []string{"evt_9"},
			[]readapi.Event{created, ev("evt_2", "payment_intent.succeeded", true, t0, domain.StatusConfirmed)}, ByWebhook},
		{"Mercado Pago fetch during the deliveries", mp, []string{"2"},
			[]readapi.Event{ev("1", "payment", true, t0, domain.StatusPending), ev("o", "api.payment", false, t0.Add(-time.Second), domain.StatusConfirmed)}, ByWebhook},
		{"Mercado Pago observation after them", mp, []string{"2"},
			[]readapi.Event{ev("1", "payment", true, t0, domain.StatusPending), ev("o", "api.payment", false, t0.Add(time.Second), domain.StatusConfirmed)}, ByReconciliation},
		{"not final", stripe, []string{"evt_2"}, []readapi.Event{created}, Unclassified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Converged(Convergence{Payment: tt.p, Unsent: tt.unsent, Events: tt.events, Delivered: t0}); got != tt.want {
				t.Errorf("%s, want %s", got, tt.want)
			}
		})
	}
}

// TestDiffWithheld: with webhooks withheld the event count is only a
// floor (the delivered ones); the state must still be the final truth.
func TestDiffWithheld(t *testing.T) {
	p := &truth.Payment{Provider: truth.Stripe, ID: "pi_1", Events: 3, Steps: make([]truth.Step, 3)}
	p.Steps[2].Truth = truth.State{Status: domain.StatusConfirmed, Amount: 5, Currency: "USD"}
	final := readapi.Payment{Status: "confirmed", Amount: 5, Currency: "USD"}
	tests := []struct {
		name   string
		count  int
		unsent int
		status string
		want   string // "" or a part of the difference
	}{
		{"exact, nothing withheld", 3, 0, "confirmed", ""},
		{"short, nothing withheld", 2, 0, "confirmed", "event_count"},
		{"withheld, observations on top", 5, 2, "confirmed", ""},
		{"withheld, the delivered ones", 1, 2, "confirmed", ""},
		{"withheld, fewer than delivered", 0, 2, "confirmed", "want at least 1"},
		{"withheld and not converged", 2, 2, "pending", "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := final
			got.EventCount, got.Status = tt.count, tt.status
			d := diff(p, got, tt.unsent)
			if (tt.want == "") != (d == "") || !strings.Contains(d, tt.want) {
				t.Errorf("diff %q, want %q", d, tt.want)
			}
		})
	}
}

// TestReportWithheld: the counts reach the text and JSON reports, a
// withheld webhook is not undelivered, and the outage names its
// provider-time span.
func TestReportWithheld(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	pt := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	sent := deliver.Totals{DroppedPayments: 2, DroppedWebhooks: 3, LostDeliveries: 2, LostWebhooks: 2, LostPayments: 1,
		Lost: []deliver.Withheld{{Payment: "stripe/pi_1", EventID: "evt_1", Reason: deliver.Lost, At: t0, ProviderAt: pt},
			{Payment: "stripe/pi_1", EventID: "evt_2", Reason: deliver.Lost, At: t0, ProviderAt: pt.Add(time.Hour)}}}
	r := Build(1, nil, Readings{}, sent, nil)
	r.SetOutage(deliver.Window{Start: t0, End: t0.Add(10 * time.Second)})
	r.SetConverged(map[Route]int{ByWebhook: 5, ByReconciliation: 2, ByBackfill: 1})
	if !r.OK {
		t.Error("withheld webhooks failed the run by themselves")
	}
	var b strings.Builder
	r.WriteText(&b)
	for _, want := range []string{"dropped     2 payments' final webhooks never sent (3 webhooks)",
		"outage      2026-12-02T03:00:00Z to 2026-12-02T03:00:10Z: 2 deliveries lost (2 webhooks, 1 payments); provider times 2026-03-02T09:00:00Z to 2026-03-02T10:00:00Z",
		"converged   5 by webhook, 2 by reconciliation, 1 by backfill"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	var js strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(js.String())); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	_ = json.Unmarshal(compact.Bytes(), &got)
	for k, want := range map[string]string{"payments_dropped": "2", "webhooks_dropped": "3", "deliveries_lost": "2",
		"webhooks_lost": "2", "payments_lost": "1", "converged": `{"backfill":1,"reconciliation":2,"webhook":5}`} {
		if string(got[k]) != want {
			t.Errorf("json %s = %s, want %s", k, got[k], want)
		}
	}
	if !strings.Contains(string(got["outage"]), `"provider_since":"2026-03-02T09:00:00Z"`) || !strings.Contains(string(got["lost"]), "evt_2") {
		t.Errorf("json outage %s, lost %s", got["outage"], got["lost"])
	}
	quiet := Build(1, nil, Readings{}, deliver.Totals{}, nil)
	quiet.SetConverged(map[Route]int{ByWebhook: 3})
	b.Reset()
	quiet.WriteText(&b)
	if strings.Contains(b.String(), "dropped") || strings.Contains(b.String(), "outage") || strings.Contains(b.String(), "converged   ") {
		t.Errorf("a run without loss reports it:\n%s", b.String())
	}
}

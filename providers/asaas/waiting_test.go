package asaas

import (
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

// waitingObs is an observation of one payment at second sec with status st.
func waitingObs(id string, sec int, st domain.Status, providerStatus string, captured int64) domain.Event {
	return providertest.Snapshot(ProviderName, id, sec, st, providerStatus, captured)
}

// TestWaitingStatusesAwaitConfirmation: PENDING and AWAITING_RISK_ANALYSIS
// (and the events that report them) map to awaiting_confirmation whatever
// the billing type, and a waiting payment moves on to its final state
// whatever order the deliveries arrive in.
func TestWaitingStatusesAwaitConfirmation(t *testing.T) {
	for _, s := range []string{"PENDING", "AWAITING_RISK_ANALYSIS", "OVERDUE", "DUNNING_REQUESTED"} {
		if got, _ := statusOf(s); got != domain.StatusAwaitingConfirmation {
			t.Errorf("statusOf(%s) = %s, want awaiting_confirmation", s, got)
		}
	}
	for _, e := range []string{"PAYMENT_CREATED", "PAYMENT_AWAITING_RISK_ANALYSIS", "PAYMENT_APPROVED_BY_RISK_ANALYSIS", "PAYMENT_OVERDUE"} {
		if lc, ok := lifecycleOf(e); !ok || lc.status != domain.StatusAwaitingConfirmation {
			t.Errorf("lifecycleOf(%s) = %+v %v, want awaiting_confirmation", e, lc, ok)
		}
	}
	p := newProvider(t, Config{Tokens: []string{"tok"}})
	finals := []struct {
		event, status string
		want          domain.Status
	}{
		{"PAYMENT_RECEIVED", "RECEIVED", domain.StatusConfirmed},
		{"PAYMENT_CONFIRMED", "CONFIRMED", domain.StatusConfirmed},
		{"PAYMENT_REPROVED_BY_RISK_ANALYSIS", "AWAITING_RISK_ANALYSIS", domain.StatusFailed},
		{"PAYMENT_DELETED", "PENDING", domain.StatusCancelled},
	}
	for _, billing := range []string{"BOLETO", "PIX", "CREDIT_CARD", "UNDEFINED"} {
		for _, f := range finals {
			t.Run(billing+"→"+f.event, func(t *testing.T) {
				deliveries := []edits{
					{"id": "evt_w1&1", "event": "PAYMENT_CREATED", "dateCreated": "2024-06-10 09:00:00",
						"payment.status": "PENDING", "payment.billingType": billing},
					{"id": "evt_w2&2", "event": "PAYMENT_AWAITING_RISK_ANALYSIS", "dateCreated": "2024-06-10 09:00:05",
						"payment.status": "AWAITING_RISK_ANALYSIS", "payment.billingType": billing},
					{"id": "evt_w3&3", "event": f.event, "dateCreated": "2024-06-11 10:00:00",
						"payment.status": f.status, "payment.billingType": billing},
				}
				var facts []domain.Event
				for i, d := range deliveries {
					n, err := p.Parse(t.Context(), nil, nil, payload(t, d))
					if err != nil {
						t.Fatalf("Parse(%v): %v", d["event"], err)
					}
					if i < 2 {
						if o, ok := n.Events[0].(*domain.PaymentStatusObserved); !ok || o.Status != domain.StatusAwaitingConfirmation {
							t.Fatalf("%v parses to %+v, want awaiting_confirmation", d["event"], n.Events[0])
						}
					}
					facts = append(facts, n.Events[0]) // the fee, if any, is another fact
				}
				providertest.FoldsInEveryOrder(t, facts, f.want)
			})
		}
	}
}

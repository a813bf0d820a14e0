package pagarme

import (
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

// waitingObs is an observation of one payment at second sec with status st.
func waitingObs(id string, sec int, st domain.Status, providerStatus string, captured int64) domain.Event {
	return providertest.Snapshot(ProviderName, id, sec, st, providerStatus, captured)
}

// TestWaitingStatusesAwaitConfirmation: pending, processing and
// waiting_payment map to awaiting_confirmation (authorized when the last
// transaction holds the funds), a charge created with nothing attempted
// stays pending, and a waiting charge moves on to its final state whatever
// order the deliveries arrive in.
func TestWaitingStatusesAwaitConfirmation(t *testing.T) {
	waiting := []chargeFacts{
		{typ: "charge.created", status: "pending", txStatus: "waiting_payment", amount: 1000},
		{typ: "charge.pending", status: "pending", txStatus: "generated", amount: 1000},
		{typ: "charge.processing", status: "processing", txStatus: "analyzing", amount: 1000},
		{typ: "charge.antifraud_manual", status: "processing", txStatus: "pending_review", amount: 1000},
		{typ: "charge.updated", status: "waiting_payment", amount: 1000},
		{typ: "order.pending", amount: 1000},
	}
	finals := []struct {
		f    chargeFacts
		want domain.Status
	}{
		{chargeFacts{typ: "charge.paid", status: "paid", amount: 1000, paid: 1000}, domain.StatusConfirmed},
		{chargeFacts{typ: "charge.payment_failed", status: "failed", amount: 1000}, domain.StatusFailed},
		{chargeFacts{typ: "charge.canceled", status: "canceled", amount: 1000}, domain.StatusCancelled},
	}
	if got := chargeStatus(chargeFacts{typ: "order.created", amount: 1000}); got != domain.StatusPending {
		t.Errorf("order.created with nothing attempted = %s, want pending", got)
	}
	for _, w := range waiting {
		if got := chargeStatus(w); got != domain.StatusAwaitingConfirmation {
			t.Errorf("chargeStatus(%+v) = %s, want awaiting_confirmation", w, got)
		}
		for _, f := range finals {
			t.Run(w.typ+"/"+w.status+"→"+f.f.status, func(t *testing.T) {
				providertest.FoldsInEveryOrder(t, []domain.Event{
					waitingObs("w1", 0, chargeStatus(w), w.status, 0),
					waitingObs("w2", 0, chargeStatus(chargeFacts{status: "processing"}), "processing", 0),
					waitingObs("f", 3, chargeStatus(f.f), f.f.status, f.f.paid),
				}, f.want)
			})
		}
	}
}

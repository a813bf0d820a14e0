package mercadopago

import (
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

// waitingObs is an observation of one payment at second sec with status st.
func waitingObs(id string, sec int, st domain.Status, providerStatus string, captured int64) domain.Event {
	return providertest.Snapshot(ProviderName, id, sec, st, providerStatus, captured)
}

// TestWaitingStatusesAwaitConfirmation: pending and in_process map to
// awaiting_confirmation whatever the detail, and a waiting payment moves on
// to its final state whatever order the snapshots arrive in.
func TestWaitingStatusesAwaitConfirmation(t *testing.T) {
	waiting := []struct{ status, detail string }{
		{"pending", "pending_waiting_transfer"}, {"pending", "waiting_transfer"}, {"pending", "pending_waiting_payment"},
		{"pending", "pending_challenge"}, {"pending", ""}, {"in_process", "pending_contingency"},
		{"in_process", "pending_review_manual"}, {"in_process", "offline_process"}, {"in_process", "deferred_retry"},
	}
	finals := []struct {
		status, detail string
		captured       int64
		want           domain.Status
	}{
		{"approved", "accredited", 1000, domain.StatusConfirmed},
		{"rejected", "cc_rejected_other_reason", 0, domain.StatusFailed},
		{"cancelled", "expired", 0, domain.StatusCancelled},
	}
	for _, w := range waiting {
		if got := mapStatus(w.status, w.detail, 1000, 0); got != domain.StatusAwaitingConfirmation {
			t.Errorf("mapStatus(%s, %s) = %s, want awaiting_confirmation", w.status, w.detail, got)
		}
		for _, f := range finals {
			t.Run(w.status+"/"+w.detail+"→"+f.status, func(t *testing.T) {
				providertest.FoldsInEveryOrder(t, []domain.Event{
					waitingObs("w1", 0, mapStatus(w.status, w.detail, 1000, 0), w.status, 0),
					waitingObs("w2", 1, mapStatus("in_process", "pending_review_manual", 1000, 0), "in_process", 0),
					waitingObs("f", 2, mapStatus(f.status, f.detail, 1000, 0), f.status, f.captured),
				}, f.want)
			})
		}
	}
}

package stripe

import (
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

// waitingObs is an observation of one payment at second sec with status st.
func waitingObs(id string, sec int, st domain.Status, providerStatus string, captured int64) domain.Event {
	return providertest.Snapshot(ProviderName, id, sec, st, providerStatus, captured)
}

// TestWaitingStatusesAwaitConfirmation: processing and requires_action (as
// webhook events or fetched intents) are awaiting_confirmation, an intent
// with no attempt yet stays pending, and a waiting payment moves on to its
// final state whatever order the facts arrive in.
func TestWaitingStatusesAwaitConfirmation(t *testing.T) {
	status := func(s string) domain.Status {
		st, _ := intentStatus(fetchedIntent{ID: "pay_waiting", Status: s}, "", 0, 0)
		return st
	}
	for s, want := range map[string]domain.Status{
		"processing": domain.StatusAwaitingConfirmation, "requires_action": domain.StatusAwaitingConfirmation,
		"requires_payment_method": domain.StatusPending, "requires_confirmation": domain.StatusPending,
	} {
		if got := status(s); got != want {
			t.Errorf("intentStatus(%s) = %s, want %s", s, got, want)
		}
	}
	meta := func(id string, sec int) domain.Meta {
		return domain.Meta{Provider: ProviderName, ProviderEventID: id, ProviderEventType: "test",
			ProviderPaymentID: "pay_waiting", OccurredAt: time.Date(2026, 3, 1, 12, 0, sec, 0, time.UTC)}
	}
	waiting := map[string]func(sec int) domain.Event{
		"payment_intent.processing": func(sec int) domain.Event {
			return &domain.PaymentProcessing{Meta: meta("w", sec), Amount: 1000, Currency: "BRL"}
		},
		"payment_intent.requires_action": func(sec int) domain.Event {
			return &domain.PaymentActionRequired{Meta: meta("w", sec), Amount: 1000, Currency: "BRL"}
		},
		"api processing": func(sec int) domain.Event { return waitingObs("w", sec, status("processing"), "processing", 0) },
		"api requires_action": func(sec int) domain.Event {
			return waitingObs("w", sec, status("requires_action"), "requires_action", 0)
		},
	}
	finals := map[string]struct {
		e    domain.Event
		want domain.Status
	}{
		"succeeded": {&domain.PaymentSucceeded{Meta: meta("f", 1), Amount: 1000, AmountReceived: 1000, Currency: "BRL"}, domain.StatusConfirmed},
		"failed":    {&domain.PaymentFailed{Meta: meta("f", 1), Amount: 1000, Currency: "BRL", Code: "card_declined"}, domain.StatusFailed},
		"canceled":  {&domain.PaymentCancelled{Meta: meta("f", 1), Amount: 1000, Currency: "BRL"}, domain.StatusCancelled},
	}
	for wn, w := range waiting {
		created := &domain.PaymentCreated{Meta: meta("c", 0), Amount: 1000, Currency: "BRL"}
		providertest.FoldsInEveryOrder(t, []domain.Event{created, w(0)}, domain.StatusAwaitingConfirmation)
		for fn, f := range finals {
			t.Run(wn+"→"+fn, func(t *testing.T) {
				providertest.FoldsInEveryOrder(t, []domain.Event{created, w(0), f.e}, f.want)
				if strings.HasPrefix(wn, "payment_intent.") {
					// Webhook facts of one second order by rank; a snapshot
					// of the outcome's second already includes it.
					providertest.FoldsInEveryOrder(t, []domain.Event{created, w(1), f.e}, f.want)
				}
			})
		}
	}
}

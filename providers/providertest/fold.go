package providertest

import (
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// FoldsInEveryOrder checks that facts fold to want, and to one and the same
// state in every arrival order with a duplicate of the first: the fold's
// promise for a provider's mapping (the waiting statuses moving on to a final
// one, for instance). facts is permuted in place and restored.
func FoldsInEveryOrder(t testing.TB, facts []domain.Event, want domain.Status) {
	t.Helper()
	first := domain.Fold(facts...).State()
	if first.Status != want {
		t.Fatalf("fold = %s %v, want %s", first.Status, first.ReviewReasons, want)
	}
	everyOrder(facts, 0, func(order []domain.Event) {
		got := domain.Fold(append(append([]domain.Event(nil), order...), order[0])...).State()
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("an order folds to %+v, want %+v", got, first)
		}
	})
}

// everyOrder calls f with every permutation of es (in place).
func everyOrder(es []domain.Event, i int, f func([]domain.Event)) {
	if i == len(es) {
		f(es)
		return
	}
	for j := i; j < len(es); j++ {
		es[i], es[j] = es[j], es[i]
		everyOrder(es, i+1, f)
		es[i], es[j] = es[j], es[i]
	}
}

// Snapshot is a provider's status observation of the payment "pay_waiting"
// (1000 BRL) at second sec of a fixed minute: the facts FoldsInEveryOrder
// is fed by the providers' waiting-status tests.
func Snapshot(provider, id string, sec int, st domain.Status, providerStatus string, captured int64) domain.Event {
	return &domain.PaymentStatusObserved{
		Meta: domain.Meta{Provider: provider, ProviderEventID: id, ProviderEventType: "test",
			ProviderPaymentID: "pay_waiting", OccurredAt: time.Date(2026, 3, 1, 12, 0, sec, 0, time.UTC)},
		Status: st, ProviderStatus: providerStatus, Amount: 1000, AmountCaptured: captured, Currency: "BRL",
	}
}
